//go:build tools

// Package tools pins Helm's command line, which build.sh builds from this
// module at the version in go.mod (its Kubernetes libraries are its own, not
// those of the API servers' module).
package tools

import _ "helm.sh/helm/v4/cmd/helm"
