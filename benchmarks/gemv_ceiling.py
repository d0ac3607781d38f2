"""Is the size-aware ceiling honest at the GEMVs' bytes, and which GEMV configuration is fastest?

Issue #14's single-mode targets (FP16 GEMV >= 95 %, Q4_0 `tiled` GEMV M=1 >= 90 % of the size-aware
ceiling at their bytes) judge a kernel against the size curve's fit t(B) = t0 + B / BW. This script
asks first whether any kernel reaches that fit at those bytes: for each GEMV of
benchmarks/gemv_graph.py it prints, in one run, the GEMV's single-launch time, the fit's time at its
bytes, and the measured cold time of the size curve's own kernels moving exactly as many bytes
(stream_dot: a plain read of two arrays; stream_copy: read + write). read/fit < 100 % means the fit
promises more than a plain read delivers there (the target then asks for more than reading the bytes
takes); GEMV/read says how far the GEMV is from a plain read of its bytes.

Then the candidate configurations (the tuning knobs BWPROF_GEMV_BLOCK and BWPROF_Q4_KERNEL), in
alternating passes so drift shows, each row checked against the CPU reference. The curve's measured
points between 1 and 256 MB are printed with the fit's error at each.

    PYTHONPATH=python python3 benchmarks/gemv_ceiling.py [--repeats 30] [--passes 2] [--csv FILE]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

import bwprof

SHAPES = [(4096, 4096), (14336, 4096)]
# (label, kernel, variant, shape, tuning knob, its values: the first is the library's own choice)
CASES = [
    ("FP16 GEMV", "gemv", None, lambda n, k: dict(N=n, K=k), "BWPROF_GEMV_BLOCK", ["", "512", "1024"]),
    ("Q4_0 GEMV tiled", "q4_0_matmul", "tiled", lambda n, k: dict(M=1, N=n, K=k), "BWPROF_Q4_KERNEL",
     ["", "ring4x4", "ring8x4", "ring4x8", "ring8x8", "ring16x4", "tile"]),
]
KNOBS = ("BWPROF_GEMV_BLOCK", "BWPROF_Q4_KERNEL")


def measure(kernel: str, repeats: int, env: dict | None = None, **kw) -> dict:
    """One cold single-launch measurement as a dict, with the knobs of `env` set only for it (the
    instance reads them when it is made)."""
    saved = {k: os.environ.get(k) for k in KNOBS}
    try:
        for k in KNOBS:
            os.environ.pop(k, None)
        for k, v in (env or {}).items():
            if v:
                os.environ[k] = v
        return bwprof.measure(kernel, device="gpu", repeats=repeats, min_time_s=0.0, warmup=3, **kw).to_dict()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def fit_us(curve: dict, nbytes: float) -> float:
    return curve["t0_us"] + nbytes / (curve["bandwidth_gbs"] * 1e3)


def stream_at(kernel: str, nbytes: float, repeats: int) -> dict:
    """The size curve's kernel (FP32, as the curve measures it) moving as close to `nbytes` as its
    16-element steps allow: both stream_dot and stream_copy move 8 bytes an element."""
    n = max(16, int(round(nbytes / 8 / 16)) * 16)
    return measure(kernel, repeats, dtype="fp32", n=n)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--passes", type=int, default=2, help="alternating passes over the candidates")
    ap.add_argument("--csv", help="also write every row as CSV")
    args = ap.parse_args(argv)
    if args.repeats < 1 or args.passes < 1:
        ap.error("--repeats and --passes must be at least 1")
    dev = bwprof.device("gpu")
    curve = bwprof.peaks("gpu")["size_curve"]
    if not (curve["bandwidth_gbs"] == curve["bandwidth_gbs"]):
        print("no size curve on this device", file=sys.stderr)
        return 1
    print(f"device: {dev.name} ({dev.arch}); size ceiling t(B) = {curve['t0_us']:.2f} us + B / "
          f"{curve['bandwidth_gbs']:.0f} GB/s, residual {curve['residual_pct']:.1f} % over {curve['fitted_points']} sizes")
    print("\nthe curve's measured points near the GEMVs (fit error = fit time / measured time - 1):")
    for p in sorted(curve["points"], key=lambda p: p["bytes"]):
        if 1e6 <= p["bytes"] <= 256e6:
            f = fit_us(curve, p["bytes"])
            print(f"  {p['kernel']:12s} {p['bytes'] / 1e6:8.2f} MB  {p['time_us']:8.2f} us  fit {f:8.2f} us  "
                  f"({100 * (f / p['time_us'] - 1):+5.1f} %)")
    rows, bad = [], 0
    for n, k in SHAPES:
        print(f"\n== {n}x{k} ==")
        for label, kernel, variant, shape, knob, values in CASES:
            lib = measure(kernel, args.repeats, dtype="fp16", variant=variant, **shape(n, k))
            nbytes = lib["bytes_read"] + lib["bytes_written"]
            rd = stream_at("stream_dot", nbytes, args.repeats)
            cp = stream_at("stream_copy", nbytes, args.repeats)
            f = fit_us(curve, nbytes)
            t_rd, t_cp, t_lib = rd["time_median_us"], cp["time_median_us"], lib["time_median_us"]
            print(f"{label} {nbytes / 1e6:.2f} MB: GEMV {t_lib:.2f} us | fit {f:.2f} us | plain read (stream_dot "
                  f"{(rd['bytes_read'] + rd['bytes_written']) / 1e6:.2f} MB) {t_rd:.2f} us | copy {t_cp:.2f} us")
            print(f"  read reaches {100 * f / t_rd:.1f} % of the fit (copy {100 * f / t_cp:.1f} %); the GEMV "
                  f"{100 * f / t_lib:.1f} % of the fit = {100 * t_rd / t_lib:.1f} % of the plain read's speed")
            for r, what in ((lib, "library"), (rd, "stream_dot"), (cp, "stream_copy")):
                bad += not r["verified"]
                rows.append(dict(shape=f"{n}x{k}", case=label, config=what, pass_=0, bytes=nbytes,
                                 time_us=r["time_median_us"], fit_us=f, read_us=t_rd, verified=r["verified"]))
            # The candidates, alternating: pass 1 over all, pass 2 over all, ...
            times: dict[str, list[float]] = {v: [] for v in values}
            for ps in range(args.passes):
                for v in values:
                    r = measure(kernel, args.repeats, env={knob: v}, dtype="fp16", variant=variant, **shape(n, k))
                    times[v].append(r["time_median_us"])
                    bad += not r["verified"]
                    rows.append(dict(shape=f"{n}x{k}", case=label, config=f"{knob}={v or '(library)'}", pass_=ps + 1,
                                     bytes=nbytes, time_us=r["time_median_us"], fit_us=f, read_us=t_rd,
                                     verified=r["verified"]))
            best = min(values, key=lambda v: statistics.median(times[v]))
            for v in values:
                t = statistics.median(times[v])
                print(f"  {knob}={v or '(library)':10s} " + " / ".join(f"{x:6.2f}" for x in times[v])
                      + f" us  -> {100 * f / t:5.1f} % of the fit, {100 * t_rd / t:5.1f} % of the read"
                      + ("  <- fastest" if v == best else ""))
    if args.csv:
        import pandas as pd
        pd.DataFrame(rows).rename(columns={"pass_": "pass"}).to_csv(args.csv, index=False)
    print(f"\n{'every row matched the CPU reference' if not bad else f'{bad} row(s) did NOT match the reference'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
