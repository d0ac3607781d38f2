"""python3 -m bwprof model encoder|decode: a workload's report printed and saved in a run folder."""
from __future__ import annotations

import argparse
import sys

from ..files import ensure_folder
from . import build, model
from .models import DECODERS, WEIGHTS
from .output import CHARTS


def _sets(text: str):
    if text in ("auto", "every"):
        return text
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected auto, every or a count >= 1, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a count >= 1, got {n}")
    return n


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def _cmd_model(args) -> int:
    # Every workload is built (and its arguments checked) before anything runs or is written.
    runs = []
    if args.model == "encoder":
        if args.kv is not None or args.weights or args.llm:
            raise ValueError("--kv, --weights and --llm are for 'decode'")
        runs.append(dict(name="encoder", dtype=args.dtype, batch=args.batch))
    else:
        for llm in args.llm or ["ft054"]:
            for weights in args.weights or ["fp16"]:
                runs.append(dict(name="decode", dtype=args.dtype, batch=args.batch, kv=args.kv, weights=weights,
                                 llm=llm))
    for r in runs:
        build(device=args.device, quick=args.quick, **r)
    ensure_folder("--out", args.out)
    status = 0
    for r in runs:
        report = model(device=args.device, quick=args.quick, op_timing=args.op_timing, sets=args.sets,
                       graph=not args.no_graph, progress=not args.no_progress, **r)
        print(report.text())
        folder = report.save(args.out, plots=not args.no_plots)
        if not args.no_plots:
            for c in CHARTS:
                if (folder / f"{c}.png").exists():
                    print(f"plot:    {folder / c}.png")
            if (folder / "report.html").exists():
                print(f"html:    {folder / 'report.html'}")
        print(f"run folder: {folder}\n")
        sys.stdout.flush()
        if not report.summary.get("verified", True):
            status = 1
    return status


def register_cli(sub) -> None:
    s = sub.add_parser("model", help="where a model's time goes: the encoder block or an LLM decode step, "
                       "per op and whole, with what each fusion buys")
    s.add_argument("model", choices=["encoder", "decode"])
    s.add_argument("--device", default="auto")
    s.add_argument("--dtype", choices=["fp32", "fp16"], help="the encoder's dtype (default fp16); decode runs fp16")
    s.add_argument("--batch", type=_positive, help="positions (encoder, default 256) or sequences (decode, default 1)")
    s.add_argument("--kv", type=_positive, help="KV length of the decode step (default 1024)")
    s.add_argument("--weights", nargs="+", choices=list(WEIGHTS), help="decode weights, one run each (default fp16)")
    s.add_argument("--llm", nargs="+", choices=list(DECODERS), help="decode model(s): ft054 (FT-054), 8b "
                   "(8B-class); one run each (default ft054)")
    s.add_argument("--quick", action="store_true", help="reduced sizes and repeats (runs on a CPU in seconds)")
    s.add_argument("--op-timing", default="auto", choices=["auto", "graph", "single"],
                   help="each op on its own: its steady state, launches back to back in one graph over rotated "
                   "inputs (graph; auto picks it when the step is a graph) or one launch after the cache flush "
                   "(single; auto picks it with --no-graph)")
    s.add_argument("--sets", type=_sets, default="auto", help="instances per op of a repeated block: auto (enough "
                   "to keep each launch's data out of the last-level cache), every (one per layer), or a count")
    s.add_argument("--no-graph", action="store_true", help="time the whole step as launches on the stream, not a graph")
    s.add_argument("--out", default="results", help="folder for run folders (default: results)")
    s.add_argument("--no-plots", action="store_true", help="do not draw the charts")
    s.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    s.set_defaults(func=_cmd_model)
