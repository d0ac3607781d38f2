"""Turn a sweep's CSV (attention_sweep.py / gemm_sweep.py --csv) into the Markdown table kept in
docs/BENCHMARKS.md, with the pass count and the median, so the recorded table is the run's rows.

    python3 benchmarks/sweep_markdown.py attention_sweep.csv [--only-failing]
    python3 benchmarks/sweep_markdown.py gemm_sweep.csv
"""
from __future__ import annotations

import argparse
import statistics
import sys

import pandas as pd

ATTN_TARGET = 0.9   # bwprof at least 0.9x SDPA's speed (torch time / bwprof time)
GEMM_TARGET = 1.25  # tensor at most 1.25x vendor's time


def attention(df: pd.DataFrame, only_failing: bool) -> list[str]:
    out = ["| point | bwprof us | SDPA us | speed vs SDPA | >= 0.9x |", "|---|---:|---:|---:|---|"]
    for r in df.itertuples():
        ok = r.ratio >= ATTN_TARGET
        if only_failing and ok:
            continue
        name = " ".join(str(r.name).split())
        out.append(f"| {name} | {r.us:.1f} | {r.torch_us:.1f} | {r.ratio:.3f} | {'met' if ok else 'missed'} |")
    for kind in ("prefill", "decode"):
        part = df[df["kind"] == kind]
        if len(part):
            met = int((part["ratio"] >= ATTN_TARGET).sum())
            out.append(f"\n{kind}: {met} of {len(part)} points at >= 0.9x, median "
                       f"{statistics.median(part['ratio']):.2f}x, min {part['ratio'].min():.2f}x")
    return out


def gemm(df: pd.DataFrame, only_failing: bool) -> list[str]:
    out = ["| point | tensor us | vendor us | torch us | tensor / vendor | <= 1.25x | engine chosen |",
           "|---|---:|---:|---:|---:|---|---|"]
    for r in df.itertuples():
        ok = r.ratio <= GEMM_TARGET
        if only_failing and ok:
            continue
        out.append(f"| {r.name} | {r.tensor_us:.1f} | {r.vendor_us:.1f} | {r.torch_us:.1f} | "
                   f"{r.ratio:.3f} | {'met' if ok else 'missed'} | {r.choice} |")
    met = int((df["ratio"] <= GEMM_TARGET).sum())
    out.append(f"\n{met} of {len(df)} points within 1.25x, median {statistics.median(df['ratio']):.2f}x, "
               f"worst {df['ratio'].max():.2f}x")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--only-failing", action="store_true", help="list only the points that miss")
    a = ap.parse_args(argv)
    try:
        df = pd.read_csv(a.csv)
    except (OSError, ValueError) as e:
        print(f"sweep_markdown: cannot read {a.csv}: {e}", file=sys.stderr)
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
