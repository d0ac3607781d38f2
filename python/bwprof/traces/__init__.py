"""Profiler traces: read rocprofv3 (CSV, JSON, rocpd database), rocprof, rocmProfileData, ncu (CSV,
.ncu-rep), nsys (CSV, SQLite export, .nsys-rep) and PyTorch outputs into one kernel-trace schema,
break GPU time down, compare two traces, and run the profilers. Pure Python (pandas, sqlite3);
no compiled extension.

    import bwprof.traces as traces
    df = traces.read("kernel_trace.csv")        # format detected; invalid rows are an error
    df = traces.read("x.csv", drop_invalid=True)  # ... or left out, with a warning
    traces.breakdown(df, by="category")         # total/calls/avg/% of GPU time
    traces.amdahl(df)                           # overall speed-up if a category were faster
    traces.diff(before, after).categories       # what changed between two traces
    traces.kernel_roofline(df, bwprof.peaks())  # per kernel: GB/s, % of peak, bound from counters
"""

from .errors import DuplicateTraceWarning, InvalidRowsError, InvalidRowsWarning, TraceFormatError
from .readers import (SCHEMA_COLUMNS, detect_format, read, read_agent_info, read_dir,
                      read_ncu, read_ncu_details, read_ncu_raw, read_ncu_rep, read_nsys_kern_sum,
                      read_nsys_rep, read_nsys_sqlite, read_pytorch_trace, read_rocpd,
                      read_rocpd_agents, read_rocprof_results, read_rocprof_stats,
                      read_rocprofv3_counter_collection, read_rocprofv3_json,
                      read_rocprofv3_kernel_stats, read_rocprofv3_kernel_trace, read_rpd)
from .names import short_kernel_name
from .categories import CATEGORIES, DEFAULT_RULES, categorize, category_of
from .analysis import (DEFAULT_THRESHOLDS, amdahl, breakdown, breakdown_per, dram_bytes, findings,
                       join_counters)
from .kernels import kernel_roofline, roofline_ceilings
from .profilers import ProfileRun, build_command, run_profile
from .diff import TraceDiff, diff, plot_diff

__all__ = [
    "TraceFormatError", "InvalidRowsError", "InvalidRowsWarning", "DuplicateTraceWarning", "SCHEMA_COLUMNS", "read", "read_dir", "detect_format", "read_agent_info",
    "read_rocprofv3_kernel_trace", "read_rocprofv3_counter_collection",
    "read_rocprofv3_kernel_stats", "read_rocprof_results", "read_rocprof_stats", "read_ncu",
    "read_ncu_raw", "read_ncu_details", "read_nsys_kern_sum", "read_pytorch_trace",
    "short_kernel_name", "CATEGORIES", "DEFAULT_RULES", "categorize", "category_of",
    "DEFAULT_THRESHOLDS", "breakdown", "amdahl", "dram_bytes", "join_counters", "findings",
    "ProfileRun", "build_command", "run_profile", "kernel_roofline", "roofline_ceilings",
    "breakdown_per", "read_rocpd", "read_rocpd_agents", "read_rpd", "read_nsys_sqlite",
    "read_nsys_rep", "read_ncu_rep", "read_rocprofv3_json", "diff", "TraceDiff", "plot_diff",
]
