"""Nsight Systems: ``nsys stats --report cuda_gpu_kern_sum --format csv``."""

from ..csv_table import _read_csv
from ..table import reader, schema_frame


@reader
def read_nsys_kern_sum(path):
    """nsys ``stats --report cuda_gpu_kern_sum --format csv`` -> one row per kernel."""
    t = _read_csv(path, [("Name",), ("Total Time (ns)", "Total Time"), ("Instances",)],
                  what="an nsys cuda_gpu_kern_sum CSV")
    cols = {"kernel_name": t.col("Name"), "calls": t.numbers("Instances"),
            "duration_ns": t.numbers("Total Time (ns)", "Total Time")}
    extras = {}
    for names, dst in ((("Avg (ns)", "Average (ns)", "Average"), "avg_ns"),
                       (("Med (ns)", "Median (ns)"), "median_ns"),
                       (("Min (ns)", "Minimum (ns)", "Minimum"), "min_ns"),
                       (("Max (ns)", "Maximum (ns)", "Maximum"), "max_ns"),
                       (("StdDev (ns)",), "stddev_ns"),
                       (("Time (%)", "Time(%)"), "tool_percent")):
        if t.has(*names):
            extras[dst] = t.numbers(*names)
    return schema_frame(cols, t.n, "nsys", extras, origin=t.origin())
