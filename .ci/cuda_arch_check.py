"""Compile (device code only, nothing linked) the CUDA sources of a CUDA build folder for other
architectures, from that build's own compile commands (compile_commands.json).

    python3 .ci/cuda_arch_check.py BUILD --archs 80,89,100 [--where-differs] [--opt 0|3] [--jobs 2] [--out DIR]

Each source is compiled for the architectures the default build compiles it for
(cmake/cuda_architectures.cmake): Hopper-only files (*_sm90*) for none of these, the files of
BWPROF_CUDA_MINOR_SOURCES (FP8 from sm_89) for each, the others for one minor version per major
version (sm_89 runs their sm_80 code). With --where-differs, only where the source's device code
differs from the code BUILD compiled: where one of the tree's #if
__CUDA_ARCH__ tests in the file or the headers it includes falls differently for the architecture
than for BUILD's (for sm_80 against sm_90a: the >= 890 and >= 900 tests). Device code is compiled
at -O0 unless --opt 3 (several times faster: the front end, the code generation and the assembler's
check of every instruction for the architecture, without the optimizer). Exits 1 if a compile fails.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEARCH = [ROOT / "kernels", ROOT / "cpp" / "src", ROOT / "cpp" / "include"]
GUARD = re.compile(r"__CUDA_ARCH__\s*>=\s*(\d+)")


def includes(path: Path, seen: set) -> set:
    for name in re.findall(r'#include\s+"([^"]+)"', path.read_text(errors="ignore")):
        for base in SEARCH:
            h = base / name
            if h.is_file() and h not in seen:
                seen.add(h)
                includes(h, seen)
    return seen


def guards(src: Path) -> set:
    """The __CUDA_ARCH__ thresholds the source and the tree's headers it includes test."""
    text = "".join(f.read_text(errors="ignore") for f in [src, *sorted(includes(src, set()))])
    return {int(v) for v in GUARD.findall(text)}


def minor_sources() -> set:
    m = re.search(r"set\(BWPROF_CUDA_MINOR_SOURCES ([^)]*)\)", (ROOT / "CMakeLists.txt").read_text())
    return {(ROOT / p.replace("${CMAKE_CURRENT_SOURCE_DIR}/", "")).resolve() for p in m.group(1).split()}


def arch_number(arch: str) -> int:
    return int(re.match(r"\d+", arch).group(0))


def device_command(cmd: list, src: str, arch: str, out: Path, opt: int = 3) -> list:
    """BUILD's command for one object, rewritten to compile the device code of `src` for `arch` alone."""
    argv, skip = [], False
    if Path(cmd[0]).name == "ccache":  # a compiler launcher
        cmd = cmd[1:]
    for i, a in enumerate(cmd):
        if skip:
            skip = False
            continue
        if a in ("-o", "-MT", "-MF") or (a in ("-Xcicc", "-Xptxas") and re.fullmatch(r"-O\d", "".join(cmd[i + 1:i + 2]))):
            skip = True  # (BUILD's own device optimization, where CI set it: --opt says)
            continue
        if a in ("-c", "-MD", src) or a.startswith(("--generate-code", "-gencode", "-arch", "--threads", "-Xcompiler")):
            continue
        argv.append(a)
    fast = ["-Xcicc", "-O0", "-Xptxas", "-O0"] if opt == 0 else []
    return argv + ["-cubin", f"-arch=sm_{arch}", *fast, "-o", str(out), src]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", help="a CUDA build folder (compile_commands.json)")
    ap.add_argument("--archs", default="80,89,100", help="comma-separated, e.g. 80,89,100")
    ap.add_argument("--where-differs", action="store_true",
                    help="only the sources whose __CUDA_ARCH__ tests fall otherwise than for BUILD's architecture")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--opt", type=int, choices=(0, 3), default=0,
                    help="device optimization: 0 (the default: a check, several times faster) or 3 (as built)")
    ap.add_argument("--out", default="build-arch-check")
    a = ap.parse_args(argv)
    db = Path(a.build) / "compile_commands.json"
    if not db.is_file():
        print(f"cuda_arch_check: no {db} (a CUDA build folder, configured by CMake)", file=sys.stderr)
        return 2
    entries = [e for e in json.loads(db.read_text()) if "nvcc" in (e.get("command") or " ".join(e.get("arguments", [])))]
    if not entries:
        print(f"cuda_arch_check: {a.build} compiles no CUDA source (not a CUDA build?)", file=sys.stderr)
        return 2
    built = {arch_number(m) for e in entries for m in re.findall(r"code=\[?sm_(\d+a?)", e.get("command", ""))}
    ref = min(built) if built else 90  # the architecture BUILD's general code was compiled for
    minor = minor_sources()
    out = Path(a.out).resolve()  # the commands run in BUILD's folder
    out.mkdir(parents=True, exist_ok=True)
    jobs, plan = [], {}
    for arch in [s.strip() for s in a.archs.split(",") if s.strip()]:
        n = arch_number(arch)
        collapsed = n % 10 and any(arch_number(b) // 10 == n // 10 and arch_number(b) < n
                                   for b in a.archs.split(","))  # sm_89: general files run sm_80 code
        for e in entries:
            src = Path(e["file"]).resolve()
            if "_sm90" in src.name or src.suffix not in (".hip", ".cpp", ".cu"):
                continue
            if collapsed and src not in minor:
                continue
            if a.where_differs and not any(min(n, ref) * 10 < t <= max(n, ref) * 10 for t in guards(src)):
                continue
            cmd = e.get("arguments") or shlex.split(e["command"])
            obj = out / f"{src.relative_to(ROOT).as_posix().replace('/', '_')}.sm_{arch}.cubin"
            jobs.append((arch, src, device_command(cmd, e["file"], arch, obj, a.opt), e["directory"]))
            plan.setdefault(arch, []).append(src.relative_to(ROOT).as_posix())
    for arch, files in plan.items():
        print(f"sm_{arch}: {len(files)} sources: {' '.join(files)}")

    def run(job):
        arch, src, cmd, cwd = job
        t0 = time.monotonic()
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        return arch, src, r, time.monotonic() - t0

    t0, failed = time.monotonic(), 0
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for arch, src, r, s in pool.map(run, jobs):
            rel = src.relative_to(ROOT).as_posix()
            if r.returncode:
                failed += 1
                print(f"FAILED sm_{arch} {rel}:\n{r.stdout}{r.stderr}")
            else:
                print(f"sm_{arch} {rel}: {s:.1f} s")
    print(f"cuda_arch_check: {len(jobs)} compiles in {time.monotonic() - t0:.0f} s, {failed} failed "
          f"(reference: BUILD's sm_{ref}{'a' if ref == 90 else ''} code; {'where the code differs' if a.where_differs else 'every source'}, "
          f"device code at -O{a.opt})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
