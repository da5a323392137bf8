package main

import (
	"encoding/base64"
	"fmt"
	"log"
	"os"
	"path"
	"path/filepath"

	"k8s.io/apiserver/pkg/storage/storagebackend"
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
}

func newCluster(name, root, etcdURL, tokenFile, token string) (*cluster, error) {
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Join(dir, "pki"), 0o755); err != nil {
		return nil, err
	}
	proxy, err := newStableProxy()
	if err != nil {
		return nil, fmt.Errorf("cluster %s: reserve port: %w", name, err)
	}
	return &cluster{
		name:           name,
		dir:            dir,
		etcdURL:        etcdURL,
		tokenFile:      tokenFile,
		token:          token,
		kubeconfigPath: filepath.Join(root, name+".kubeconfig"),
		proxy:          proxy,
	}, nil
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
	if err := c.proxy.open(server.ServerOpts.SecureServing.BindPort); err != nil {
		c.stop()
		return fmt.Errorf("open stable port %d: %w", c.proxy.port, err)
	}
	return c.writeKubeconfig()
}

func (c *cluster) stop() {
	c.proxy.shut()
	if c.teardown != nil {
		c.teardown()
		c.teardown = nil
	}
}

func (c *cluster) writeKubeconfig() error {
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
`, c.name, c.serverURL(), base64.StdEncoding.EncodeToString(ca), c.token)
	tmp := c.kubeconfigPath + ".tmp"
	if err := os.WriteFile(tmp, []byte(kubeconfig), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, c.kubeconfigPath); err != nil {
		return err
	}
	log.Printf("cluster %s: kubeconfig %s", c.name, c.kubeconfigPath)
	return nil
}
