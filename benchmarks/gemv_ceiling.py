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

With --q4-only, only the Q4_0 GEMV: sections 1, 3 and 4 without the read shapes of section 2 and
without the FP16 GEMV (the clean read of the GEMV's bytes is then the library's shape).

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
from knob_env import knob_env

SHAPES = [(4096, 4096), (14336, 4096)]
# (label, kernel, variant, shape, [(knob, value), ...]: the first is the library's own choice)
CASES = [
    ("FP16 GEMV", "gemv", None, lambda n, k: dict(N=n, K=k),
     # (loads 2 at K = 4096: rows of 256 threads x 2 loads in blocks of 256, the library's shape until
     # session 20; blocks of 512 and 1024 holding such rows lost on the H100 and the H200 and are gone)
     [{}, {"BWPROF_GEMV_BLOCK": "256"}, {"BWPROF_GEMV_LOADS": "2"}, {"BWPROF_GEMV_LOADS": "8"}]),
    ("Q4_0 GEMV tiled", "q4_0_matmul", "tiled", lambda n, k: dict(M=1, N=n, K=k),
     [{}] + [{"BWPROF_Q4_KERNEL": v} for v in (
         # rounds 1-2's best at each shape (the library now takes flood32x2 at 4096x4096 and
         # ring8x4rl at 14336x4096; ring16x2rle was its choice at 4096x4096 in session 23 and
         # ringx8x4rl before; the rest lost at both shapes at 75fba84 and are not run)
         # (round 3's split K, in 2-8 blocks a tile, lost by 3-4 us at 4096x4096 at 2e80c96 and is gone:
         # docs/notes/gemv.md)
         "flood32x2", "ring16x2rle", "ringx8x4rl", "ringx8x4l", "ring8x4rl", "ring4x4l")]
     # probes (no product; printed apart): the kernel's loads without its math, its math without most loads
     + [{"BWPROF_Q4_KERNEL": v} for v in (
         "probe-loads-ringx8x4r", "probe-math-ringx8x2l")]),
]
READ_SHAPES = ["", "128x4", "256x1", "256x4", "256x8", "512x1", "512x2", "1024x1"]  # "": the library's (256x2)
READ_SIZES = [65536, 1 << 20, 4 << 20, 9453568, 33570816, 134217728]  # bytes; two are the Q4_0 / FP16 GEMVs'
KNOBS = ("BWPROF_GEMV_BLOCK", "BWPROF_GEMV_LOADS", "BWPROF_Q4_KERNEL", "BWPROF_STREAM_READ")


DEVICE = "gpu"


def measure(kernel: str, repeats: int, env: dict | None = None, **kw) -> dict:
    """One cold single-launch measurement as a dict, with the knobs of `env` set only for it (the
    instance reads them when it is made)."""
    with knob_env(env, clear=KNOBS):
        return bwprof.measure(kernel, device=DEVICE, repeats=repeats, min_time_s=0.0, warmup=3, **kw).to_dict()


PROBE = "probe-"
# Static SASS instructions a chunk (64 k of 16 rows: 512 quant and 64 scale bytes) in each ring
# kernel's main loop, counted with nvdisasm in the sm_90a cubin that nvcc 13.0 builds (the loop body
# over its U unrolled chunks, divided by U; branches and the ring's refill loads included).
INSTR_A_CHUNK = {"ring4x4": 89.0, "ring4x4l": 73.5, "ring4x4r": 93.8, "ring4x4rl": 73.2, "ring8x4": 89.0,
                 "ring8x4l": 73.5, "ringx8x2": 107.0, "ringx8x2l": 91.5, "ringx8x2r": 113.0, "ringx8x2rl": 98.0,
                 "ringx8x4": 97.5, "ringx8x4l": 82.5}


def is_probe(env: dict) -> bool:
    return PROBE in env.get("BWPROF_Q4_KERNEL", "")


def print_floor(n: int, k: int, times: dict, probes: dict, t_rd: float, read_line: dict, clock_mhz: float,
                sms: int) -> None:
    """What the probes say about the floor: for each probed kernel, its time split into the loads alone
    (probe-loads: the same loads in the same order, no decode, no mma) and the math on top, beside its
    math alone (probe-math: the ring's first round of loads, then every decode and mma of the tile) and
    the issue-rate bound of its instructions (the busiest SM's chunks x instructions a chunk / 4
    schedulers issuing one warp-instruction a clock each)."""
    med = {c: statistics.median(ts) for c, ts in list(times.items()) + list(probes.items())}
    tiles = (n + 15) // 16
    chunks_sm = math.ceil(tiles / max(sms, 1)) * ((k // 32 + 1) // 2)  # the busiest SM's chunks (every tile resident)
    print(f"  the floor (probes compute no product; clean read {t_rd:.2f} us, the read line's intercept "
          f"t0 {read_line['t0_us']:.2f} us; SM clock {clock_mhz:.0f} MHz, {sms} SMs, {chunks_sm} chunks on the "
          f"busiest SM):")
    for c in sorted(probes):
        print(f"    {c:42s} {med[c]:6.2f} us  ({med[c] - t_rd:+.2f} us against the clean read)")
    for c, t in sorted(med.items(), key=lambda kv: kv[1]):
        name = c.split("=", 1)[-1]
        base = name[:-1] if name.endswith("l") else name
        loads = med.get(f"BWPROF_Q4_KERNEL={PROBE}loads-{base}")
        mth = med.get(f"BWPROF_Q4_KERNEL={PROBE}math-{name}")
        if PROBE in c or (name not in INSTR_A_CHUNK and loads is None and mth is None):
            continue
        parts = [f"{name:12s} {t:6.2f} us"]
        if clock_mhz > 0 and name in INSTR_A_CHUNK:  # (a GPU's; the CPU's smoke run has none)
            issue_us = chunks_sm * INSTR_A_CHUNK[name] / 4 / clock_mhz
            parts.append(f"issue bound {issue_us:5.2f} us ({INSTR_A_CHUNK[name]:.0f} instr a chunk)")
        if loads is not None:
            parts.append(f"loads alone {loads:6.2f} (math adds {t - loads:+.2f})")
        if mth is not None:
            parts.append(f"math alone {mth:6.2f} ({mth - read_line['t0_us']:+.2f} over t0)")
        print("    " + " | ".join(parts))


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


def print_read_shapes(read_t: dict, read_line: dict) -> None:
    """Section 2's table: each read shape's median time at each size, * where it is the fastest."""
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--passes", type=int, default=2, help="alternating passes over the candidates")
    ap.add_argument("--csv", help="also write every row as CSV")
    ap.add_argument("--device", default="gpu", help="the device (the knobs shape GPU kernels only)")
    ap.add_argument("--q4-only", action="store_true",
                    help="only the Q4_0 GEMV and its candidates (no read shapes, no FP16 GEMV)")
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

    read_t: dict[tuple[int, str], list[float]] = {}
    read_shapes = [""] if args.q4_only else READ_SHAPES
    if not args.q4_only:
        print("\n2. the clean read's shapes (threads x loads; us, median of the passes; * fastest at the size):")
    for ps in range(0 if args.q4_only else args.passes):
        for nbytes in READ_SIZES:
            for shp in READ_SHAPES:
                r = at_bytes("stream_read", nbytes, args.repeats, shp)
                bad += not r["verified"]
                read_t.setdefault((nbytes, shp), []).append(r["time_median_us"])
                record(section="read shapes", shape=f"{nbytes}", case="stream_read", config=shp or "(library)",
                       pass_=ps + 1, bytes=r["bytes_read"] + r["bytes_written"], time_us=r["time_median_us"],
                       line_us=line_us(read_line, nbytes), read_us=math.nan, verified=r["verified"])
    if not args.q4_only:
        print_read_shapes(read_t, read_line)

    print("\n3./4. the GEMVs against a clean read of their bytes, then the candidates:")
    for n, k in SHAPES:
        print(f"\n== {n}x{k} ==")
        for label, kernel, variant, shape, candidates in CASES:
            if args.q4_only and kernel != "q4_0_matmul":
                continue
            if DEVICE == "cpu":
                variant = None  # (a smoke run: the CPU has one variant of each)
            lib = measure(kernel, args.repeats, dtype="fp16", variant=variant, **shape(n, k))
            nbytes = lib["bytes_read"] + lib["bytes_written"]
            rd = at_bytes("stream_read", nbytes, args.repeats)
            # The read shape fastest at the nearest size of section 2 (the GEMVs' bytes are among them).
            near = min(READ_SIZES, key=lambda b: abs(math.log(b / nbytes)))
            best_shape = min(read_shapes, key=lambda s: statistics.median(read_t.get((near, s), [math.inf])))
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
            clocks: list[float] = []
            for ps in range(args.passes):
                for env in candidates:
                    r = measure(kernel, args.repeats, env=env, dtype="fp16", variant=variant, **shape(n, k))
                    times[env_name(env)].append(r["time_median_us"])
                    probe = is_probe(env)
                    bad += not r["verified"] and not probe
                    bad += bool(r["verified"]) and probe and DEVICE != "cpu"  # a probe computes no product
                    if r.get("sm_clock_mhz") and math.isfinite(r["sm_clock_mhz"]):
                        clocks.append(r["sm_clock_mhz"])
                    record(section="gemv", shape=f"{n}x{k}", case=label, config=env_name(env), pass_=ps + 1,
                           bytes=nbytes, time_us=r["time_median_us"], line_us=f_read, read_us=t_rd,
                           verified=r["verified"])
            probes = {c: ts for c, ts in times.items() if PROBE in c}
            times = {c: ts for c, ts in times.items() if PROBE not in c}
            best = min(times, key=lambda c: statistics.median(times[c]))
            print(f"  candidates (us, pass by pass; 90 % of the read line needs <= {f_read / 0.90:.2f} us, 95 % "
                  f"<= {f_read / 0.95:.2f} us; + marks 90 % in every pass):")
            for c, ts in sorted(times.items(), key=lambda kv: statistics.median(kv[1])):
                t = statistics.median(ts)
                print(f"  {'+' if max(ts) <= f_read / 0.90 else ' '} {c:30s} " + " / ".join(f"{x:6.2f}" for x in ts)
                      + f" us  -> {100 * f_read / t:5.1f} % of the read line, {100 * t_rd / t:5.1f} % of the clean read"
                      + ("  <- fastest" if c == best else ""))
            if probes:
                clock = statistics.median(clocks) if clocks else dev.info["clock_mhz"]
                print_floor(n, k, times, probes, t_rd, read_line, clock, dev.info["compute_units"])
    if args.csv:
        import pandas as pd
        pd.DataFrame(rows).rename(columns={"pass_": "pass"}).to_csv(args.csv, index=False)
    print(f"\n{'every row matched the CPU reference' if not bad else f'{bad} row(s) did NOT match the reference'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
