#!/usr/bin/env bash
# SPIKE for issue 12 (feasibility only, not the deliverable): can a real
# kubelet run a real pod on these machines? It starts, as root:
#   - the test environment (real kube-apiserver + etcd) with cluster-a,
#   - a network namespace "spike12" joined to the host by a veth pair
#     (10.250.12.1 host side, 10.250.12.2 node side), standing in for a node,
#   - containerd (Debian's, own root/state/socket under $WORK) and a kubelet
#     built from the pinned k8s.io/kubernetes release, both inside that netns,
#   - socat on 10.250.12.1 forwarding to the API server's 127.0.0.1 port
#     (the API server listens on loopback only, which the netns cannot reach),
# imports a busybox image and a pause image built here with umoci, runs a pod
# and prints its logs. Everything is removed on exit, also on failure.
#
# Result (2026-11-23, Debian 12 containerd 1.6.20, runc 1.1.5, CNI plugins
# 1.1.1, kubelet v1.35.4): node Ready about 1 s after kubelet starts, pod
# Running about 1 s after it is created, `kubectl logs` and `exec` work.
# The three things these VMs need are commented where they are set:
# nsenter instead of `ip netns exec`, restrict_oom_score_adj, failCgroupV1.
#
# Needs (Debian): containerd runc containernetworking-plugins busybox-static
# umoci socat; Go for the kubelet build. KUBELET, KUBECTL and TESTENV may
# point at prebuilt binaries.
# Usage: sudo test/nodes/spike.sh            # run once and clean up
#        KEEP=1 test/nodes/spike.sh          # keep running until $WORK/stop exists
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
WORK=${WORK:-$(mktemp -d /tmp/capi-dns-spike12-XXXXXX)}
NS=spike12
HOST_IP=10.250.12.1
NODE_IP=10.250.12.2
POD_CIDR=10.250.13.0/24
# Each kubelet needs its own cgroup root: with the default "/" two kubelets on
# one machine share /kubepods and each removes the other's pods as orphans.
CGROUP_ROOT=/capi-dns-spike12
# The API server prefers the Hostname address when it dials a kubelet (logs,
# exec); naming the node by its IP avoids a DNS lookup of a made-up name.
NODE_NAME=$NODE_IP
KUBECTL=${KUBECTL:-$root/.cache/bin/kubectl}
TESTENV=${TESTENV:-$root/.cache/bin/testenv}
KUBELET=${KUBELET:-$WORK/kubelet}
pids=()

log() { echo "spike: $(date +%T) $*" >&2; }

cleanup() {
  set +e
  log "cleaning up"
  # Pods first, while kubelet and containerd still run, so their sandboxes
  # (netns, mounts, shims) are torn down by their owners.
  if [ -n "${KC_NODE:-}" ] && [ -f "$KC_NODE" ]; then
    "$KUBECTL" --kubeconfig "$KC_HOST" delete pod --all --grace-period=1 --wait=true --timeout=30s >/dev/null 2>&1
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null
  done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  # Shims outlive containerd by design; kill the ones of this containerd.
  for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $WORK/" || true); do kill -9 "$p"; done
  # Containers still running (pods not deleted, e.g. the API server was gone)
  # are exactly the processes in our cgroup root; kill them, then remove it.
  if [ -d "/sys/fs/cgroup/pids$CGROUP_ROOT" ]; then
    find "/sys/fs/cgroup/pids$CGROUP_ROOT" -name cgroup.procs -exec cat {} + | xargs -r kill -9
    sleep 0.5
  fi
  for c in /sys/fs/cgroup/*"$CGROUP_ROOT"; do
    [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  grep -o " $WORK[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done
  # Pod netns that containerd of this run created and did not remove.
  for n in $(ip netns list | awk '/^cni-/{print $1}'); do
    grep -qx "$n" "$WORK/netns-before" || ip netns delete "$n"
  done
  ip netns delete "$NS" 2>/dev/null
  # `ip netns add` bind-mounts /run/netns onto itself when it creates it.
  if [ -f "$WORK/created-dirs" ]; then
    while read -r d; do
      if [ "$d" = /run/netns ]; then
        [ -z "$(ls -A /run/netns)" ] && umount /run/netns && rmdir /run/netns
      else
        rm -rf "$d"
      fi
    done <"$WORK/created-dirs"
  fi
  ip link delete spk12h 2>/dev/null
  [ -z "${KEEP_WORK:-}" ] && rm -rf "$WORK"
  log "done"
}
trap cleanup EXIT

mkdir -p "$WORK"/{containerd/root,containerd/state,cni/net.d,kubelet,logs}
# containerd 1.6 keeps shim sockets and fifos in /run/containerd and libcni its
# cache in /var/lib/cni whatever the config says; remove them (and /run/netns)
# only if we made them.
for d in /run/containerd /var/lib/cni /run/netns; do [ -e "$d" ] || echo "$d" >>"$WORK/created-dirs"; done
ip netns list | awk '{print $1}' >"$WORK/netns-before"

if [ ! -x "$KUBELET" ]; then
  log "building kubelet (k8s.io/kubernetes from test/testenv/go.mod)"
  ver=$(cd "$root/test/testenv" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
  # A copy of test/testenv's module: kubelet needs go.sum entries (cadvisor,
  # cgroups, ...) the test environment does not; -mod=mod adds them there.
  mkdir -p "$WORK/kbuild" && cp "$root/test/testenv/go.mod" "$root/test/testenv/go.sum" "$WORK/kbuild/"
  (cd "$WORK/kbuild" && nice -n 19 go build -mod=mod \
    -ldflags "-X k8s.io/component-base/version.gitVersion=$ver" \
    -o "$KUBELET" k8s.io/kubernetes/cmd/kubelet)
fi

log "images: busybox and pause from Debian's busybox-static, packed with umoci"
(
  cd "$WORK" && umoci init --layout oci >/dev/null
  umoci new --image oci:busybox
  umoci unpack --image oci:busybox bundle >/dev/null
  mkdir -p bundle/rootfs/bin && cp /bin/busybox bundle/rootfs/bin/busybox
  for a in sh sleep echo cat ls hostname ip wget nc; do ln -s busybox "bundle/rootfs/bin/$a"; done
  umoci repack --image oci:busybox bundle
  umoci config --image oci:busybox --config.entrypoint /bin/sh --tag busybox
  umoci config --image oci:busybox --clear=config.entrypoint \
    --config.entrypoint /bin/sleep --config.entrypoint 2147483647 --tag pause
  tar -C oci -cf images.tar .
)

log "network namespace $NS + veth"
ip netns add "$NS"
ip link add spk12h type veth peer name spk12n netns "$NS"
ip addr add "$HOST_IP/30" dev spk12h && ip link set spk12h up
ip -n "$NS" addr add "$NODE_IP/30" dev spk12n
ip -n "$NS" link set spk12n up && ip -n "$NS" link set lo up
ip netns exec "$NS" sysctl -qw net.ipv4.ip_forward=1
# Node-side default route to the host end: kubelet and CNI want a default
# route to pick the node address; nothing is sent beyond the veth.
ip -n "$NS" route add default via "$HOST_IP"

log "containerd"
# nsenter --net, not `ip netns exec`: the latter also unshares the mount
# namespace and mounts a fresh /sys, hiding /sys/fs/cgroup; kubelet then fails
# with "failed to get mounted cgroup subsystems: failed to find cgroup mounts".
cat >"$WORK/containerd/config.toml" <<EOF
version = 2
root = "$WORK/containerd/root"
state = "$WORK/containerd/state"
[grpc]
  address = "$WORK/containerd/containerd.sock"
[ttrpc]
  address = "$WORK/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$WORK/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/library/spike:pause"
  # These VMs deny CAP_SYS_RESOURCE even to root (CapEff 000001fffeffffff).
  # Without this, runc fails to set the sandbox's oom_score_adj of -998:
  # "runc create failed: unable to start container process: can't get final
  # child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$WORK/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$WORK/cni/net.d"
EOF
cat >"$WORK/cni/net.d/10-spike.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "spike",
  "plugins": [
    {"type": "bridge", "bridge": "spk12br", "isGateway": true, "ipMasq": false,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]],
              "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$WORK/cni/ipam"}},
    {"type": "loopback"}
  ]
}
EOF
nsenter --net="/var/run/netns/$NS" nice -n 19 containerd --config "$WORK/containerd/config.toml" \
  >"$WORK/logs/containerd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$WORK/containerd/containerd.sock" ] && break; sleep 0.1; done
[ -S "$WORK/containerd/containerd.sock" ] || { log "containerd did not start"; tail "$WORK/logs/containerd.log"; exit 1; }
CTR="ctr --address $WORK/containerd/containerd.sock -n k8s.io"
$CTR images import --base-name docker.io/library/spike "$WORK/images.tar"
$CTR images ls -q

log "test environment (cluster-a)"
nice -n 19 "$TESTENV" --dir "$WORK/env" --workload-clusters cluster-a \
  >"$WORK/logs/testenv.out" 2>"$WORK/logs/testenv.log" &
pids+=($!)
for _ in $(seq 300); do grep -q '"ready":true' "$WORK/logs/testenv.out" 2>/dev/null && break; sleep 0.5; done
grep -q '"ready":true' "$WORK/logs/testenv.out" || { log "test environment did not start"; tail "$WORK/logs/testenv.log"; exit 1; }
KC_HOST="$WORK/env/cluster-a.kubeconfig"
api_port=$(grep -o 'server: https://127.0.0.1:[0-9]*' "$KC_HOST" | grep -o '[0-9]*$')

log "API server port $api_port reachable from the node as $HOST_IP:6443"
socat "TCP-LISTEN:6443,bind=$HOST_IP,fork,reuseaddr" "TCP:127.0.0.1:$api_port" &
pids+=($!)
KC_NODE="$WORK/kubelet/kubeconfig"
sed -e "s#server: https://127.0.0.1:$api_port#server: https://$HOST_IP:6443\n    tls-server-name: localhost#" "$KC_HOST" >"$KC_NODE"

log "kubelet"
for h in /sys/fs/cgroup/*; do
  [ "$h" = /sys/fs/cgroup/unified ] && continue
  mkdir -p "$h$CGROUP_ROOT"
done
# cgroup v1 cpuset: a new cgroup has no CPUs or memory nodes until given some.
cp /sys/fs/cgroup/cpuset/cpuset.cpus "/sys/fs/cgroup/cpuset$CGROUP_ROOT/cpuset.cpus"
cp /sys/fs/cgroup/cpuset/cpuset.mems "/sys/fs/cgroup/cpuset$CGROUP_ROOT/cpuset.mems"
cat >"$WORK/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false  # these VMs mount cgroup v1 (hybrid); kubelet 1.35 refuses v1 without this
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
containerRuntimeEndpoint: unix://$WORK/containerd/containerd.sock
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzPort: 0
failSwapOn: false
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
podCIDR: $POD_CIDR
resolvConf: ""
registerNode: true
cgroupsPerQOS: true
enforceNodeAllocatable: []
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF
nsenter --net="/var/run/netns/$NS" nice -n 19 "$KUBELET" --config "$WORK/kubelet/config.yaml" \
  --kubeconfig "$KC_NODE" --root-dir "$WORK/kubelet/root" --cert-dir "$WORK/kubelet/pki" \
  --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v=2 \
  >"$WORK/logs/kubelet.log" 2>&1 &
pids+=($!)
t0=$(date +%s)

log "waiting for node Ready"
for _ in $(seq 120); do
  st=$("$KUBECTL" --kubeconfig "$KC_HOST" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)
  [ "$st" = True ] && break
  sleep 1
done
"$KUBECTL" --kubeconfig "$KC_HOST" get nodes -o wide
log "node Ready after $(($(date +%s) - t0))s"

"$KUBECTL" --kubeconfig "$KC_HOST" create serviceaccount default 2>/dev/null || true
"$KUBECTL" --kubeconfig "$KC_HOST" apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: hello}
spec:
  nodeName: $NODE_NAME  # no kube-scheduler in this spike
  automountServiceAccountToken: false
  containers:
  - name: hello
    image: docker.io/library/spike:busybox
    imagePullPolicy: Never
    command: [/bin/sh, -c, 'echo hello from a real pod on \$(hostname) ip \$(ip -4 -o addr show eth0 | awk "{print \\\$4}"); sleep 3600']
EOF
t1=$(date +%s)
"$KUBECTL" --kubeconfig "$KC_HOST" wait pod/hello --for=condition=Ready --timeout=120s || true
log "pod Ready after $(($(date +%s) - t1))s"
"$KUBECTL" --kubeconfig "$KC_HOST" get pods -o wide
"$KUBECTL" --kubeconfig "$KC_HOST" logs hello
ps -o rss=,comm= -p "$(pgrep -d, -f "$WORK/containerd/config.toml"),$(pgrep -d, -f "$WORK/kubelet/config.yaml")" || true

if [ -n "${KEEP:-}" ]; then
  log "KEEP: kubeconfig $KC_HOST; touch $WORK/stop to clean up"
  while [ ! -e "$WORK/stop" ]; do sleep 1; done
fi
