package main

import (
	"encoding/base64"
	"fmt"
	"log"
	"net"
	"os"
	"path"
	"path/filepath"

	"k8s.io/apiserver/pkg/storage/storagebackend"
	certutil "k8s.io/client-go/util/cert"
	apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// cluster is one API server behind a stable port: the port and serving
// certificate outlive a stop/start, so kubeconfig files stay valid.
type cluster struct {
	name           string
	dir            string
	etcdURL        string
	tokenFile      string
	token          string
	kubeconfigPath string
	proxy          *stableProxy
	tb             *processTB
	teardown       func()

	// With nodes: the cluster's addresses, the kubeconfig that reaches the
	// API server from the nodes and pods, and the relay that makes the API
	// server's own port, which the kubernetes Service's endpoint names,
	// reachable on the host's bridge address.
	plan               *nodePlan
	nodeKubeconfigPath string
	relay              *stableProxy
}

// auditWrites (--audit-writes): each API server logs every write, so that a
// test can tell which client wrote what (the user agent) and when.
var auditWrites bool

// apiserverArgs (--apiserver-arg, repeatable): flags given to every API server
// after the test environment's own, e.g. a benchmark's trims.
var apiserverArgs []string

// Writes only, at Metadata level, once each (when the response is complete).
const auditWritesPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

func newCluster(name, root, etcdURL, tokenFile, token string, plan *nodePlan) (*cluster, error) {
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Join(dir, "pki"), 0o755); err != nil {
		return nil, err
	}
	proxy, err := newStableProxy()
	if err != nil {
		return nil, fmt.Errorf("cluster %s: reserve port: %w", name, err)
	}
	c := &cluster{
		name:           name,
		dir:            dir,
		etcdURL:        etcdURL,
		tokenFile:      tokenFile,
		token:          token,
		kubeconfigPath: filepath.Join(root, name+".kubeconfig"),
		proxy:          proxy,
		plan:           plan,
	}
	if plan != nil {
		proxy.hosts = append(proxy.hosts, plan.hostIP)
		c.nodeKubeconfigPath = filepath.Join(root, name+".node.kubeconfig")
		if err := c.writeServingCert(); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", name, err)
		}
	}
	return c, nil
}

// nodeServerURL is the API server as nodes and pods reach it.
func (c *cluster) nodeServerURL() string {
	return fmt.Sprintf("https://%s:%d", c.plan.hostIP, c.proxy.port)
}

// writeServingCert makes the API server's certificate valid for every name
// its clients use: 127.0.0.1 on the host, the bridge address from nodes,
// and the kubernetes Service's ClusterIP and names from pods. Without nodes
// the upstream test server's fixture (127.0.0.1 only) is used.
func (c *cluster) writeServingCert() error {
	crt, key := filepath.Join(c.dir, "pki", "apiserver.crt"), filepath.Join(c.dir, "pki", "apiserver.key")
	if _, err := os.Stat(key); err == nil {
		return nil
	}
	_, svc, err := net.ParseCIDR(c.plan.serviceCIDR)
	if err != nil {
		return err
	}
	serviceIP := append(net.IP(nil), svc.IP.To4()...)
	serviceIP[3]++
	cert, k, err := certutil.GenerateSelfSignedCertKey(c.plan.hostIP,
		[]net.IP{net.ParseIP("127.0.0.1"), serviceIP},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"})
	if err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	if err := os.WriteFile(crt, cert, 0o644); err != nil {
		return err
	}
	return os.WriteFile(key, k, 0o600)
}

func (c *cluster) serverURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d", c.proxy.port)
}

func (c *cluster) start() error {
	if c.teardown != nil {
		return nil
	}
	logFile, err := os.OpenFile(filepath.Join(c.dir, "apiserver.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	c.tb = newProcessTB(c.name, c.dir, logFile)

	storage := storagebackend.NewDefaultConfig(path.Join("/registry", c.name), nil)
	storage.Transport.ServerList = []string{c.etcdURL}
	flags := []string{
		"--cert-dir=" + filepath.Join(c.dir, "pki"),
		"--token-auth-file=" + c.tokenFile,
		"--authorization-mode=RBAC",
	}
	if auditWrites {
		policy := filepath.Join(c.dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(auditWritesPolicy), 0o644); err != nil {
			return err
		}
		flags = append(flags,
			"--audit-policy-file="+policy,
			"--audit-log-path="+filepath.Join(c.dir, "audit.log"),
			"--audit-log-format=json",
			// Written as the request completes, so a reader sees it at once.
			"--audit-log-mode=blocking",
		)
	}
	flags = append(flags, apiserverArgs...)
	if c.plan != nil {
		flags = append(flags,
			"--tls-cert-file="+filepath.Join(c.dir, "pki", "apiserver.crt"),
			"--tls-private-key-file="+filepath.Join(c.dir, "pki", "apiserver.key"),
			// The kubernetes Service's endpoint: pods reach it through
			// kube-proxy, at this address and the API server's own port.
			"--advertise-address="+c.plan.hostIP,
			"--service-cluster-ip-range="+c.plan.serviceCIDR,
			// Node names are not resolvable; logs and exec dial the node's address.
			"--kubelet-preferred-address-types=InternalIP",
		)
	}
	server, err := apiservertesting.StartTestServer(c.tb, apiservertesting.NewDefaultTestServerOptions(), flags, storage)
	if err != nil {
		c.tb.runCleanups()
		logFile.Close()
		return fmt.Errorf("start kube-apiserver: %w", err)
	}
	c.teardown = func() {
		server.TearDownFn()
		c.tb.runCleanups()
		logFile.Close()
	}
	bindPort := server.ServerOpts.SecureServing.BindPort
	if err := c.proxy.open(bindPort); err != nil {
		c.stop()
		return fmt.Errorf("open stable port %d: %w", c.proxy.port, err)
	}
	if c.plan != nil {
		c.relay = newProxyAt(bindPort, c.plan.hostIP)
		if err := c.relay.open(bindPort); err != nil {
			c.stop()
			return fmt.Errorf("open %s:%d for the kubernetes Service: %w", c.plan.hostIP, bindPort, err)
		}
		if err := c.writeKubeconfigFile(c.nodeKubeconfigPath, c.nodeServerURL()); err != nil {
			return err
		}
	}
	return c.writeKubeconfigFile(c.kubeconfigPath, c.serverURL())
}

func (c *cluster) stop() {
	c.proxy.shut()
	if c.relay != nil {
		c.relay.shut()
		c.relay = nil
	}
	if c.teardown != nil {
		c.teardown()
		c.teardown = nil
	}
}

func (c *cluster) writeKubeconfigFile(path, server string) error {
	ca, err := os.ReadFile(filepath.Join(c.dir, "pki", "apiserver.crt"))
	if err != nil {
		return fmt.Errorf("read serving certificate: %w", err)
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]s
    certificate-authority-data: %[3]s
users:
- name: %[1]s-admin
  user:
    token: %[4]s
contexts:
- name: %[1]s
  context:
    cluster: %[1]s
    user: %[1]s-admin
current-context: %[1]s
`, c.name, server, base64.StdEncoding.EncodeToString(ca), c.token)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(kubeconfig), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	log.Printf("cluster %s: kubeconfig %s", c.name, path)
	return nil
}
