"""Memory-bound kernels at the bandwidth limit: bwprof's figure beside PyTorch's, in one run.

Both sides are timed the same way: the L2 flushed before every timed run (a buffer twice its size
written, then another read so that no dirty lines are left for the timed kernel to write back), device events around the kernel alone, the median of the repeats. Bandwidth counts
each kernel's minimal traffic (each input read once, each output written once), GB = 1e9 bytes.

    PYTHONPATH=python python3 benchmarks/memory_bound.py [--repeats 50] [--csv FILE] [--results [DIR]]
"""
from __future__ import annotations

import argparse
import re
import sys

import bwprof
from peer_timing import shared_timer
import result_files

ROTATE = "rotate"  # marks a case timed hot over rotated copies of its weights, not after a flush

# (name, kernel, variant, dtype, shape, target TB/s or None, PyTorch peer or None[, ROTATE])
CASES = [
    ("stream copy FP32 1 GiB", "stream_copy", None, "fp32", dict(n=1 << 28), 3.0, "copy"),
    ("stream triad FP32 1 GiB", "stream_triad", None, "fp32", dict(n=1 << 28), 3.0, "triad"),
    ("stream scale FP32 1 GiB", "stream_scale", None, "fp32", dict(n=1 << 28), None, "scale"),
    ("stream add FP32 1 GiB", "stream_add", None, "fp32", dict(n=1 << 28), None, "add"),
    ("stream dot FP32 1 GiB", "stream_dot", None, "fp32", dict(n=1 << 28), None, "dot"),
    ("layernorm FP16 65536x4096", "layernorm", None, "fp16", dict(rows=65536, cols=4096), 2.7, "layernorm"),
    ("layernorm FP32 16384x4096", "layernorm", None, "fp32", dict(rows=16384, cols=4096), None, "layernorm"),
    ("bias+GELU fused FP16 65536x4096", "bias_act", "fused", "fp16", dict(rows=65536, cols=4096, act="gelu"), 2.7, "bias_gelu"),
    ("bias+GELU unfused FP16 65536x4096", "bias_act", "unfused", "fp16", dict(rows=65536, cols=4096, act="gelu"), None, "bias_gelu"),
    ("Q4_0 -> FP16 dequant 14336x4096", "q4_0_dequant", None, "fp16", dict(rows=14336, cols=4096), 2.6, None),
    ("Q4_0 -> FP32 dequant 14336x4096", "q4_0_dequant", None, "fp32", dict(rows=14336, cols=4096), None, None),
    ("Q4_0 GEMV llama 14336x4096", "q4_0_matmul", "llama", "fp16", dict(M=1, N=14336, K=4096), None, None),
    ("Q4_0 GEMV tiled 14336x4096", "q4_0_matmul", "tiled", "fp16", dict(M=1, N=14336, K=4096), 2.4, None),
    ("Q4_0 GEMV llama 4096x14336", "q4_0_matmul", "llama", "fp16", dict(M=1, N=4096, K=14336), None, None),
    ("Q4_0 GEMV tiled 4096x14336", "q4_0_matmul", "tiled", "fp16", dict(M=1, N=4096, K=14336), 2.4, None),
    ("Q4_0 matmul tiled M=8 14336x4096", "q4_0_matmul", "tiled", "fp16", dict(M=8, N=14336, K=4096), None, None),
    ("FP16 GEMV 1x4096x4096", "gemv", None, "fp16", dict(N=4096, K=4096), None, "gemv"),
    # The condition for this target: W rotated through copies that together exceed twice the
    # L2 (so the L2 cannot hold the W a run reads), no flush between runs; PyTorch timed the same way.
    ("FP16 GEMV 1x4096x4096 rotated", "gemv", None, "fp16", dict(N=4096, K=4096), 2.6, "gemv", ROTATE),
    ("FP16 GEMV 1x14336x4096", "gemv", None, "fp16", dict(N=14336, K=4096), None, "gemv"),
    ("KV append 64 MiB new (contiguous)", "kv_cache_append", "contiguous", "fp16",
     dict(batch=8, kv_heads=8, head_dim=128, max_seq=8192, new_tokens=2048), 2.5, "kv_append"),
    ("KV append 64 MiB new (paged)", "kv_cache_append", "paged", "fp16",
     dict(batch=8, kv_heads=8, head_dim=128, max_seq=8192, new_tokens=2048, block_size=16), 2.5, None),
    ("KV append decode step", "kv_cache_append", "contiguous", "fp16",
     dict(batch=1, kv_heads=8, head_dim=128, max_seq=8192, new_tokens=1), None, "kv_append"),
]


# What the PyTorch peer of each kind runs (the result files' peer column).
PEER_NAMES = {"copy": "torch copy_", "triad": "torch.add(alpha=)", "scale": "torch.mul", "add": "torch.add",
              "dot": "torch.dot", "layernorm": "F.layer_norm", "bias_gelu": "F.gelu(x + b)", "gemv": "torch.matmul",
              "kv_append": "slice copy_"}


def torch_peer(kind, shape, dtype, repeats):
    """Median microseconds of PyTorch doing the same work, L2 flushed before each run."""
    import torch
    import torch.nn.functional as F

    dev = torch.device("cuda")
    dt = torch.float16 if dtype == "fp16" else torch.float32
    g = torch.Generator(device=dev).manual_seed(0)

    def rnd(*s):
        return torch.rand(*s, generator=g, device=dev, dtype=torch.float32).mul_(2).sub_(1).to(dt)

    if kind in ("copy", "triad", "scale", "add", "dot"):
        n = shape["n"]
        a, b, c = rnd(n), rnd(n), rnd(n)
        fn = {"copy": lambda: c.copy_(a), "scale": lambda: torch.mul(c, 0.4, out=b),
              "add": lambda: torch.add(a, b, out=c), "triad": lambda: torch.add(b, c, alpha=0.4, out=a),
              "dot": lambda: torch.dot(a, b)}[kind]
    elif kind == "layernorm":
        x = rnd(shape["rows"], shape["cols"])
        w, bias = rnd(shape["cols"]), rnd(shape["cols"])
        fn = lambda: F.layer_norm(x, (shape["cols"],), w, bias, 1e-5)  # noqa: E731
    elif kind == "bias_gelu":
        x, bias = rnd(shape["rows"], shape["cols"]), rnd(shape["cols"])
        fn = lambda: F.gelu(x + bias)  # noqa: E731
    elif kind == "gemv":
        copies = shape.get("rotate", 1)
        Ws, x = [rnd(shape["N"], shape["K"]) for _ in range(copies)], rnd(1, shape["K"])
        turn = [0]

        def fn():
            W = Ws[turn[0] % copies]
            turn[0] += 1
            return torch.matmul(x, W.t())
        if copies > 1:
            return shared_timer().median_us(fn, repeats, flush=False)
    elif kind == "kv_append":
        B, H, D, S, T = (shape[k] for k in ("batch", "kv_heads", "head_dim", "max_seq", "new_tokens"))
        kc = torch.zeros(B, H, S, D, dtype=dt, device=dev)
        vc = torch.zeros_like(kc)
        kn, vn = rnd(B, H, T, D), rnd(B, H, T, D)
        pos = S - T  # one position for all sequences: the slice assignment PyTorch users write

        def fn():
            kc[:, :, pos:pos + T].copy_(kn)
            vc[:, :, pos:pos + T].copy_(vn)
    else:
        raise ValueError(kind)
    return shared_timer().median_us(fn, repeats)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--csv", help="also write the rows as CSV")
    ap.add_argument("--no-torch", action="store_true", help="skip the PyTorch peer")
    ap.add_argument("--only", help="run only the cases whose name matches this regular expression")
    result_files.add_arguments(ap, "memory_bound")
    args = ap.parse_args(argv)
    dev = bwprof.device("gpu")
    peaks = bwprof.peaks("gpu")
    print(f"device: {dev.name} ({dev.arch}); theoretical {dev.info['bandwidth_theoretical_gbs']:.0f} GB/s; "
          f"measured peak {peaks['bandwidth_gbs']:.0f} GB/s ({peaks['bandwidth_source']})", flush=True)
    rows, results = [], []
    l2 = dev.info["cache_bytes"]
    for name, kernel, variant, dtype, shape, target, peer, *how in CASES:
        if args.only and not re.search(args.only, name):
            continue
        cache = "cold"
        if how == [ROTATE]:  # enough copies of W to exceed twice the L2, timed without a flush
            w_bytes = shape["N"] * shape["K"] * (2 if dtype == "fp16" else 4)
            shape = dict(shape, rotate=max(2, -(-int(2 * l2) // w_bytes) + 1))
            cache = "hot"
        m = bwprof.measure(kernel, dtype=dtype, device="gpu", variant=variant, repeats=args.repeats,
                           min_time_s=0.0, warmup=3, cache=cache, **shape).to_dict()
        bytes_ = m["bytes_read"] + m["bytes_written"]
        torch_us = None
        if peer and not args.no_torch:
            try:
                torch_us = torch_peer(peer, shape, dtype, args.repeats)
            except Exception as e:  # noqa: BLE001 - a missing peer must not lose bwprof's figures
                print(f"  (PyTorch peer for {name} failed: {e})", file=sys.stderr)
        row = dict(name=name, kernel=kernel, variant=m["variant"], dtype=dtype, shape=m["shape"],
                   verified=m["verified"], time_us=m["time_median_us"], tbs=m["bandwidth_gbs"] / 1e3,
                   pct_peak=m["bandwidth_pct_peak"], pct_theoretical=m["bandwidth_pct_theoretical"],
                   bound=m["bound"], torch_us=torch_us, torch_tbs=bytes_ / (torch_us * 1e-6) / 1e12 if torch_us else None,
                   target_tbs=target, regs=m["registers_per_thread"])
        row["meets_target"] = None if target is None else row["tbs"] >= target
        rows.append(row)
        results.append(result_files.row(m, PEER_NAMES.get(peer), torch_us, label=name, note=None if target is None
                                        else f"target {target:g} TB/s: {'met' if row['meets_target'] else 'missed'}"))
        print(f"  {name}: {row['tbs']:.3f} TB/s ({row['time_us']:.1f} us){' ok' if m['verified'] else ' WRONG'}",
              flush=True)
    hdr = f"{'kernel':36s} {'bwprof TB/s':>11s} {'us':>9s} {'%peak':>6s} {'%theo':>6s} {'torch TB/s':>10s} {'target':>7s} {'met':>4s} {'bound':>8s} ok"
    print("\n" + hdr + "\n" + "-" * len(hdr))
    for r in rows:
        t = f"{r['torch_tbs']:.3f}" if r["torch_tbs"] else "-"
        tg = f"{r['target_tbs']:.1f}" if r["target_tbs"] else "-"
        met = "-" if r["meets_target"] is None else ("yes" if r["meets_target"] else "NO")
        print(f"{r['name']:36s} {r['tbs']:11.3f} {r['time_us']:9.1f} {r['pct_peak']:6.1f} {r['pct_theoretical']:6.1f} "
              f"{t:>10s} {tg:>7s} {met:>4s} {r['bound']:>8s} {'yes' if r['verified'] else 'NO'}")
    if args.csv:
        import pandas as pd
        pd.DataFrame(rows).to_csv(args.csv, index=False)
    result_files.write_from_args(args, results, argv)
    return 0 if all(r["verified"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
