// clusterprofile-consumer: a ClusterProfile consumer as SIG Multicluster's
// cluster inventory API expects one to be written, built from the published
// module (sigs.k8s.io/cluster-inventory-api) and nothing of capi-dns: it lists
// the ClusterProfiles of a namespace with the module's own clientset, builds a
// client for each with pkg/access (which runs the exec plugin its provider
// file maps to the profile's access provider: the module's
// kubeconfig-secretreader), and lists the namespaces of each cluster. One
// JSON line per profile on stdout; exit 1 when any profile gives no client
// or the list fails. The integration test (test/integration/cluster-profiles)
// runs it against the ClusterProfiles the operator produces.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/cluster-inventory-api/client/clientset/versioned"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"
)

type result struct {
	Profile    string   `json:"profile"`
	Manager    string   `json:"clusterManager"`
	Server     string   `json:"server,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"`
	Error      string   `json:"error,omitempty"`
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "the hub (management) cluster")
	namespace := flag.String("namespace", "", "the namespace of the ClusterProfiles")
	selector := flag.String("selector", "", "a label selector of the ClusterProfiles (x-k8s.io/cluster-manager=cluster-api)")
	providerFile := access.SetupProviderFileFlag()
	flag.Parse()

	hub, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail("hub kubeconfig %s: %v", *kubeconfig, err)
	}
	accessCfg, err := access.NewFromFile(*providerFile)
	if err != nil {
		fail("provider file %s: %v", *providerFile, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	profiles, err := versioned.NewForConfigOrDie(hub).ApisV1alpha1().ClusterProfiles(*namespace).
		List(ctx, metav1.ListOptions{LabelSelector: *selector})
	if err != nil {
		fail("list ClusterProfiles in %q: %v", *namespace, err)
	}
	failed := false
	out := json.NewEncoder(os.Stdout)
	for i := range profiles.Items {
		cp := &profiles.Items[i]
		r := result{Profile: cp.Namespace + "/" + cp.Name, Manager: cp.Spec.ClusterManager.Name}
		cfg, err := accessCfg.BuildConfigFromCP(cp)
		if err == nil {
			r.Server = cfg.Host
			var client *kubernetes.Clientset
			if client, err = kubernetes.NewForConfig(cfg); err == nil {
				var list, lerr = client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
				if err = lerr; err == nil {
					for _, ns := range list.Items {
						r.Namespaces = append(r.Namespaces, ns.Name)
					}
					sort.Strings(r.Namespaces)
				}
			}
		}
		if err != nil {
			r.Error = err.Error()
			failed = true
		}
		_ = out.Encode(r)
	}
	if failed {
		os.Exit(1)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "clusterprofile-consumer: "+format+"\n", args...)
	os.Exit(2)
}
