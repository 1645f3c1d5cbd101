#!/usr/bin/env bash
# Runs controller-gen with the given arguments in hack/crdgen (the package holding the types to render).
# controller-gen is built from its Go module once per version (the one hack/crdgen/go.mod requires) into a
# cache outside the clone and linked into bin/; build messages go to stderr, so stdout is controller-gen's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MOD="$ROOT/hack/crdgen"
VERSION=$(awk '$1 == "sigs.k8s.io/controller-tools" { print $2; exit }' "$MOD/go.mod")
[ -n "$VERSION" ] || { echo "cannot read the controller-tools version from hack/crdgen/go.mod" >&2; exit 1; }
CACHE=${EBB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ebb}
OUT="$CACHE/controller-gen-$VERSION"
mkdir -p "$ROOT/bin" "$OUT"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
[ -n "${GOSUMDB_OFF:-}" ] && export GOSUMDB=off

if [ ! -x "$OUT/controller-gen" ]; then
  exec 9>"$CACHE/.build.lock"
  flock 9
  if [ ! -x "$OUT/controller-gen" ]; then
    echo "building controller-gen $VERSION into $OUT" >&2
    start=$SECONDS
    (cd "$MOD" && go build -trimpath -ldflags "-s -w" -o "$OUT/controller-gen" sigs.k8s.io/controller-tools/cmd/controller-gen)
    echo "built controller-gen in $((SECONDS - start))s" >&2
  fi
  exec 9>&-
fi
ln -sfn "$OUT/controller-gen" "$ROOT/bin/controller-gen"
cd "$MOD"
exec "$OUT/controller-gen" "$@"
