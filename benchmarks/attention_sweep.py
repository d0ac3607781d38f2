"""Flash attention beside PyTorch's scaled_dot_product_attention over a sweep of the shapes users run.

Every head dimension (64, 80, 96, 128, 256) at prefill (causal and not) and decode (one query
position), batch 1-16, 8-64 query heads, grouped-query ratios 1-8, 128-16384 tokens, FP16 and BF16
alternating, contiguous K/V and a few paged points. Both sides are timed alike (benchmarks/
peer_timing.py: the L2 flushed before every run, events around the work, the median); the target is
bwprof at least 0.9x PyTorch's speed (torch time / bwprof time >= 0.9) at every point. Beside the
kernel bwprof chooses, each point also times the other kernels that take it (the attention family's
engine parameter): prefill the mma.sync kernel (flash), and paged with pages of 128 positions;
decode the mma.sync kernel and the vector-unit rows kernel. Paged points compare a paged read with
SDPA's contiguous one. --candidates sp<N> adds the decode kernel with its keys split N ways (splits).

    PYTHONPATH=python python3 benchmarks/attention_sweep.py [--quick] [--repeats 20] [--csv FILE]
        [--only prefill,decode,paged] [--d 256 [--d 64 ...]] [--max-s 512] [--min-s 1024] [--focus] [--candidates w1,s5]
"""
from __future__ import annotations

import argparse
import re
import sys
import time

import bwprof
from peer_timing import shared_timer
import result_files
from result_files import explain_choice

TARGET = 0.9
DIMS = (64, 80, 96, 128, 256)
# (batch, heads, kv_heads, tokens, causal): prefill has seq_q = seq_kv = tokens
PREFILL = [
    (1, 32, 8, 16384, True),
    (1, 64, 8, 8192, True),
    (4, 32, 32, 2048, True),
    (16, 8, 1, 512, True),
    (16, 64, 8, 128, True),
    (2, 16, 4, 4096, False),
    (8, 32, 4, 1024, True),
]
# (batch, heads, kv_heads, seq_kv): one query position per sequence
DECODE = [
    (1, 8, 8, 16384),
    (1, 32, 8, 8192),
    (16, 32, 8, 4096),
    (4, 64, 8, 16384),
    (16, 8, 1, 2048),
    (8, 32, 32, 1024),
    (1, 64, 64, 128),
]
PAGED = [  # (kind, batch, heads, kv_heads, tokens or seq_kv, head_dim)
    ("decode", 8, 32, 8, 8192, 128),
    ("decode", 16, 64, 8, 2048, 96),
    ("decode", 1, 32, 4, 16384, 256),
    ("prefill", 1, 32, 8, 4096, 128),
    ("prefill", 4, 16, 2, 1024, 80),
]
QUICK = {  # a 15-point subset for iterating: every head dim, both kinds, the corners
    ("prefill", 64, 0), ("prefill", 80, 2), ("prefill", 96, 3), ("prefill", 128, 1), ("prefill", 256, 0),
    ("prefill", 128, 4), ("prefill", 96, 5),
    ("decode", 64, 0), ("decode", 80, 3), ("decode", 96, 4), ("decode", 128, 1), ("decode", 256, 2),
    ("decode", 128, 5), ("paged", 0, 0), ("paged", 0, 3),
}


# The points the last H100 sweep (79cb11b) left under 0.9x, by name's start: --focus times these alone.
FOCUS = ("decode  flash       fp16 B1 H32/8 S1x8192 D64", "decode  flash       bf16 B16 H32/8 S1x4096 D64",
         "decode  flash       fp16 B4 H64/8 S1x16384 D64", "decode  flash       bf16 B16 H8/1 S1x2048 D64",
         "decode  flash       fp16 B16 H8/1 S1x2048 D80", "decode  flash       bf16 B4 H64/8 S1x16384 D80",
         "decode  flash       fp16 B1 H32/8 S1x8192 D96", "decode  flash       fp16 B16 H32/8 S1x4096 D128",
         "decode  flash_paged bf16 B16 H64/8 S1x2048 D96", "prefill flash_paged bf16 B1 H32/8 S4096x4096 D128",
         "prefill flash_paged fp16 B4 H16/2 S1024x1024 D80",
         # controls that pass: decode D256, a D128 near the line, an MHA one
         "decode  flash       bf16 B1 H8/8 S1x16384 D64", "decode  flash       bf16 B16 H32/8 S1x4096 D256",
         "decode  flash       bf16 B4 H64/8 S1x16384 D128")
KINDS = ("prefill", "decode", "paged")


def points(quick: bool, only=None, dims=None, max_s=None, min_s=None):
    """The sweep's points; only: those kinds (prefill, decode: contiguous; paged); dims: those head
    dims; max_s / min_s: those with seq_kv at most max_s / at least min_s."""
    out = []
    for di, d in enumerate(DIMS):
        for i, (b, h, hkv, s, causal) in enumerate(PREFILL):
            if quick and ("prefill", d, i) not in QUICK:
                continue
            dt = ("fp16", "bf16")[(di + i) % 2]
            out.append(("prefill", "flash", dt, dict(batch=b, heads=h, kv_heads=hkv, seq_q=s, seq_kv=s, head_dim=d,
                                                    causal=causal)))
        for i, (b, h, hkv, skv) in enumerate(DECODE):
            if quick and ("decode", d, i) not in QUICK:
                continue
            dt = ("bf16", "fp16")[(di + i) % 2]
            out.append(("decode", "flash", dt, dict(batch=b, heads=h, kv_heads=hkv, seq_q=1, seq_kv=skv, head_dim=d)))
    for i, (kind, b, h, hkv, s, d) in enumerate(PAGED):
        if quick and ("paged", 0, i) not in QUICK:
            continue
        sq = 1 if kind == "decode" else s
        out.append((kind, "flash_paged", ("fp16", "bf16")[i % 2],
                    dict(batch=b, heads=h, kv_heads=hkv, seq_q=sq, seq_kv=s, head_dim=d, causal=kind == "prefill",
                         block_size=16)))
    keep = []
    for kind, variant, dt, p in out:
        group = "paged" if variant == "flash_paged" else kind
        if (only is None or group in only) and (not dims or p["head_dim"] in dims) and \
                (max_s is None or p["seq_kv"] <= max_s) and (min_s is None or p["seq_kv"] >= min_s):
            keep.append((kind, variant, dt, p))
    return keep


def sdpa_us(p, dtype, repeats):
    import torch
    import torch.nn.functional as F

    dt = torch.float16 if dtype == "fp16" else torch.bfloat16
    g = torch.Generator(device="cuda").manual_seed(0)

    def rnd(*s):
        return torch.rand(*s, generator=g, device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(dt)

    q = rnd(p["batch"], p["heads"], p["seq_q"], p["head_dim"])
    k = rnd(p["batch"], p["kv_heads"], p["seq_kv"], p["head_dim"])
    v = rnd(p["batch"], p["kv_heads"], p["seq_kv"], p["head_dim"])
    causal = p.get("causal", False)
    gqa = p["kv_heads"] != p["heads"]
    # is_causal aligns the mask to the top-left; with seq_q == seq_kv (or one query row, not causal)
    # that is the same mask as bwprof's bottom-right one.
    fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)  # noqa: E731
    us = shared_timer().median_us(fn, repeats)
    return us


def sdpa_kernels(p, dtype):
    """The GPU kernels PyTorch's SDPA runs for one call of this shape (which backend: flash, cuDNN,
    memory-efficient), from the profiler."""
    import torch
    import torch.nn.functional as F
    from torch.profiler import ProfilerActivity, profile

    dt = torch.float16 if dtype == "fp16" else torch.bfloat16
    q = torch.rand(p["batch"], p["heads"], p["seq_q"], p["head_dim"], device="cuda", dtype=dt)
    k = torch.rand(p["batch"], p["kv_heads"], p["seq_kv"], p["head_dim"], device="cuda", dtype=dt)
    v = torch.rand_like(k)
    F.scaled_dot_product_attention(q, k, v, is_causal=p.get("causal", False), enable_gqa=p["kv_heads"] != p["heads"])
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        F.scaled_dot_product_attention(q, k, v, is_causal=p.get("causal", False),
                                       enable_gqa=p["kv_heads"] != p["heads"])
        torch.cuda.synchronize()
    return sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"})


# The other kernels timed at each point: (column, parameters changed, where).
CANDIDATES = {
    "prefill": [("flash", {"engine": "flash"}, None),
                # paged: pages of 128 positions (one page a key tile: how much the page size costs)
                ("bs128", {"block_size": 128}, lambda p: "block_size" in p)],
    "decode": [("flash", {"engine": "flash"}, None), ("rows", {"engine": "rows"}, None)],
}


# Grid columns, named on request only (--candidates): `sp<N>` the decode kernel with N splits.
GRID_COLUMN = re.compile(r"^sp(\d+)$")


def grid_column(name):
    """The (column, parameters changed, where) of a decode grid column, else None."""
    m = GRID_COLUMN.match(name)
    if not m or int(m.group(1)) < 1:
        return None
    return (name, {"engine": "decode", "splits": int(m.group(1))}, None)


def measure_us(variant, dtype, p, repeats):
    return bwprof.measure("attention", dtype=dtype, device="gpu", variant=variant, repeats=repeats,
                          min_time_s=0.0, warmup=3, max_time_s=1.0, **p).to_dict()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the 15-point subset")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--csv", help="also write the rows as CSV")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-candidates", action="store_true", help="time only the kernel bwprof chooses")
    ap.add_argument("--only", help="comma-separated kinds of point: prefill, decode (contiguous K/V), paged")
    ap.add_argument("--d", type=int, action="append", choices=DIMS, help="only this head dim (repeatable)")
    ap.add_argument("--max-s", type=int, help="only the points with seq_kv at most this")
    ap.add_argument("--min-s", type=int, help="only the points with seq_kv at least this")
    ap.add_argument("--focus", action="store_true", help="only the points the last H100 sweep left under 0.9x "
                    "(and a few controls)")
    ap.add_argument("--candidates", help="comma-separated candidate columns to time (default: every one)")
    result_files.add_arguments(ap, "attention_sweep")
    args = ap.parse_args(argv)
    if args.max_s is not None and args.max_s < 1:
        ap.error("--max-s: a positive length")
    if args.min_s is not None and args.min_s < 1:
        ap.error("--min-s: a positive length")
    only = None
    if args.only:
        only = {k.strip() for k in args.only.split(",") if k.strip()}
        if not only or only - set(KINDS):
            ap.error(f"--only: kinds among {', '.join(KINDS)}, got {args.only!r}")
    chosen = points(args.quick, only, args.d, args.max_s, args.min_s)
    if not chosen:
        ap.error("no point of the sweep matches --only/--d/--max-s/--min-s (and --quick)")
    known = {c[0] for cs in CANDIDATES.values() for c in cs}
    columns = None
    if args.candidates:
        columns = {c.strip() for c in args.candidates.split(",") if c.strip()}
        unknown = {c for c in columns - known if grid_column(c) is None}
        if unknown:
            ap.error(f"--candidates: unknown {', '.join(sorted(unknown))} (known: {', '.join(sorted(known))}, "
                     "and the decode grid's sp<N>)")
    grid = [grid_column(c) for c in sorted(columns or ()) if c not in known]
    columns_of = {k: v + (grid if k == "decode" else []) for k, v in CANDIDATES.items()}
    dev = bwprof.device("gpu")
    print(f"device: {dev.name} ({dev.arch}); target: bwprof >= {TARGET}x PyTorch SDPA", flush=True)
    t0 = time.time()
    if not args.no_torch:
        import torch
        print(f"torch {torch.__version__}", flush=True)
        for what, p in (("prefill", dict(batch=1, heads=32, kv_heads=8, seq_q=2048, seq_kv=2048, head_dim=128,
                                         causal=True)),
                        ("decode", dict(batch=8, heads=32, kv_heads=8, seq_q=1, seq_kv=4096, head_dim=128))):
            for dt in ("fp16", "bf16"):
                try:
                    names = sdpa_kernels(p, dt)
                    print(f"SDPA {what} {dt} kernels: {'; '.join(n[:90] for n in names)}", flush=True)
                except Exception as e:  # noqa: BLE001 - the record is optional
                    print(f"SDPA {what} {dt} kernels: unknown ({e})", flush=True)
    rows, results = [], []
    for kind, variant, dtype, p in chosen:
        name = (f"{kind:7s} {variant:11s} {dtype} B{p['batch']} H{p['heads']}/{p['kv_heads']} "
                f"S{p['seq_q']}x{p['seq_kv']} D{p['head_dim']}{' causal' if p.get('causal') else ''}")
        if args.focus and not name.startswith(FOCUS):
            continue
        row = dict(name=name, kind=kind, variant=variant, dtype=dtype, **p)
        try:
            m = measure_us(variant, dtype, p, args.repeats)
            row["choice"] = explain_choice("attention", dtype=dtype, device="gpu", variant=variant, **p)
            row.update(us=m["time_median_us"], verified=m["verified"], err=m["max_rel_error"],
                       blocks_sm=m.get("runtime_blocks_per_sm"),
                       tflops=m["flops"] / m["time_median_us"] / 1e6,
                       tbs=(m["bytes_read"] + m["bytes_written"]) / m["time_median_us"] / 1e6)
        except Exception as e:  # noqa: BLE001 - one failing point must not lose the others
            row["failed"] = f"{type(e).__name__}: {e}"
        if "failed" not in row and not args.no_candidates:
            for col, more, where in columns_of[kind]:
                if (where is not None and not where(p)) or (columns is not None and col not in columns):
                    continue
                try:
                    c = measure_us(variant, dtype, {**p, **more}, args.repeats)
                    row[f"{col}_us"] = c["time_median_us"] if c["verified"] else float("nan")
                except ValueError as e:  # a kernel that does not take this point here
                    if "engine:" not in str(e):
                        row[f"{col}_us"] = float("nan")
                except Exception:  # noqa: BLE001
                    row[f"{col}_us"] = float("nan")
        if not args.no_torch and "failed" not in row:
            try:
                row["torch_us"] = sdpa_us(p, dtype, args.repeats)
            except Exception as e:  # noqa: BLE001
                row["torch_failed"] = str(e)
        if "us" in row and row.get("torch_us"):
            row["ratio"] = row["torch_us"] / row["us"]
        rows.append(row)
        if "failed" not in row:
            results.append(result_files.row(m, "torch SDPA", row.get("torch_us"), label=kind))
        if "failed" in row:
            print(f"  {name}: FAILED {row['failed'][:200]}", flush=True)
        else:
            print(f"  {name}: {row['us']:.1f} us{'' if row['verified'] else ' WRONG'} ({row['blocks_sm']} blocks/SM)"
                  + (f", torch {row['torch_us']:.1f} us, ratio {row['ratio']:.2f}" if row.get("torch_us") else "")
                  + "".join(f", {c[0]} {row[c[0] + '_us']:.1f} us" for c in columns_of[kind] if c[0] + "_us" in row),
                  flush=True)
    hdr = (f"{'point':62s} {'bwprof us':>10s} {'torch us':>9s} {'ratio':>6s} {'TFLOP/s':>8s} {'TB/s':>6s} ok  verdict"
           f"  {'best':>5s}  candidates (us)")
    print("\n" + hdr + "\n" + "-" * len(hdr))
    fails = 0
    for r in rows:
        if "failed" in r:
            print(f"{r['name']:62s} FAILED: {r['failed'][:90]}")
            fails += 1
            continue
        ratio = r.get("ratio")
        verdict = "-" if ratio is None else ("PASS" if ratio >= TARGET and r["verified"] else "FAIL")
        fails += verdict == "FAIL" or not r["verified"]
        cands = [(c[0], r[c[0] + "_us"]) for c in columns_of[r["kind"]] if r.get(c[0] + "_us") == r.get(c[0] + "_us")
                 and c[0] + "_us" in r]
        # the same problem with another kernel (bs128 is another problem)
        same = {c[0] for c in columns_of[r["kind"]] if set(c[1]) <= {"engine", "splits"}}
        fastest = min([r["us"]] + [us for c, us in cands if c in same])
        best = f"{r['torch_us'] / fastest:5.2f}" if r.get("torch_us") else f"{'-':>5s}"
        print(f"{r['name']:62s} {r['us']:10.1f} "
              + (f"{r['torch_us']:9.1f} {ratio:6.2f}" if ratio else f"{'-':>9s} {'-':>6s}")
              + f" {r['tflops']:8.1f} {r['tbs']:6.2f} {'yes' if r['verified'] else 'NO ':3s} {verdict:7s}  {best}  "
              + " ".join(f"{c}={us:.1f}" for c, us in cands))
    for kind in ("prefill", "decode"):
        rs = [r["ratio"] for r in rows if r.get("ratio") and r["kind"] == kind]
        if rs:
            print(f"{kind}: {sum(x >= TARGET for x in rs)}/{len(rs)} at >= {TARGET}x, min {min(rs):.2f}x, "
                  f"median {sorted(rs)[len(rs) // 2]:.2f}x")
    print(f"{len(rows)} points, {fails} failing, {time.time() - t0:.0f} s", flush=True)
    print("best: torch time over the fastest of bwprof's choice and the candidates (bs128 aside); candidates: prefill flash "
          "(mma.sync), wgmma1 (a block per tile), st<S>q<Q> (S K/V stages, Q Q slots), "
          "o4 / o16 (O stored 4 / 16 bytes a thread), o_reg / o_tma (O from registers / by the copy engine "
          "from shared memory, where the default is the other), wide (P.V 128 wide at head dims 80/96), tma / cpl (paged by "
          "the copy engine / cp.async), bs128 (pages of 128); decode flash, rows, w1 (one wave of splits), s2-s6 (each warp's ring 2-6 steps of 16 keys deep), s<N>w<W> (ring N deep, W waves), sp<N> (N splits); nan: wrong, failed or does not fit",
          flush=True)
    ratios = [r["ratio"] for r in rows if r.get("ratio")]
    if args.csv:
        write_csv(args.csv, rows)
    result_files.write_from_args(args, results, argv)
    return 0 if ratios or args.no_torch else 1


def write_csv(path, rows):
    import csv
    keys = sorted({k for r in rows for k in r})
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
