"""A profiled run as plain records: host spans (framework ops, annotations, runtime API calls) and
device spans (kernels, copies, memsets), all in one nanosecond clock, linked by correlation ids.

``from_kineto`` reads PyTorch's profiler (Kineto: CUPTI on NVIDIA, roctracer/rocprofiler on AMD)
into it; the analyses (attribute.py, idle.py) read nothing else, so tests build timelines by hand.
"""
from __future__ import annotations

from dataclasses import dataclass, field

STEP_RANGE = "bwprof.step#"         # the profiler range of one timed run: bwprof.step#REPEAT
SYNC_RANGE = "bwprof.sync"          # bwprof's own synchronisation at the end of a run
# Runtime calls that make the host wait for the device (CUDA and HIP spellings), and the framework
# ops that do (a scalar read back: .item()).
WAIT_CALLS = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy",
              "cudaMemcpy2D", "cudaStreamWaitEvent", "cuCtxSynchronize", "cuStreamSynchronize",
              "cuEventSynchronize", "hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize",
              "hipMemcpy", "hipMemcpyWithStream", "hipMemcpy2D")
WAIT_OPS = ("aten::item", "aten::_local_scalar_dense")
_RUNTIME_PREFIXES = ("cuda", "cu", "hip", "hsa")


@dataclass
class HostSpan:
    """Something the host did: an op ("op"), a range ("annotation") or a runtime call ("runtime")."""

    name: str
    kind: str
    start_ns: int
    end_ns: int
    thread: int = 0
    corr: int = 0       # ops and annotations: their id; runtime calls: the id of the device work
    linked: int = 0     # runtime calls: the op they were made in


@dataclass
class DeviceSpan:
    """Work the device did: "kernel", "memcpy" or "memset"."""

    name: str
    kind: str
    start_ns: int
    end_ns: int
    stream: int = 0
    corr: int = 0       # the runtime call that launched it
    linked: int = 0     # the host op it was launched in (0: unknown)
    device: int = 0
    record: int = -1    # the op record given to it directly (a graph replay's kernel); -1: by its link
    instance: str = ""  # with ``record``: the op call it belongs to


@dataclass
class Timeline:
    host: list = field(default_factory=list)      # HostSpan: ops and annotations
    runtime: list = field(default_factory=list)   # HostSpan: runtime API calls
    device: list = field(default_factory=list)    # DeviceSpan

    def steps(self) -> list[HostSpan]:
        """The ranges of the timed runs, in order of their repeat number."""
        out = [h for h in self.host if h.kind == "annotation" and h.name.startswith(STEP_RANGE)]
        return sorted(out, key=lambda h: int(h.name[len(STEP_RANGE):] or 0))


def _kind_of_device(name: str, activity: str) -> str | None:
    a = activity.lower()
    if a in ("gpu_memcpy", "memcpy") or name.startswith("Memcpy"):
        return "memcpy"
    if a in ("gpu_memset", "memset") or name.startswith("Memset"):
        return "memset"
    if a in ("", "kernel", "concurrent_kernel"):
        return "kernel"
    return None  # device-side ranges of annotations, overheads, markers


def _call(e, method: str, default=None):
    f = getattr(e, method, None)
    if f is None:
        return default
    try:
        return f()
    except Exception:  # noqa: BLE001 - a field this PyTorch version cannot give
        return default


def from_kineto(events) -> Timeline:
    """A Timeline from ``prof.profiler.kineto_results.events()`` (PyTorch 2.x ``_KinetoEvent``s)."""
    t = Timeline()
    for e in events:
        name = e.name()
        start = int(e.start_ns())
        end = start + int(e.duration_ns())
        activity = str(_call(e, "activity_type", "") or "")
        on_device = str(e.device_type()).split(".")[-1] not in ("CPU",)
        annotation = bool(_call(e, "is_user_annotation", False))
        if on_device:
            if annotation or name.startswith(("bwprof.", "ProfilerStep")):
                continue
            kind = _kind_of_device(name, activity)
            if kind is None:
                continue
            t.device.append(DeviceSpan(name, kind, start, end, int(_call(e, "device_resource_id", 0) or 0),
                                       int(e.correlation_id()), int(e.linked_correlation_id()),
                                       int(_call(e, "device_index", 0) or 0)))
            continue
        thread = int(_call(e, "start_thread_id", 0) or 0)
        if activity in ("cuda_runtime", "cuda_driver", "hip_runtime", "hip_driver", "runtime") or \
                (not activity and not annotation and name.startswith(_RUNTIME_PREFIXES) and "::" not in name):
            t.runtime.append(HostSpan(name, "runtime", start, end, thread, int(e.correlation_id()),
                                      int(e.linked_correlation_id())))
        elif annotation or activity == "user_annotation":
            t.host.append(HostSpan(name, "annotation", start, end, thread, int(e.correlation_id())))
        elif activity in ("", "cpu_op", "cpu_instant_event"):
            t.host.append(HostSpan(name, "op", start, end, thread, int(e.correlation_id())))
    t.host.sort(key=lambda h: (h.start_ns, -h.end_ns))
    t.runtime.sort(key=lambda h: h.start_ns)
    t.device.sort(key=lambda d: d.start_ns)
    return t
