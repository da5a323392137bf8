package main

import (
	"fmt"
	"log"
)

// setupBridge makes the host's end of the nodes' segment (see plan.go).
func setupBridge(slot int) error {
	br := slotBridge(slot)
	for _, argv := range [][]string{
		{"ip", "link", "add", br, "type", "bridge"},
		{"ip", "addr", "add", slotHostIP(slot) + "/24", "dev", br},
		{"ip", "link", "set", br, "up"},
	} {
		if err := run(argv...); err != nil {
			return fmt.Errorf("bridge %s: %w", br, err)
		}
	}
	return nil
}

// setupNodeNetwork makes node p's network namespace, joined to the host's
// bridge by a veth pair, with routes to every other node's pod and
// LoadBalancer ranges; the host gets routes to p's pod, service and
// LoadBalancer ranges, so that tests on the host reach them too.
func setupNodeNetwork(p nodePlan, all []nodePlan) error {
	steps := [][]string{
		{"ip", "netns", "add", p.netns},
		{"ip", "link", "add", p.hostVeth, "type", "veth", "peer", "name", "eth0", "netns", p.netns},
		{"ip", "link", "set", p.hostVeth, "master", slotBridge(p.slot), "up"},
		{"ip", "-n", p.netns, "addr", "add", p.nodeIP + "/24", "dev", "eth0"},
		{"ip", "-n", p.netns, "link", "set", "eth0", "up"},
		{"ip", "-n", p.netns, "link", "set", "lo", "up"},
		// kubelet and the CNI plugins want a default route; nothing beyond
		// the host leaves, because the host forwards nothing.
		{"ip", "-n", p.netns, "route", "add", "default", "via", p.hostIP},
		{"ip", "route", "add", p.podCIDR, "via", p.nodeIP},
		{"ip", "route", "add", p.serviceCIDR, "via", p.nodeIP},
		{"ip", "route", "add", p.loadBalancerCIDR, "via", p.nodeIP},
	}
	for _, q := range all {
		if q.index == p.index {
			continue
		}
		steps = append(steps,
			[]string{"ip", "-n", p.netns, "route", "add", q.podCIDR, "via", q.nodeIP},
			[]string{"ip", "-n", p.netns, "route", "add", q.loadBalancerCIDR, "via", q.nodeIP})
	}
	for _, argv := range steps {
		if err := run(argv...); err != nil {
			return fmt.Errorf("node %s: %w", p.nodeName, err)
		}
	}
	if err := runIn(p.netns, "sysctl", "-qw", "net.ipv4.ip_forward=1"); err != nil {
		return fmt.Errorf("node %s: %w", p.nodeName, err)
	}
	// A Service's endpoint on the same bridge as its client answers through
	// the bridge; without this its reply skips the connection tracking that
	// undoes kube-proxy's translation, and the client drops it.
	if err := runIn(p.netns, "sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1"); err != nil {
		if err := run("modprobe", "br_netfilter"); err != nil {
			log.Printf("node %s: %v", p.nodeName, err)
		}
		if err := runIn(p.netns, "sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1"); err != nil {
			return fmt.Errorf("node %s: Services whose client and endpoint share a node need br_netfilter: %w", p.nodeName, err)
		}
	}
	return nil
}
