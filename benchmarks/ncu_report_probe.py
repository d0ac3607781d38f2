"""Which call into NVIDIA's ncu_report module crashes (issue #17)?

On the GPU machine (Nsight Compute installed), loads a report step by step in a CHILD process
under faulthandler, printing each call before it is made and flushing, so that a segmentation
fault leaves the last step and the Python stack in the log:

    import ncu_report (where from) -> load_report -> num_ranges -> range_by_idx(r)
    -> num_actions -> action_by_idx(a) -> name() -> metric_names()
    -> for each metric: metric_by_name, has_value, value, unit (each printed with its result)

    PYTHONPATH=python python3 benchmarks/ncu_report_probe.py [REPORT] [--metrics N]

REPORT defaults to tests/data/traces/ncu_stream_h100.ncu-rep. The parent prints the child's
exit status (a signal name when it crashed) and the last steps; then it reads the same report
with bwprof.traces.read_ncu_rep(via="module") and via="cli" and says whether each gave a frame.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "tests" / "data" / "traces" / "ncu_stream_h100.ncu-rep"

_CHILD = r'''
import faulthandler, importlib.util, os, sys
faulthandler.enable(all_threads=True)
# bwprof's finder, loaded by its path (no need for the compiled bwprof._core here).
spec = importlib.util.spec_from_file_location("ncu_report_child", sys.argv[3])
child = importlib.util.module_from_spec(spec)
spec.loader.exec_module(child)
DEVICE_PREFIXES, find_ncu_report, candidate_dirs = child.DEVICE_PREFIXES, child.find_ncu_report, child.candidate_dirs

def step(text):
    print(text, flush=True)

limit = int(sys.argv[2])
step(f"python {sys.version.split()[0]}; candidate folders: {candidate_dirs()}")
step("import ncu_report")
m = find_ncu_report()
if m is None:
    step("ncu_report NOT FOUND")
    sys.exit(4)
step(f"ncu_report from {getattr(m, '__file__', '?')}")
step(f"load_report({sys.argv[1]!r})")
ctx = m.load_report(sys.argv[1])
step(f"  -> {type(ctx).__name__}")
step("num_ranges()")
nr = ctx.num_ranges()
step(f"  -> {nr}")
for r in range(nr):
    step(f"range_by_idx({r})")
    rng = ctx.range_by_idx(r)
    step(f"range {r}: num_actions()")
    na = rng.num_actions()
    step(f"  -> {na}")
    for a in range(na):
        step(f"range {r} action_by_idx({a})")
        act = rng.action_by_idx(a)
        base = getattr(getattr(m, "IAction", None), "NameBase_DEMANGLED", None)
        step(f"range {r} action {a}: name({'NameBase_DEMANGLED' if base is not None else ''})")
        name = act.name(base) if base is not None else act.name()
        step(f"  -> {name[:100]!r}")
        step(f"range {r} action {a}: metric_names()")
        names = list(act.metric_names())
        step(f"  -> {len(names)} metrics")
        shown = 0
        for metric in names:
            if metric.startswith(DEVICE_PREFIXES):
                continue
            if limit and shown >= limit:
                break
            shown += 1
            where = f"range {r} action {a} metric {metric}"
            step(f"{where}: metric_by_name")
            obj = act.metric_by_name(metric)
            if obj is None:
                step("  -> None")
                continue
            if hasattr(obj, "has_value"):
                step(f"{where}: has_value()")
                has = obj.has_value()
                step(f"  -> {has}")
                if not has:
                    continue
            step(f"{where}: value()")
            value = obj.value()
            step(f"  -> {value!r}"[:160])
            step(f"{where}: unit()")
            unit = obj.unit() if hasattr(obj, "unit") else ""
            step(f"  -> {unit!r}")
step("DONE: every call returned")
'''


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", nargs="?", default=str(DEFAULT))
    ap.add_argument("--metrics", type=int, default=0,
                    help="metrics per launch to probe (0: all of them)")
    ap.add_argument("--tail", type=int, default=25, help="lines of the child's log to print at the end")
    args = ap.parse_args(argv)
    report = Path(args.report)
    if not report.exists():
        print(f"{report}: no such file")
        return 2
    finder = ROOT / "python" / "bwprof" / "traces" / "formats" / "ncu_report_child.py"
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(report), str(args.metrics), str(finder)],
                          capture_output=True, text=True)
    log = (proc.stdout or "").splitlines()
    status = proc.returncode
    if status < 0:
        try:
            how = f"killed by {signal.Signals(-status).name}"
        except ValueError:
            how = f"killed by signal {-status}"
    else:
        how = f"exit {status}"
    print(f"probe child: {how}; {len(log)} steps logged")
    print("last steps:")
    for line in log[-args.tail:]:
        print(f"  {line}")
    if proc.stderr.strip():
        print("child stderr (faulthandler's stack when it crashed):")
        for line in proc.stderr.strip().splitlines()[-40:]:
            print(f"  {line}")

    sys.path.insert(0, str(ROOT / "python"))
    from bwprof.traces import TraceFormatError, read_ncu_rep

    ok = status == 0
    for via in ("module", "cli"):
        try:
            df = read_ncu_rep(report, via=via)
            print(f"bwprof read_ncu_rep(via={via!r}): {len(df)} launches, {df.shape[1]} columns, "
                  f"duration_ns {df['duration_ns'].round(1).tolist()}")
        except TraceFormatError as exc:
            print(f"bwprof read_ncu_rep(via={via!r}): TraceFormatError: {exc}")
            ok = False
    print(f"this process (pid {os.getpid()}) is still running")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
