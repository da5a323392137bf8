#!/usr/bin/env bash
# Debian packages the tests and benchmarks use: dig (bind9-dnsutils), NSD as
# the reference DNS server, dnsperf for load, curl; what `npm run images`
# and its test need: mmdebstrap (Debian root file systems), gcc with the static
# C library (the pause binary), setcap (CoreDNS's file capability), umoci and
# runc (run the images), skopeo (copy them to a registry); python3, make and g++
# for node-gyp, which `npm ci` runs to build the dns-server's batched UDP module
# (scripts/build-native.sh); and for the test
# environment's nodes (testenv --nodes) containerd, the CNI plugins, iptables
# and conntrack for kube-proxy, iproute2; the DNS peers the transfer and DNSSEC
# tests run as secondaries and validators (Knot, BIND with dnssec-verify,
# unbound, ldns-verify-zone). Installs only what is missing, so a
# warm machine skips apt entirely.
set -euo pipefail
declare -A wants=([dig]=bind9-dnsutils [nsd]=nsd [dnsperf]=dnsperf [curl]=curl [unshare]=util-linux [getent]=libc-bin
  [mmdebstrap]=mmdebstrap [gcc]=gcc [setcap]=libcap2-bin [umoci]=umoci [runc]=runc [skopeo]=skopeo
  [containerd]=containerd [/usr/lib/cni/bridge]=containernetworking-plugins
  [iptables]=iptables [conntrack]=conntrack [ip]=iproute2 [nsenter]=util-linux
  [promtool]=prometheus [python3]=python3 [make]=make [g++]=g++
  [knotd]=knot [named]=bind9 [dnssec-verify]=bind9-utils [unbound]=unbound [ldns-verify-zone]=ldnsutils)
missing=()
for cmd in "${!wants[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing+=("${wants[$cmd]}")
done
# gcc -static needs libc.a, which gcc only recommends.
[ -f "/usr/lib/$(uname -m)-linux-gnu/libc.a" ] || missing+=(libc6-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # A freshly installed nsd may have been started as a service on port 53, where the demo binds.
  if pgrep -x nsd >/dev/null 2>&1; then service nsd stop >/dev/null 2>&1 || pkill -x nsd || true; fi
  # Likewise the other DNS peers, which the tests run on loopback ports of their own.
  for svc in knot named unbound; do service "$svc" stop >/dev/null 2>&1 || true; done
  # Likewise a Prometheus service on port 9090: the tests run their own, on an ephemeral port.
  if pgrep -x prometheus >/dev/null 2>&1; then service prometheus stop >/dev/null 2>&1 || true; fi
fi
# NSD and Prometheus are run by the tests and benchmarks on loopback ports, never as services.
if command -v systemctl >/dev/null 2>&1; then systemctl disable --now nsd prometheus knot named unbound >/dev/null 2>&1 || true; fi
