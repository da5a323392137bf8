#!/usr/bin/env bash
# The ClusterProfile CRD of SIG Multicluster's cluster inventory API (KEP-4322) as the published Go
# module sigs.k8s.io/cluster-inventory-api ships it in config/crd/bases/: copied into crds/inventory/
# (kustomize and the test support read files), or, with --check, compared with it (lint: the copy is
# upstream's, byte for byte). As scripts/mcs-crds.sh: the module comes from the Go module proxy,
# checked against the checksum database. The operator writes ClusterProfiles (--cluster-profiles=produce)
# on the management cluster, so config/default installs it there.
set -euo pipefail
CLUSTER_INVENTORY_API_VERSION=v0.1.2
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(cd "$root" && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/cluster-inventory-api@${CLUSTER_INVENTORY_API_VERSION}" |
  python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(d["Error"]) if d.get("Error") else print(d["Dir"])')"
status=0
for f in multicluster.x-k8s.io_clusterprofiles.yaml; do
  if [[ "${1:-}" == --check ]]; then
    if ! cmp -s "$dir/config/crd/bases/$f" "$root/crds/inventory/$f"; then
      echo "crds/inventory/$f differs from sigs.k8s.io/cluster-inventory-api@${CLUSTER_INVENTORY_API_VERSION} config/crd/bases/$f: run bash scripts/cluster-inventory-crds.sh" >&2
      status=1
    fi
  else
    install -m 0644 "$dir/config/crd/bases/$f" "$root/crds/inventory/$f"
  fi
done
exit $status
