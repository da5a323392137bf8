#!/usr/bin/env bash
# The Multi-Cluster Services CRDs (ServiceExport, ServiceImport) as the published Go module
# sigs.k8s.io/mcs-api ships them in config/crd/: copied into crds/mcs/ (kustomize and the test
# support read files), or, with --check, compared with it (lint: the copies are upstream's, byte
# for byte). The module comes from the Go module proxy, checked against the checksum database.
set -euo pipefail
MCS_API_VERSION=v0.5.2
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(cd "$root" && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/mcs-api@${MCS_API_VERSION}" |
  python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(d["Error"]) if d.get("Error") else print(d["Dir"])')"
status=0
for f in multicluster.x-k8s.io_serviceexports.yaml multicluster.x-k8s.io_serviceimports.yaml; do
  if [[ "${1:-}" == --check ]]; then
    if ! cmp -s "$dir/config/crd/$f" "$root/crds/mcs/$f"; then
      echo "crds/mcs/$f differs from sigs.k8s.io/mcs-api@${MCS_API_VERSION} config/crd/$f: run bash scripts/mcs-crds.sh" >&2
      status=1
    fi
  else
    install -m 0644 "$dir/config/crd/$f" "$root/crds/mcs/$f"
  fi
done
exit $status
