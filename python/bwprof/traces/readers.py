"""Readers for profiler outputs; each returns one DataFrame in the kernel-trace schema.

Every reader parses by column name (tools reorder and rename columns between releases) and
turns malformed input into a TraceFormatError that names the file and the line. Per-dispatch
formats give one row per kernel launch (``calls`` = 1); summary formats (rocprofv3
kernel_stats, rocprof results.stats, nsys cuda_gpu_kern_sum) give one row per kernel with
``calls`` = its launch count and ``duration_ns`` = its total time, so that breakdowns work on
both alike.

Databases and reports (rocpd, rocmProfileData .rpd, Nsight Systems exports and reports, Nsight
Compute reports) and rocprofv3's JSON give one row per dispatch, plus one per memory copy or
fill where the trace records them.

This module is the front door: it detects the format (detect.py) and picks the reader. The
readers live one format per module in formats/, over the shared text/CSV/JSON layer and frame
builder in table.py (and, for databases, the SQLite layer in sqlitedb.py).
"""

import warnings
from pathlib import Path

import pandas as pd

from .detect import SUFFIXES, detect_format
from ..files import spooled
from .errors import DuplicateTraceWarning, InvalidRowsError, TraceFormatError
from .formats.ncu import read_ncu, read_ncu_details, read_ncu_raw
from .formats.ncu_report import read_ncu_rep
from .formats.nsys import read_nsys_kern_sum
from .formats.nsys_sqlite import read_nsys_rep, read_nsys_sqlite
from .formats.pytorch import read_pytorch_trace
from .formats.rocpd import read_rocpd, read_rocpd_agents
from .formats.rocprof import read_rocprof_results, read_rocprof_stats
from .formats.rocprofv3 import (read_agent_info, read_rocprofv3_counter_collection,
                                read_rocprofv3_kernel_stats, read_rocprofv3_kernel_trace)
from .formats.rocprofv3_json import read_rocprofv3_json
from .formats.rpd import read_rpd
from .table import SCHEMA, SCHEMA_COLUMNS, reader

READERS = {
    "rocprofv3_kernel_trace": read_rocprofv3_kernel_trace,
    "rocprofv3_counter_collection": read_rocprofv3_counter_collection,
    "rocprofv3_kernel_stats": read_rocprofv3_kernel_stats,
    "rocprof_results": read_rocprof_results,
    "rocprof_stats": read_rocprof_stats,
    "ncu_raw": read_ncu_raw,
    "ncu_details": read_ncu_details,
    "nsys_kern_sum": read_nsys_kern_sum,
    "pytorch_trace": read_pytorch_trace,
    "rocpd": read_rocpd,
    "rocpd_rpd": read_rpd,
    "nsys_sqlite": read_nsys_sqlite,
    "nsys_rep": read_nsys_rep,
    "ncu_rep": read_ncu_rep,
    "rocprofv3_json": read_rocprofv3_json,
}

# Formats with one row per dispatch are preferred over summaries when a folder holds both.
_PER_DISPATCH = {"rocprofv3_kernel_trace", "rocprofv3_counter_collection", "rocprof_results",
                 "ncu_raw", "ncu_details", "pytorch_trace", "rocpd", "rocpd_rpd", "nsys_sqlite",
                 "nsys_rep", "ncu_rep", "rocprofv3_json"}


@reader
def read(path, **options):
    """Read any supported profiler output (format detected) into the kernel-trace schema.

    ``path`` may also be a folder written by a profiler run; see read_dir().
    ``drop_invalid=True`` leaves out rows with a negative, empty or infinite duration or a
    timestamp beyond 64-bit nanoseconds (with an InvalidRowsWarning saying how many); by
    default such rows are an InvalidRowsError (a TraceFormatError) naming them. Other
    ``options`` go to the format's reader (``via="cli"`` for a .ncu-rep, ``memory_ops=False``
    for an nsys export, ...).
    """
    p = Path(path)
    if p.is_dir():
        if options:
            raise TypeError(f"read(folder) takes no reader options ({', '.join(options)})")
        return read_dir(p)
    # A pipe or FIFO (bwprof trace <(zcat x.csv.gz)) is read once as a stream; the readers
    # then read its copy, and errors name the path the caller gave.
    with spooled(p) as f:
        try:
            fmt = detect_format(f)
            if fmt == "rocprofv3_agent_info":
                raise TraceFormatError(p, 1, "a rocprofv3 agent_info.csv describes devices, not kernels;"
                                             " read it with read_agent_info()")
            return READERS[fmt](f, **options)
        except TraceFormatError as exc:
            if f == p:
                raise
            raise _renamed(exc, f, p) from None


def _renamed(exc, copy, path):
    """``exc`` naming ``path`` where it named the stream's temporary ``copy``."""
    reason = str(exc.reason).replace(str(copy), str(path))
    if isinstance(exc, InvalidRowsError):
        return InvalidRowsError(path, reason, rows=exc.rows, count=exc.count)
    return TraceFormatError(path, exc.line, reason)


@reader
def read_dir(path):
    """Every kernel trace under a profiler output folder, concatenated.

    rocprofv3 writes kernel_trace, counter_collection, stats and agent_info files side by
    side; per-dispatch files win over summaries, and counter columns are joined onto the
    kernel trace by correlation id when both exist. A run found twice (the same dispatches, by
    process and time, in a copy of a file or in another format of the same run) counts once,
    with a DuplicateTraceWarning naming what was left out; files of different runs each count.
    A file whose name says it is a kernel trace but which cannot be read is an error naming it.
    """
    root = Path(path)
    found = {}
    for f in sorted(root.rglob("*")):
        if not f.is_file() or not f.name.endswith(SUFFIXES):
            continue
        try:
            fmt = detect_format(f)
        except TraceFormatError as exc:
            if f.name.lower().endswith(_TRACE_NAMES):
                raise TraceFormatError(exc.path, exc.line, f"{exc.reason} (a kernel trace in the folder "
                                       f"{root}; fix or remove it: leaving it out would drop its GPU time)") from None
            continue                            # other tool outputs: API traces, logs
        if fmt != "rocprofv3_agent_info":
            found.setdefault(fmt, []).append(f)
    if not found:
        raise TraceFormatError(root, None, "no kernel trace found in this folder")
    found = _prefer(found)
    per_dispatch = [fmt for fmt in found if fmt in _PER_DISPATCH]
    if not per_dispatch:                        # summaries only
        frames = [READERS[fmt](f) for fmt in found for f in found[fmt]]
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    # Each per-dispatch file alone, the preferred formats first, then runs found twice dropped.
    order = sorted((fmt for fmt in per_dispatch if fmt != "rocprofv3_counter_collection"),
                   key=lambda fmt: _PREFERENCE.index(fmt) if fmt in _PREFERENCE else len(_PREFERENCE))
    read_files = [(fmt, f, READERS[fmt](f)) for fmt in order for f in found[fmt]]
    kept = _once_per_run(root, read_files)
    frames = []
    traces = [df for fmt, _, df in kept if fmt == "rocprofv3_kernel_trace"]
    if traces:
        trace = pd.concat(traces, ignore_index=True) if len(traces) > 1 else traces[0]
        if "rocprofv3_counter_collection" in found:
            counters = pd.concat([read_rocprofv3_counter_collection(f)
                                  for f in found["rocprofv3_counter_collection"]], ignore_index=True)
            extra = [c for c in counters.columns if c not in trace.columns]
            if extra and counters["correlation_id"].notna().all():
                trace = trace.merge(counters[["correlation_id"] + extra], on="correlation_id", how="left")
        frames.append(trace)
    elif "rocprofv3_counter_collection" in found:
        frames.extend(read_rocprofv3_counter_collection(f) for f in found["rocprofv3_counter_collection"])
    frames.extend(df for fmt, _, df in kept if fmt != "rocprofv3_kernel_trace")
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


# File names that say "kernel trace": a damaged one is an error, not skipped as another tool's file.
_TRACE_NAMES = ("kernel_trace.csv", "kernel_stats.csv", "counter_collection.csv", "_results.db", ".rpd",
                "trace.json", "trace.json.gz")
# Which file of one run read twice is kept: the database, then the CSV, then the JSON.
_PREFERENCE = ("rocpd", "rocpd_rpd", "nsys_sqlite", "rocprofv3_kernel_trace", "rocprof_results", "ncu_raw",
               "ncu_details", "rocprofv3_json", "pytorch_trace", "nsys_rep", "ncu_rep")


def _dispatch_keys(df):
    """The dispatches of one file as (process, start, end) keys; the process left out (None) where
    the format does not record it."""
    if not {"start_ns", "end_ns"} <= set(df.columns) or not len(df):
        return None
    start = pd.to_numeric(df["start_ns"], errors="coerce")
    end = pd.to_numeric(df["end_ns"], errors="coerce")
    ok = start.notna() & end.notna()
    if not ok.any():
        return None
    pid = df["pid"] if "pid" in df.columns else pd.Series([None] * len(df), index=df.index)
    return {(None if pd.isna(p) else int(p), int(s), int(e)) for p, s, e in zip(pid[ok], start[ok], end[ok])}


def _same_run(a, b):
    """Whether key sets ``a`` and ``b`` hold the same dispatches: 90 % of the smaller one's
    (start, end) pairs in the other, and the same process where both record one."""
    def times(keys):
        return {(s, e) for _, s, e in keys}
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    common = times(small) & times(large)
    if len(common) < 0.9 * len(small):
        return False
    pids_small = {p for p, s, e in small if (s, e) in common and p is not None}
    pids_large = {p for p, s, e in large if (s, e) in common and p is not None}
    return not (pids_small and pids_large) or bool(pids_small & pids_large)


def _once_per_run(root, read_files):
    """``read_files`` ([(format, file, frame)], preferred first) without a file whose dispatches
    another kept file already holds; each one left out is said (DuplicateTraceWarning)."""
    kept, keys = [], []
    for fmt, f, df in read_files:
        k = _dispatch_keys(df)
        twin = next((g for g, kk in keys if k is not None and kk is not None and _same_run(k, kk)), None)
        if twin is not None:
            warnings.warn(DuplicateTraceWarning(
                f"{root}: {f.relative_to(root)} holds the same {len(df)} dispatches as {twin.relative_to(root)} "
                f"(the same run, by process and time: a copy, or another output format); counted once"),
                stacklevel=4)
            continue
        kept.append((fmt, f, df))
        keys.append((f, k))
    return kept


def _prefer(found):
    """Drop files in a folder that repeat another file's data, so that nothing counts twice.

    - Summaries (kernel stats) when per-dispatch files are there.
    - rocprofv3 writes the same run as a rocpd database, CSV and JSON when asked for several
      output formats: told apart by their dispatches in read_dir (the database wins, then the
      CSV files, then the JSON); files of other runs each count.
    - A report (``.nsys-rep``, ``.ncu-rep``) is read only when no export of it is there:
      ``nsys stats`` leaves ``report.sqlite`` and bwprof's own profile folders hold the CSV
      that ``nsys stats``/``ncu --csv`` wrote, which are read instead.
    """
    out = {fmt: list(files) for fmt, files in found.items()}
    if "nsys_sqlite" in out or "nsys_kern_sum" in out:
        out.pop("nsys_rep", None)
    if "ncu_raw" in out or "ncu_details" in out:
        out.pop("ncu_rep", None)
    # Per-dispatch files of one run in several formats are told apart by their dispatches
    # (_once_per_run); summaries beside dispatches would count the same time again.
    if any(fmt in _PER_DISPATCH for fmt in out):
        for fmt in [f for f in out if f not in _PER_DISPATCH]:
            out.pop(fmt)
    return out


__all__ = ["SCHEMA", "SCHEMA_COLUMNS", "read", "read_dir", "detect_format", "read_agent_info",
           "read_rocprofv3_kernel_trace", "read_rocprofv3_counter_collection",
           "read_rocprofv3_kernel_stats", "read_rocprof_results", "read_rocprof_stats",
           "read_ncu", "read_ncu_raw", "read_ncu_details", "read_nsys_kern_sum",
           "read_pytorch_trace", "read_rocpd", "read_rocpd_agents", "read_rpd",
           "read_nsys_sqlite", "read_nsys_rep", "read_ncu_rep", "read_rocprofv3_json",
           "TraceFormatError"]
