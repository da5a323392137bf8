// Command testenv runs a real multi-cluster Kubernetes control plane in one
// process: an embedded etcd and one real kube-apiserver (from k8s.io/kubernetes)
// per cluster, each with its own etcd prefix and a stable 127.0.0.1 port.
//
// It prints one JSON line on stdout when every cluster is ready, serves a small
// control API (stop/start one cluster's API server) and stops cleanly on
// SIGTERM or SIGINT. Everything it writes lives below --dir.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

type clusterInfo struct {
	Name       string    `json:"name"`
	Role       string    `json:"role"`
	Server     string    `json:"server"`
	Kubeconfig string    `json:"kubeconfig"`
	Node       *nodeInfo `json:"node,omitempty"`
}

// nodeInfo is what a test needs of a cluster's node (with --nodes).
type nodeInfo struct {
	Name string `json:"name"`
	IP   string `json:"ip"`
	// HostIP is the host's address on the nodes' bridge.
	HostIP string `json:"hostIP"`
	Netns  string `json:"netns"`
	// Containerd is the node's containerd socket (ctr --address, namespace k8s.io).
	Containerd       string `json:"containerd"`
	PodCIDR          string `json:"podCIDR"`
	ServiceCIDR      string `json:"serviceCIDR"`
	LoadBalancerCIDR string `json:"loadBalancerCIDR"`
	// DNSIP is the nameserver kubelet gives pods: a test puts CoreDNS's Service there.
	DNSIP string `json:"dnsIP"`
	// Server and Kubeconfig reach the API server from the nodes and pods
	// (a Cluster API kubeconfig Secret read by a pod must use these).
	Server     string `json:"server"`
	Kubeconfig string `json:"kubeconfig"`
	Logs       string `json:"logs"`
}

type readyLine struct {
	Ready    bool          `json:"ready"`
	Control  string        `json:"control"`
	Etcd     string        `json:"etcd"`
	Dir      string        `json:"dir"`
	Clusters []clusterInfo `json:"clusters"`
}

func main() {
	dir := flag.String("dir", "", "folder for kubeconfigs, certificates and etcd data (default: a new temporary folder, removed on exit)")
	management := flag.String("management", "management", "name of the management cluster")
	workloads := flag.String("workload-clusters", "cluster-a,cluster-b", "comma-separated names of the workload clusters")
	exitWithParent := flag.Bool("exit-with-parent", true, "stop when the parent process dies, so that a crashed test run leaves nothing behind")
	verbosity := flag.String("apiserver-verbosity", "0", "klog verbosity of the API servers, whose logs go to DIR/apiserver.log")
	var opts nodeOptions
	flag.BoolVar(&opts.enabled, "nodes", false, "give every cluster a node (containerd, kubelet, kube-proxy in its own network namespace) and a kube-controller-manager and kube-scheduler; needs root")
	flag.Func("node-image", "ARCHIVE=REFERENCE: an OCI archive imported into every node's containerd as REFERENCE (repeatable)", func(v string) error {
		img, err := parseNodeImage(v)
		opts.images = append(opts.images, img)
		return err
	})
	flag.StringVar(&opts.sandboxImage, "sandbox-image", "", "reference of the pause image among the --node-image ones (required with --nodes)")
	flag.StringVar(&opts.bin, "bin-dir", "", "folder of kubelet, kube-proxy, kube-controller-manager, kube-scheduler and cluster-api-manager (default: this binary's folder)")
	flag.BoolVar(&auditWrites, "audit-writes", false, "every API server logs each write (create, update, patch, delete; metadata only, with the client's user agent) to DIR/CLUSTER/audit.log")
	flag.Func("apiserver-arg", "a kube-apiserver flag (--name=value) given to every API server after the test environment's own (repeatable)", func(v string) error {
		if !strings.HasPrefix(v, "--") {
			return fmt.Errorf("%q: want --name=value", v)
		}
		apiserverArgs = append(apiserverArgs, v)
		return nil
	})
	clusterAPIManifests := flag.String("cluster-api", "", "run Cluster API's core controller manager (BIN-DIR/cluster-api-manager) against the management cluster, with the CRDs and webhook configurations of this folder (crds/*.yaml, webhook.yaml; build.sh fills .cache/cluster-api)")
	flag.Parse()
	if opts.bin == "" {
		self, err := os.Executable()
		if err != nil {
			log.Fatalf("find own binary: %v", err)
		}
		opts.bin = filepath.Dir(self)
	}

	log.SetOutput(os.Stderr)
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)

	removeDir := false
	if *dir == "" {
		d, err := os.MkdirTemp("", "capi-dns-testenv-")
		if err != nil {
			log.Fatalf("create temporary folder: %v", err)
		}
		*dir = d
		removeDir = true
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatalf("create %s: %v", *dir, err)
	}

	if err := quietKlog(*dir, *verbosity); err != nil {
		log.Fatalf("%v", err)
	}

	names := []string{*management}
	for _, n := range strings.Split(*workloads, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if err := validateNames(names); err != nil {
		log.Fatalf("%v", err)
	}
	if err := ensureInotifyInstances(len(names)); err != nil {
		log.Printf("warning: %v", err)
	}

	ctx, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()
	if *exitWithParent {
		ctx = watchParent(ctx)
	}

	if opts.enabled {
		if err := opts.check(); err != nil {
			log.Fatalf("--nodes: %v", err)
		}
	}
	env, err := start(*dir, names, opts)
	if err == nil && *clusterAPIManifests != "" {
		began := time.Now()
		env.clusterAPI, err = startClusterAPI(env.clusters[0], *clusterAPIManifests, filepath.Join(opts.bin, "cluster-api-manager"))
		if err == nil {
			log.Printf("cluster-api ready in %s", time.Since(began).Round(time.Millisecond))
		}
	}
	if err != nil {
		log.Printf("start: %v", err)
		if env != nil {
			env.stop()
		}
		if removeDir {
			os.RemoveAll(*dir)
		}
		os.Exit(1)
	}

	ctl, err := env.serveControl()
	if err != nil {
		env.stop()
		log.Fatalf("control API: %v", err)
	}

	line := readyLine{Ready: true, Control: "http://" + ctl, Etcd: env.etcdURL, Dir: *dir}
	for i, c := range env.clusters {
		role := "workload"
		if i == 0 {
			role = "management"
		}
		info := clusterInfo{Name: c.name, Role: role, Server: c.serverURL(), Kubeconfig: c.kubeconfigPath}
		if c.plan != nil {
			n := env.nodes[i]
			info.Node = &nodeInfo{
				Name: c.plan.nodeName, IP: c.plan.nodeIP, HostIP: c.plan.hostIP, Netns: c.plan.netns,
				Containerd: n.socket(), PodCIDR: c.plan.podCIDR, ServiceCIDR: c.plan.serviceCIDR,
				LoadBalancerCIDR: c.plan.loadBalancerCIDR, DNSIP: c.plan.dnsIP,
				Server: c.nodeServerURL(), Kubeconfig: c.nodeKubeconfigPath, Logs: filepath.Join(n.dir, "logs"),
			}
		}
		line.Clusters = append(line.Clusters, info)
	}
	out, _ := json.Marshal(line)
	fmt.Println(string(out))

	<-ctx.Done()
	log.Printf("signal received, stopping")
	env.stop()
	if removeDir {
		os.RemoveAll(*dir)
	}
	log.Printf("stopped")
}

func validateNames(names []string) error {
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return fmt.Errorf("cluster name %q given twice", n)
		}
		seen[n] = true
		for _, r := range n {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return fmt.Errorf("cluster name %q: only lower-case letters, digits and '-' are allowed", n)
			}
		}
	}
	return nil
}

type environment struct {
	dir      string
	etcdURL  string
	stopEtcd func()
	token    string
	clusters []*cluster
	mu       sync.Mutex

	// With nodes: the slot held, what its teardown removes, and per cluster
	// (same order as clusters) its node and control plane.
	slot          *slotLock
	state         slotState
	nodes         []*node
	controlPlanes []*controlPlane
	clusterAPI    *clusterAPI
}

func start(dir string, names []string, opts nodeOptions) (*environment, error) {
	env := &environment{dir: dir}
	var plans []*nodePlan
	if opts.enabled {
		var err error
		if plans, err = env.prepareNodes(names); err != nil {
			return env, err
		}
	} else {
		plans = make([]*nodePlan, len(names))
	}
	etcdURL, stopEtcd, err := startEtcd(filepath.Join(dir, "etcd"))
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: %w", err)
	}
	env.etcdURL, env.stopEtcd = etcdURL, stopEtcd

	env.token = randomToken()
	tokenFile := filepath.Join(dir, "tokens.csv")
	// One admin identity in system:masters: the kubeconfig files stay valid
	// across a stop/start of an API server, unlike its loopback token.
	if err := os.WriteFile(tokenFile, []byte(env.token+",admin,admin,system:masters\n"), 0o600); err != nil {
		return env, fmt.Errorf("write token file: %w", err)
	}

	for i, name := range names {
		c, err := newCluster(name, dir, etcdURL, tokenFile, env.token, plans[i])
		if err != nil {
			return env, err
		}
		env.clusters = append(env.clusters, c)
	}
	// API servers start one after another: their start-up mutates
	// process-wide state (feature gates, metrics registries).
	for _, c := range env.clusters {
		began := time.Now()
		if err := c.start(); err != nil {
			return env, fmt.Errorf("cluster %s: %w", c.name, err)
		}
		log.Printf("cluster %s ready at %s in %s", c.name, c.serverURL(), time.Since(began).Round(time.Millisecond))
	}
	if opts.enabled {
		if err := env.startNodes(opts); err != nil {
			return env, err
		}
	}
	return env, nil
}

func (e *environment) find(name string) *cluster {
	for _, c := range e.clusters {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (e *environment) stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clusterAPI.stop()
	e.stopNodes()
	for i := len(e.clusters) - 1; i >= 0; i-- {
		e.clusters[i].stop()
		e.clusters[i].proxy.close()
	}
	if e.stopEtcd != nil {
		e.stopEtcd()
	}
	e.removeNodes()
}

// serveControl lets tests stop and start one cluster's API server, as when a
// workload cluster's control plane goes away and comes back.
func (e *environment) serveControl() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	handle := func(action string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				http.Error(w, "use POST", http.StatusMethodNotAllowed)
				return
			}
			name := r.URL.Query().Get("cluster")
			e.mu.Lock()
			defer e.mu.Unlock()
			c := e.find(name)
			if c == nil {
				http.Error(w, fmt.Sprintf("no cluster %q", name), http.StatusNotFound)
				return
			}
			var err error
			if action == "stop" {
				c.stop()
			} else {
				err = c.start()
			}
			if err != nil {
				log.Printf("%s cluster %s: %v", action, name, err)
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			log.Printf("%s cluster %s: done", action, name)
			fmt.Fprintf(w, "%s %s\n", action, name)
		}
	}
	mux.HandleFunc("/stop", handle("stop"))
	mux.HandleFunc("/start", handle("start"))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	go func() { _ = http.Serve(ln, mux) }()
	return ln.Addr().String(), nil
}

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// watchParent ends ctx when the process that started us is gone (we are
// re-parented), because a test runner killed with SIGKILL cannot stop us.
func watchParent(ctx context.Context) context.Context {
	parent := os.Getppid()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if os.Getppid() != parent {
					log.Printf("parent process %d is gone", parent)
					cancel()
					return
				}
			}
		}
	}()
	return ctx
}

// quietKlog sends the API servers' process-wide klog output to a file: the
// upstream test helpers raise the verbosity for their own tests.
func quietKlog(dir, verbosity string) error {
	if f := flag.Lookup("v"); f != nil {
		if err := f.Value.Set(verbosity); err != nil {
			return fmt.Errorf("--apiserver-verbosity: %w", err)
		}
	}
	out, err := os.OpenFile(filepath.Join(dir, "apiserver.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	klog.LogToStderr(false)
	klog.SetOutput(out)
	return nil
}
