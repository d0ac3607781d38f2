"""The checks and benchmarks that need a GPU, as named suites (`make gpu-check`, `make gpu-bench SUITE=...`).

    python3 benchmarks/gpu_suites.py list                 # the suites and what each runs
    python3 benchmarks/gpu_suites.py check --out DIR      # the GPU tests, then compute-sanitizer memcheck
    python3 benchmarks/gpu_suites.py gemm --out DIR       # one benchmark suite (bwprof beside PyTorch)
    python3 benchmarks/gpu_suites.py gemm --dry-run       # print the commands only

Every step runs in its own process under its own time limit and writes its output to DIR/<step>.log
(a benchmark's rows also to DIR/<step>.csv or a run folder); the last lines of each log and its exit
status are printed, and the script exits 1 if any step failed. `-- ARGS` passes more arguments to
the suite's benchmark scripts (e.g. `gemm -- --quick`); `--only pytest,memcheck_py` runs some steps.

`--before TREE` (attention, gemm, memory_bound, compute) also runs the same scripts from another checkout of
bwprof (built with `make build` there), alternating before/after twice on the same GPU, and compares
the rows with benchmarks/compare_runs.py: how to show that a change does not move the figures.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Step:
    """One command of a suite: argv ({py} the Python, {out} the log folder, {build} the CMake build
    folder, {tree} the checkout it runs from), a time limit, extra environment."""

    name: str
    argv: Tuple[str, ...]
    timeout_s: int
    env: Tuple[Tuple[str, str], ...] = ()
    needs: Optional[str] = None  # a program that must be on PATH (else the step is skipped, said so)
    csv: bool = False  # the step writes {out}/{name}.csv
    time_col: Optional[str] = None  # the CSV's column of each row's time: --before compares it


@dataclass(frozen=True)
class Suite:
    name: str
    about: str
    steps: Tuple[Step, ...]
    benchmark: bool = True  # passes `-- ARGS` to its scripts; `check` is the only non-benchmark


def _bench(name: str, script: str, *args: str, timeout_s: int = 300, time_col: Optional[str] = None) -> Step:
    return Step(name, ("{py}", "{tree}/benchmarks/" + script, *args, "--csv", "{out}/" + name + ".csv"),
                timeout_s, csv=True, time_col=time_col)


# The C++ GPU cases compute-sanitizer checks: the compute families at small sizes (every engine and
# kernel the rules choose), their error paths, and the small GPU cases of the other families.
MEMCHECK_GTESTS = "Small/GpuCompute.*:GpuComputeErrors.*:*Gpu*Small*"
MEMCHECK = ("compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "3")
MEMORY_KERNELS = ("stream", "layernorm", "bias_act", "kv_cache", "q4_0_dequant", "gemv")

SUITES: Dict[str, Suite] = {s.name: s for s in (
    Suite("check", "every C++ and Python test with the GPU present, then compute-sanitizer memcheck of the "
                   "GPU kernels at small sizes (C++ cases and the Python GPU kernel tests)", (
        Step("ctest", ("ctest", "--test-dir", "{build}", "--output-on-failure", "-j", "4"), 300, needs="ctest"),
        Step("pytest", ("{py}", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", "--durations=15",
                        "{tree}/tests/python"), 600),
        Step("memcheck_cpp", MEMCHECK + ("{build}/bwprof_tests", "--gtest_filter=" + MEMCHECK_GTESTS), 300,
             needs="compute-sanitizer"),
        # Small peak arrays, so that every access of the roof kernels is checked in little time.
        Step("memcheck_py", MEMCHECK + ("{py}", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                        "{tree}/tests/python/test_gpu_kernels.py",
                                        "-k", "not quick_suite and not out_of_device"), 300,
             env=(("BWPROF_PEAK_ARRAY_BYTES", "16777216"),), needs="compute-sanitizer"),
    ), benchmark=False),
    Suite("attention", "benchmarks/attention_sweep.py: flash attention beside PyTorch's SDPA, prefill and "
                       "decode, every head dimension, FP16 and BF16", (
        _bench("attention_sweep", "attention_sweep.py", "--repeats", "12", "--no-candidates", timeout_s=400,
               time_col="us"),)),
    Suite("gemm", "benchmarks/gemm_sweep.py: the tensor GEMM beside cuBLASLt and torch.matmul over M 1-8192 "
                  "and odd N, K", (
        _bench("gemm_sweep", "gemm_sweep.py", "--repeats", "12", "--no-candidates", timeout_s=300,
               time_col="tensor_us"),)),
    Suite("memory_bound", "benchmarks/memory_bound.py: the memory-bound families beside PyTorch", (
        _bench("memory_bound", "memory_bound.py", time_col="time_us"),)),
    Suite("compute", "benchmarks/compute.py: GEMM, fused epilogues, QKV and flash attention beside PyTorch", (
        _bench("compute", "compute.py", time_col="time_us"),)),
    Suite("peaks", "benchmarks/peaks.py (every roof beside PyTorch) and a quick bench's roofline chart", (
        _bench("peaks", "peaks.py", timeout_s=240),
        Step("bench_quick", ("{py}", "-m", "bwprof", "bench", "--quick", "--no-progress", "--out", "{out}/bench_quick"),
             240),
    )),
    Suite("size_graph", "benchmarks/gemv_graph.py (GEMVs single and in a CUDA graph beside torch.mv) and the "
                        "memory-bound families benched with single and graph timing", (
        _bench("gemv_graph", "gemv_graph.py", timeout_s=200),
        Step("bench_single", ("{py}", "-m", "bwprof", "bench", "--device", "gpu", "--kernels", *MEMORY_KERNELS,
                              "--timing", "single", "--no-plots", "--no-progress", "--out", "{out}/bench_single"), 200),
        Step("bench_graph", ("{py}", "-m", "bwprof", "bench", "--device", "gpu", "--kernels", *MEMORY_KERNELS,
                             "--timing", "graph", "--no-plots", "--no-progress", "--out", "{out}/bench_graph"), 200),
    )),
    Suite("model", "benchmarks/model_peer.py: the encoder and decode steps beside the same steps in PyTorch", (
        Step("model_peer", ("{py}", "{tree}/benchmarks/model_peer.py", "--out", "{out}/model_runs"), 400),)),
    Suite("profile", "benchmarks/profile_check.py (bwprof.profile against bwprof's kernels and ncu) and "
                     "benchmarks/ncu_check.py (ncu's durations against bwprof's timings)", (
        Step("profile_check", ("{py}", "{tree}/benchmarks/profile_check.py", "--out", "{out}/profile"), 400),
        Step("ncu_check", ("{py}", "{tree}/benchmarks/ncu_check.py", "{out}/ncu_check"), 300, needs="ncu"),
    )),
    Suite("links", "benchmarks/transfers.py: host transfers (pinned, pageable), d2d and memset beside PyTorch", (
        _bench("transfers", "transfers.py", timeout_s=240),)),
)}


def _expand(arg: str, values: Dict[str, str]) -> str:
    for k, v in values.items():
        arg = arg.replace("{" + k + "}", v)
    return arg


def _tail(path: Path, n: int = 12) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join("    " + line for line in lines[-n:])


@dataclass
class Runner:
    out: Path
    build: Path
    python: str
    dry_run: bool = False
    failed: List[str] = field(default_factory=list)

    def run(self, step: Step, tree: Path, extra: List[str], tag: str = "") -> int:
        name = step.name + tag
        values = {"py": self.python, "out": str(self.out), "build": str(self.build), "tree": str(tree)}
        argv = [_expand(a, values) for a in step.argv]
        if step.csv:  # a copy per tree and pass under --before
            argv[-1] = str(self.out / (name + ".csv"))
        argv += extra
        env = dict(os.environ)
        env.update(step.env)
        env["PYTHONPATH"] = str(tree / "python") + os.pathsep + env.get("PYTHONPATH", "")
        env["PYTHONUNBUFFERED"] = "1"
        shown = " ".join(argv)
        if self.dry_run:
            print(f"{name}: {shown}")
            return 0
        if step.needs and shutil.which(step.needs) is None:
            print(f"{name}: skipped ({step.needs} is not on PATH)")
            return 0
        log = self.out / (name + ".log")
        t0 = time.monotonic()
        with open(log, "w") as f:
            f.write(f"$ {shown}\n")
            f.flush()
            try:
                rc = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=str(tree),
                                    timeout=step.timeout_s).returncode
            except subprocess.TimeoutExpired:
                rc = 124
                f.write(f"\n(stopped after {step.timeout_s} s)\n")
            except OSError as e:
                rc = 127
                f.write(f"\n{e}\n")
        # pytest's 5: nothing collected (every case deselected); not a failure of the suite
        ok = rc == 0 or (rc == 5 and "pytest" in argv)
        print(f"{name}: exit {rc} in {time.monotonic() - t0:.0f} s ({log})")
        print(_tail(log))
        if not ok:
            self.failed.append(name)
        return rc


def compare(runner: Runner, step: Step) -> None:
    """Before/after twice: each pair compared row by row, and the two befores as the noise floor."""
    cmp = [runner.python, str(ROOT / "benchmarks" / "compare_runs.py")]
    o = runner.out
    for label, a, b in (("noise (before twice)", "_before1", "_before2"), ("pass 1", "_before1", "_after1"),
                        ("pass 2", "_before2", "_after2")):
        argv = cmp + [str(o / f"{step.name}{a}.csv"), str(o / f"{step.name}{b}.csv"), "--column", step.time_col]
        if runner.dry_run:
            print(f"compare {label}: {' '.join(argv)}")
            continue
        r = subprocess.run(argv, capture_output=True, text=True)
        print(f"compare {step.name} {label}: exit {r.returncode}")
        print("\n".join("    " + x for x in (r.stdout + r.stderr).splitlines()[-25:]))
        if r.returncode != 0 and label != "noise (before twice)":
            runner.failed.append(f"compare {step.name} {label}")


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: List[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite", help="a suite's name, or 'list'")
    ap.add_argument("--out", default="gpu-out", help="folder for the logs and results (default: gpu-out)")
    ap.add_argument("--build", default="build", help="the CMake build folder with bwprof_tests (default: build)")
    ap.add_argument("--before", help="another checkout of bwprof, built: run the suite there too and compare")
    ap.add_argument("--only", help="comma-separated step names: run those of the suite alone (see list)")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    a = ap.parse_args(argv)

    if a.suite == "list":
        for s in SUITES.values():
            print(f"{s.name:13} {s.about}\n{'':13} steps: {', '.join(t.name for t in s.steps)}")
        return 0
    if a.suite not in SUITES:
        ap.error(f"suite: unknown suite '{a.suite}' (known: {', '.join(SUITES)}, list)")
    suite = SUITES[a.suite]
    steps = list(suite.steps)
    if a.only:
        names = [n.strip() for n in a.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in {t.name for t in steps}]
        if unknown or not names:
            ap.error(f"--only: '{a.only}': the '{suite.name}' suite's steps are {', '.join(t.name for t in steps)}")
        steps = [t for t in steps if t.name in names]
    if extra and not suite.benchmark:
        ap.error(f"-- ARGS: the '{suite.name}' suite takes no script arguments")
    before = Path(a.before).resolve() if a.before else None
    if before is not None:
        if not all(s.time_col for s in steps):
            comparable = [s.name for s in SUITES.values() if all(t.time_col for t in s.steps)]
            ap.error(f"--before: the '{suite.name}' suite has no rows to compare (suites that do: "
                     f"{', '.join(comparable)})")
        if not (before / "benchmarks").is_dir():
            ap.error(f"--before: {before} is not a bwprof checkout (no benchmarks/ folder)")
    out = Path(a.out).resolve()
    if not a.dry_run:
        out.mkdir(parents=True, exist_ok=True)
    runner = Runner(out=out, build=Path(a.build).resolve(), python=sys.executable, dry_run=a.dry_run)

    for step in steps:
        if before is None:
            runner.run(step, ROOT, extra)
            continue
        for r in (1, 2):  # alternated, so that a drift of the GPU's clocks hits both sides alike
            runner.run(step, before, extra, f"_before{r}")
            runner.run(step, ROOT, extra, f"_after{r}")
        compare(runner, step)
    if runner.failed:
        print(f"{suite.name}: failed: {', '.join(runner.failed)}")
        return 1
    if not a.dry_run:
        print(f"{suite.name}: every step passed; logs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
