package main

import (
	"fmt"
	"path/filepath"
	"time"
)

// controlPlane is a cluster's kube-controller-manager and kube-scheduler on
// the host, so that Deployments, ReplicaSets, EndpointSlices, ServiceAccounts
// and scheduling behave as in a real cluster. Both reach the API server
// through the cluster's stable 127.0.0.1 port, with the admin kubeconfig.
type controlPlane struct {
	controllerManager *child
	scheduler         *child
}

func startControlPlane(c *cluster, bin string) (*controlPlane, error) {
	cp := &controlPlane{}
	var err error
	cp.controllerManager, err = startChild("kube-controller-manager", filepath.Join(c.dir, "kube-controller-manager.log"), "",
		filepath.Join(bin, "kube-controller-manager"),
		"--kubeconfig", c.kubeconfigPath,
		"--cluster-name", c.name,
		// Published as kube-root-ca.crt in every namespace: the CA that pods'
		// in-cluster clients trust for the kubernetes Service.
		"--root-ca-file", filepath.Join(c.dir, "pki", "apiserver.crt"),
		"--leader-elect=false",
		// Every controller on the admin identity; pods' own tokens are issued
		// by the API server (TokenRequest), which needs no key here.
		"--use-service-account-credentials=false",
		"--secure-port=0",
		"--v=1")
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.name, err)
	}
	cp.scheduler, err = startChild("kube-scheduler", filepath.Join(c.dir, "kube-scheduler.log"), "",
		filepath.Join(bin, "kube-scheduler"),
		"--kubeconfig", c.kubeconfigPath,
		"--authentication-kubeconfig", c.kubeconfigPath,
		"--authorization-kubeconfig", c.kubeconfigPath,
		"--leader-elect=false",
		"--secure-port=0",
		"--v=1")
	if err != nil {
		cp.stop()
		return nil, fmt.Errorf("cluster %s: %w", c.name, err)
	}
	return cp, nil
}

func (cp *controlPlane) stop() {
	if cp == nil {
		return
	}
	cp.scheduler.stop(5 * time.Second)
	cp.controllerManager.stop(5 * time.Second)
}
