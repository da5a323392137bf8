package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
)

// clusterAPI is Cluster API's core controller manager (built by build.sh from
// its Go module) running against the management cluster, with its CRDs and
// its conversion, defaulting and validating webhooks. In a real management
// cluster the webhooks are a Service with a cert-manager certificate; here the
// manager serves them on 127.0.0.1 with a certificate made for it, and the
// CRDs and webhook configurations point there by URL.
type clusterAPI struct {
	manager  *child
	health   string
	stopping atomic.Bool
}

var (
	crdResource        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	mutatingResource   = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
	validatingResource = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
)

// startClusterAPI installs Cluster API into the management cluster c from
// manifests (the folder build.sh fills: crds/*.yaml and webhook.yaml) and
// starts the manager binary; it returns once the manager's webhooks serve.
// The manager's webhook server binds its port on every address, some time
// after the port was found free: if another process took it meanwhile, the
// manager exits, and the whole start is tried again on new ports.
func startClusterAPI(c *cluster, manifests, manager string) (*clusterAPI, error) {
	if _, err := os.Stat(manager); err != nil {
		return nil, fmt.Errorf("cluster-api: %w (run test/testenv/build.sh)", err)
	}
	dir := filepath.Join(c.dir, "cluster-api")
	certs := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certs, 0o755); err != nil {
		return nil, err
	}
	cert, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	if err != nil {
		return nil, fmt.Errorf("cluster-api: webhook certificate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(certs, "tls.crt"), cert, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certs, "tls.key"), key, 0o600); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfigPath)
	if err != nil {
		return nil, err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	crds, err := readCRDs(filepath.Join(manifests, "crds"))
	if err != nil {
		return nil, err
	}
	configs, err := readManifestFile(filepath.Join(manifests, "webhook.yaml"))
	if err != nil {
		return nil, err
	}
	// The certificate is a leaf and its CA in one PEM: trusting both verifies the leaf.
	caBundle := base64.StdEncoding.EncodeToString(cert)
	logPath := filepath.Join(dir, "manager.log")
	var last error
	for attempt := 1; attempt <= 3; attempt++ {
		capi, err := startClusterAPIOnce(client, crds, configs, caBundle, certs, logPath, c.kubeconfigPath, manager)
		if err == nil {
			go capi.reportExit(logPath)
			return capi, nil
		}
		last = err
		log.Printf("cluster-api: attempt %d: %v", attempt, err)
	}
	return nil, last
}

func startClusterAPIOnce(client dynamic.Interface, crds, configs []*unstructured.Unstructured, caBundle, certs, logPath, kubeconfig, manager string) (*clusterAPI, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	webhook := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Copies: a second attempt starts again from the manifests as read.
	for _, crd := range crds {
		crd := crd.DeepCopy()
		withConversionWebhook(crd, webhook, caBundle)
		if err := serverSideApply(ctx, client, crdResource, crd); err != nil {
			return nil, err
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, client, crd.GetName()); err != nil {
			return nil, err
		}
	}
	for _, wc := range configs {
		wc := wc.DeepCopy()
		gvr := validatingResource
		if wc.GetKind() == "MutatingWebhookConfiguration" {
			gvr = mutatingResource
		}
		if err := withWebhookURL(wc, webhook, caBundle); err != nil {
			return nil, err
		}
		if err := serverSideApply(ctx, client, gvr, wc); err != nil {
			return nil, err
		}
	}
	capi := &clusterAPI{health: fmt.Sprintf("127.0.0.1:%d", ports[1])}
	capi.manager, err = startChild("cluster-api", logPath, "", manager,
		"--kubeconfig", kubeconfig,
		"--leader-elect=false",
		"--webhook-cert-dir", certs,
		fmt.Sprintf("--webhook-port=%d", ports[0]),
		"--health-addr", capi.health,
		fmt.Sprintf("--diagnostics-address=127.0.0.1:%d", ports[2]),
		"--insecure-diagnostics",
		"--v=1")
	if err != nil {
		return nil, err
	}
	if err := capi.waitReady(ctx, logPath); err != nil {
		capi.stop()
		return nil, err
	}
	return capi, nil
}

// reportExit logs the manager's end if it comes before the environment
// stops it: afterwards every Cluster write fails at its webhooks, and the
// environment's log should say why.
func (a *clusterAPI) reportExit(logPath string) {
	<-a.manager.done
	if !a.stopping.Load() {
		log.Printf("cluster-api manager exited: %v\n%s", a.manager.err, tailOf(logPath, 20))
	}
}

// waitReady waits for the manager's readiness endpoint, which checks its
// webhook server: from then on Cluster objects can be created.
func (a *clusterAPI) waitReady(ctx context.Context, logPath string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if a.manager.exited() {
			return fmt.Errorf("cluster-api manager exited: %v\n%s", a.manager.err, tailOf(logPath, 20))
		}
		if resp, err := client.Get("http://" + a.health + "/readyz"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster-api manager not ready: %w\n%s", ctx.Err(), tailOf(logPath, 20))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (a *clusterAPI) stop() {
	if a == nil {
		return
	}
	a.stopping.Store(true)
	a.manager.stop(10 * time.Second)
}

// withConversionWebhook does what Cluster API's kustomize patches
// (core/config/crd/patches/webhook_in_*.yaml) do for every CRD serving more
// than one version, with the webhook reached by URL.
func withConversionWebhook(crd *unstructured.Unstructured, url, caBundle string) {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if len(versions) < 2 {
		return
	}
	_ = unstructured.SetNestedMap(crd.Object, map[string]any{
		"strategy": "Webhook",
		"webhook": map[string]any{
			"conversionReviewVersions": []any{"v1", "v1beta1"},
			"clientConfig":             map[string]any{"url": url + "/convert", "caBundle": caBundle},
		},
	}, "spec", "conversion")
}

// withWebhookURL replaces each webhook's in-cluster Service with its URL on 127.0.0.1.
func withWebhookURL(wc *unstructured.Unstructured, url, caBundle string) error {
	hooks, _, err := unstructured.NestedSlice(wc.Object, "webhooks")
	if err != nil {
		return fmt.Errorf("%s: %w", wc.GetName(), err)
	}
	for i, h := range hooks {
		hook, ok := h.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: webhook %d is not an object", wc.GetName(), i)
		}
		path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
		hook["clientConfig"] = map[string]any{"url": url + path, "caBundle": caBundle}
		hooks[i] = hook
	}
	wc.SetNamespace("")
	// As Cluster API's kustomize names them (namePrefix capi-), not kubebuilder's generic names.
	wc.SetName("capi-" + wc.GetName())
	return unstructured.SetNestedSlice(wc.Object, hooks, "webhooks")
}

func serverSideApply(ctx context.Context, client dynamic.Interface, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	_, err = client.Resource(gvr).Patch(ctx, obj.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "testenv", Force: &force})
	if err != nil {
		return fmt.Errorf("apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

func waitEstablished(ctx context.Context, client dynamic.Interface, name string) error {
	for {
		crd, err := client.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, c := range conditions {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not established: %w", name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func readCRDs(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no CRDs in %s (run test/testenv/build.sh)", dir)
	}
	sort.Strings(files)
	var all []*unstructured.Unstructured
	for _, f := range files {
		objs, err := readManifestFile(f)
		if err != nil {
			return nil, err
		}
		all = append(all, objs...)
	}
	return all, nil
}

func readManifestFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if err == io.EOF {
				return objs, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(obj.Object) == 0 || strings.TrimSpace(obj.GetKind()) == "" {
			continue
		}
		objs = append(objs, obj)
	}
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		// Every address: the manager's webhook server binds its port on all of them.
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
