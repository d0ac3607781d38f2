"""The ``trace`` and ``profile`` subcommands of ``python3 -m bwprof``.

The main CLI calls register_cli(subparsers); each handler returns an exit code: 0 ok, 2 for bad
input (one line on stderr, no traceback), else the profiled command's own exit code.
"""

import argparse
import sys
import warnings

from .errors import InvalidRowsWarning, TraceFormatError


def _at_least_one(text):
    """--top: a whole number of rows, 1 or more (0 would print an empty table)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (rows to print), not {value}")
    return value


def register_cli(subparsers):
    """Add the ``trace`` and ``profile`` subcommands to an argparse subparsers object."""
    p = subparsers.add_parser(
        "trace", help="break GPU time down from profiler outputs",
        description="Read rocprofv3, rocprof, ncu, nsys or PyTorch trace files (or a profiler's "
                    "output folder) and print where GPU time goes. 'trace diff A B' compares two "
                    "traces: per category and kernel, what changed, appeared or disappeared.")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="profiler output file or folder; or: diff A B")
    p.add_argument("--by", choices=("category", "kernel"), default="category",
                   help="group by kernel category (default) or by kernel")
    p.add_argument("--amdahl", action="store_true",
                   help="also print the overall speed-up if a group were 2x, 10x faster or free")
    p.add_argument("--findings", action="store_true", help="also print findings from counters")
    p.add_argument("--top", type=_at_least_one, default=20, help="rows to print, at least 1 (default 20)")
    p.add_argument("--plot", action="store_true", help="save a bar chart of the breakdown")
    p.add_argument("--plot-file", default=None,
                   help="where --plot writes (default bwprof_breakdown.png; bwprof_diff.png for diff)")
    p.add_argument("--per", default=None, metavar="COLUMNS",
                   help="one breakdown per device, pid or both (--per pid,device)")
    p.add_argument("--drop-invalid", action="store_true",
                   help="leave out rows with a negative, empty or infinite duration or an "
                        "out-of-range timestamp (with a warning saying how many) instead of "
                        "stopping with an error that names them")
    p.add_argument("--roofline", action="store_true",
                   help="also print each kernel's GB/s, %% of peak and bound from its DRAM (and FLOP) "
                        "counters, and draw the kernels on the measured roofline")
    _roofline_options(p, "bwprof_kernels_roofline")
    p.set_defaults(func=_trace)

    q = subparsers.add_parser(
        "profile", help="run a command under a profiler and break its GPU time down",
        description="Run COMMAND under rocprofv3, rocprof, ncu or nsys into "
                    "bwprof_profiles/<timestamp>_<tool>/ and print the time breakdown.")
    q.add_argument("--tool", choices=("rocprofv3", "rocprof", "ncu", "nsys"), required=True)
    q.add_argument("--counters", default=None,
                   help="rocprof*: basic | extended | names (default: none, kernel trace only); "
                        "ncu: bandwidth | occupancy | sol | names (default: bandwidth)")
    q.add_argument("--out", default=None, metavar="DIR", help="output folder instead of a new one")
    q.add_argument("--by", choices=("category", "kernel"), default="category")
    _roofline_options(q, "<run folder>/roofline")
    q.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND...")
    q.set_defaults(func=_profile)
    return subparsers


def _roofline_options(p, default_file):
    p.add_argument("--peaks", default=None, metavar="FILE",
                   help="the roofs to judge kernels against: 'bwprof peaks --json' output from the GPU "
                        "that ran them (default: measure the peaks of --device here, when it is a GPU)")
    p.add_argument("--device", default="gpu", help="the GPU whose peaks judge the kernels (default: gpu)")
    p.add_argument("--roofline-file", default=None, metavar="PATH",
                   help=f"where the roofline chart goes, .png and .svg (default {default_file})")


def _fail(message):
    print(f"bwprof: error: {message}", file=sys.stderr)
    return 2


def _format_table(df, by, top):
    show = df.head(top).copy()
    if by == "kernel":
        show = show.drop(columns=["kernel_name"]).rename(columns={"short_name": "kernel"})
    show["total_ms"] = show.pop("total_time_ns") / 1e6
    show["avg_us"] = show.pop("avg_time_ns") / 1e3
    show["pct"] = show.pop("pct_gpu_time")
    return _plain_table(show)


def _plain_table(df):
    """Every column under its own name, right-aligned, floats to three decimals."""
    from ..tables import format_table, frame_columns

    return format_table(df, frame_columns(df, "{:.3f}"), sep=" ", missing="NaN", rule=False,
                        text_align="right")


def _print_analysis(df, by, top, with_amdahl=False, with_findings=False):
    from .analysis import amdahl, breakdown, findings

    table = breakdown(df, by=by)
    total_ms = table["total_time_ns"].sum() / 1e6
    print(f"GPU time {total_ms:.3f} ms in {int(table['calls'].sum())} kernel calls "
          f"(sum of kernel durations), by {by}:")
    print(_format_table(table, by, top))
    if with_amdahl:
        a = amdahl(df, by=by).head(top)
        key = "category" if by == "category" else "kernel_name"
        if by == "kernel":
            a[key] = table["short_name"].head(top).values
        a = a.drop(columns=["total_time_ns"])
        print("\nOverall speed-up if one group got faster (Amdahl):")
        print(_plain_table(a))
    if with_findings:
        f = findings(df)
        print("\nFindings:" if len(f) else "\nFindings: none (no counter crossed its threshold).")
        for _, row in f.iterrows():
            print(f"- {row['kernel']}: {row['finding']}")
    return table


def _warnings_to_stderr(caught):
    for w in caught:
        if issubclass(w.category, InvalidRowsWarning):
            print(f"bwprof: warning: {w.message}", file=sys.stderr)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def _read_all(paths, drop_invalid):
    """The traces of ``paths``; warnings about dropped rows go to stderr as one line each."""
    from .readers import read

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InvalidRowsWarning)
        try:
            return [read(f, drop_invalid=drop_invalid) for f in paths]
        finally:
            _warnings_to_stderr(caught)


def _trace(args):
    import pandas as pd

    if args.files[0] == "diff":
        return _diff(args)
    try:
        frames = _read_all(args.files, args.drop_invalid)
    except (TraceFormatError, FileNotFoundError, ValueError) as exc:
        return _fail(str(exc))
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if df.empty:
        return _fail(f"no GPU kernels in {', '.join(args.files)}")
    try:
        if args.per:
            _print_per(df, args.by, [c.strip() for c in args.per.split(",") if c.strip()], args.top)
            print()
        table = _print_analysis(df, args.by, args.top, args.amdahl, args.findings)
        if args.roofline:
            _print_kernel_roofline(df, args, args.top, args.roofline_file or "bwprof_kernels_roofline")
    except ValueError as exc:
        return _fail(str(exc))
    if args.plot:
        try:
            path = plot_breakdown(table, args.by, args.plot_file or "bwprof_breakdown.png", top=args.top)
        except (ImportError, OSError) as exc:
            return _fail(f"cannot write the plot ({exc})")
        print(f"\nPlot written to {path}")
    return 0


def _print_per(df, by, per, top):
    import pandas as pd

    from .analysis import breakdown_per

    table = breakdown_per(df, per, by=by)
    show = table.groupby(per, sort=False, dropna=False).head(top).copy()
    if by == "kernel":
        show = show.drop(columns=["kernel_name"]).rename(columns={"short_name": "kernel"})
    for col in per:
        show[col] = [("-" if pd.isna(v) else str(v)) for v in show[col]]
    show["total_ms"] = show.pop("total_time_ns") / 1e6
    show["avg_us"] = show.pop("avg_time_ns") / 1e3
    show["pct"] = show.pop("pct_gpu_time")
    show["pct_all"] = show.pop("pct_of_total")
    groups = table.groupby(per, sort=False, dropna=False).ngroups
    print(f"GPU time per {' and '.join(per)} ({groups} groups; pct: share of the group, "
          "pct_all: share of all):")
    print(_plain_table(show))


def _diff(args):
    from .diff import diff, plot_diff

    paths = args.files[1:]
    if len(paths) != 2:
        return _fail("trace diff compares two traces: bwprof trace diff BEFORE AFTER")
    try:
        a, b = _read_all(paths, args.drop_invalid)
    except (TraceFormatError, FileNotFoundError, ValueError) as exc:
        return _fail(str(exc))
    for p, df in zip(paths, (a, b)):
        if df.empty:
            return _fail(f"no GPU kernels in {p}")
    try:
        result = diff(a, b, labels=("A", "B"))
    except ValueError as exc:
        return _fail(str(exc))
    print(f"A = {paths[0]}\nB = {paths[1]}")
    print(result.summary())
    tables = (("category", result.categories), ("kernel", result.kernels))
    if args.by == "kernel":
        tables = tables[::-1]
    for label, table in tables:
        print(f"\nBy {label}, largest changes first:")
        print(_format_diff(table, label, args.top))
    for name, table in (("Appeared (only in B)", result.appeared),
                        ("Disappeared (only in A)", result.disappeared)):
        if len(table):
            shown = ", ".join(str(k) for k in table["kernel"].head(args.top))
            more = f" and {len(table) - args.top} more" if len(table) > args.top else ""
            print(f"\n{name}: {shown}{more}")
    if args.plot:
        try:
            path = plot_diff(result, args.plot_file or "bwprof_diff.png", by=args.by, top=args.top)
        except (ImportError, OSError) as exc:
            return _fail(f"cannot write the plot ({exc})")
        print(f"\nPlot written to {path}")
    return 0


def _format_diff(table, label, top):
    import pandas as pd

    show = pd.DataFrame({
        label: table[label].astype(str).str.slice(0, 60),
        "status": table["status"],
        "A_ms": table["time_ns_a"] / 1e6,
        "B_ms": table["time_ns_b"] / 1e6,
        "change_us": table["delta_ns"] / 1e3,
        "change_pct": table["delta_pct"].map(lambda v: "new" if v == float("inf") else f"{v:+.1f}%"),
        "calls_A": table["calls_a"],
        "calls_B": table["calls_b"],
        "of_total_change": table["pct_of_change"].map(lambda v: "-" if v != v else f"{v:.1f}%"),
    }).head(top)
    return _plain_table(show)


def plot_breakdown(table, by, path, top=20):
    """Save a horizontal bar chart of a breakdown table (% of GPU time) to ``path``."""
    from ..plots.bars import hbars
    from ..plots.figure import _figure

    rows = table.head(top)
    labels = rows["short_name"] if by == "kernel" else rows["category"]
    fig = _figure(8, 0.35 * len(rows) + 1.2)
    ax = fig.add_subplot(1, 1, 1)
    hbars(ax, rows["pct_gpu_time"], [str(x)[:50] for x in labels])
    ax.set_xlabel("% of GPU time")
    ax.set_title(f"GPU time by {by}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


def _load_peaks(args):
    """(peaks dict or None, where it came from, the GPU's name for the chart, a note when there are none)."""
    import json
    from pathlib import Path

    if args.peaks:
        path = Path(args.peaks)
        try:
            doc = json.loads(path.read_text())
        except FileNotFoundError:
            raise ValueError(f"--peaks: no file {path}") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"--peaks: {path} is not JSON ({exc})") from None
        if not isinstance(doc, dict) or "bandwidth_gbs" not in doc:
            raise ValueError(f"--peaks: {path} is not a peaks file (write one with: bwprof peaks --json "
                             f"> peaks.json, on the GPU that ran the kernels)")
        return doc, f"the peaks in {path}", f"the GPU of {path.name}", None
    from .. import api

    try:
        dev = api.device(args.device)
    except (ValueError, RuntimeError) as exc:
        return None, "", "", f"no peaks ({exc}); pass --peaks (bwprof peaks --json > peaks.json on that GPU)"
    if dev.kind != "gpu":
        return None, "", "", ("no peaks (no GPU here to measure them on), so no kernel is judged against a roof; "
                              "pass --peaks (bwprof peaks --json > peaks.json on that GPU)")
    return api.peaks(dev.id), f"bwprof's measured peaks of {dev.id} ({dev.name})", dev.name, None


def _print_kernel_roofline(df, args, top, plot_path):
    """The per-kernel table from counters, each kernel's bound in words, and the roofline chart.
    Returns the kernels' table, or None when the trace has no DRAM counters."""
    from .kernels import kernel_roofline, roofline_ceilings

    peaks, source, gpu_name, note = _load_peaks(args)
    table = kernel_roofline(df, peaks)
    if note:
        print(f"bwprof: {note}", file=sys.stderr)
    against = "no roofs"
    if peaks:
        against = f"{source}: memory {float(peaks['bandwidth_gbs']):.0f} GB/s " \
                  f"({peaks.get('bandwidth_source') or 'measured'})"
    print(f"\nKernels on the roofline (DRAM bytes and FLOPs from the counters, per call), judged against "
          f"{against}:")
    show = table.head(top)
    import pandas as pd

    print(_plain_table(pd.DataFrame({
        "kernel": show["kernel"].astype(str).str.slice(0, 48), "calls": show["calls"],
        "avg_us": show["time_median_us"], "pct_time": show["pct_gpu_time"],
        "dram_MB": (show["bytes_read"] + show["bytes_written"]) / 1e6, "GB/s": show["bandwidth_gbs"],
        "pct_peak": show["bandwidth_pct_peak"], "GFLOP/s": show["gflops"], "bound": show["bound"]})))
    for _, r in show.iterrows():
        print(f"- {str(r['kernel'])[:48]}: {r['bottleneck']}")
    if peaks and plot_path:
        from ..plots.figure import NoData
        from ..plots.roofline_chart import roofline

        try:
            roofline(table, roofline_ceilings(peaks, table), path=plot_path, device_name=gpu_name)
            print(f"\nRoofline written to {plot_path}.png and .svg")
        except NoData as exc:
            print(f"bwprof: no roofline chart: {exc}", file=sys.stderr)
        except (ImportError, OSError) as exc:
            print(f"bwprof: cannot write the roofline chart ({exc})", file=sys.stderr)
    return table


def _profile(args):
    from .profilers import run_profile

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        return _fail("profile needs a command after --, e.g. bwprof profile --tool ncu -- ./app")
    try:
        run = run_profile(args.tool, command, out_dir=args.out, counters=args.counters)
    except ValueError as exc:
        return _fail(str(exc))
    for message in run.messages:
        print(f"bwprof: {message}", file=sys.stderr)
    if run.trace is not None and not run.trace.empty:
        print(f"\nProfile written to {run.out_dir}")
        try:
            _print_analysis(run.trace, args.by, 20)
        except ValueError as exc:
            print(f"bwprof: no breakdown: {exc}", file=sys.stderr)
        from .analysis import dram_bytes

        t = dram_bytes(run.trace)
        if (t["dram_bytes_read"].notna() | t["dram_bytes_written"].notna()).any():
            try:
                table = _print_kernel_roofline(run.trace, args, 20, args.roofline_file or str(run.out_dir / "roofline"))
                table.to_csv(run.out_dir / "kernels.csv", index=False)
                print(f"Per-kernel table written to {run.out_dir / 'kernels.csv'}")
            except ValueError as exc:
                print(f"bwprof: no per-kernel roofline: {exc}", file=sys.stderr)
    return run.returncode
