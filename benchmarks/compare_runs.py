"""Two runs of one benchmark script side by side: do the rows agree within a tolerance?

For a change that must not move the numbers (a refactor), run the benchmark before and after it in
the same call on the same GPU, then:

    python3 benchmarks/compare_runs.py before.csv after.csv [--rel-pct 2] [--abs-us 0.3] [--short-us 15]
        [--column time_us] [--common]

Rows are matched by `name`; --column names the time compared (time_us: memory_bound.py, compute.py;
us: attention_sweep.py; tensor_us: gemm_sweep.py's chosen kernel); --common compares only the rows
that both runs timed (a row the other run has not, or did not time, is listed apart). A row agrees when its median time moved by at most --rel-pct percent,
or, for rows under --short-us microseconds, by at most --abs-us microseconds (the timer's own
resolution and launch jitter are that large). Prints every row and exits 1 when one does not agree
or a row is missing from either run.
"""
from __future__ import annotations

import argparse
import sys

import pandas as pd


def compare(before: pd.DataFrame, after: pd.DataFrame, rel_pct: float, abs_us: float, short_us: float,
            column: str = "time_us") -> pd.DataFrame:
    for name, df in (("before", before), ("after", after)):
        missing = {"name", column} - set(df.columns)
        if missing:
            raise ValueError(f"{name}: not a benchmark CSV (no column {', '.join(sorted(missing))})")
    b = before.set_index("name")[column].astype(float)
    a = after.set_index("name")[column].astype(float)
    out = pd.DataFrame({"before_us": b, "after_us": a})
    out["change_us"] = out["after_us"] - out["before_us"]
    out["change_pct"] = 100.0 * out["change_us"] / out["before_us"]
    short = out["before_us"] < short_us
    ok = (out["change_pct"].abs() <= rel_pct) | (short & (out["change_us"].abs() <= abs_us))
    out["agrees"] = ok & out["before_us"].notna() & out["after_us"].notna()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rel-pct", type=float, default=2.0)
    ap.add_argument("--abs-us", type=float, default=0.3)
    ap.add_argument("--short-us", type=float, default=15.0)
    ap.add_argument("--column", default="time_us", help="the time column compared")
    ap.add_argument("--common", action="store_true", help="only the rows both runs timed")
    args = ap.parse_args(argv)
    try:
        out = compare(pd.read_csv(args.before), pd.read_csv(args.after), args.rel_pct, args.abs_us, args.short_us,
                      args.column)
    except (OSError, ValueError, pd.errors.ParserError) as e:
        print(f"compare_runs: {e}", file=sys.stderr)
        return 2
    if args.common:
        apart = out[out["before_us"].isna() | out["after_us"].isna()]
        for name in apart.index:
            print(f"  not in both runs: {name}")
        out = out.drop(apart.index)
    print(f"{'row':44s} {'before us':>10s} {'after us':>10s} {'change us':>10s} {'change %':>9s}  agrees")
    for name, r in out.iterrows():
        print(f"{name[:44]:44s} {r.before_us:10.2f} {r.after_us:10.2f} {r.change_us:10.2f} {r.change_pct:9.2f}  "
              f"{'yes' if r.agrees else 'NO'}")
    bad = int((~out["agrees"]).sum())
    print(f"\n{len(out) - bad} of {len(out)} rows agree (within {args.rel_pct:g} %, or {args.abs_us:g} us under "
          f"{args.short_us:g} us)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
