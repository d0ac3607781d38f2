"""Every roof bwprof measures with its own kernels, beside PyTorch in one run (issue #14 part A).

Matrix units: bwprof's matrix peak per type (wgmma on Hopper; mma.sync too for comparison) beside
torch.matmul of 8192^3 (fp16, bf16, tf32 via allow_tf32, fp8 e4m3 via torch._scaled_mm, int8 via
torch._int_mm), hot, the median of CUDA-event timings. Cache levels: bwprof's L2 read beside
torch's sum of a tensor of the same working set (hot, so the L2 serves it). The size-aware memory
ceiling's lines, one per access pattern (clean read, copy: fixed cost, asymptotic bandwidth, RMS
residual and worst point), close the table. The target: the FP16
matrix peak within 10 % of PyTorch's (cuBLAS's) best large GEMM.

    PYTHONPATH=python python3 benchmarks/peaks.py [--csv FILE] [--no-torch]
"""
from __future__ import annotations

import argparse
import math
import sys

import pandas as pd

import bwprof


def torch_timer():
    import torch

    def time_us(fn, repeats=20, warmup=3):
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(repeats):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) * 1e3)
        ts.sort()
        return ts[len(ts) // 2]
    return torch, time_us


def torch_matmul_tflops(kind: str, n: int = 8192) -> tuple[float, str]:
    """PyTorch's best large GEMM of one type, TFLOP/s (TOP/s for int8), and what ran."""
    torch, time_us = torch_timer()
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(0)
    try:
        if kind in ("fp16", "bf16"):
            dt = torch.float16 if kind == "fp16" else torch.bfloat16
            a = torch.randn(n, n, device=dev, dtype=dt, generator=g)
            b = torch.randn(n, n, device=dev, dtype=dt, generator=g)
            fn, what = (lambda: a @ b), f"torch.matmul {kind}"
        elif kind == "tf32":
            torch.backends.cuda.matmul.allow_tf32 = True
            a = torch.randn(n, n, device=dev, generator=g)
            b = torch.randn(n, n, device=dev, generator=g)
            fn, what = (lambda: a @ b), "torch.matmul fp32 (allow_tf32)"
        elif kind == "fp8":
            if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
                return math.nan, "torch has no _scaled_mm"
            a = torch.randn(n, n, device=dev, generator=g).to(torch.float8_e4m3fn)
            b = torch.randn(n, n, device=dev, generator=g).to(torch.float8_e4m3fn).t()  # column-major
            one = torch.tensor(1.0, device=dev)
            fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
            what = "torch._scaled_mm e4m3"
        elif kind == "int8":
            if not hasattr(torch, "_int_mm"):
                return math.nan, "torch has no _int_mm"
            a = torch.randint(-8, 8, (n, n), device=dev, dtype=torch.int8, generator=g)
            b = torch.randint(-8, 8, (n, n), device=dev, dtype=torch.int8, generator=g)
            fn, what = (lambda: torch._int_mm(a, b)), "torch._int_mm"
        else:
            return math.nan, ""
        us = time_us(fn, repeats=10)
    except Exception as e:  # an op this torch or GPU lacks: reported, not fatal
        return math.nan, f"{kind}: {type(e).__name__}: {str(e)[:80]}"
    return 2.0 * n ** 3 / (us * 1e-6) / 1e12, what


def torch_l2_read_gbs(nbytes: int) -> float:
    """GB/s of torch's sum over a float32 tensor of `nbytes`, hot: what the L2 serves it at."""
    torch, time_us = torch_timer()
    x = torch.randn(max(1, nbytes // 4), device="cuda")
    us = time_us(lambda: x.sum(), repeats=50, warmup=5)
    return nbytes / (us * 1e-6) / 1e9


def size_curve_rows(p: dict) -> list[dict]:
    """The size-aware memory ceiling as rows of the table, one group per access pattern (the clean
    read, the copy): its line's fixed cost, asymptotic bandwidth (beside the theoretical), RMS
    residual and worst point's error (none without a curve)."""
    c = p.get("size_curve") or {}
    theo = p.get("bandwidth_theoretical_gbs") or math.nan
    rows = []
    for ln in c.get("lines") or []:
        src = f"{ln['kernels']}: fit of {ln['fitted_points']} sizes, cold"
        base = {"kind": f"size curve ({ln['pattern']})", "theoretical": math.nan, "pct_of_theoretical": math.nan,
                "source": src, "torch": math.nan, "torch_what": "", "bwprof_pct_of_torch": math.nan}
        rows += [dict(base, type="fixed cost t0", measured=ln["t0_us"], unit="us"),
                 dict(base, type="asymptotic bandwidth", measured=ln["bandwidth_gbs"], theoretical=theo,
                      pct_of_theoretical=100.0 * ln["bandwidth_gbs"] / theo if theo == theo else math.nan,
                      unit="GB/s"),
                 dict(base, type="fit residual (RMS)", measured=ln["residual_pct"], unit="%"),
                 dict(base, type="fit worst point", measured=ln["max_error_pct"], unit="%")]
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", help="write the table here too")
    ap.add_argument("--no-torch", action="store_true", help="bwprof's figures only")
    args = ap.parse_args()
    dev = bwprof.device("auto")
    print(f"device: {dev.name} ({dev.id}, {dev.arch}); bwprof {bwprof.__version__}")
    table = bwprof.peak_table(dev.id)
    p = bwprof.peaks(dev.id, "fp16")
    torch_ok = not args.no_torch and dev.kind == "gpu"
    if torch_ok:
        try:
            import torch  # noqa: F401
        except ImportError:
            torch_ok = False
    rows = []
    for r in table.to_dict("records"):
        peer, peer_what = math.nan, ""
        if torch_ok and r["kind"] == "matrix":
            peer, peer_what = torch_matmul_tflops(r["type"])
            peer *= 1e3  # GFLOP/s
        if torch_ok and r["kind"] == "cache" and r["type"] == "l2 read":
            ws = int(p["levels"]["l2"]["working_set_bytes"])
            peer, peer_what = torch_l2_read_gbs(ws), f"torch sum of {ws / 1e6:.1f} MB, hot"
        r["torch"] = peer
        r["torch_what"] = peer_what
        r["bwprof_pct_of_torch"] = 100.0 * r["measured"] / peer if peer == peer and peer > 0 else math.nan
        rows.append(r)
    # mma.sync beside wgmma, FP16 (what the Hopper path gains).
    if dev.kind == "gpu" and "fp16" in p["matrix"]:
        try:
            m = bwprof.measure("mma_peak", dtype="fp16", device=dev.id, type="fp16", engine="mma_sync", cache="hot",
                               workers=4 * dev.info["compute_units"], iters=512, repeats=5)
            rows.append({"kind": "matrix", "type": "fp16 (mma.sync)", "measured": m.gflops,
                         "theoretical": p["matrix"]["fp16"]["gflops_theoretical"],
                         "pct_of_theoretical": 100.0 * m.gflops / p["matrix"]["fp16"]["gflops_theoretical"],
                         "unit": "GFLOP/s", "source": "measured:mma_peak engine=mma_sync", "torch": math.nan,
                         "torch_what": "", "bwprof_pct_of_torch": math.nan})
        except ValueError as e:
            print(f"mma.sync: {e}")
    rows += size_curve_rows(p)
    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 48,
                           "display.float_format", "{:,.1f}".format):
        print(df.to_string(index=False))
    if args.csv:
        df.to_csv(args.csv, index=False)
    fp16 = df[(df["kind"] == "matrix") & (df["type"] == "fp16")]
    if torch_ok and len(fp16) and fp16["torch"].iloc[0] == fp16["torch"].iloc[0]:
        pct = fp16["bwprof_pct_of_torch"].iloc[0]
        verdict = "PASS" if pct >= 90.0 else "FAIL"
        print(f"target: FP16 matrix peak {fp16['measured'].iloc[0] / 1e3:.1f} TFLOP/s = {pct:.1f} % of torch.matmul "
              f"8192^3 ({fp16['torch'].iloc[0] / 1e3:.1f} TFLOP/s): {verdict} (>= 90 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
