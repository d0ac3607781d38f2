"""bwprof: GPU kernel bandwidth and roofline profiler for inference kernels.

Quick use::

    import bwprof
    df = bwprof.run_suite(quick=True)           # every reference kernel, one row each
    m = bwprof.measure("gemm", dtype="fp16", M=128, N=4864, K=896)
    print(m.to_dict()["bandwidth_gbs"])
    u = bwprof.profile(numpy.add, a, b)         # your own code, the same row
    r = bwprof.model("decode", quick=True)      # where a model's time goes (docs/model.md)
    s = bwprof.profile_step(step)               # a real step, kernel by kernel (docs/step.md)
    bwprof.report("results/<run>")              # one HTML file: roofline with hover, filters, tables
"""
from ._core import BwprofError, GPU_BUILD, SCHEMA_VERSION
from ._core import __version__
from .api import Device, HierarchyOrderWarning, columns, device, devices, explain, kernels, measure, peak_table, peaks
from .collective import collectives
from .links import host_links, p2p, p2p_matrix, peer_links
from .occupancy import occupancy
from .results import load_run, save_run
from .spread import SpreadTargetWarning
from .suite import default_suite, run_suite
from .step import load_step, profile_step, region, step_marker
from .sweeps import sweep
from .usercode import profile
from .workloads import Fusion, Op, Workload, model, workload

# Subpackages that are reached as attributes (bwprof.plots.roofline(...)) but imported only when
# first used, so that `import bwprof` and the commands that draw nothing never load matplotlib.
_LAZY_SUBMODULES = ("plots", "traces", "baseline", "html")


def report(run, path=None, *, command=None):
    """Write the interactive HTML report of a run (a run folder, a results or trace DataFrame, a
    Measurement, a model or step report) and return its path; see :func:`bwprof.html.report`.
    Needs plotly (``pip install 'bwprof[report]'``)."""
    from .html import report as _report
    return _report(run, path, command=command)


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BwprofError", "Device", "GPU_BUILD", "HierarchyOrderWarning", "SCHEMA_VERSION", "__version__", "collectives", "columns",
    "default_suite", "device", "devices", "explain", "host_links", "kernels", "load_run", "load_step", "measure", "occupancy", "p2p",
    "p2p_matrix", "peak_table", "peaks", "peer_links", "profile", "profile_step", "report", "region", "run_suite", "save_run", "SpreadTargetWarning", "step_marker", "sweep",
    "Fusion", "Op", "Workload", "model", "workload",
]
