"""The spin against the blocking kernel: does the way a timed launch waits for the host change any
family's times?

Runs the bench suite (full shapes, every family, both dtypes) in separate processes, alternating
BWPROF_STREAM_HOLD=spin and =block (A B A B ...), and prints, for every row, the median time under
each method, their difference, and the difference between two runs of the same method (the noise
the comparison must be judged against).

    PYTHONPATH=python python3 benchmarks/stream_hold.py [--rounds 2] [--kernels ...] [--csv FILE]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

KEY = ["kernel", "variant", "dtype", "label", "shape"]


def run_bench(method: str, out: Path, kernels, cache: str) -> pd.DataFrame:
    env = dict(os.environ, BWPROF_STREAM_HOLD=method)
    here = str(Path(__file__).resolve().parents[1] / "python")
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "bwprof", "bench", "--device", "gpu", "--no-progress", "--no-plots",
           "--cache", cache, "--out", str(out)]
    if kernels:
        cmd += ["--kernels", *kernels]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode not in (0, 1):  # 1: some row failed its check; its figures are still shown
        raise RuntimeError(f"bench ({method}) failed with exit {p.returncode}:\n{p.stderr[-2000:]}")
    csvs = sorted(out.glob("*/results.csv"))
    if not csvs:
        raise RuntimeError(f"bench ({method}) wrote no results.csv (exit {p.returncode}):\n{p.stderr[-2000:]}")
    return pd.read_csv(csvs[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2, help="runs of each method (alternated)")
    ap.add_argument("--kernels", nargs="+", help="kernels or families (default: the whole suite)")
    ap.add_argument("--cache", default="cold", choices=["cold", "hot"])
    ap.add_argument("--csv", help="write every run's rows here")
    ap.add_argument("--rel-pct", type=float, default=2.0)
    ap.add_argument("--abs-us", type=float, default=0.3)
    args = ap.parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for method in ("spin", "block"):
                df = run_bench(method, Path(tmp) / f"{method}{r}", args.kernels, args.cache)
                df["method"], df["round"] = method, r
                runs.append(df)
                print(f"round {r} {method}: {len(df)} rows", flush=True)
    allrows = pd.concat(runs, ignore_index=True)
    if args.csv:
        allrows.to_csv(args.csv, index=False)
    t = allrows.pivot_table(index=KEY, columns=["method", "round"], values="time_median_us", aggfunc="first")
    spin = t["spin"].median(axis=1)
    block = t["block"].median(axis=1)
    noise = pd.concat([(t[m].max(axis=1) - t[m].min(axis=1)) for m in ("spin", "block")], axis=1).max(axis=1)
    out = pd.DataFrame({"spin_us": spin, "block_us": block, "noise_us": noise})
    out["diff_us"] = out["block_us"] - out["spin_us"]
    out["diff_pct"] = 100 * out["diff_us"] / out["spin_us"]
    tol = (out["spin_us"] * args.rel_pct / 100).clip(lower=args.abs_us)
    out["same"] = (out["diff_us"].abs() <= tol) | (out["diff_us"].abs() <= out["noise_us"])
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    print(out.round(2).to_string())
    fam = out.reset_index().groupby("kernel").agg(rows=("same", "size"), same=("same", "sum"),
                                                   median_diff_pct=("diff_pct", "median"))
    print("\nper kernel:\n" + fam.round(2).to_string())
    print(f"\n{int(out['same'].sum())} of {len(out)} rows give the same time with either method "
          f"(within {args.rel_pct:g} % or {args.abs_us:g} us, or within the run-to-run spread)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
