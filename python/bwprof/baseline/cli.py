"""The ``compare`` and ``baseline`` subcommands: exit 0 without a regression, 1 when a kernel got
slower, 2 for bad input (one line on stderr), 3 (compare) when no kernel got slower but a change
is undecided: past its threshold, yet within the noise the two runs themselves show."""
from __future__ import annotations

import argparse
import sys
from typing import Iterable

import pandas as pd

from ..tables import TEXT as _TEXT, format_table as _table
from ..files import check_output_file
from .chart import plot_changes
from .comparison import (EXIT_BAD_INPUT, EXIT_REGRESSION, EXIT_UNDECIDED, VERDICTS, compare, exit_code,
                         noise_note)
from .errors import BaselineError
from .files import load, save
from ..arguments import number as _number
from .statistics import BACKEND_FLOORS, DEFAULT_MIN_EFFECT_PCT

_GPU, _CPU = BACKEND_FLOORS["gpu"], BACKEND_FLOORS["cpu"]

# Times to the nanosecond, changes with their sign: the columns a reviewer reads first.
_CMP_FORMATS = {"baseline_time_us": "{:.3f}", "new_time_us": "{:.3f}", "change_pct": "{:+.2f}",
                "threshold_pct": "{:.2f}"}


def _format_table(cmp: pd.DataFrame) -> str:
    if cmp.empty:
        return "(no rows)"
    spec = [(c, str(c), _CMP_FORMATS.get(c, _TEXT)) for c in cmp.columns]
    return _table(cmp, spec, sep=" ", missing="", rule=False, text_align="right")


def _summary(cmp: pd.DataFrame) -> str:
    counts = cmp["verdict"].value_counts()
    parts = [f"{int(counts[v])} {v}" for v in VERDICTS if v in counts]
    return "summary: " + ", ".join(parts)


def _fail(prog: str, exc: BaseException) -> int:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    print(f"{prog}: error: {msg}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _cmd_compare(args: argparse.Namespace) -> int:
    try:
        # Outputs are checked first: a comparison is not worth much if its table cannot be kept.
        if args.csv:
            check_output_file("--csv", args.csv)
        if args.plot:
            check_output_file("--plot", args.plot)
        _number("--min-effect", args.min_effect, 0.0, 1e6)
        for flag, value in (("--noise-floor", args.noise_floor), ("--unstable-floor", args.unstable_floor),
                            ("--noise-floor-us", args.noise_floor_us)):
            if value is not None:
                _number(flag, value, 0.0, 1e9)
        base = load(args.baseline)
        new = load(args.new)
        cmp = compare(new, base, force=args.force, min_effect_pct=args.min_effect,
                      noise_floor_pct=args.noise_floor, noise_floor_us=args.noise_floor_us,
                      unstable_floor_pct=args.unstable_floor)
        print(_format_table(cmp))
        print(_summary(cmp))
        note = noise_note(cmp)
        if note:
            print(note)
        if args.csv:
            cmp.to_csv(args.csv, index=False)
        if args.plot:
            plot_changes(cmp, args.plot)
    except (BaselineError, OSError, ValueError) as exc:
        return _fail("bwprof compare", exc)
    code = exit_code(cmp)
    if code == EXIT_REGRESSION:
        print("regression: at least one kernel is slower than the baseline", file=sys.stderr)
    elif code == EXIT_UNDECIDED:
        print("undecided: no kernel is decidedly slower, but some changes cannot be told from the runs' "
              "noise (exit 3)", file=sys.stderr)
    return code


def _cmd_baseline(args: argparse.Namespace) -> int:
    try:
        check_output_file("--out", args.out)
        df = load(args.run)
        out = save(df, args.out)
    except (BaselineError, OSError, ValueError) as exc:
        return _fail("bwprof baseline", exc)
    print(f"saved {len(df)} rows from {args.run} as baseline {out}")
    return 0


def register_cli(subparsers: "argparse._SubParsersAction") -> None:
    """Add the ``compare`` and ``baseline`` subcommands; each sets ``func=handler(args) -> int``."""
    p = subparsers.add_parser(
        "compare", help="compare a run with a baseline; exit 1 on a regression",
        description="Compare NEW with BASELINE kernel by kernel. Each may be a baseline JSON, a "
                    "run folder, a results.csv, rows.jsonl or a bandwidth_report.json. Exit code: 0 no "
                    "regression, 1 a kernel got slower, 2 bad input, 3 no kernel slower but a change "
                    "undecided (past its threshold, within the noise the two runs show).")
    p.add_argument("baseline", metavar="BASELINE")
    p.add_argument("new", metavar="NEW")
    p.add_argument("--force", action="store_true",
                   help="compare runs from different devices (match ignoring the device)")
    p.add_argument("--min-effect", type=float, default=DEFAULT_MIN_EFFECT_PCT, metavar="PCT",
                   help="smallest change that can count, in %% (default %(default)s)")
    p.add_argument("--noise-floor", type=float, default=None, metavar="PCT",
                   help="run-to-run noise of each run for rows whose timings are steady, in %% "
                        f"(default per backend: GPU {_GPU.steady_pct:g}, CPU {_CPU.steady_pct:g})")
    p.add_argument("--unstable-floor", type=float, default=None, metavar="PCT",
                   help="the same for rows whose timings show interference (CV > 10 %% or max > 2x "
                        f"median) in either run (default per backend: GPU {_GPU.unstable_pct:g}, "
                        f"CPU {_CPU.unstable_pct:g}; at least --noise-floor)")
    p.add_argument("--noise-floor-us", type=float, default=None, metavar="US",
                   help="absolute timing noise of each run, in us (default per backend: GPU "
                        f"{_GPU.abs_us:g}, CPU {_CPU.abs_us:g})")
    p.add_argument("--plot", metavar="PATH", help="save a bar chart of the changes (.png/.svg)")
    p.add_argument("--csv", metavar="PATH", help="save the comparison table as CSV")
    p.set_defaults(func=_cmd_compare)

    b = subparsers.add_parser(
        "baseline", help="save a run as a baseline JSON",
        description="Save RUN_OR_CSV (a run folder, results.csv, rows.jsonl, bandwidth_report.json or "
                    "baseline) as a versioned baseline JSON file, written atomically.")
    b.add_argument("run", metavar="RUN_OR_CSV")
    b.add_argument("--out", required=True, metavar="PATH", help="baseline file to write")
    b.set_defaults(func=_cmd_baseline)


def main(argv: Iterable[str] | None = None) -> int:
    """Stand-alone entry point: ``python3 -m bwprof.baseline compare|baseline ...``."""
    parser = argparse.ArgumentParser(prog="bwprof")
    sub = parser.add_subparsers(dest="command", required=True)
    register_cli(sub)
    args = parser.parse_args(list(argv) if argv is not None else None)
    return args.func(args)
