//go:build tools

// The build script installs kubectl from the same k8s.io/kubernetes release
// as the API servers; this file keeps it in go.mod.
package main

import (
	_ "k8s.io/kubernetes/cmd/kubectl"
)
