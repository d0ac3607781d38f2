"""``python3 -m bwprof step SCRIPT.py [ARGS]``: profile a script's marked step.

The script marks its step with ``bwprof.step_marker(fn, *args)`` (a plain call anywhere else), or
names a function of no arguments with ``--function NAME`` (the script is then loaded without
running its ``__main__`` block). The report is printed and saved to a run folder. With
``--counters dram``, DRAM bytes per kernel come from PyTorch's profiler where it reads them, else
from the script run again under ncu (the step once, between cudaProfilerStart and
cudaProfilerStop), joined to the step's launches in launch order.
"""
from __future__ import annotations

import runpy
import shutil
import sys
from pathlib import Path

from .counters import COUNTERS_RANGE, metric_list


def _run_script(script: str, args: list[str], function: str | None, handler) -> None:
    import bwprof.step as pkg

    path = Path(script)
    if not path.is_file():
        raise ValueError(f"SCRIPT: {script} is not a file")
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [str(path)] + list(args)
    sys.path.insert(0, str(path.resolve().parent))
    pkg._marker_handler = handler
    try:
        if function:
            ns = runpy.run_path(str(path), run_name="__bwprof_step__")
            fn = ns.get(function)
            if not callable(fn):
                raise ValueError(f"--function: {script} defines no function {function!r}")
            handler(fn, (), {})
        else:
            runpy.run_path(str(path), run_name="__main__")
    finally:
        pkg._marker_handler = None
        sys.argv, sys.path[:] = old_argv, old_path


def _cmd_step(args) -> int:
    from .run import profile_step

    if args.counters_child:
        return _counters_child(args)
    metrics = metric_list(args.counters)
    got = {}

    def handler(fn, fargs, fkw):
        if "report" in got:  # one step per command; later marks are plain calls
            return fn(*fargs, **fkw)
        got["report"] = profile_step(fn, *fargs, name=args.name or None, warmup=args.warmup, repeats=args.repeats,
                                     graph=args.graph, device=args.device, counters=metrics or None, **fkw)
        return fn(*fargs, **fkw)

    _run_script(args.script, args.script_args, args.function, handler)
    if "report" not in got:
        print(f"bwprof step: {args.script} marked no step (call bwprof.step_marker(fn, *args) in it, or pass "
              f"--function NAME)", file=sys.stderr)
        return 2
    report = got["report"]
    if metrics and report.summary.get("counters_error"):
        _counters_from_ncu(report, args, metrics)
    print(report.text())
    folder = report.save(args.out, plots=not args.no_plots)
    if args.trace:
        print(f"trace: {report.to_perfetto(args.trace)}")
    print(f"run folder: {folder}")
    if (folder / "report.html").exists():
        print(f"html:    {folder / 'report.html'}")
    return 0


def _counters_child(args) -> int:
    """Under ncu: the step warmed up, then once inside the NVTX range ncu profiles."""
    def handler(fn, fargs, fkw):
        import torch

        for _ in range(max(args.warmup, 1)):
            fn(*fargs, **fkw)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()       # cudaProfilerStart: ncu --profile-from-start off begins here
        torch.cuda.nvtx.range_push(COUNTERS_RANGE)
        out = fn(*fargs, **fkw)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        torch.cuda.profiler.stop()
        return out

    _run_script(args.script, args.script_args, args.function, handler)
    return 0


CACHE_CONTROLS = ("none", "all")


def ncu_command(script: str, script_args: list, function: str | None, metrics: list, log: Path,
                warmup: int = 2, cache_control: str = "none") -> list[str]:
    """The argv that runs the script's step once under ncu, its kernels' ``metrics`` into ``log``.
    Clocks are left alone; ``cache_control`` "none" leaves the caches as the step left them (the
    counters then see the step's own cache reuse), "all" is ncu's default (L2 flushed before
    each kernel)."""
    if cache_control not in CACHE_CONTROLS:
        raise ValueError(f"cache_control: expected one of {', '.join(CACHE_CONTROLS)}, got {cache_control!r}")
    child = [sys.executable, "-m", "bwprof", "step", "--counters-child", "--warmup", str(warmup)]
    if function:
        child += ["--function", function]
    return ["ncu", "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
            "--cache-control", cache_control, "--profile-from-start", "off", "--log-file", str(log),
            "--metrics", ",".join(metrics)] + child + [script] + list(script_args)


def _counters_from_ncu(report, args, metrics) -> None:
    from ..traces import read
    from ..traces.profilers import _refusal, _run

    if shutil.which("ncu") is None:
        report.summary["counters_error"] += "; ncu is not on PATH either: no counters"
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bwprof_step_ncu_") as tmp:
        log = Path(tmp) / "ncu_raw.csv"
        argv = ncu_command(args.script, args.script_args, args.function, metrics, log, args.warmup)
        rc, out, err, _ = _run(argv, echo=False)
        text = out + err + (log.read_text(errors="replace") if log.exists() else "")
        reason = _refusal(text)
        if reason or rc != 0 or not log.exists():
            report.summary["counters_error"] = (f"ncu: {reason or f'exit code {rc}'}; "
                                                + (err.strip().splitlines()[-1] if err.strip() else "no output"))
            return
        from .counters import join_ncu

        join_ncu(report, read(str(log)))
        report.summary["counters_error"] = ""
        report.summary["counters"] = ",".join(metrics) + " (ncu)"


def register_cli(subparsers) -> None:
    """Adds ``step SCRIPT [ARGS]`` to the bwprof CLI."""
    s = subparsers.add_parser("step", help="profile a script's marked step kernel by kernel (docs/step.md)")
    s.add_argument("--function", metavar="NAME", help="a function of the script, of no arguments, that is the "
                   "step (default: the step the script marks with bwprof.step_marker)")
    s.add_argument("--name", default="", help="the step's name in the report (default: the function's)")
    s.add_argument("--warmup", type=int, default=2, help="calls before the timed ones (default: 2)")
    s.add_argument("--repeats", type=int, default=5, help="timed calls (default: 5)")
    s.add_argument("--graph", default="auto", choices=["auto", "on", "off"],
                   help="auto: also time the step as a CUDA graph; on: profile the graph replay; off: neither")
    s.add_argument("--device", default="auto")
    s.add_argument("--counters", default=None, metavar="SET", help="dram, or metric names (comma-separated): "
                   "measured counters per kernel (in process where PyTorch reads them, else under ncu)")
    s.add_argument("--out", default="results", help="folder for run folders (default: results)")
    s.add_argument("--trace", metavar="FILE", help="also write the first timed run as a Chrome/Perfetto trace")
    s.add_argument("--no-plots", action="store_true", help="do not draw the charts")
    s.add_argument("--counters-child", action="store_true", help=argparse_hidden())
    s.add_argument("script", metavar="SCRIPT", help="the Python script")
    s.add_argument("script_args", nargs="...", metavar="ARGS", help="the script's own arguments")
    s.set_defaults(func=_cmd_step)


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS
