#!/bin/sh
# Debian 12 packages no rocBLAS; Debian 13's librocblas-dev (headers only, 66 kB) lets CI compile the
# GEMM's `vendor` rocBLAS path. Unpacked under DIR (never installed; nothing links it); prints the
# prefix to pass as BWPROF_ROCBLAS_ROOT, or nothing (and why, on stderr) where it cannot be fetched.
# Usage: .ci/rocblas_header.sh DIR
dir=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$dir/rocblas/usr
if [ ! -f "$root/include/rocblas/rocblas.h" ]; then
  apt=$dir/apt
  mkdir -p "$apt/lists/partial" "$dir/rocblas"
  echo "deb http://deb.debian.org/debian trixie main" > "$apt/sources.list"
  o="-o Dir::Etc::SourceList=$apt/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$apt/lists"
  # shellcheck disable=SC2086
  if apt-get $o update -qq >/dev/null 2>&1 && (cd "$apt" && apt-get $o download -qq librocblas-dev >/dev/null 2>&1); then
    dpkg -x "$apt"/librocblas-dev_*.deb "$dir/rocblas" && echo "rocblas-header: $(ls "$apt"/librocblas-dev_*.deb)" >&2
  else
    echo "rocblas-header: could not fetch Debian 13's librocblas-dev; the rocBLAS path is not compiled" >&2
  fi
fi
[ -f "$root/include/rocblas/rocblas.h" ] && echo "$root"
exit 0
