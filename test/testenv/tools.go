//go:build tools

// The build script builds kubectl and the node and control-plane binaries
// (kubelet, kube-proxy, kube-controller-manager, kube-scheduler) from the same
// k8s.io/kubernetes release as the API servers; this file keeps them, and
// their dependencies' checksums, in go.mod and go.sum.
package main

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
