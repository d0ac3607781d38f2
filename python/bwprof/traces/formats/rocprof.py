"""Legacy rocprof (v1/v2): results.csv and results.stats.csv, and the kernel-stats table that
rocprofv3 kept."""

import numpy as np

from ..csv_columns import _ceil_div
from ..csv_table import _numeric_extras, _read_csv
from ..table import reader, schema_frame

_ROCPROF_KNOWN = ["Index", "KernelName", "gpu-id", "queue-id", "queue-index", "pid", "tid", "grd",
                  "wgr", "lds", "scr", "arch_vgpr", "accum_vgpr", "vgpr", "sgpr", "fbar",
                  "wave_size", "sig", "obj", "DispatchNs", "BeginNs", "EndNs", "CompleteNs",
                  "DurationNs"]


@reader
def read_rocprof_results(path):
    """Legacy rocprof ``results.csv`` -> one row per dispatch; counter columns are kept."""
    t = _read_csv(path, [("KernelName",), ("BeginNs",), ("EndNs",)], what="a rocprof results.csv")
    vgpr = t.numbers("arch_vgpr", "vgpr")
    if vgpr is not None and t.has("accum_vgpr"):
        vgpr = vgpr + np.nan_to_num(t.numbers("accum_vgpr"))
    cols = {
        "kernel_name": t.col("KernelName"),
        "start_ns": t.ints("BeginNs"),
        "end_ns": t.ints("EndNs"),
        "grid_x": _ceil_div(t.numbers("grd"), t.numbers("wgr")),
        "block_x": t.numbers("wgr"),
        "registers": vgpr,
        "shared_mem_bytes": t.numbers("lds"),
        "device": t.labels("gpu-id"),
        "stream": t.labels("queue-id"),
        "pid": t.ints("pid"),
    }
    if t.has("grd"):
        cols["grid_y"] = cols["grid_z"] = cols["block_y"] = cols["block_z"] = np.ones(t.n, dtype=np.int64)
    extras = {}
    if t.has("Index"):
        extras["dispatch_id"] = t.ints("Index")
    extras.update(_numeric_extras(t, _ROCPROF_KNOWN))
    return schema_frame(cols, t.n, "rocprof", extras, origin=t.origin(), int_extras=("dispatch_id",))


@reader
def read_rocprof_stats(path):
    """Legacy rocprof ``results.stats.csv`` -> one row per kernel (calls, total duration_ns)."""
    return _read_kernel_stats(path, "a rocprof results.stats.csv")


def _read_kernel_stats(path, what):
    t = _read_csv(path, [("Name", "KernelName"), ("Calls",), ("TotalDurationNs",)], what=what)
    tool = "rocprofv3" if t.has("MinNs", "MaxNs", "StdDev") else "rocprof"
    cols = {"kernel_name": t.col("Name", "KernelName"),
            "calls": t.numbers("Calls"),
            "duration_ns": t.numbers("TotalDurationNs")}
    extras = {}
    for src, dst in (("AverageNs", "avg_ns"), ("MinNs", "min_ns"), ("MaxNs", "max_ns"),
                     ("StdDev", "stddev_ns"), ("Percentage", "tool_percent")):
        if t.has(src):
            extras[dst] = t.numbers(src)
    return schema_frame(cols, t.n, tool, extras, origin=t.origin())
