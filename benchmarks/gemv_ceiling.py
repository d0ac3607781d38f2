"""Is the size-aware ceiling honest at the GEMVs' bytes?

Issue #14's single-mode targets (FP16 GEMV >= 95 %, Q4_0 `tiled` GEMV M=1 >= 90 % of the size-aware
ceiling at their bytes) judge a GEMV against the size curve's READ line t(B) = t0 + B / BW, measured
by the clean read stream_read (every thread's 16-byte loads at once, one partial sum a block, no
second pass, no atomics); a copy has its own line (its writes can end in the L2 before the kernel
does). This script prints, in one run:

1. each line of the curve with its RMS residual and worst point, and the measured points between 1
   and 256 MB against their own line and against ONE line through every kernel's fastest point (the
   method of the fit before the lines were split: it mixed read and copy);
2. for each GEMV (the kernel bwprof chooses, bwprof.explain names it), in alternating passes: its
   time, the read line and the mixed line at its bytes, a clean read and a copy of exactly its
   bytes, and the ratios (read / mixed line: is the old target physically reachable; GEMV / read:
   how far the GEMV is from reading its bytes), each row checked against the CPU reference.

    PYTHONPATH=python python3 benchmarks/gemv_ceiling.py [--repeats 30] [--passes 2] [--csv FILE] [--device gpu]
        [--q4-only]
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys

import bwprof
from bwprof import _core

SHAPES = [(4096, 4096), (14336, 4096)]
# (label, kernel, variant, shape)
CASES = [
    ("FP16 GEMV", "gemv", None, lambda n, k: dict(N=n, K=k)),
    ("Q4_0 GEMV tiled", "q4_0_matmul", "tiled", lambda n, k: dict(M=1, N=n, K=k)),
]
DEVICE = "gpu"


def measure(kernel: str, repeats: int, **kw) -> dict:
    """One cold single-launch measurement as a dict."""
    return bwprof.measure(kernel, device=DEVICE, repeats=repeats, min_time_s=0.0, warmup=3, **kw).to_dict()


def line_us(line: dict, nbytes: float) -> float:
    return line["t0_us"] + nbytes / (line["bandwidth_gbs"] * 1e3)


def at_bytes(kernel: str, nbytes: float, repeats: int) -> dict:
    """A size-curve kernel (FP32, as the curve measures it) moving as close to `nbytes` as its
    16-element steps allow: stream_read moves 4 bytes an element, stream_copy 8."""
    per = 4 if kernel == "stream_read" else 8
    n = max(16, int(round(nbytes / per / 16)) * 16)
    return measure(kernel, repeats, dtype="fp32", n=n)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--passes", type=int, default=2, help="alternating passes over the GEMVs")
    ap.add_argument("--csv", help="also write every row as CSV")
    ap.add_argument("--device", default="gpu", help="the device")
    ap.add_argument("--q4-only", action="store_true", help="only the Q4_0 GEMV")
    args = ap.parse_args(argv)
    global DEVICE
    DEVICE = args.device
    if args.repeats < 1 or args.passes < 1:
        ap.error("--repeats and --passes must be at least 1")
    dev = bwprof.device(DEVICE)
    curve = bwprof.peaks(DEVICE)["size_curve"]
    lines = {ln["pattern"]: ln for ln in curve.get("lines") or []}
    if "read" not in lines:
        print(f"no read line in this device's size curve (lines: {sorted(lines)})", file=sys.stderr)
        return 1
    read_line = lines["read"]
    # One line through every kernel's fastest point: the method before the curve was split by pattern.
    mixed = _core.fit_size_curve([dict(p, write_fraction=0.0) for p in curve["points"]])["lines"][0]
    print(f"device: {dev.name} ({dev.arch}); the size curve's lines (cold):")
    for ln in curve["lines"]:
        print(f"  {ln['pattern']:5s} t(B) = {ln['t0_us']:.2f} us + B / {ln['bandwidth_gbs']:.0f} GB/s  ({ln['kernels']}, "
              f"{ln['fitted_points']} sizes; residual {ln['residual_pct']:.1f} % RMS, worst point {ln['max_error_pct']:.1f} %)")
    print(f"  mixed t(B) = {mixed['t0_us']:.2f} us + B / {mixed['bandwidth_gbs']:.0f} GB/s  (one line through every "
          f"kernel's fastest point, as before; residual {mixed['residual_pct']:.1f} % RMS, worst "
          f"{mixed['max_error_pct']:.1f} %)")
    print("\n1. the curve's measured points from 1 to 256 MB (error = line time / measured time - 1):")
    by_pattern = {ln["kernels"]: ln for ln in curve["lines"]}
    for p in sorted(curve["points"], key=lambda p: (p["kernel"], p["bytes"])):
        if 1e6 <= p["bytes"] <= 256e6:
            own = by_pattern.get(p["kernel"])
            e_own = f"{100 * (line_us(own, p['bytes']) / p['time_us'] - 1):+6.1f} %" if own else "   n/a"
            print(f"  {p['kernel']:12s} {p['bytes'] / 1e6:8.2f} MB  {p['time_us']:8.2f} us  own line {e_own}  "
                  f"mixed line {100 * (line_us(mixed, p['bytes']) / p['time_us'] - 1):+6.1f} %")

    rows, bad = [], 0
    print("\n2. the GEMVs against a clean read and a copy of their bytes (us, pass by pass):")
    for n, k in SHAPES:
        print(f"\n== {n}x{k} ==")
        for label, kernel, variant, shape in CASES:
            if args.q4_only and kernel != "q4_0_matmul":
                continue
            if DEVICE == "cpu":
                variant = None  # (a smoke run: the CPU has one variant of each)
            kw = dict(dtype="fp16", variant=variant, **shape(n, k))
            chosen = bwprof.explain(kernel, device=DEVICE, **kw) or "(one kernel)"
            t = {"gemv": [], "read": [], "copy": []}
            nbytes = 0.0
            for ps in range(args.passes):
                lib = measure(kernel, args.repeats, **kw)
                nbytes = lib["bytes_read"] + lib["bytes_written"]
                rd, cp = at_bytes("stream_read", nbytes, args.repeats), at_bytes("stream_copy", nbytes, args.repeats)
                for key, r in (("gemv", lib), ("read", rd), ("copy", cp)):
                    bad += not r["verified"]
                    t[key].append(r["time_median_us"])
                    rows.append(dict(shape=f"{n}x{k}", case=label, kernel=chosen if key == "gemv" else r["kernel"],
                                     pass_=ps + 1, bytes=nbytes, time_us=r["time_median_us"],
                                     line_us=line_us(read_line, nbytes), verified=r["verified"],
                                     pct_attainable=r.get("bandwidth_pct_attainable")))
            f_read, f_mixed = line_us(read_line, nbytes), line_us(mixed, nbytes)
            t_lib, t_rd, t_cp = (statistics.median(t[key]) for key in ("gemv", "read", "copy"))
            print(f"{label} ({chosen}) {nbytes / 1e6:.2f} MB: GEMV " + " / ".join(f"{x:.2f}" for x in t["gemv"])
                  + f" us | read line {f_read:.2f} us | mixed line {f_mixed:.2f} us | clean read {t_rd:.2f} us"
                  f" | copy {t_cp:.2f} us")
            print(f"  the clean read reaches {100 * f_mixed / t_rd:.1f} % of the mixed line (95 % of it would be "
                  f"{f_mixed / 0.95:.2f} us) and {100 * f_read / t_rd:.1f} % of the read line; the copy "
                  f"{100 * f_mixed / t_cp:.1f} % of the mixed line")
            print(f"  the GEMV: {100 * f_read / t_lib:.1f} % of its size ceiling (the read line) = "
                  f"{100 * t_rd / t_lib:.1f} % of the clean read's speed ({t_lib - t_rd:+.2f} us); 90 % needs "
                  f"<= {f_read / 0.90:.2f} us, 95 % <= {f_read / 0.95:.2f} us")
    if args.csv:
        import pandas as pd
        pd.DataFrame(rows).rename(columns={"pass_": "pass"}).to_csv(args.csv, index=False)
    print(f"\n{'every row matched the CPU reference' if not bad else f'{bad} row(s) did NOT match the reference'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
