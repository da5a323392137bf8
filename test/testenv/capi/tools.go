//go:build tools

// Package tools pins Cluster API's core controller manager, which build.sh
// builds from this module at the version in go.mod.
package tools

import _ "sigs.k8s.io/cluster-api/core"
