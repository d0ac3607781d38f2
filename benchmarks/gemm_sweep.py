"""The `tensor` GEMM beside `vendor` (cuBLASLt) and torch.matmul over M 1-8192 and odd N, K.

Target: `tensor` never more than 1.25x slower than `vendor` (tensor time <= 1.25 x vendor time) at
any point. M in 1, 2, 3, 7, 16, 33, 128, 1000, 4096, 8192 against (N, K) pairs that are odd, one
off a multiple of 8 or aligned; FP16 at every point and BF16 at M = 1, 16 and 1000. All three are
timed alike (the L2 flushed before every run, events around the work, the median).

Candidates (unless --no-candidates): `tensor` again with each engine and tile that could take the
point, through the gemm family's parameters, so that one run shows which wins where: `mma`
(engine=mma: mma.sync, its 16-row tile at M <= 16, the default there where rows are on 16 bytes),
`tc` (M <= 64: engine=skinny, the skinny tensor kernel), the wgmma tiles `128x256`, `128x128`,
`64x128`, `64x64` (M > 16: engine=wgmma tile=..., padding as the rules say, K split as bwprof's
estimate says for that tile) and K split `s1`, `s2`, `s4`, `s8` ways (M > 16: splits=..., the tile
bwprof's estimate takes for that split). A second table lists them, with what bwprof chose (engine,
tile, splits: bwprof.explain).
--large times only the points with M >= 128 that the target misses or nearly misses, and the same
shapes with N and K aligned to 128 bytes (N = 1024 beside N = 1000), for the large-M choices;
--misses only the points the last whole sweep missed. --grid adds every wgmma tile with every K
split (columns `<tile>s<splits>`, M > 16), both set at once.

    PYTHONPATH=python python3 benchmarks/gemm_sweep.py [--quick | --large | --misses] [--grid] [--max-m 64]
        [--repeats 20] [--csv FILE]
"""
from __future__ import annotations

import argparse
import sys
import time

import bwprof
from peer_timing import shared_timer
import result_files
from result_files import explain_choice

TARGET = 1.25
MS = (1, 2, 3, 7, 16, 33, 128, 1000, 4096, 8192)
NK = ((4095, 4097), (4097, 4095), (1000, 11008), (11007, 4096), (11009, 1000), (4096, 4096))
BF16_MS = (1, 16, 1000)
QUICK = {(1, 0), (1, 2), (3, 1), (16, 3), (33, 4), (128, 0), (1000, 2), (4096, 5), (8192, 1), (7, 4)}
# M >= 128: the sweep's misses and near misses at 79cb11b on the H100, then aligned controls.
LARGE = (("fp16", 128, 1000, 11008), ("fp16", 128, 4096, 4096), ("fp16", 128, 4097, 4095),
         ("fp16", 1000, 1000, 11008), ("bf16", 1000, 1000, 11008), ("fp16", 1000, 4096, 4096),
         ("fp16", 4096, 1000, 11008), ("fp16", 4096, 1024, 11008), ("fp16", 4096, 4096, 4096),
         ("fp16", 8192, 1000, 11008), ("fp16", 8192, 4096, 4096))


# The points the whole sweep at c58e622 (H100) left over 1.25x: --misses times these alone.
MISSES = (("fp16", 16, 4096, 4096), ("fp16", 33, 4095, 4097), ("fp16", 33, 4097, 4095), ("fp16", 33, 11007, 4096),
          ("fp16", 128, 4096, 4096), ("fp16", 1000, 1000, 11008), ("bf16", 1000, 1000, 11008))
GRID_SPLITS = (1, 2, 3, 4, 6, 8)
WG_TILES = ("128x256", "128x128", "64x128", "64x64")
GRID = tuple((f"{t}s{sp}", t, sp) for t in WG_TILES for sp in GRID_SPLITS)  # (column, tile, splits)


def points(quick: bool, max_m: int | None = None, large: bool = False, misses: bool = False):
    if misses:
        return [(dt, dict(M=m, N=n, K=k)) for dt, m, n, k in MISSES if max_m is None or m <= max_m]
    if large:
        return [(dt, dict(M=m, N=n, K=k)) for dt, m, n, k in LARGE]
    out = []
    for m in MS:
        if max_m is not None and m > max_m:
            continue
        for j, (n, k) in enumerate(NK):
            if quick and (m, j) not in QUICK:
                continue
            out.append(("fp16", dict(M=m, N=n, K=k)))
            if m in BF16_MS:
                out.append(("bf16", dict(M=m, N=n, K=k)))
    return out


def grid(p):
    """(name, parameters) for every wgmma tile with every K split of GRID_SPLITS (both at once; the
    `candidates` move one at a time): `<tile>s<splits>`, M > 16 only."""
    if p["M"] <= 16:
        return []
    return [(name, dict(engine="wgmma", tile=t, splits=sp)) for name, t, sp in GRID]


def candidates(p):
    """(name, parameters) for each engine/tile that could take point p (the gemm family's choices)."""
    out = [("mma", dict(engine="mma"))]
    if p["M"] <= 64:
        out.append(("tc", dict(engine="skinny")))
    if p["M"] > 16:
        for t in ("128x256", "128x128", "64x128", "64x64"):
            out.append((t, dict(engine="wgmma", tile=t)))
        for sp in (1, 2, 4, 8):
            out.append((f"s{sp}", dict(splits=sp)))
    return out


CAND_NAMES = ("mma", "tc", "128x256", "128x128", "64x128", "64x64", "s1", "s2", "s4", "s8")


def torch_us(p, dtype, repeats):
    import torch

    dt = torch.float16 if dtype == "fp16" else torch.bfloat16
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.rand(p["M"], p["K"], generator=g, device="cuda").mul_(2).sub_(1).to(dt)
    b = torch.rand(p["K"], p["N"], generator=g, device="cuda").mul_(2).sub_(1).to(dt)
    us = shared_timer().median_us(lambda: torch.matmul(a, b), repeats)
    return us


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a 14-point subset (10 FP16, 4 BF16)")
    ap.add_argument("--max-m", type=int, help="only the points with M at most this (64: the few-row kernels)")
    ap.add_argument("--large", action="store_true", help="only the M >= 128 points that miss or nearly miss, "
                    "with aligned controls")
    ap.add_argument("--misses", action="store_true", help="only the points the last whole H100 sweep left over "
                    f"{TARGET}x")
    ap.add_argument("--grid", action="store_true", help="also every wgmma tile with every K split of "
                    f"{GRID_SPLITS} (M > 16), as columns <tile>s<splits>")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--csv", help="also write the rows as CSV")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-candidates", action="store_true", help="time only the engine bwprof chooses")
    ap.add_argument("--no-vendor", action="store_true", help="skip the vendor GEMM (as a build without it runs)")
    result_files.add_arguments(ap, "gemm_sweep")
    args = ap.parse_args(argv)
    if args.max_m is not None and args.max_m < 1:
        ap.error("--max-m: at least 1")
    dev = bwprof.device("gpu")
    variants = [v["name"] for k in bwprof.kernels() if k["name"] == "gemm" for v in k["variants"]
                if v["backend"] == "gpu" and not (args.no_vendor and v["name"] == "vendor")]
    print(f"device: {dev.name} ({dev.arch}); target: tensor <= {TARGET}x vendor time", flush=True)
    t0 = time.time()
    rows, results, measured = [], [], []
    names = CAND_NAMES + (tuple(name for name, _, _ in GRID) if args.grid else ())
    for dtype, p in points(args.quick, args.max_m, args.large, args.misses):
        name = f"{dtype} M={p['M']} N={p['N']} K={p['K']}"
        row = dict(name=name, dtype=dtype, **p)
        for v in ("tensor", "vendor"):
            if v not in variants:
                continue
            try:
                m = bwprof.measure("gemm", dtype=dtype, device="gpu", variant=v, repeats=args.repeats, warmup=3,
                                   min_time_s=0.0, max_time_s=1.0, **p).to_dict()
                if v == "tensor":
                    row["choice"] = explain_choice("gemm", dtype=dtype, device="gpu", variant=v, **p)
                row[f"{v}_us"], row[f"{v}_ok"] = m["time_median_us"], m["verified"]
                row[f"{v}_tflops"] = m["flops"] / m["time_median_us"] / 1e6
                row[f"{v}_gbs"] = m["bandwidth_gbs"]
                measured.append((m, row.get("choice") if v == "tensor" else None))
            except Exception as e:  # noqa: BLE001 - one failing point must not lose the others
                row[f"{v}_failed"] = f"{type(e).__name__}: {e}"
        if "tensor" in variants and not args.no_candidates:  # each engine/tile instead of bwprof's choice
            for cname, choice in candidates(p) + (grid(p) if args.grid else []):
                try:
                    m = bwprof.measure("gemm", dtype=dtype, device="gpu", variant="tensor", repeats=args.repeats,
                                       warmup=3, min_time_s=0.0, max_time_s=1.0, **p, **choice).to_dict()
                    row[f"{cname}_us"] = m["time_median_us"] if m["verified"] else float("nan")
                    if not m["verified"]:
                        row[f"{cname}_failed"] = f"not verified: error {m['max_rel_error']}"
                except Exception as e:  # noqa: BLE001
                    row[f"{cname}_us"] = float("nan")
                    row[f"{cname}_failed"] = f"{type(e).__name__}: {str(e)[:120]}"
        if not args.no_torch:
            try:
                row["torch_us"] = torch_us(p, dtype, args.repeats)
            except Exception as e:  # noqa: BLE001
                row["torch_failed"] = str(e)
        if row.get("tensor_us") and row.get("vendor_us"):
            row["ratio"] = row["tensor_us"] / row["vendor_us"]
        results += [result_files.row(m, "torch.matmul", row.get("torch_us"), note=how) for m, how in measured]
        measured.clear()
        rows.append(row)
        print(f"  {name}: " + ", ".join(f"{k[:-3]} {row[k]:.1f} us" for k in ("tensor_us", "vendor_us", "torch_us")
                                       if k in row)
              + "".join(f" {k}: {row[k][:150]}" for k in ("tensor_failed", "vendor_failed") if k in row), flush=True)
    hdr = (f"{'point':30s} {'tensor us':>10s} {'vendor us':>10s} {'torch us':>9s} {'t/vendor':>8s} "
           f"{'t/torch':>7s} {'TFLOP/s':>8s} {'GB/s':>7s} ok  verdict")
    print("\n" + hdr + "\n" + "-" * len(hdr))
    fails = 0

    def f(x, w, p=1):
        return f"{x:{w}.{p}f}" if isinstance(x, float) else f"{'-':>{w}s}"

    for r in rows:
        ratio = r.get("ratio")
        ok = r.get("tensor_ok", False) and r.get("vendor_ok", True)
        verdict = "FAIL" if "tensor_failed" in r or not ok else "-" if ratio is None else \
            "PASS" if ratio <= TARGET else "FAIL"
        fails += verdict == "FAIL"
        tt = r["tensor_us"] / r["torch_us"] if r.get("tensor_us") and r.get("torch_us") else None
        print(f"{r['name']:30s} {f(r.get('tensor_us'), 10)} {f(r.get('vendor_us'), 10)} {f(r.get('torch_us'), 9)} "
              f"{f(ratio, 8, 2)} {f(tt, 7, 2)} {f(r.get('tensor_tflops'), 8)} {f(r.get('tensor_gbs'), 7, 0)} "
              f"{'yes' if ok else 'NO ':3s} {verdict}")
    if not args.no_candidates:
        hdr = f"{'candidates (us)':30s} {'chosen':>8s} " + " ".join(f"{c:>8s}" for c in names) + "  best    choice"
        print("\n" + hdr + "\n" + "-" * len(hdr))
        for r in rows:
            got = {c: r[f"{c}_us"] for c in names if isinstance(r.get(f"{c}_us"), float) and r[f"{c}_us"] == r[f"{c}_us"]}
            best = min(got, key=got.get) if got else "-"
            print(f"{r['name']:30s} {f(r.get('tensor_us'), 8)} " + " ".join(f(r.get(f"{c}_us"), 8) for c in names)
                  + f"  {best:7s} {r.get('choice', '')}")
        for r in rows:
            for c in names:
                if f"{c}_failed" in r:
                    print(f"  {r['name']} {c}: {r[f'{c}_failed']}")
    rs = [r["ratio"] for r in rows if r.get("ratio")]
    if rs:
        print(f"tensor/vendor: {sum(x <= TARGET for x in rs)}/{len(rs)} within {TARGET}x, worst {max(rs):.2f}x, "
              f"median {sorted(rs)[len(rs) // 2]:.2f}x")
    print(f"{len(rows)} points, {fails} failing, {time.time() - t0:.0f} s", flush=True)
    if args.csv:
        import csv
        keys = sorted({k for r in rows for k in r})
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    result_files.write_from_args(args, results, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
