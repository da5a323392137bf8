#!/usr/bin/env bash
# Usage: debian-rootfs.sh DIR PACKAGE...
# A minimal Debian bookworm root file system in DIR (which must not exist):
# PACKAGE... and their dependencies, extracted (mmdebstrap's "extract" variant:
# no maintainer scripts, no dpkg, no apt, no shell unless a package brings one),
# then pruned to what a container needs. Run as root. SOURCE_DATE_EPOCH is
# passed on to mmdebstrap; the caller normalises owners and times when it packs.
set -euo pipefail
dir=$1
shift
[ $# -gt 0 ] || { echo "debian-rootfs.sh: no packages given" >&2; exit 2; }
mirror=${CAPI_DNS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${CAPI_DNS_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
includes=$(IFS=,; echo "$*")

# The extract hook still sees the downloaded .debs: record each package's
# control fields where image scanners look for them in distroless images
# (/var/lib/dpkg/status.d/NAME), since the extract variant leaves dpkg's
# status empty.
status_hook='mkdir -p "$1/var/lib/dpkg/status.d"
for deb in "$1"/var/cache/apt/archives/*.deb; do
  pkg=$(dpkg-deb -f "$deb" Package)
  dpkg-deb -f "$deb" > "$1/var/lib/dpkg/status.d/$pkg"
done'

mmdebstrap --quiet --mode=root --variant=extract --format=directory \
  --include="$includes" \
  --extract-hook="$status_hook" \
  bookworm "$dir" \
  "deb $mirror bookworm main" \
  "deb $mirror bookworm-updates main" \
  "deb $security bookworm-security main"

cd "$dir"
# Setup leftovers and host facts (mmdebstrap copies the host's resolv.conf and
# hostname; the container runtime mounts its own): nothing of the build
# machine may end up in the image.
rm -rf dev/* etc/apt etc/dpkg etc/resolv.conf etc/hostname etc/fstab var/cache/apt \
  var/lib/apt var/log/* var/lib/dpkg/arch var/lib/dpkg/status var/lib/dpkg/info \
  var/lib/dpkg/triggers var/lib/dpkg/updates var/lib/dpkg/alternatives
# Documentation but the copyright files, which the licences ask to ship.
rm -rf usr/share/man usr/share/info usr/share/lintian usr/share/locale usr/share/bash-completion usr/share/gdb
find usr/share/doc -mindepth 2 ! -name copyright ! -type d -delete 2>/dev/null || true
find usr/share/doc -mindepth 1 -type d -empty -delete 2>/dev/null || true

# Users: numeric IDs are what the manifests run as (runAsNonRoot needs one);
# the names keep tools that look them up (id, getpwuid in Node's os.userInfo)
# working. 65532 is distroless's "nonroot", 65535 the pause image's user.
cat > etc/passwd <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
PASSWD
cat > etc/group <<'GROUP'
root:x:0:
nogroup:x:65534:
nonroot:x:65532:
GROUP
# glibc's built-in default would try DNS before /etc/hosts.
printf 'passwd: files\ngroup: files\nhosts: files dns\n' > etc/nsswitch.conf
mkdir -p home/nonroot root tmp
chmod 0700 root
chmod 1777 tmp
# ca-certificates' postinst (not run here) builds the bundle from every
# certificate it ships, in name order: do the same.
if [ -d usr/share/ca-certificates/mozilla ]; then
  mkdir -p etc/ssl/certs
  LC_ALL=C find usr/share/ca-certificates -name '*.crt' | LC_ALL=C sort | xargs cat > etc/ssl/certs/ca-certificates.crt
fi
