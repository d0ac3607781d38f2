#!/usr/bin/env bash
# The folder mk/attn_verify.sh reads on the GPU machine, made here from a CUDA build folder: the Python
# module for the GPU machine's Python (mk/module_for.sh) and the C++ test binary, each stripped and
# xz-compressed, then the folder's size and all that a device call carries (tracked and untracked files)
# against its 64 MiB (an exit status of 1 past it). Usage, from the repository root, after `make build`:
#   PY=/path/to/python3.12 mk/attn_carry.sh [BUILD] [CARRY]
set -euo pipefail
PY=${PY:-python3.12}
BUILD=${1:-build}
CARRY=${2:-SCRATCH}
[ -x "$BUILD/bwprof_tests" ] || { echo "attn_carry: no $BUILD/bwprof_tests (make build first)" >&2; exit 2; }
for tool in xz strip; do
  command -v "$tool" > /dev/null || { echo "attn_carry: $tool is needed (apt-get install xz-utils binutils)" >&2; exit 2; }
done
command -v "$PY" > /dev/null || { echo "attn_carry: no $PY (set PY to the GPU machine's Python version)" >&2; exit 2; }
mkdir -p "$CARRY"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mod=$(PY="$PY" mk/module_for.sh "$BUILD" "$tmp/mod" | tail -n 1)
strip -o "$tmp/module" "$mod"
xz -T0 -6 -c "$tmp/module" > "$CARRY/$(basename "$mod").xz"
strip -o "$tmp/tests" "$BUILD/bwprof_tests"
xz -T0 -6 -c "$tmp/tests" > "$CARRY/tests.xz"
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
sum() { awk '{ s += $1 } END { print s + 0 }'; }
carry=$(find "$CARRY" -type f -printf '%s\n' | sum)
# What a call carries: the tracked files and the untracked ones git does not ignore (CARRY among them when
# it lies in the tree; added once more when it does not).
travel=$(git ls-files -z -co --exclude-standard | xargs -0 stat -c %s 2> /dev/null | sum)
case "$(realpath "$CARRY")/" in "$(git rev-parse --show-toplevel)"/*) ;; *) travel=$((travel + carry)) ;; esac
echo "attn_carry: $CARRY $(mib "$carry") MiB; with the rest of the tree a call carries $(mib "$travel") MiB of 64"
[ "$travel" -le $((64 * 1048576)) ] || { echo "attn_carry: over 64 MiB: take something out of $CARRY" >&2; exit 1; }
