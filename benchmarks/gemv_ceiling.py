"""Is the size-aware ceiling honest at the GEMVs' bytes, and which GEMV configuration is fastest?

Issue #14's single-mode targets (FP16 GEMV >= 95 %, Q4_0 `tiled` GEMV M=1 >= 90 % of the size-aware
ceiling at their bytes) judge a GEMV against the size curve's READ line t(B) = t0 + B / BW, measured
by the clean read stream_read (every thread's 16-byte loads at once, one partial sum a block, no
second pass, no atomics); a copy has its own line (its writes can end in the L2 before the kernel
does). This script prints, in one run:

1. each line of the curve with its RMS residual and worst point, and the measured points between 1
   and 256 MB against their own line and against ONE line through every kernel's fastest point (the
   method of the fit before the lines were split: it mixed read and copy);
2. the clean read's shapes (BWPROF_STREAM_READ: threads a block x loads a thread) at sizes from
   64 KB to 134 MB, alternating passes: the library's shape should be the fastest or near it, else
   the curve's read line is not yet the best read;
3. for each GEMV: its time, the read line and the mixed line at its bytes, a clean read and a copy
   of exactly its bytes, and the ratios (read / mixed line: is the old target physically reachable;
   GEMV / read: how far the GEMV is from reading its bytes);
4. the GEMV candidates (BWPROF_GEMV_BLOCK, BWPROF_GEMV_LOADS, BWPROF_Q4_KERNEL) in alternating
   passes, each checked against the CPU reference.

    PYTHONPATH=python python3 benchmarks/gemv_ceiling.py [--repeats 30] [--passes 2] [--csv FILE] [--device gpu]
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys

import bwprof
from bwprof import _core

SHAPES = [(4096, 4096), (14336, 4096)]
# (label, kernel, variant, shape, [(knob, value), ...]: the first is the library's own choice)
CASES = [
    ("FP16 GEMV", "gemv", None, lambda n, k: dict(N=n, K=k),
     [{}, {"BWPROF_GEMV_BLOCK": "512"}, {"BWPROF_GEMV_BLOCK": "1024"}, {"BWPROF_GEMV_LOADS": "4"}]),
    ("Q4_0 GEMV tiled", "q4_0_matmul", "tiled", lambda n, k: dict(M=1, N=n, K=k),
     [{}] + [{"BWPROF_Q4_KERNEL": v} for v in ("ring4x4", "ring8x4", "ring4x8", "ring8x8", "ring16x4", "tile",
                                             "ring4x4t2", "ring8x4t2", "ringx8x2", "ringx4x4", "ringx8x4")]),
]
READ_SHAPES = ["", "128x4", "256x1", "256x4", "256x8", "512x1", "512x2", "1024x1"]  # "": the library's (256x2)
READ_SIZES = [65536, 1 << 20, 4 << 20, 9453568, 33570816, 134217728]  # bytes; two are the Q4_0 / FP16 GEMVs'
KNOBS = ("BWPROF_GEMV_BLOCK", "BWPROF_GEMV_LOADS", "BWPROF_Q4_KERNEL", "BWPROF_STREAM_READ")


DEVICE = "gpu"


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
        return bwprof.measure(kernel, device=DEVICE, repeats=repeats, min_time_s=0.0, warmup=3, **kw).to_dict()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def line_us(line: dict, nbytes: float) -> float:
    return line["t0_us"] + nbytes / (line["bandwidth_gbs"] * 1e3)


def at_bytes(kernel: str, nbytes: float, repeats: int, shape: str = "") -> dict:
    """A size-curve kernel (FP32, as the curve measures it) moving as close to `nbytes` as its
    16-element steps allow: stream_read moves 4 bytes an element, stream_copy 8."""
    per = 4 if kernel == "stream_read" else 8
    n = max(16, int(round(nbytes / per / 16)) * 16)
    return measure(kernel, repeats, env={"BWPROF_STREAM_READ": shape}, dtype="fp32", n=n)


def env_name(env: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in env.items()) or "(library)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--passes", type=int, default=2, help="alternating passes over the candidates")
    ap.add_argument("--csv", help="also write every row as CSV")
    ap.add_argument("--device", default="gpu", help="the device (the knobs shape GPU kernels only)")
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

    def record(**kw):
        rows.append(kw)

    print("\n2. the clean read's shapes (threads x loads; us, median of the passes; * fastest at the size):")
    read_t: dict[tuple[int, str], list[float]] = {}
    for ps in range(args.passes):
        for nbytes in READ_SIZES:
            for shp in READ_SHAPES:
                r = at_bytes("stream_read", nbytes, args.repeats, shp)
                bad += not r["verified"]
                read_t.setdefault((nbytes, shp), []).append(r["time_median_us"])
                record(section="read shapes", shape=f"{nbytes}", case="stream_read", config=shp or "(library)",
                       pass_=ps + 1, bytes=r["bytes_read"] + r["bytes_written"], time_us=r["time_median_us"],
                       line_us=line_us(read_line, nbytes), read_us=math.nan, verified=r["verified"])
    print("  " + f"{'MB':>8s} " + " ".join(f"{(s or '256x2 lib'):>10s}" for s in READ_SHAPES) + "   read line")
    wins = {s: 0 for s in READ_SHAPES}
    for nbytes in READ_SIZES:
        med = {s: statistics.median(read_t[(nbytes, s)]) for s in READ_SHAPES}
        best = min(med.values())
        for s in READ_SHAPES:
            wins[s] += med[s] <= best * 1.005
        print("  " + f"{nbytes / 1e6:8.2f} " + " ".join(f"{med[s]:9.2f}{'*' if med[s] <= best * 1.005 else ' '}"
                                                       for s in READ_SHAPES)
              + f"   {line_us(read_line, nbytes):8.2f}")
    top = max(wins.values())
    print("  fastest (within 0.5 %) at most sizes: " + ", ".join(s or "256x2 (library)" for s in READ_SHAPES
                                                                 if wins[s] == top))

    print("\n3./4. the GEMVs against a clean read of their bytes, then the candidates:")
    for n, k in SHAPES:
        print(f"\n== {n}x{k} ==")
        for label, kernel, variant, shape, candidates in CASES:
            if DEVICE == "cpu":
                variant = None  # (a smoke run: the CPU has one variant of each)
            lib = measure(kernel, args.repeats, dtype="fp16", variant=variant, **shape(n, k))
            nbytes = lib["bytes_read"] + lib["bytes_written"]
            rd = at_bytes("stream_read", nbytes, args.repeats)
            # The read shape fastest at the nearest size of section 2 (the GEMVs' bytes are among them).
            near = min(READ_SIZES, key=lambda b: abs(math.log(b / nbytes)))
            best_shape = min(READ_SHAPES, key=lambda s: statistics.median(read_t[(near, s)]))
            rd_best = at_bytes("stream_read", nbytes, args.repeats, best_shape) if best_shape else rd
            cp = at_bytes("stream_copy", nbytes, args.repeats)
            f_read, f_mixed = line_us(read_line, nbytes), line_us(mixed, nbytes)
            t_rd = min(rd["time_median_us"], rd_best["time_median_us"])
            t_cp, t_lib = cp["time_median_us"], lib["time_median_us"]
            print(f"{label} {nbytes / 1e6:.2f} MB: GEMV {t_lib:.2f} us | read line {f_read:.2f} us | mixed line "
                  f"{f_mixed:.2f} us | clean read {rd['time_median_us']:.2f} us (library shape), "
                  f"{rd_best['time_median_us']:.2f} us ({best_shape or '256x2'}) | copy {t_cp:.2f} us")
            print(f"  the clean read reaches {100 * f_mixed / t_rd:.1f} % of the mixed line (95 % of it would be "
                  f"{f_mixed / 0.95:.2f} us) and {100 * f_read / t_rd:.1f} % of the read line; the copy "
                  f"{100 * f_mixed / t_cp:.1f} % of the mixed line")
            print(f"  the GEMV: {lib['bandwidth_pct_attainable']:.1f} % of its size ceiling (the read line, as bwprof "
                  f"reports it) = {100 * t_rd / t_lib:.1f} % of the clean read's speed ({t_lib - t_rd:+.2f} us)")
            for r, what in ((lib, "library"), (rd, "stream_read"), (rd_best, f"stream_read {best_shape or '256x2'}"),
                            (cp, "stream_copy")):
                bad += not r["verified"]
                record(section="gemv", shape=f"{n}x{k}", case=label, config=what, pass_=0, bytes=nbytes,
                       time_us=r["time_median_us"], line_us=f_read, read_us=t_rd, verified=r["verified"])
            # The candidates, alternating: pass 1 over all, pass 2 over all, ...
            times: dict[str, list[float]] = {env_name(c): [] for c in candidates}
            for ps in range(args.passes):
                for env in candidates:
                    r = measure(kernel, args.repeats, env=env, dtype="fp16", variant=variant, **shape(n, k))
                    times[env_name(env)].append(r["time_median_us"])
                    bad += not r["verified"]
                    record(section="gemv", shape=f"{n}x{k}", case=label, config=env_name(env), pass_=ps + 1,
                           bytes=nbytes, time_us=r["time_median_us"], line_us=f_read, read_us=t_rd,
                           verified=r["verified"])
            best = min(times, key=lambda c: statistics.median(times[c]))
            for c, ts in times.items():
                t = statistics.median(ts)
                print(f"  {c:30s} " + " / ".join(f"{x:6.2f}" for x in ts)
                      + f" us  -> {100 * f_read / t:5.1f} % of the read line, {100 * t_rd / t:5.1f} % of the clean read"
                      + ("  <- fastest" if c == best else ""))
    if args.csv:
        import pandas as pd
        pd.DataFrame(rows).rename(columns={"pass_": "pass"}).to_csv(args.csv, index=False)
    print(f"\n{'every row matched the CPU reference' if not bad else f'{bad} row(s) did NOT match the reference'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
