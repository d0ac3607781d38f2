"""Profiler traces: read rocprofv3, rocprof, ncu, nsys and PyTorch outputs into one schema."""

from .errors import TraceFormatError
from .readers import (SCHEMA_COLUMNS, detect_format, read, read_agent_info, read_dir,
                      read_ncu, read_ncu_details, read_ncu_raw, read_nsys_kern_sum,
                      read_pytorch_trace, read_rocprof_results, read_rocprof_stats,
                      read_rocprofv3_counter_collection, read_rocprofv3_kernel_stats,
                      read_rocprofv3_kernel_trace)
from .names import short_kernel_name
from .categories import CATEGORIES, DEFAULT_RULES, categorize, category_of
from .analysis import DEFAULT_THRESHOLDS, amdahl, breakdown, dram_bytes, findings, join_counters
