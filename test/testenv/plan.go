package main

import "fmt"

// The addresses of an environment with nodes. Each running environment holds
// one slot (see slot.go); slot s owns 10.(250+s).0.0/16 and nothing else, so
// two environments on one machine never share an address, and no address
// outside the loopback range and these namespaces is touched.
//
//	10.S.0.1/24            the host's end: a bridge joining every node's veth
//	10.S.0.(2+i)           the node of cluster i (0 is the management cluster)
//	10.S.(10+10i).0/24     cluster i's pod CIDR
//	10.S.(11+10i).0/24     cluster i's service CIDR (.1 the kubernetes Service, .10 cluster DNS)
//	10.S.(12+10i).0/24     addresses a test may give LoadBalancer Services of cluster i
//
// The nodes share one layer-2 segment, as kind's nodes share a bridge; each
// node routes the other clusters' pod and LoadBalancer ranges to their node,
// so a pod of cluster-b reaches cluster-a's pods and LoadBalancer addresses
// without address translation, and the host forwards nothing.
const (
	maxSlots           = 6
	maxClustersPerSlot = 24
)

type nodePlan struct {
	slot    int
	index   int
	cluster string

	hostIP           string
	nodeIP           string
	podCIDR          string
	serviceCIDR      string
	loadBalancerCIDR string
	// dnsIP is the ClusterIP kubelet writes into pods' resolv.conf; a test
	// deploys CoreDNS behind a Service with this address (kubeadm's choice, .10).
	dnsIP string

	netns    string
	hostVeth string
	// cgroupRoot is the node's own cgroup below every hierarchy: two kubelets
	// sharing /kubepods remove each other's pods as orphans.
	cgroupRoot string
	nodeName   string
}

func slotPrefix(slot int) string { return fmt.Sprintf("10.%d", 250+slot) }

// slotBridge is the host bridge of a slot (interface names have 15 bytes at most).
func slotBridge(slot int) string { return fmt.Sprintf("capidns%d", slot) }

func slotHostIP(slot int) string { return slotPrefix(slot) + ".0.1" }

func planNode(slot, index int, cluster string) (nodePlan, error) {
	if slot < 0 || slot >= maxSlots {
		return nodePlan{}, fmt.Errorf("slot %d out of range 0..%d", slot, maxSlots-1)
	}
	if index < 0 || index >= maxClustersPerSlot {
		return nodePlan{}, fmt.Errorf("at most %d clusters can have nodes, cluster %s is number %d", maxClustersPerSlot, cluster, index+1)
	}
	p := slotPrefix(slot)
	block := 10 + 10*index
	return nodePlan{
		slot:             slot,
		index:            index,
		cluster:          cluster,
		hostIP:           slotHostIP(slot),
		nodeIP:           fmt.Sprintf("%s.0.%d", p, 2+index),
		podCIDR:          fmt.Sprintf("%s.%d.0/24", p, block),
		serviceCIDR:      fmt.Sprintf("%s.%d.0/24", p, block+1),
		loadBalancerCIDR: fmt.Sprintf("%s.%d.0/24", p, block+2),
		dnsIP:            fmt.Sprintf("%s.%d.10", p, block+1),
		netns:            fmt.Sprintf("capi-dns-%d-%s", slot, cluster),
		hostVeth:         fmt.Sprintf("capidns%dn%d", slot, index),
		cgroupRoot:       fmt.Sprintf("/capi-dns-%d-%s", slot, cluster),
		nodeName:         cluster + "-node",
	}, nil
}
