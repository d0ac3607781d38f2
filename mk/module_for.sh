#!/usr/bin/env bash
# Builds bwprof._core for another CPython than the build folder's (by default python3.12, the GPU
# machine's) on this machine, from that build folder's libraries: the binding sources are compiled
# again against the other Python's headers and linked by the very commands CMake wrote for the local
# module (read from ninja), so a GPU-machine call needs no build of its own. Needs a CUDA build
# folder made with Ninja (`make build` here). Usage, from the repository root:
#   PY=/path/to/python3.12 mk/module_for.sh [BUILD] [OUTDIR]
# then copy OUTDIR/_core<suffix> into python/bwprof/ on the GPU machine (gzip it to carry it).
set -euo pipefail
PY=${PY:-python3.12}
BUILD=$(cd "${1:-build}" && pwd)
OUTDIR=$(mkdir -p "${2:-build-module}" && cd "${2:-build-module}" && pwd)
inc=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
suffix=$("$PY" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
mod=$(ninja -C "$BUILD" -t targets all | sed -n 's/^\(.*_core\.[^:]*\.so\): .*/\1/p' | head -n 1)
[ -n "$mod" ] || { echo "module_for: no _core module target in $BUILD" >&2; exit 2; }
cmds=$(ninja -C "$BUILD" -t commands "$mod" | grep -E 'CMakeFiles/_core\.dir/')
old_inc=$(printf '%s\n' "$cmds" | grep -o -- '-isystem [^ ]*/include/python3\.[0-9]*' | head -n 1 | cut -d' ' -f2)
[ -n "$old_inc" ] || { echo "module_for: the build's Python include folder not found in its commands" >&2; exit 2; }
cd "$BUILD"
printf '%s\n' "$cmds" | sed -e "s#^ccache ##" -e "s#$old_inc#$inc#g" \
    -e "s#CMakeFiles/_core\.dir/python/src/#$OUTDIR/#g" -e "s#$mod#$OUTDIR/_core$suffix#g" \
    -e "s# -MD -MT [^ ]* -MF [^ ]*##" | while IFS= read -r c; do
  bash -c "$c"
done
echo "$OUTDIR/_core$suffix"
