"""Turn a sweep's CSV (attention_sweep.py / gemm_sweep.py --csv) into the Markdown table kept in
docs/BENCHMARKS.md, with the pass count and the median, so the recorded table is the run's rows.

    python3 benchmarks/sweep_markdown.py attention_sweep.csv [--only-failing]
    python3 benchmarks/sweep_markdown.py gemm_sweep.csv
    python3 benchmarks/sweep_markdown.py after.csv --before before.csv   (both runs' columns, by point)
"""
from __future__ import annotations

import argparse
import statistics
import sys

import pandas as pd

ATTN_TARGET = 0.9   # bwprof at least 0.9x SDPA's speed (torch time / bwprof time)
GEMM_TARGET = 1.25  # tensor at most 1.25x vendor's time


def _before_cells(r) -> str:
    """The before run's time and ratio of this point ('-' where it had none)."""
    b_us, b_ratio = getattr(r, "before_us", float("nan")), getattr(r, "before_ratio", float("nan"))
    return f" {'-' if b_us != b_us else f'{b_us:.1f}'} | {'-' if b_ratio != b_ratio else f'{b_ratio:.3f}'} |"


def _counts(vals: pd.Series, ok, what: str, worst: str) -> str:
    """'n of m points <what>, median, worst' of one run's ratios (worst: 'min' or 'max')."""
    vals = vals.dropna()
    return (f"{int(ok(vals).sum())} of {len(vals)} points {what}, median {statistics.median(vals):.2f}x, "
            f"{'min' if worst == 'min' else 'worst'} {getattr(vals, worst)():.2f}x")


def attention(df: pd.DataFrame, only_failing: bool) -> list[str]:
    before = "before_us" in df.columns
    out = ["| point |" + (" before us | before speed |" if before else "") +
           " bwprof us | SDPA us | speed vs SDPA | >= 0.9x |",
           "|---|" + ("---:|---:|" if before else "") + "---:|---:|---:|---|"]
    for r in df.itertuples():
        ok = r.ratio >= ATTN_TARGET
        if only_failing and ok:
            continue
        name = " ".join(str(r.name).split())
        out.append(f"| {name} |" + (_before_cells(r) if before else "") +
                   f" {r.us:.1f} | {r.torch_us:.1f} | {r.ratio:.3f} | {'met' if ok else 'missed'} |")
    for kind in ("prefill", "decode"):
        part = df[df["kind"] == kind]
        if len(part):
            line = f"\n{kind}: " + _counts(part["ratio"], lambda v: v >= ATTN_TARGET, "at >= 0.9x", "min")
            if before:
                line += "; before: " + _counts(part["before_ratio"], lambda v: v >= ATTN_TARGET, "at >= 0.9x", "min")
            out.append(line)
    return out


def gemm(df: pd.DataFrame, only_failing: bool) -> list[str]:
    before = "before_us" in df.columns
    out = ["| point |" + (" before tensor us | before / vendor |" if before else "") +
           " tensor us | vendor us | torch us | tensor / vendor | <= 1.25x | engine chosen |",
           "|---|" + ("---:|---:|" if before else "") + "---:|---:|---:|---:|---|---|"]
    for r in df.itertuples():
        ok = r.ratio <= GEMM_TARGET
        if only_failing and ok:
            continue
        out.append(f"| {r.name} |" + (_before_cells(r) if before else "") +
                   f" {r.tensor_us:.1f} | {r.vendor_us:.1f} | {r.torch_us:.1f} | "
                   f"{r.ratio:.3f} | {'met' if ok else 'missed'} | {r.choice} |")
    line = "\n" + _counts(df["ratio"], lambda v: v <= GEMM_TARGET, "within 1.25x", "max")
    if before:
        line += "; before: " + _counts(df["before_ratio"], lambda v: v <= GEMM_TARGET, "within 1.25x", "max")
    out.append(line)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--only-failing", action="store_true", help="list only the points that miss")
    ap.add_argument("--before", help="an earlier run's CSV of the same sweep: its time and ratio beside each point")
    a = ap.parse_args(argv)
    frames = []
    for path in [a.csv] + ([a.before] if a.before else []):
        try:
            frames.append(pd.read_csv(path))
        except (OSError, ValueError) as e:
            print(f"sweep_markdown: cannot read {path}: {e}", file=sys.stderr)
            return 2
    df = frames[0]
    if a.before:
        old = frames[1]
        us = "us" if "us" in old.columns else "tensor_us"
        same_kind = ("kind" in old.columns) == ("kind" in df.columns) and \
            ("vendor_us" in old.columns) == ("vendor_us" in df.columns)
        if not same_kind or not {"name", "ratio", us} <= set(old.columns) or not {"name", "ratio"} <= set(df.columns):
            print(f"sweep_markdown: {a.before} is not the same kind of sweep as {a.csv}", file=sys.stderr)
            return 2
        df = df.merge(old[["name", us, "ratio"]].rename(columns={us: "before_us", "ratio": "before_ratio"}),
                      on="name", how="left")
        if df["before_ratio"].isna().all():
            print(f"sweep_markdown: {a.before} has no point of {a.csv}", file=sys.stderr)
            return 2
    if "torch_us" in df.columns and "kind" in df.columns:
        lines = attention(df, a.only_failing)
    elif "tensor_us" in df.columns and "vendor_us" in df.columns:
        lines = gemm(df, a.only_failing)
    else:
        print(f"sweep_markdown: {a.csv} is neither an attention nor a GEMM sweep", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
