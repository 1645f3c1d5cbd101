#!/usr/bin/env bash
# Makes the KEDA operator and its CRDs available for the scale-to-zero test (test/keda/).
# The operator is built from the Go module once per version into the same cache as the control plane,
# and KEDA's CRDs are copied from the module next to it: <cache>/keda-<version>/{keda,crds/*.yaml}.
# Prints that folder on stdout. `--check` only reports (exit 1) whether the cache already holds the binary.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
modver() { awk -v m="$1" '{for (i = 1; i < NF; i++) if ($i == m) { print $(i + 1); exit }}' "$2"; }
KEDA_VERSION=$(modver github.com/kedacore/keda/v2 "$ROOT/hack/keda/go.mod")
[ -n "$KEDA_VERSION" ] || { echo "cannot read the KEDA version from hack/keda/go.mod" >&2; exit 1; }
CACHE=${EBB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ebb}
OUT="$CACHE/keda-$KEDA_VERSION"
ready() { [ -x "$OUT/keda" ] && [ -n "$(ls "$OUT"/crds/*.yaml 2>/dev/null)" ]; }
if [ "${1:-}" = --check ]; then ready && echo "$OUT" && exit 0; exit 1; fi

mkdir -p "$OUT"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
[ -n "${GOSUMDB_OFF:-}" ] && export GOSUMDB=off
exec 9>"$CACHE/.build-keda.lock"
flock 9
if ! ready; then
  cd "$ROOT/hack/keda"
  echo "building the KEDA operator ($KEDA_VERSION) into $OUT; a cold build takes 15-40 minutes on 2 cores" >&2
  start=$SECONDS
  go build -trimpath -ldflags "-s -w -X github.com/kedacore/keda/v2/version.Version=$KEDA_VERSION" \
    -o "$OUT/keda.tmp" github.com/kedacore/keda/v2/cmd/operator
  echo "built the KEDA operator in $((SECONDS - start))s" >&2
  dir=$(go mod download -json "github.com/kedacore/keda/v2@$KEDA_VERSION" | awk -F'"' '$2 == "Dir" { print $4 }')
  [ -d "$dir/config/crd/bases" ] || { echo "no config/crd/bases in $dir" >&2; exit 1; }
  mkdir -p "$OUT/crds"
  install -m 0644 "$dir"/config/crd/bases/*.yaml "$OUT/crds/"
  mv "$OUT/keda.tmp" "$OUT/keda"
fi
echo "$OUT"
