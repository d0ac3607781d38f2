"""Which profiler wrote a file: SQLite databases by their magic bytes and tables, Nsight reports by
their suffix, text files by their header line (JSON: rocprofv3's key, else PyTorch)."""

from pathlib import Path

from .errors import TraceFormatError
from .sqlitedb import Database, is_sqlite
from .csv_source import _find_header, _is_preamble, _lines, _split
from .source import _read_head

# Files read_dir() looks at: the text formats, then databases and reports.
SUFFIXES = (".csv", ".json", ".json.gz", ".txt",
            ".db", ".sqlite", ".sqlite3", ".rpd", ".nsys-rep", ".qdrep", ".ncu-rep")

# Reports are binary formats of their own: the suffix is all there is to go by.
_BY_SUFFIX = {".nsys-rep": "nsys_rep", ".qdrep": "nsys_rep", ".ncu-rep": "ncu_rep"}
_REFUSED = {
    ".pftrace": "a Perfetto trace (protobuf) is not read; use the rocpd database, JSON or CSV "
                "output of the same rocprofv3 run (--output-format rocpd|json|csv)",
    ".otf2": "OTF2 traces are not read; use rocprofv3's rocpd, JSON or CSV output",
}


def _signature(fields):
    """The format a header line belongs to, or None."""
    low = {f.lower() for f in fields}
    has = low.__contains__
    if has("node_id") and has("agent_type"):
        return "rocprofv3_agent_info"
    if has("kernel_name") and has("counter_name") and has("counter_value"):
        return "rocprofv3_counter_collection"
    if has("kernel_name") and has("start_timestamp") and has("end_timestamp"):
        return "rocprofv3_kernel_trace"
    if (has("name") or has("kernelname")) and has("calls") and has("totaldurationns"):
        if has("minns") or has("maxns") or has("stddev"):
            return "rocprofv3_kernel_stats"
        return "rocprof_stats"
    if has("kernelname") and has("beginns") and has("endns"):
        return "rocprof_results"
    if has("kernel name") and has("metric name") and has("metric value"):
        return "ncu_details"
    if has("kernel name") and has("id") and any("__" in f for f in low):
        return "ncu_raw"
    if has("name") and has("instances") and (has("total time (ns)") or has("total time")):
        return "nsys_kern_sum"
    return None


def _sqlite_signature(tables):
    """The format of an SQLite database, from the names of its tables and views (lower case)."""
    t = tables
    if "rocpd_kernel_dispatch" in t or ("kernels" in t and "rocpd_info_agent" in t):
        return "rocpd"
    if any(name.startswith("rocpd_kernel_dispatch_") for name in t):
        return "rocpd"
    if "rocpd_op" in t and "rocpd_api" in t:
        return "rocpd_rpd"
    if "stringids" in t and (any(name.startswith("cupti_activity_kind_") for name in t)
                             or "target_info_gpu" in t or "meta_data_export" in t):
        return "nsys_sqlite"
    return None


def _detect_sqlite(path):
    """The format of an SQLite profiler database, or a TraceFormatError naming its tables."""
    with Database(path) as db:
        kind = _sqlite_signature(db.tables)
        if kind is None:
            shown = ", ".join(sorted(db.tables)[:10]) or "no tables"
            raise db.fail("SQLite database, but not a rocpd (rocprofiler-sdk), rocmProfileData "
                          f"or Nsight Systems export: it holds {shown}")
        return kind


def _detect_from_text(path, text):
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        return "rocprofv3_json" if is_rocprofv3_json(stripped) else "pytorch_trace"
    lines = _lines(text)
    h = _find_header(path, lines, lambda f: _signature(f) is not None)
    if h is None:
        first = next(i for i, line in enumerate(lines) if not _is_preamble(line))
        shown = ", ".join(f.strip() for f in _split(lines[first])[:8]) or lines[first][:60]
        raise TraceFormatError(path, first + 1,
                               "unrecognised header (not a rocprofv3, rocprof, ncu, nsys or PyTorch"
                               f" output): {shown}")
    return _signature([f.strip() for f in _split(lines[h])])


def sniff(path):
    """The format of a non-text trace file (database, report), or None to let the text decide."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    if p.is_dir():
        return None
    name = p.name.lower()
    for suffix, fmt in _BY_SUFFIX.items():
        if name.endswith(suffix):
            return fmt
    for suffix, reason in _REFUSED.items():
        if name.endswith(suffix):
            raise TraceFormatError(p, None, reason)
    if is_sqlite(p):
        return _detect_sqlite(p)
    return None


def is_rocprofv3_json(text):
    """rocprofv3's results.json begins with its "rocprofiler-sdk-tool" key."""
    return '"rocprofiler-sdk-tool"' in text[:4096]


def detect_format(path):
    """Which profiler output ``path`` is, e.g. "rocprofv3_kernel_trace", "ncu_raw", "rocpd"."""
    return sniff(path) or _detect_from_text(path, _read_head(path))
