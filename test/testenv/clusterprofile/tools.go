//go:build tools

// Package tools pins the module's kubeconfig-secretreader exec plugin, which
// build.sh builds from this module at the version in go.mod, beside the
// consumer: the plugin a ClusterProfile consumer's provider file names.
package tools

import _ "sigs.k8s.io/cluster-inventory-api/plugins/kubeconfig-secretreader/cmd/plugin"
