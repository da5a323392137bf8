package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// node is one cluster's node: containerd, kubelet and kube-proxy in the
// node's network namespace, their files below dir.
type node struct {
	plan nodePlan
	dir  string
	bin  string

	containerd *child
	kubelet    *restarting
	proxy      *restarting
}

func newNode(plan nodePlan, clusterDir, bin string) *node {
	return &node{plan: plan, dir: filepath.Join(clusterDir, "node"), bin: bin}
}

func (n *node) socket() string { return filepath.Join(n.dir, "containerd", "containerd.sock") }
func (n *node) logPath(name string) string {
	return filepath.Join(n.dir, "logs", name+".log")
}

// start brings the node up; kubeconfig reaches the API server from the
// node's namespace. images are imported into containerd before kubelet
// starts; sandboxImage (the pause image) must be one of them.
func (n *node) start(kubeconfig string, images []nodeImage, sandboxImage string) error {
	for _, d := range []string{"containerd/root", "containerd/state", "cni/net.d", "cni/ipam", "kubelet/root", "kubelet/pki", "logs", "pod-logs"} {
		if err := os.MkdirAll(filepath.Join(n.dir, d), 0o755); err != nil {
			return err
		}
	}
	if len(n.socket()) > 100 {
		return fmt.Errorf("node %s: containerd's socket path %s is longer than a Unix socket allows; use a shorter --dir", n.plan.nodeName, n.socket())
	}
	if err := n.startContainerd(sandboxImage); err != nil {
		return err
	}
	for _, image := range images {
		if err := n.importImage(image); err != nil {
			return fmt.Errorf("node %s: %w", n.plan.nodeName, err)
		}
	}
	if err := makeCgroupRoot(n.plan.cgroupRoot); err != nil {
		return fmt.Errorf("node %s: %w", n.plan.nodeName, err)
	}
	if err := n.startKubelet(kubeconfig); err != nil {
		return err
	}
	return n.startKubeProxy(kubeconfig)
}

func (n *node) startContainerd(sandboxImage string) error {
	c := filepath.Join(n.dir, "containerd")
	config := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[ttrpc]
  address = "%[3]s.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = %[4]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  # These VMs deny CAP_SYS_RESOURCE even to root; without this runc fails to
  # give the sandbox an oom_score_adj of -998: "runc create failed: unable to
  # start container process: can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  # Pods' network namespaces below the state folder, not in /run/netns,
  # where the environment could not tell them from anyone else's.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  enable_cdi = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[6]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[7]q
`, filepath.Join(c, "root"), filepath.Join(c, "state"), n.socket(), filepath.Join(c, "opt"),
		sandboxImage, filepath.Join(c, "runc"), filepath.Join(n.dir, "cni", "net.d"))
	if err := os.WriteFile(filepath.Join(c, "config.toml"), []byte(config), 0o644); err != nil {
		return err
	}
	// hairpinMode: a pod reaches itself through its own Service. No ipMasq:
	// the nodes route every cluster's pod range (plan.go), so addresses stay
	// as they are between clusters.
	cni := fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "capi-dns-testenv",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]],
              "routes": [{"dst": "0.0.0.0/0"}], "dataDir": %q}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
`, n.plan.podCIDR, filepath.Join(n.dir, "cni", "ipam"))
	if err := os.WriteFile(filepath.Join(n.dir, "cni", "net.d", "10-capi-dns-testenv.conflist"), []byte(cni), 0o644); err != nil {
		return err
	}
	var err error
	n.containerd, err = startChild("containerd", n.logPath("containerd"), n.plan.netns, "containerd", "--config", filepath.Join(c, "config.toml"))
	if err != nil {
		return fmt.Errorf("node %s: %w", n.plan.nodeName, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if n.containerd.exited() {
			return fmt.Errorf("node %s: containerd exited: %v (log %s)", n.plan.nodeName, n.containerd.err, n.logPath("containerd"))
		}
		if _, err := os.Stat(n.socket()); err == nil {
			if run("ctr", "--address", n.socket(), "version") == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s: containerd not serving %s after 20 s (log %s)", n.plan.nodeName, n.socket(), n.logPath("containerd"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (n *node) startKubelet(kubeconfig string) error {
	k := filepath.Join(n.dir, "kubelet")
	// Pods with dnsPolicy Default get this file: an upstream that answers
	// nothing, since no query leaves the environment.
	resolv := filepath.Join(n.dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver "+n.plan.hostIP+"\n"), 0o644); err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# These VMs mount cgroup v1 (hybrid); kubelet 1.35 refuses v1 without this.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %[1]s
containerRuntimeEndpoint: unix://%[2]s
address: %[3]s
port: 10250
readOnlyPort: 0
healthzPort: 0
failSwapOn: false
# Root may not lower its own oom_score_adj here (no CAP_SYS_RESOURCE).
oomScoreAdj: 0
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
podCIDR: %[4]s
clusterDNS: [%[5]s]
clusterDomain: cluster.local
resolvConf: %[6]s
podLogsDir: %[7]s
registerNode: true
cgroupsPerQOS: true
enforceNodeAllocatable: []
# A test machine's disk and memory are not the node's to guard: no evictions,
# no image garbage collection.
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
shutdownGracePeriod: 0s
`, n.plan.cgroupRoot, n.socket(), n.plan.nodeIP, n.plan.podCIDR, n.plan.dnsIP, resolv, filepath.Join(n.dir, "pod-logs"))
	if err := os.WriteFile(filepath.Join(k, "config.yaml"), []byte(config), 0o644); err != nil {
		return err
	}
	var err error
	n.kubelet, err = startRestarting("kubelet", n.logPath("kubelet"), n.plan.netns, filepath.Join(n.bin, "kubelet"),
		"--config", filepath.Join(k, "config.yaml"),
		"--kubeconfig", kubeconfig,
		"--root-dir", filepath.Join(k, "root"),
		"--cert-dir", filepath.Join(k, "pki"),
		// The API server dials nodes by InternalIP (--kubelet-preferred-address-types).
		"--hostname-override", n.plan.nodeName,
		"--node-ip", n.plan.nodeIP,
		"--v=2")
	if err != nil {
		return fmt.Errorf("node %s: %w", n.plan.nodeName, err)
	}
	return nil
}

func (n *node) startKubeProxy(kubeconfig string) error {
	config := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %[1]s
mode: iptables
clusterCIDR: %[2]s
hostnameOverride: %[3]s
# Its own network namespace: these ports are the node's, not the host's.
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: [%[4]s/32]
oomScoreAdj: 0
iptables:
  localhostNodePorts: false
# nf_conntrack_max is the host's, not a namespace's: leave it and the
# timeouts as they are.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, kubeconfig, n.plan.podCIDR, n.plan.nodeName, n.plan.nodeIP)
	path := filepath.Join(n.dir, "kube-proxy.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		return err
	}
	var err error
	n.proxy, err = startRestarting("kube-proxy", n.logPath("kube-proxy"), n.plan.netns, filepath.Join(n.bin, "kube-proxy"), "--config", path, "--v=2")
	if err != nil {
		return fmt.Errorf("node %s: %w", n.plan.nodeName, err)
	}
	return nil
}

// nodeImage is an OCI archive and the reference its image has on every
// node: what kubelet looks up for a pod's `image:` (imagePullPolicy
// IfNotPresent or Never; there is no registry).
type nodeImage struct {
	archive string
	ref     string
}

func parseNodeImage(s string) (nodeImage, error) {
	archive, ref, ok := strings.Cut(s, "=")
	if !ok || archive == "" || ref == "" {
		return nodeImage{}, fmt.Errorf("--node-image %q: want ARCHIVE=REFERENCE, e.g. .cache/images/pause.tar=localhost/capi-dns/pause:0.1.0", s)
	}
	if _, err := os.Stat(archive); err != nil {
		return nodeImage{}, fmt.Errorf("--node-image %q: %w", s, err)
	}
	return nodeImage{archive: archive, ref: ref}, nil
}

// repository is ref without its tag or digest.
func (i nodeImage) repository() string {
	r := i.ref
	if at := strings.Index(r, "@"); at >= 0 {
		r = r[:at]
	}
	if colon := strings.LastIndex(r, ":"); colon > strings.LastIndex(r, "/") {
		r = r[:colon]
	}
	return r
}

// importImage imports an archive whose index names the image either by its
// tag (ctr prefixes the repository) or by the full reference.
func (n *node) importImage(image nodeImage) error {
	if err := run("ctr", "--address", n.socket(), "-n", "k8s.io", "images", "import", "--base-name", image.repository(), image.archive); err != nil {
		return fmt.Errorf("import image: %w", err)
	}
	out, err := exec.Command("ctr", "--address", n.socket(), "-n", "k8s.io", "images", "ls", "-q", "name=="+image.ref).Output()
	if err != nil || strings.TrimSpace(string(out)) != image.ref {
		return fmt.Errorf("import image: %s holds no image named %s (ctr images ls: %q)", image.archive, image.ref, strings.TrimSpace(string(out)))
	}
	return nil
}

// stop ends kubelet and kube-proxy first, so that nothing restarts a
// container while the teardown kills them, then containerd.
func (n *node) stop() {
	n.proxy.stop(5 * time.Second)
	n.kubelet.stop(5 * time.Second)
	n.containerd.stop(5 * time.Second)
}

// makeCgroupRoot makes root in every cgroup v1 hierarchy. A new cpuset
// cgroup has no CPUs or memory nodes until it is given its parent's.
func makeCgroupRoot(root string) error {
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, h := range hierarchies {
		if filepath.Base(h) == "unified" {
			continue
		}
		if err := os.MkdirAll(filepath.Join(h, root), 0o755); err != nil {
			return fmt.Errorf("cgroup %s: %w", filepath.Join(h, root), err)
		}
	}
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		raw, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpuset", f))
		if err != nil {
			continue // no cpuset hierarchy (cgroup v2)
		}
		if err := os.WriteFile(filepath.Join("/sys/fs/cgroup/cpuset", root, f), []byte(strings.TrimSpace(string(raw))), 0o644); err != nil {
			return fmt.Errorf("cgroup cpuset %s: %w", f, err)
		}
	}
	return nil
}
