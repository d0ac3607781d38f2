"""python3 -m bwprof: devices, kernels, peaks, bench (and the subcommands of the other modules)."""
from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
import warnings

import pandas as pd

from . import _core, tables as _tables
from .api import device as _device, devices as _devices, kernels as _kernels, peaks as _peaks
from . import run_suite
from . import spread as _spread
from .files import ensure_folder
from .results import REPORT, RunWriter
from .suite import DTYPES, all_configs, all_devices, select

TABLE_COLUMNS = [
    ("kernel", "kernel", "{}"), ("variant", "variant", "{}"), ("dtype", "dtype", "{}"),
    ("label", "config", "{}"), ("shape", "shape", "{}"), ("time_median_us", "time_us", "{:.1f}"),
    ("bandwidth_gbs", "GB/s", "{:.1f}"), ("bandwidth_pct_peak", "%peak_bw", "{:.0f}"),
    ("bandwidth_pct_attainable", "%size_bw", "{:.0f}"),
    ("gflops", "GFLOP/s", "{:.1f}"), ("compute_pct_peak", "%peak_fl", "{:.0f}"),
    ("bound", "bound", "{}"), ("grade", "grade", "{}"), ("verified", "ok", "{}"),
]


PEAK_COLUMNS = [("kind", "kind", "{}"), ("type", "type", "{}"), ("measured", "measured", "{:.1f}"),
                ("theoretical", "theoretical", "{:.1f}"), ("pct_of_theoretical", "%theo", "{:.0f}"),
                ("unit", "unit", "{}"), ("source", "source", "{}")]


def format_table(df: pd.DataFrame) -> str:
    """A readable fixed-width table of the main columns."""
    return _tables.format_table(df, TABLE_COLUMNS)


def _cmd_devices(args) -> int:
    for d in _devices():
        i = d.info
        extra = f", {i['compute_units']} {'cores' if d.kind == 'cpu' else 'SMs/CUs'}"
        if i.get("bandwidth_theoretical_gbs"):
            extra += f", {i['bandwidth_theoretical_gbs']:.0f} GB/s theoretical"
        if i.get("host_link"):
            gbs = i.get("host_link_gbs") or 0
            extra += f", host link {i['host_link']}" + (f" ({gbs:.0f} GB/s each way)" if gbs else "")
        print(f"{d.id:8s} {d.kind:4s} {d.name} ({d.arch}{extra})")
    return 0


def _choices_markdown() -> str:
    """Every kernel choice (a parameter left out of the shape at its default) as a Markdown table:
    the list docs/kernels.md keeps."""
    out = ["| kernel | parameter | values | default | variants | what it chooses |", "|---|---|---|---|---|---|"]
    for k in _kernels():
        for p in k["params"]:
            if p["in_shape_at_default"]:
                continue
            if p["kind"] == "choice":
                values = " \\| ".join(c for c in p["choices"])
            elif p["kind"] == "int":
                values = ("auto \\| " if p.get("allows_auto") else "") + f"{p['min']}..{p['max']}"
            else:
                values = "true \\| false"
            variants = ", ".join(p["variants"]) or "all"
            out.append(f"| {k['name']} | `{p['name']}` | {values} | {p['default']} | {variants} | {p['help']} |")
    return "\n".join(out)


def _cmd_kernels(args) -> int:
    if args.choices:
        print(_choices_markdown())
        return 0
    for k in _kernels():
        params = ", ".join(f"{p['name']}={p['default'] or '?'}" for p in k["params"])
        variants = ", ".join(f"{v['name']}[{v['backend']}]" for v in k["variants"]) or \
            "none in this build (GPU only)"
        print(f"{k['name']:18s} {'/'.join(k['dtypes']):10s} {params}\n{'':18s} variants: {variants}; {k['doc']}")
    return 0


def _cmd_peaks(args) -> int:
    p = _peaks(args.device, args.dtype, args.refresh)
    if args.json:
        print(json.dumps(p, indent=1))
        return 0
    dev = _device(args.device)
    print(f"{dev.name} ({dev.id})")
    print(f"  peak bandwidth : {p['bandwidth_gbs']:.1f} GB/s ({p['bandwidth_source']})")
    if p["bandwidth_theoretical_gbs"]:
        print(f"  theoretical    : {p['bandwidth_theoretical_gbs']:.1f} GB/s")
    for k, v in sorted(p["bandwidth_by_kernel"].items()):
        print(f"    {k:14s} {v:8.1f} GB/s")
    print(f"  peak compute   : {p['gflops']:.1f} GFLOP/s {p.get('compute_arithmetic') or args.dtype}, what "
          f"{args.dtype} rows compute in ({p['compute_source']})")
    from .api import peak_table
    print("  every roof (measured by bwprof's kernels; theoretical from the architecture table):")
    for line in _tables.format_table(peak_table(args.device), PEAK_COLUMNS).splitlines():
        print("    " + line)
    for f in p.get("hierarchy_disorder") or []:
        print(f"  OUT OF ORDER   : {f['text']} after a second measurement: the {f['inner']} roof is not that "
              f"level's bandwidth (HierarchyOrderWarning)")
    c = p.get("size_curve") or {}
    lines = c.get("lines") or []
    if lines:
        print("  size ceiling   : t(B) = t0 + B / BW per access pattern (a row is judged against its own)")
    for ln in lines:
        print(f"    {ln['pattern']:5s} t(B) = {ln['t0_us']:.2f} us + B / {ln['bandwidth_gbs']:.1f} GB/s "
              f"({ln['kernels']}, fit of {ln['fitted_points']} sizes, residual {ln['residual_pct']:.1f} % RMS, "
              f"worst point {ln['max_error_pct']:.1f} %)")
        for b in (4096, 1 << 20, 33.5e6, 1 << 30):
            t = ln["t0_us"] + b / (ln["bandwidth_gbs"] * 1e3)
            print(f"      {b / 1e6:10.4g} MB: {b / t / 1e3:8.1f} GB/s attainable, fixed cost {100 * ln['t0_us'] / t:4.0f} %")
    return 0


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that the run folder is closed like on Ctrl-C."""


@contextlib.contextmanager
def _sigterm_as_exception():
    """While measuring, SIGTERM (kill, a CI timeout) unwinds like Ctrl-C, so the report is written."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _cmd_bench(args) -> int:
    # Everything that can be wrong with the arguments is found before the run folder exists.
    if args.device == "all":
        each = [_core.require_device(d) for d in all_devices()]
        dev = dict(each[0], id="all", name=", ".join(f"{d['name']} ({d['id']})" for d in each), devices=each)
    else:
        dev = _core.require_device(args.device)  # a GPU without code for it: one error, no run folder
    select(all_configs(), args.kernels)
    target = _spread.target("--target-spread", args.target_spread, off="leave it out: no target")
    ensure_folder("--out", args.out)
    with _sigterm_as_exception(), RunWriter(args.out, dev) as writer, warnings.catch_warnings():
        # The summary below names the rows that missed the spread target; no warning besides it.
        warnings.simplefilter("ignore", _spread.SpreadTargetWarning)
        sys.stderr.write(f"bwprof: measuring on {dev['name']} ({dev['id']}); run folder {writer.path}\n")
        df = run_suite(device=args.device, kernels=args.kernels, dtypes=args.dtypes, quick=args.quick,
                       cache=args.cache, progress=not args.no_progress, on_row=writer.add,
                       timing=args.timing, target_rel_spread=target or None)
    # --device all: each device measured (the CPU alone on a machine without a GPU) has a curve.
    for i, d in enumerate(all_devices() if args.device == "all" else [args.device]):
        _save_size_curve(d, writer.path, name=None if i == 0 else f"size_curve_{d.replace(':', '')}.json")
    print(format_table(df))
    errors = df.attrs.get("errors", [])
    bad = df[~df["verified"].astype(bool)] if len(df) else df
    print(f"\n{len(df)} measurements on {dev['name']} ({dev['id']}), cache {args.cache}, timing {args.timing}")
    if len(bad):
        print(f"WARNING: {len(bad)} result(s) did not match the reference: "
              + ", ".join(f"{r.kernel}/{r.dtype}" for r in bad.itertuples()))
    noisy = df[~df["spread_target_met"].astype(bool)] if target and len(df) else df.iloc[0:0]
    if len(noisy):
        print(f"WARNING: {len(noisy)} of {len(df)} row(s) stayed above --target-spread {target:g} "
              f"({100 * target:g} % relative spread) until the time budget ran out: "
              + ", ".join(f"{r.kernel}/{r.dtype} {100 * r.time_cv:.1f} %" for r in noisy.itertuples()))
    for e in errors:
        print(f"FAILED: {e['kernel']} {e['dtype']} ({e['label']}): {e['error']}")
    for sk in df.attrs.get("skipped", []):
        print(f"skipped: {sk}")
    print(f"results: {writer.path}/results.csv")
    print(f"report:  {writer.path}/{REPORT}")
    if not args.no_plots:
        _plot_run(df, writer.path)
    print(f"run folder: {writer.path}")
    return 1 if errors or len(bad) else 0


def _nan_as_null(v):
    """A JSON-ready copy: NaN (at any depth of dicts and lists) becomes null."""
    if isinstance(v, dict):
        return {k: _nan_as_null(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_nan_as_null(x) for x in v]
    return None if isinstance(v, float) and v != v else v


def _save_size_curve(device: str, folder, name: str | None = None) -> None:
    """The device's size curve (measured with its peaks during the run, so cached) into the run
    folder as size_curve.json (or ``name``), where the size chart finds it (now and in a later
    `plot`); under --device all the first device's is size_curve.json, the others' beside it."""
    from .files import atomic_write_text
    from .plots import SIZE_CURVE_FILE
    try:
        curve = _peaks(device)["size_curve"]
        atomic_write_text(folder / (name or SIZE_CURVE_FILE), json.dumps(_nan_as_null(curve), indent=1))
    except Exception as e:  # noqa: BLE001 - the results are already on disk
        print(f"size curve: not saved ({type(e).__name__}: {e})")


def _plot_run(df, folder) -> None:
    """Charts and the HTML report into the run folder; a plotting failure never costs the
    measured results."""
    try:
        from .plots import plot_all
        paths = plot_all(df, folder)
    except Exception as e:  # noqa: BLE001 - the results are already on disk
        print(f"plots: not drawn ({type(e).__name__}: {e})")
        paths = []
    for p in paths:
        if p.suffix == ".png":
            print(f"plot:    {p}")
    if not len(df):
        return
    try:
        from .html import report
        print(f"html:    {report(folder)}")
    except Exception as e:  # noqa: BLE001 - the results are already on disk
        print(f"html report: not written ({type(e).__name__}: {e})")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m bwprof",
                                description="GPU kernel bandwidth and roofline profiler for inference kernels.")
    p.add_argument("--version", action="version", version=f"bwprof {_core.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("devices", help="list the devices this build can use")
    s.set_defaults(func=_cmd_devices)
    s = sub.add_parser("kernels", help="list the kernels, their parameters and variants")
    s.add_argument("--choices", action="store_true",
                   help="only the kernel choices (parameters out of the shape at their default), as a Markdown table")
    s.set_defaults(func=_cmd_kernels)
    s = sub.add_parser("peaks", help="measure the device's peak bandwidth and compute")
    s.add_argument("--device", default="auto")
    s.add_argument("--dtype", default="fp32", choices=list(DTYPES))
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument("--refresh", action="store_true", help="measure again rather than use this process's cache")
    s.set_defaults(func=_cmd_peaks)
    s = sub.add_parser("bench", help="run the reference-kernel suite and write a run folder")
    s.add_argument("--device", default="auto", help="auto, cpu, gpu, gpu:N, or all (every GPU, one row each; "
                   "default: auto)")
    s.add_argument("--kernels", nargs="+", metavar="K", help="kernels or families to run (default: the default "
                   "suite; peer copies and collectives run only when named: p2p_copy, all_reduce, collective, ...)")
    s.add_argument("--dtypes", nargs="+", default=list(DTYPES), choices=list(DTYPES))
    s.add_argument("--quick", action="store_true", help="small shapes, few repeats")
    s.add_argument("--cache", default="cold", choices=["cold", "hot"])
    s.add_argument("--timing", default="single", choices=["single", "graph"],
                   help="single: one launch per timed run (after a flush when cold); graph: the steady "
                   "state, launches back to back in a CUDA/HIP graph over rotated inputs (default: single)")
    s.add_argument("--target-spread", type=float, default=None, metavar="FRACTION",
                   help="repeat each measurement until its relative spread (time_cv, std / mean) is at most "
                   "FRACTION (0.02: 2 %%), within the time budget; rows that miss it are listed (default: none)")
    s.add_argument("--out", default="results", help="folder for run folders (default: results)")
    s.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    s.add_argument("--no-plots", action="store_true", help="do not draw the charts nor write report.html (they "
                   "can be made later with `plot RUN_FOLDER` and `report RUN_FOLDER`)")
    s.set_defaults(func=_cmd_bench)

    for register in _extension_registrars():
        register(sub)
    return p


def _extension_registrars():
    """Subcommands that live beside their features (traces, baselines, plots, ...)."""
    regs = []
    for mod, attr in (("bwprof.links_cli", "register_cli"), ("bwprof.baseline", "register_cli"),
                      ("bwprof.traces.cli", "register_cli"),
                      ("bwprof.occupancy", "register_cli"), ("bwprof.plots", "register_cli"),
                      ("bwprof.html", "register_cli"),
                      ("bwprof.workloads.cli", "register_cli"), ("bwprof.step.cli", "register_cli")):
        try:
            module = __import__(mod, fromlist=[attr])
        except ImportError as e:
            if e.name and e.name.startswith("bwprof"):
                continue  # that feature is not in this build
            raise
        regs.append(getattr(module, attr))
    return regs


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (ValueError, OSError) as e:
        print(f"bwprof: error: {_one_line(e)}", file=sys.stderr)
        return 2
    except MemoryError as e:
        print(f"bwprof: out of memory: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bwprof: interrupted; measured rows are kept in the run folder", file=sys.stderr)
        return 130
    except Terminated:
        print("bwprof: terminated; measured rows are kept in the run folder", file=sys.stderr)
        return 143


def _one_line(e: BaseException) -> str:
    """An error as one line: the message, with the file an OSError names."""
    if isinstance(e, OSError) and not isinstance(e, ValueError) and e.strerror:
        where = f"{e.filename}: " if e.filename else ""
        return f"{where}{e.strerror}"
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
