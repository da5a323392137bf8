#!/usr/bin/env bash
# Builds the test environment binary, kubectl, the node and control-plane
# binaries (kubelet, kube-proxy, kube-controller-manager, kube-scheduler; all
# from the same k8s.io/kubernetes release as the API servers) and CoreDNS into
# .cache/bin. Go's build cache makes a second run with nothing changed take
# seconds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="$root/.cache/bin"
mkdir -p "$bin"

# Pinned releases. kubectl comes from the k8s.io/kubernetes version in go.mod.
COREDNS_VERSION=v1.14.7

cd "$here"
k8s=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
# The release a binary reports (kubelet registers it as the node's version;
# without it every component says v0.0.0-master).
version="-X k8s.io/component-base/version.gitVersion=$k8s"
echo "testenv: building test environment and kubectl ($k8s)" >&2
go build -o "$bin/testenv" .
go build -ldflags "$version" -o "$bin/kubectl" k8s.io/kubernetes/cmd/kubectl
# Always built: the end-to-end test runs real pods on nodes of the test
# environment (testenv --nodes), and CI runs it.
for cmd in kubelet kube-proxy kube-controller-manager kube-scheduler; do
  echo "testenv: building $cmd ($k8s)" >&2
  go build -ldflags "$version" -o "$bin/$cmd" "k8s.io/kubernetes/cmd/$cmd"
done
# CoreDNS is installed from its own module at a pinned release: its
# dependency graph stays exactly the one CoreDNS ships, not merged with ours.
if [ "$("$bin/coredns" -version 2>/dev/null | grep -o 'CoreDNS-[0-9.]*' || true)" != "CoreDNS-${COREDNS_VERSION#v}" ]; then
  echo "testenv: building CoreDNS $COREDNS_VERSION" >&2
  GOBIN="$bin" GOFLAGS=-mod=mod go install "github.com/coredns/coredns@$COREDNS_VERSION"
fi
# sed, not head: head exits after one line and CoreDNS, still writing, dies of SIGPIPE (pipefail).
"$bin/coredns" -version | sed -n 1p >&2
echo "testenv: binaries in $bin" >&2
