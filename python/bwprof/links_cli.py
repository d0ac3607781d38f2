"""python3 -m bwprof links | p2p | collectives: the links around the GPUs, the peer-to-peer matrix
and the collectives (docs/multi-gpu.md)."""
from __future__ import annotations

import sys

from . import _core

COLUMNS = ["kernel", "dtype", "shape", "time_median_us", "algbw_gbs", "busbw_gbs", "bandwidth_pct_peak", "link",
           "verified"]


def _cmd_links(args) -> int:
    from .links import host_links, peer_links
    hosts = host_links()
    if not len(hosts):
        print("no GPU: there are no links to report")
        return 0
    for r in hosts.itertuples():
        gbs = f" ({r.host_link_gbs:.1f} GB/s each way)" if r.host_link_gbs else ""
        print(f"{r.device:6s} {r.device_name} at {r.pci_bus_id or '?'}: host link {r.host_link or 'unknown'}{gbs}")
    for r in peer_links().itertuples():
        gbs = f" ({r.link_gbs:.0f} GB/s each way)" if r.link_gbs else ""
        print(f"{r.src} -> {r.dst}: {r.link}{gbs}{'' if r.direct else ' (no direct peer access)'}")
    return 0


def _cmd_p2p(args) -> int:
    from .collective import parse_size
    from .links import p2p, p2p_matrix
    df = p2p(parse_size(args.size), args.directions, devices=args.devices, repeats=args.repeats, progress=True)
    for d in args.directions:
        print(f"\nGB/s, {'one way' if d == 'uni' else 'both ways at once'} (rows: source, columns: destination)")
        print(p2p_matrix(df, "bandwidth_gbs", d).round(1).to_string())
    return _save(args, df, "p2p_matrix")


def _cmd_collectives(args) -> int:
    from .collective import QUICK_SIZES, collectives, parse_size
    from .distributed import launch_from_env
    sizes = [parse_size(s) for s in args.sizes] if args.sizes else (QUICK_SIZES if args.quick else None)
    kw = {"sizes": sizes} if sizes else {}
    launch = launch_from_env()
    df = collectives(args.collectives, args.dtypes, device=args.device, ranks=args.ranks, repeats=args.repeats,
                     warmup=args.warmup, out_dir=None if args.no_save else args.out, progress=True, **kw)
    if not launch.is_root:
        return 0 if df["verified"].astype(bool).all() else 1
    print(df[COLUMNS].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    folder = df.attrs.get("run_folder")
    if folder:
        print(f"run folder: {folder}")
        if not args.no_plots:
            from .plots import collective_busbw
            collective_busbw(df, f"{folder}/collectives_busbw")
            print(f"plot:    {folder}/collectives_busbw.png")
    bad = df[~df["verified"].astype(bool)]
    for r in bad.itertuples():
        print(f"WARNING: {r.kernel} {r.dtype} {r.shape} did not match the reference", file=sys.stderr)
    return 1 if len(bad) else 0


def _save(args, df, chart) -> int:
    if args.no_save:
        return 0
    from .results import RunWriter
    info = _core.device_info("gpu:0")
    with RunWriter(args.out, dict(info, id="node"), columns=list(df.columns)) as w:
        for row in df.to_dict("records"):
            w.add(row)
    print(f"run folder: {w.path}")
    if not args.no_plots:
        from .plots import p2p_heatmap
        for d in args.directions:
            p2p_heatmap(df, w.path / f"{chart}_{d}", direction=d)
            print(f"plot:    {w.path / f'{chart}_{d}.png'}")
    return 0


def register_cli(sub) -> None:
    s = sub.add_parser("links", help="the link of each GPU to the host and between GPUs (PCIe, NVLink, xGMI)")
    s.set_defaults(func=_cmd_links)

    s = sub.add_parser("p2p", help="peer-to-peer copy bandwidth between every pair of GPUs, as a matrix")
    s.add_argument("--size", default="256M", help="bytes per copy (e.g. 64M, 1G; default 256M)")
    s.add_argument("--directions", nargs="+", default=["uni", "bi"], choices=["uni", "bi"])
    s.add_argument("--devices", nargs="+", metavar="D", help="GPUs to include (default: all)")
    s.add_argument("--repeats", type=int, default=10)
    s.add_argument("--out", default="results", help="folder for run folders (default: results)")
    s.add_argument("--no-save", action="store_true", help="print the matrix only")
    s.add_argument("--no-plots", action="store_true")
    s.set_defaults(func=_cmd_p2p)

    s = sub.add_parser("collectives", help="all-reduce, all-gather, ... through NCCL/RCCL: time, algbw, busbw "
                       "(one process over its GPUs, or one rank per process under torchrun/mpirun/srun)")
    s.add_argument("--collectives", nargs="+", metavar="C", default=None,
                   help="all_reduce all_gather reduce_scatter all_to_all broadcast (default: all)")
    s.add_argument("--dtypes", nargs="+", default=["fp32", "fp16", "bf16"], choices=["fp32", "fp16", "bf16"])
    s.add_argument("--sizes", nargs="+", metavar="S", help="sizes in bytes (4K, 1M, 1G; default 1K to 1G, x4)")
    s.add_argument("--quick", action="store_true", help="four sizes, 1K to 64M")
    s.add_argument("--device", default="auto", help="the GPU whose events time a one-process run (default: auto)")
    s.add_argument("--ranks", type=int, default=0, help="GPUs a one-process run spans (default 0: all)")
    s.add_argument("--repeats", type=int, default=20)
    s.add_argument("--warmup", type=int, default=5)
    s.add_argument("--out", default="results", help="folder for run folders, written by rank 0 (default: results)")
    s.add_argument("--no-save", action="store_true")
    s.add_argument("--no-plots", action="store_true")
    s.set_defaults(func=_cmd_collectives)
