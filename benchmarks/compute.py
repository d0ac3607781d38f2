"""Compute kernels (GEMM, fused epilogues, fused QKV, flash attention): bwprof beside PyTorch, in one run.

Both sides are timed the same way: the L2 flushed (a buffer twice its size written) before every
timed run, device events around the work alone, the median of the repeats. TFLOP/s counts each
kernel family's FLOPs (2 per multiply-add; causal attention only the visible pairs, about half);
TB/s its minimal traffic (each input read once, each output written once).

    PYTHONPATH=python python3 benchmarks/compute.py [--repeats 30] [--csv FILE]
"""
from __future__ import annotations

import argparse
import sys

import bwprof
from peer_timing import shared_timer
import result_files

GEMM_SHAPES = [  # (label, M, N, K): the suite's shapes and the large square one
    ("decode 1x896x896", 1, 896, 896),
    ("prefill 32x896x896", 32, 896, 896),
    ("prefill 128x896x896", 128, 896, 896),
    ("ffn 128x4864x896", 128, 4864, 896),
    ("encoder qkv 64x2304x768", 64, 2304, 768),
    ("4096^3", 4096, 4096, 4096),
]

ATTN_PREFILL = dict(batch=1, heads=32, head_dim=128)
DECODE = dict(batch=8, heads=32, seq_q=1, seq_kv=8192, head_dim=128)


def cases():
    """(name, kernel, variant, dtype, params, metric, peer, kernel choice: the family's engine/tile parameters)."""
    out = []
    for label, m, n, k in GEMM_SHAPES:
        for v in ("vendor", "tensor"):
            out.append((f"GEMM {v} FP16 {label}", "gemm", v, "fp16", dict(M=m, N=n, K=k), "tflops", ("matmul",), {}))
    # The tensor variant's tile shapes (wgmma on Hopper builds), and the mma.sync kernel it replaced.
    for label, m, n, k in (("4096^3", 4096, 4096, 4096), ("ffn 128x4864x896", 128, 4864, 896)):
        for tile in ("128x256", "128x128", "64x128", "64x64"):
            out.append((f"GEMM tensor FP16 {label} tile={tile}", "gemm", "tensor", "fp16", dict(M=m, N=n, K=k),
                        "tflops", None, dict(engine="wgmma", tile=tile)))
        out.append((f"GEMM tensor FP16 {label} mma.sync", "gemm", "tensor", "fp16", dict(M=m, N=n, K=k),
                    "tflops", None, dict(engine="mma")))
    out.append(("GEMM tiled FP32 1024^3", "gemm", "tiled", "fp32", dict(M=1024, N=1024, K=1024), "tflops",
                ("matmul",), {}))
    out.append(("GEMM vendor FP32 4096^3", "gemm", "vendor", "fp32", dict(M=4096, N=4096, K=4096), "tflops",
                ("matmul",), {}))
    ffn = dict(M=4096, N=2304, K=768, bias=True, act="gelu")
    for v in ("vendor", "tensor", "unfused"):
        out.append((f"GEMM+bias+GELU {v} FP16 4096x2304x768", "gemm", v, "fp16", ffn, "tflops", ("addmm_gelu",), {}))
    for v in ("fused", "separate"):
        out.append((f"QKV {v} FP16 4096 tokens x 768", "qkv_projection", v, "fp16", dict(tokens=4096, hidden=768),
                    "tflops", ("qkv", v), {}))
    for s in (4096, 1024):
        out.append((f"flash FP16 B1 H32 S{s} D128", "attention", "flash", "fp16", dict(ATTN_PREFILL, seq_q=s),
                    "tflops", ("sdpa", False), {}))
    for s in (4096, 1024):  # the mma.sync kernel where the Hopper one runs by default
        out.append((f"flash FP16 B1 H32 S{s} D128 mma.sync", "attention", "flash", "fp16",
                    dict(ATTN_PREFILL, seq_q=s), "tflops", None, dict(engine="flash")))
    out.append(("flash FP16 B1 H32 S4096 D128 causal", "attention", "flash", "fp16",
                dict(ATTN_PREFILL, seq_q=4096, causal=True), "tflops", ("sdpa", True), {}))
    out.append(("flash paged FP16 B1 H32 S4096 D128", "attention", "flash_paged", "fp16",
                dict(ATTN_PREFILL, seq_q=4096, block_size=16), "tflops", None, {}))
    out.append(("flash FP16 B4 H32/8 S2048 D128 causal (GQA)", "attention", "flash", "fp16",
                dict(batch=4, heads=32, kv_heads=8, seq_q=2048, head_dim=128, causal=True), "tflops",
                ("sdpa", True), {}))
    out.append(("flash FP16 B1 H32 S2048 D64", "attention", "flash", "fp16",
                dict(batch=1, heads=32, seq_q=2048, head_dim=64), "tflops", ("sdpa", False), {}))
    out.append(("flash FP32 B1 H8 S1024 D64", "attention", "flash", "fp32",
                dict(batch=1, heads=8, seq_q=1024, head_dim=64), "tflops", ("sdpa", False), {}))
    out.append(("decode FP16 B8 H32 KV8192 D128", "attention", "flash", "fp16", DECODE, "tbs", ("sdpa", False), {}))
    out.append(("decode paged FP16 B8 H32 KV8192 D128", "attention", "flash_paged", "fp16",
                dict(DECODE, block_size=16), "tbs", None, {}))
    out.append(("decode GQA FP16 B8 H32/8 KV8192 D128", "attention", "flash", "fp16", dict(DECODE, kv_heads=8),
                "tbs", ("sdpa", False), {}))
    return out


TARGETS = {  # name -> (minimum, unit, how): the issue's speed targets
    "flash FP16 B1 H32 S4096 D128": 330.0,
    "flash FP16 B1 H32 S1024 D128": 235.0,
    "decode FP16 B8 H32 KV8192 D128": 2.6,
}


# What each kind of PyTorch peer runs (the result files' peer column).
PEER_NAMES = {"matmul": "torch.matmul", "addmm_gelu": "F.gelu(torch.addmm)", "qkv": "torch.matmul (Q/K/V)",
              "sdpa": "torch SDPA"}


def torch_time(peer, kernel, p, dtype, repeats):
    """Median microseconds of PyTorch doing the same work, L2 flushed before each run."""
    import torch
    import torch.nn.functional as F

    dev = torch.device("cuda")
    dt = torch.float16 if dtype == "fp16" else torch.float32
    g = torch.Generator(device=dev).manual_seed(0)

    def rnd(*s):
        return torch.rand(*s, generator=g, device=dev, dtype=torch.float32).mul_(2).sub_(1).to(dt)

    kind = peer[0]
    if kind == "matmul":
        A, B = rnd(p["M"], p["K"]), rnd(p["K"], p["N"])
        fn = lambda: torch.matmul(A, B)  # noqa: E731
    elif kind == "addmm_gelu":
        A, B, bias = rnd(p["M"], p["K"]), rnd(p["K"], p["N"]), rnd(p["N"])
        fn = lambda: F.gelu(torch.addmm(bias, A, B))  # noqa: E731
    elif kind == "qkv":
        T, H = p["tokens"], p["hidden"]
        X = rnd(T, H)
        if peer[1] == "fused":
            W = rnd(H, 3 * H)
            fn = lambda: torch.matmul(X, W)  # noqa: E731
        else:
            Ws = [rnd(H, H) for _ in range(3)]
            fn = lambda: [torch.matmul(X, w) for w in Ws]  # noqa: E731
    elif kind == "sdpa":
        Bn, H, D = p["batch"], p["heads"], p["head_dim"]
        Hkv = p.get("kv_heads", H)
        Sq = p["seq_q"]
        Skv = p.get("seq_kv", Sq)
        q = rnd(Bn, H, Sq, D)
        k, v = rnd(Bn, Hkv, Skv, D), rnd(Bn, Hkv, Skv, D)
        causal = peer[1]
        fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=Hkv != H)  # noqa: E731
    else:
        raise ValueError(kind)
    return shared_timer().median_us(fn, repeats)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--csv", help="also write the rows as CSV")
    ap.add_argument("--no-torch", action="store_true", help="skip the PyTorch peer")
    ap.add_argument("--only", help="run only cases whose name contains this text")
    result_files.add_arguments(ap, "compute")
    args = ap.parse_args(argv)
    dev = bwprof.device("gpu")
    print(f"device: {dev.name} ({dev.arch})", flush=True)
    rows, results = [], []
    for name, kernel, variant, dtype, params, metric, peer, choice in cases():
        if args.only and args.only not in name:
            continue
        try:
            m = bwprof.measure(kernel, dtype=dtype, device="gpu", variant=variant, repeats=args.repeats,
                               min_time_s=0.0, warmup=3, **params, **choice).to_dict()
        except Exception as e:  # noqa: BLE001 - one failing case must not lose the others
            print(f"  {name}: FAILED {type(e).__name__}: {e}", flush=True)
            rows.append(dict(name=name, failed=str(e)))
            continue
        work = m["flops"] if metric == "tflops" else m["bytes_read"] + m["bytes_written"]
        rate = work / (m["time_median_us"] * 1e-6) / 1e12
        torch_us = None
        if peer and not args.no_torch:
            try:
                torch_us = torch_time(peer, kernel, params, dtype, args.repeats)
            except Exception as e:  # noqa: BLE001
                print(f"  (PyTorch peer for {name} failed: {e})", file=sys.stderr)
        row = dict(name=name, variant=m["variant"], dtype=dtype, shape=m["shape"], verified=m["verified"],
                   max_rel_error=m["max_rel_error"], time_us=m["time_median_us"], rate=rate, unit=metric,
                   torch_us=torch_us, torch_rate=work / (torch_us * 1e-6) / 1e12 if torch_us else None,
                   regs=m["registers_per_thread"], smem=m["shared_mem_per_block"], block=m["block_size"])
        rows.append(row)
        if not choice:  # a case that forces a kernel choice is not the library's figure for its shape
            results.append(result_files.row(m, PEER_NAMES[peer[0]] if peer else None, torch_us,
                                            label=name))
        print(f"  {name}: {rate:.3f} {'TFLOP/s' if metric == 'tflops' else 'TB/s'} ({row['time_us']:.1f} us)"
              f"{' ok' if m['verified'] else ' WRONG'}"
              + (f"  torch {row['torch_rate']:.3f} ({torch_us:.1f} us)" if torch_us else ""), flush=True)
    hdr = (f"{'case':46s} {'bwprof':>9s} {'unit':>7s} {'us':>9s} {'torch':>9s} {'torch us':>9s} {'ratio':>6s} "
           f"{'regs':>4s} {'smem':>6s} ok")
    print("\n" + hdr + "\n" + "-" * len(hdr))
    for r in rows:
        if "failed" in r:
            print(f"{r['name']:46s} FAILED: {r['failed'][:80]}")
            continue
        unit = "TFLOP/s" if r["unit"] == "tflops" else "TB/s"
        t = f"{r['torch_rate']:9.3f}" if r["torch_rate"] else f"{'-':>9s}"
        tu = f"{r['torch_us']:9.1f}" if r["torch_us"] else f"{'-':>9s}"
        ratio = f"{r['torch_us'] / r['time_us']:6.2f}" if r["torch_us"] else f"{'-':>6s}"
        print(f"{r['name']:46s} {r['rate']:9.3f} {unit:>7s} {r['time_us']:9.1f} {t} {tu} {ratio} {r['regs']:4d} "
              f"{r['smem']:6d} {'yes' if r['verified'] else 'NO'}")
    by = {r["name"]: r for r in rows if "failed" not in r}
    print("\ntargets:")

    def line(text, ok):
        print(f"  {'met ' if ok else 'MISS'} {text}")

    for name, target in TARGETS.items():
        if name in by:
            line(f"{name}: {by[name]['rate']:.3f} >= {target}", by[name]["rate"] >= target)
    for label, *_ in GEMM_SHAPES:
        v, t = by.get(f"GEMM vendor FP16 {label}"), by.get(f"GEMM vendor FP16 {label}")
        if v and v["torch_us"]:
            line(f"vendor {label}: {v['time_us']:.1f} us vs torch {v['torch_us']:.1f} us (within 5 %)",
                 v["time_us"] <= 1.05 * v["torch_us"])
    for label, frac in (("4096^3", 0.60), ("ffn 128x4864x896", 0.50)):
        tn, vn = by.get(f"GEMM tensor FP16 {label}"), by.get(f"GEMM vendor FP16 {label}")
        if tn and vn:
            line(f"tensor {label}: {tn['rate']:.1f} = {100 * tn['rate'] / vn['rate']:.0f} % of vendor (>= {100 * frac:.0f} %)",
                 tn["rate"] >= frac * vn["rate"])
    fu, un = by.get("GEMM+bias+GELU vendor FP16 4096x2304x768"), by.get("GEMM+bias+GELU unfused FP16 4096x2304x768")
    if fu and un:
        line(f"fused GEMM+bias+GELU {fu['time_us']:.1f} us vs unfused {un['time_us']:.1f} us (>= 10 % faster)",
             fu["time_us"] <= un["time_us"] / 1.10)
    qf, qs = by.get("QKV fused FP16 4096 tokens x 768"), by.get("QKV separate FP16 4096 tokens x 768")
    if qf and qs:
        line(f"fused QKV {qf['time_us']:.1f} us vs three GEMMs {qs['time_us']:.1f} us (>= 1.3x)",
             qs["time_us"] >= 1.3 * qf["time_us"])
    if args.csv:
        import pandas as pd
        pd.DataFrame(rows).to_csv(args.csv, index=False)
    result_files.write_from_args(args, results, argv)
    return 0 if all(r.get("verified") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
