#!/usr/bin/env bash
# Debian packages the tests and benchmarks use: dig (bind9-dnsutils), NSD as
# the reference DNS server, dnsperf for load, curl; and what `npm run images`
# and its test need: mmdebstrap (Debian root file systems), gcc with the static
# C library (the pause binary), setcap (CoreDNS's file capability), umoci and
# runc (run the images), skopeo (copy them to a registry). Installs only what
# is missing, so a warm machine skips apt entirely.
set -euo pipefail
declare -A wants=([dig]=bind9-dnsutils [nsd]=nsd [dnsperf]=dnsperf [curl]=curl [unshare]=util-linux [getent]=libc-bin
  [mmdebstrap]=mmdebstrap [gcc]=gcc [setcap]=libcap2-bin [umoci]=umoci [runc]=runc [skopeo]=skopeo)
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
fi
# NSD is run by the tests and benchmarks on loopback ports, never as a service.
if command -v systemctl >/dev/null 2>&1; then systemctl disable --now nsd >/dev/null 2>&1 || true; fi
