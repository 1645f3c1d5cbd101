#!/usr/bin/env bash
# Makes bin/{etcd,kube-apiserver,kube-controller-manager,kube-scheduler,kubectl,kubelet} available (the kubelet
# runs the sandbox's real nodes).
# Binaries are built from Go modules once per version into a cache outside the clone and linked into bin/.
# When KUBEBUILDER_ASSETS points at a folder that already holds a binary, that binary is used instead.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
modver() { awk -v m="$1" '{for (i = 1; i < NF; i++) if ($i == m) { print $(i + 1); exit }}' "$2"; }
K8S_VERSION=$(modver k8s.io/kubernetes "$ROOT/hack/k8s/go.mod")
ETCD_VERSION=$(modver go.etcd.io/etcd/server/v3 "$ROOT/hack/etcd/go.mod")
[ -n "$K8S_VERSION" ] && [ -n "$ETCD_VERSION" ] || { echo "cannot read tool versions from hack/*/go.mod" >&2; exit 1; }
CACHE=${EBB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ebb}
K8S_OUT="$CACHE/k8s-$K8S_VERSION"
ETCD_OUT="$CACHE/etcd-$ETCD_VERSION"
K8S_BINARIES="kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet"
mkdir -p "$ROOT/bin" "$K8S_OUT" "$ETCD_OUT"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
[ -n "${GOSUMDB_OFF:-}" ] && export GOSUMDB=off

from_assets() { [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/$1" ]; }

build_k8s() {
  local missing=()
  for b in $K8S_BINARIES; do
    from_assets "$b" || [ -x "$K8S_OUT/$b" ] || missing+=("k8s.io/kubernetes/cmd/$b")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "building ${missing[*]} ($K8S_VERSION) into $K8S_OUT; a cold build takes 10-25 minutes" >&2
  local start=$SECONDS
  (cd "$ROOT/hack/k8s" && go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION" -o "$K8S_OUT/" "${missing[@]}")
  echo "built Kubernetes binaries in $((SECONDS - start))s" >&2
}

build_etcd() {
  from_assets etcd || [ -x "$ETCD_OUT/etcd" ] && return 0
  echo "building etcd ($ETCD_VERSION) into $ETCD_OUT" >&2
  local start=$SECONDS
  (cd "$ROOT/hack/etcd" && go build -trimpath -ldflags "-s -w" -o "$ETCD_OUT/etcd" go.etcd.io/etcd/server/v3)
  echo "built etcd in $((SECONDS - start))s" >&2
}

link() {
  local b=$1 dir=$2
  if from_assets "$b"; then ln -sfn "$KUBEBUILDER_ASSETS/$b" "$ROOT/bin/$b"; else ln -sfn "$dir/$b" "$ROOT/bin/$b"; fi
}

exec 9>"$CACHE/.build.lock"
flock 9
build_etcd
build_k8s
link etcd "$ETCD_OUT"
for b in $K8S_BINARIES; do link "$b" "$K8S_OUT"; done
"$ROOT/bin/kube-apiserver" --version >&2
