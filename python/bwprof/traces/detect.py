"""Which profiler wrote a file, told from its header line (or from JSON for PyTorch)."""

from .errors import TraceFormatError
from .table import _find_header, _is_preamble, _lines, _read_text, _split


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


def _detect_from_text(path, text):
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        return "pytorch_trace"
    lines = _lines(text)
    h = _find_header(path, lines, lambda f: _signature(f) is not None)
    if h is None:
        first = next(i for i, line in enumerate(lines) if not _is_preamble(line))
        shown = ", ".join(f.strip() for f in _split(lines[first])[:8]) or lines[first][:60]
        raise TraceFormatError(path, first + 1,
                               "unrecognised header (not a rocprofv3, rocprof, ncu, nsys or PyTorch"
                               f" output): {shown}")
    return _signature([f.strip() for f in _split(lines[h])])


def detect_format(path):
    """Which profiler output ``path`` is, e.g. "rocprofv3_kernel_trace", "ncu_raw", "pytorch_trace"."""
    return _detect_from_text(path, _read_text(path))
