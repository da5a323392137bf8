#!/usr/bin/env bash
# Builds the test environment binary, kubectl, the node and control-plane
# binaries (kubelet, kube-proxy, kube-controller-manager, kube-scheduler; all
# from the same k8s.io/kubernetes release as the API servers), Cluster API's
# manager, Helm, a ClusterProfile consumer with its exec plugin, and CoreDNS
# into .cache/bin. Go's build cache makes a second
# run with nothing changed take seconds.
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
# The API servers report the release too: Cluster API's manager refuses one
# that says v0.0.0-master ("minimum required version is v1.20.0").
minor=${k8s#v1.}; minor=${minor%%.*}
apiserver_version="$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
go build -ldflags "$apiserver_version" -o "$bin/testenv" .
go build -ldflags "$version" -o "$bin/kubectl" k8s.io/kubernetes/cmd/kubectl
# Always built: the end-to-end test runs real pods on nodes of the test
# environment (testenv --nodes), and CI runs it.
for cmd in kubelet kube-proxy kube-controller-manager kube-scheduler; do
  echo "testenv: building $cmd ($k8s)" >&2
  go build -ldflags "$version" -o "$bin/$cmd" "k8s.io/kubernetes/cmd/$cmd"
done
# Cluster API's core controller manager and its manifests, from its own module
# (capi/go.mod) at the release pinned there: its Kubernetes libraries are its
# own, not those of the API servers above.
capi_version=$(cd capi && go list -m -f '{{.Version}}' sigs.k8s.io/cluster-api)
echo "testenv: building Cluster API $capi_version (core controller manager)" >&2
(cd capi && go build -o "$bin/cluster-api-manager" sigs.k8s.io/cluster-api/core)
capi_src=$(cd capi && go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)
capi_out="$root/.cache/cluster-api"
rm -rf "$capi_out" && mkdir -p "$capi_out/crds"
cp "$capi_src"/core/config/crd/bases/*.yaml "$capi_out/crds/"
cp "$capi_src/core/config/webhook/manifests.yaml" "$capi_out/webhook.yaml"
chmod -R u+w "$capi_out"
echo "$capi_version" > "$capi_out/VERSION"
# The Gateway API CRDs (spec.gatewayRef's Gateways and routes), from the
# module at a pinned release: the standard channel, and the experimental one
# for tests that want it. v1.7 needs a newer Go than this project builds with.
GATEWAY_API_VERSION=v1.6.3
gw_out="$root/.cache/gateway-api"
if [ "$(cat "$gw_out/VERSION" 2>/dev/null || true)" != "$GATEWAY_API_VERSION" ]; then
  echo "testenv: Gateway API $GATEWAY_API_VERSION CRDs" >&2
  gw_src=$(go mod download -json "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  rm -rf "$gw_out" && mkdir -p "$gw_out/standard" "$gw_out/experimental"
  # CRDs only: the channel folders also hold a ValidatingAdmissionPolicy and a kustomization.
  for channel in standard experimental; do
    for f in "$gw_src/config/crd/$channel"/gateway.networking*.yaml; do
      case "$f" in *_vap_*) ;; *) cp "$f" "$gw_out/$channel/" ;; esac
    done
  done
  chmod -R u+w "$gw_out"
  echo "$GATEWAY_API_VERSION" > "$gw_out/VERSION"
fi
# Helm's command line from its own module (helm/go.mod) at the release pinned
# there, for the chart's tests (charts/capi-dns): as Cluster API, its
# Kubernetes libraries are its own. -X sets the version `helm version` reports,
# as Helm's Makefile does for a release.
helm_version=$(cd helm && go list -m -f '{{.Version}}' helm.sh/helm/v4)
echo "testenv: building Helm $helm_version" >&2
(cd helm && go build -ldflags "-X helm.sh/helm/v4/internal/version.version=$helm_version" -o "$bin/helm" helm.sh/helm/v4/cmd/helm)
# A ClusterProfile consumer (SIG Multicluster's cluster inventory, KEP-4322) and the
# module's kubeconfig-secretreader exec plugin, from their own module
# (clusterprofile/go.mod) at the sigs.k8s.io/cluster-inventory-api release pinned
# there: the consumer the cluster-profiles integration test runs against what the
# operator produces is the module's pkg/access and plugin, not capi-dns code.
inventory_version=$(cd clusterprofile && go list -m -f '{{.Version}}' sigs.k8s.io/cluster-inventory-api)
echo "testenv: building the ClusterProfile consumer and kubeconfig-secretreader plugin (cluster-inventory-api $inventory_version)" >&2
(cd clusterprofile && go build -o "$bin/clusterprofile-consumer" . &&
  go build -o "$bin/kubeconfig-secretreader-plugin" sigs.k8s.io/cluster-inventory-api/plugins/kubeconfig-secretreader/cmd/plugin)
# CoreDNS is installed from its own module at a pinned release: its
# dependency graph stays exactly the one CoreDNS ships, not merged with ours.
if [ "$("$bin/coredns" -version 2>/dev/null | grep -o 'CoreDNS-[0-9.]*' || true)" != "CoreDNS-${COREDNS_VERSION#v}" ]; then
  echo "testenv: building CoreDNS $COREDNS_VERSION" >&2
  GOBIN="$bin" GOFLAGS=-mod=mod go install "github.com/coredns/coredns@$COREDNS_VERSION"
fi
# sed, not head: head exits after one line and CoreDNS, still writing, dies of SIGPIPE (pipefail).
"$bin/coredns" -version | sed -n 1p >&2
echo "testenv: binaries in $bin" >&2
