package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

type nodeOptions struct {
	enabled      bool
	images       []nodeImage
	sandboxImage string
	bin          string
}

// check fails early, with what is missing, rather than halfway through.
func (o *nodeOptions) check() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("nodes need root (network namespaces, cgroups, mounts)")
	}
	if o.bin == "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		o.bin = filepath.Dir(self)
	}
	for _, b := range []string{"kubelet", "kube-proxy", "kube-controller-manager", "kube-scheduler"} {
		if _, err := os.Stat(filepath.Join(o.bin, b)); err != nil {
			return fmt.Errorf("%s is missing in %s: run test/testenv/build.sh", b, o.bin)
		}
	}
	for _, b := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "nsenter", "ip", "iptables"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s is not installed (Debian: containerd runc iptables iproute2 util-linux; scripts/install-system-deps.sh)", b)
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback", "portmap"} {
		if _, err := os.Stat(filepath.Join("/usr/lib/cni", p)); err != nil {
			return fmt.Errorf("CNI plugin %s is missing in /usr/lib/cni (Debian: containernetworking-plugins)", p)
		}
	}
	if o.sandboxImage == "" {
		return fmt.Errorf("--sandbox-image is required: the reference of a pause image given with --node-image")
	}
	for _, img := range o.images {
		if img.ref == o.sandboxImage {
			return nil
		}
	}
	return fmt.Errorf("--sandbox-image %s is not among the --node-image references", o.sandboxImage)
}

// prepareNodes claims a slot, removes what a crashed run left in it, records
// what this run will make, and makes the network: all before the API
// servers start, since they listen on the bridge's address.
func (e *environment) prepareNodes(names []string) ([]*nodePlan, error) {
	lock, err := claimSlot()
	if err != nil {
		return nil, err
	}
	e.slot = lock
	if old, err := lock.leftovers(); err != nil {
		return nil, err
	} else if old != nil {
		log.Printf("slot %d: removing what the run of pid %d left (folder %s)", old.Slot, old.PID, old.Dir)
		for _, err := range teardown(*old) {
			log.Printf("slot %d: leftovers: %v", old.Slot, err)
		}
		for _, d := range old.NodeDirs {
			_ = os.RemoveAll(filepath.Join(d, "containerd"))
			_ = os.RemoveAll(filepath.Join(d, "kubelet"))
		}
	}
	var plans []*nodePlan
	e.state = slotState{Slot: lock.slot, PID: os.Getpid(), Dir: e.dir, Bridge: slotBridge(lock.slot)}
	for i, name := range names {
		p, err := planNode(lock.slot, i, name)
		if err != nil {
			return nil, err
		}
		plans = append(plans, &p)
		e.state.Netns = append(e.state.Netns, p.netns)
		e.state.CgroupRoots = append(e.state.CgroupRoots, p.cgroupRoot)
		e.state.NodeDirs = append(e.state.NodeDirs, filepath.Join(e.dir, name, "node"))
	}
	if err := noteSharedDirs(); err != nil {
		return nil, err
	}
	if err := lock.record(e.state); err != nil {
		return nil, fmt.Errorf("record slot state: %w", err)
	}
	log.Printf("nodes: slot %d, addresses %s.0.0/16", lock.slot, slotPrefix(lock.slot))
	if err := setupBridge(lock.slot); err != nil {
		return nil, err
	}
	all := make([]nodePlan, len(plans))
	for i, p := range plans {
		all[i] = *p
	}
	for _, p := range plans {
		if err := setupNodeNetwork(*p, all); err != nil {
			return nil, err
		}
	}
	return plans, nil
}

// startNodes starts every cluster's controller-manager and scheduler, then
// every node, and waits until each node is Ready and its cluster has what a
// first pod needs (the default ServiceAccount, the kube-root-ca.crt
// ConfigMap).
func (e *environment) startNodes(opts nodeOptions) error {
	for _, c := range e.clusters {
		cp, err := startControlPlane(c, opts.bin)
		e.controlPlanes = append(e.controlPlanes, cp)
		if err != nil {
			return err
		}
	}
	began := time.Now()
	errs := make([]error, len(e.clusters))
	var wg sync.WaitGroup
	for i, c := range e.clusters {
		n := newNode(*c.plan, c.dir, opts.bin)
		e.nodes = append(e.nodes, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := n.start(c.nodeKubeconfigPath, opts.images, opts.sandboxImage); err != nil {
				errs[i] = err
				return
			}
			errs[i] = waitNodeReady(c, n, 120*time.Second)
			if errs[i] == nil {
				log.Printf("node %s of cluster %s Ready %s after the nodes started", n.plan.nodeName, c.name, time.Since(began).Round(time.Millisecond))
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func waitNodeReady(c *cluster, n *node, timeout time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfigPath)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	missing := "node"
	for {
		missing = firstMissing(ctx, cs, n.plan.nodeName)
		if missing == "" {
			return nil
		}
		if ch := n.containerd; ch.exited() {
			return fmt.Errorf("node %s: %s exited: %v (log %s, ending:\n%s)", n.plan.nodeName, ch.name, ch.err, n.logPath(ch.name), tailOf(n.logPath(ch.name), 15))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s of cluster %s: %s after %s (logs in %s)", n.plan.nodeName, c.name, missing, timeout, filepath.Join(n.dir, "logs"))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tailOf is the last lines of a log file, for errors that outlive the folder.
func tailOf(path string, lines int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// firstMissing names the first thing a pod would still wait for, or "".
func firstMissing(ctx context.Context, cs kubernetes.Interface, nodeName string) string {
	node, err := cs.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("not registered (%v)", err)
	}
	ready := false
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return "not Ready"
	}
	if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		return "no default ServiceAccount"
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); err != nil {
		return "no kube-root-ca.crt ConfigMap"
	}
	return ""
}

// stopNodes stops kubelets, kube-proxies and containerd, then the
// controller-managers and schedulers, while the API servers still run.
func (e *environment) stopNodes() {
	var wg sync.WaitGroup
	for _, n := range e.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.stop()
		}()
	}
	wg.Wait()
	for _, cp := range e.controlPlanes {
		cp.stop()
	}
}

// removeNodes removes everything the nodes made and gives the slot back.
func (e *environment) removeNodes() {
	if e.slot == nil {
		return
	}
	began := time.Now()
	for _, err := range teardown(e.state) {
		log.Printf("teardown: %v", err)
	}
	e.slot.release()
	e.slot = nil
	log.Printf("nodes removed in %s", time.Since(began).Round(time.Millisecond))
}
