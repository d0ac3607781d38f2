"""The ``compare`` and ``baseline`` subcommands: exit 0 without a regression, 1 when a kernel got
slower, 2 for bad input (one line on stderr)."""
from __future__ import annotations

import argparse
import sys
from typing import Iterable

import pandas as pd

from ..tables import TEXT as _TEXT, format_table as _table
from .chart import plot_changes
from .comparison import VERDICTS, compare, has_regression
from .errors import BaselineError
from .files import load, save
from .statistics import DEFAULT_MIN_EFFECT_PCT, DEFAULT_NOISE_FLOOR_PCT, DEFAULT_NOISE_FLOOR_US

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
    return 2


def _cmd_compare(args: argparse.Namespace) -> int:
    try:
        if args.min_effect < 0 or args.noise_floor < 0 or args.noise_floor_us < 0:
            raise BaselineError("--min-effect, --noise-floor and --noise-floor-us must be >= 0")
        base = load(args.baseline)
        new = load(args.new)
        cmp = compare(new, base, force=args.force, min_effect_pct=args.min_effect,
                      noise_floor_pct=args.noise_floor, noise_floor_us=args.noise_floor_us)
        print(_format_table(cmp))
        print(_summary(cmp))
        if args.csv:
            cmp.to_csv(args.csv, index=False)
        if args.plot:
            plot_changes(cmp, args.plot)
    except (BaselineError, OSError, ValueError) as exc:
        return _fail("bwprof compare", exc)
    if has_regression(cmp):
        print("regression: at least one kernel is slower than the baseline", file=sys.stderr)
        return 1
    return 0


def _cmd_baseline(args: argparse.Namespace) -> int:
    try:
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
                    "run folder, a results.csv or a bandwidth_report.json. Exit code: 0 no "
                    "regression, 1 a kernel got slower, 2 bad input.")
    p.add_argument("baseline", metavar="BASELINE")
    p.add_argument("new", metavar="NEW")
    p.add_argument("--force", action="store_true",
                   help="compare runs from different devices (match ignoring the device)")
    p.add_argument("--min-effect", type=float, default=DEFAULT_MIN_EFFECT_PCT, metavar="PCT",
                   help="smallest change that can count, in %% (default %(default)s)")
    p.add_argument("--noise-floor", type=float, default=DEFAULT_NOISE_FLOOR_PCT, metavar="PCT",
                   help="run-to-run noise of each run, in %% (default %(default)s)")
    p.add_argument("--noise-floor-us", type=float, default=DEFAULT_NOISE_FLOOR_US, metavar="US",
                   help="absolute timing noise of each run, in us (default %(default)s)")
    p.add_argument("--plot", metavar="PATH", help="save a bar chart of the changes (.png/.svg)")
    p.add_argument("--csv", metavar="PATH", help="save the comparison table as CSV")
    p.set_defaults(func=_cmd_compare)

    b = subparsers.add_parser(
        "baseline", help="save a run as a baseline JSON",
        description="Save RUN_OR_CSV (a run folder, results.csv, bandwidth_report.json or "
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
