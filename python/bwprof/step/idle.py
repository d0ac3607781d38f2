"""Where a step's wall time goes: the device busy (the union of its kernels', copies' and memsets'
intervals) or idle, and why it idles: before the first launch, after the last one, in gaps that
follow a host wait (a synchronisation, a copy back to the host, ``.item()``: the host stopped to
wait, the device drained its queue and waits for the next launch), and in the other gaps between
launches (the host did not launch fast enough). The step's verdict: host-bound when the device is
busy less than half of the step, else the bound that holds most of the kernel time."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .timeline import SYNC_RANGE, WAIT_CALLS, WAIT_OPS

HOST_BOUND_BUSY_PCT = 50.0   # below this share of the step busy, the host sets the step's time
SKEW_NS = 2000               # the host and device clocks agree to about this (CUPTI's conversion)
IDLE_CAUSES = ("idle_before_first_us", "idle_launch_gaps_us", "idle_host_wait_us", "idle_after_last_us")


def union(intervals) -> list[tuple[int, int]]:
    """Sorted, merged (start, end) intervals."""
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def split(start_ns: int, end_ns: int, work, waits=(), launched=None) -> dict:
    """Busy and idle time (us) of one run [start_ns, end_ns] from the device's ``work`` intervals,
    the host's ``waits`` (intervals in which it waited for the device) and when each piece of work
    was launched (``launched``, parallel to ``work``; None: unknown). A gap is the host's wait when
    the host was waiting as the device went idle and launched the next work only after that."""
    starts = sorted(zip([s for s, _ in work], launched if launched is not None else [-1] * len(work)))
    busy = [(max(s, start_ns), min(e, end_ns)) for s, e in union(work) if e > start_ns and s < end_ns]
    busy = [(s, e) for s, e in busy if e > s]
    out = {"wall_us": (end_ns - start_ns) / 1e3, "busy_us": sum(e - s for s, e in busy) / 1e3,
           **{c: 0.0 for c in IDLE_CAUSES}}
    if not busy:
        out["idle_before_first_us"] = out["wall_us"]
        return out
    out["idle_before_first_us"] = (busy[0][0] - start_ns) / 1e3
    out["idle_after_last_us"] = (end_ns - busy[-1][1]) / 1e3
    waits = sorted(waits)
    import bisect
    for (_, g0), (g1, _) in zip(busy[:-1], busy[1:]):
        k = bisect.bisect_left(starts, (g1, -1 << 62))
        nxt = starts[k][1] if k < len(starts) else -1
        waited = any(ws <= g0 + SKEW_NS and we >= g0 - SKEW_NS and (nxt < 0 or nxt >= we - SKEW_NS)
                     for ws, we in waits)
        out["idle_host_wait_us" if waited else "idle_launch_gaps_us"] += (g1 - g0) / 1e3
    return out


def host_waits(t, step) -> list[tuple[int, int]]:
    """The step's host waits: synchronising runtime calls and scalar reads, outside bwprof's own
    final synchronisation."""
    own = [(h.start_ns, h.end_ns) for h in t.host if h.name == SYNC_RANGE and step.start_ns <= h.start_ns <= step.end_ns]

    def ours(s):
        return any(a <= s <= b for a, b in own)

    waits = [(r.start_ns, r.end_ns) for r in t.runtime
             if r.name.split("_v")[0] in WAIT_CALLS and step.start_ns <= r.start_ns <= step.end_ns and not ours(r.start_ns)]
    waits += [(h.start_ns, h.end_ns) for h in t.host if h.kind == "op" and h.name in WAIT_OPS
              and step.start_ns <= h.start_ns <= step.end_ns and not ours(h.start_ns)]
    return waits


def _time(us: float) -> str:
    if not math.isfinite(us):
        return "?"
    return f"{us / 1e3:.3g} ms" if us >= 1000 else f"{us:.3g} us"


def verdict(summary: dict, kernels: pd.DataFrame, *, device_kind: str = "gpu") -> tuple[str, str]:
    """(verdict, its sentence with the numbers)."""
    s = summary
    what = "the GPU" if device_kind != "cpu" else "the regions"
    busy_word = "is busy" if device_kind != "cpu" else "take"
    launches = int(s.get("launches", 0))
    head = f"{what} {busy_word} {s['busy_pct']:.1f} % of the {_time(s['wall_us'])} step; {launches} " + \
        ("launches" if device_kind != "cpu" else "region calls")
    if s["busy_pct"] < HOST_BOUND_BUSY_PCT:
        parts = [f"host-bound: {head}"]
        if s.get("host_waits"):
            parts.append(f"{s['host_waits']:.0f} host waits on the GPU (synchronisations, copies to the host, "
                         f".item()), {_time(s['idle_host_wait_us'])} idle after them")
        parts.append(f"the {'kernels' if device_kind != 'cpu' else 'regions'} alone take {_time(s['busy_us'])}")
        if device_kind != "cpu":
            g = s.get("graph_us", math.nan)
            if isinstance(g, (int, float)) and math.isfinite(g):
                parts.append(f"captured in a CUDA graph the step takes {_time(g)} (measured)")
            elif s.get("graph_error"):
                parts.append(f"it was not captured in a CUDA graph: {s['graph_error']}")
        return "host-bound", "; ".join(parts)
    k = kernels[kernels["bound"].astype(str) != ""] if len(kernels) else kernels
    if not len(k):
        return "unknown", f"unknown: {head}; no kernel was judged"
    by = k.groupby(k["bound"].astype(str))["time_per_step_us"].sum().sort_values(ascending=False)
    bound = str(by.index[0])
    share = 100.0 * float(by.iloc[0]) / float(k["time_per_step_us"].sum()) if k["time_per_step_us"].sum() > 0 else 0
    top = k[k["bound"].astype(str) == bound].iloc[0]
    pct = top["compute_pct_peak"] if bound == "compute" else top["bandwidth_pct_peak"]
    at = f" at {float(pct):.0f} % of its roof" if isinstance(pct, (int, float, np.floating)) and math.isfinite(pct) else ""
    name = f"{top['kernel']}" + (f" ({top['op']})" if top["op"] else "")
    label = bound if bound.endswith("-bound") or bound == "unknown" else f"{bound}-bound"
    return label, (f"{label}: {head}; {share:.0f} % of the {'kernel' if device_kind != 'cpu' else 'region'} time "
                   f"in {bound} rows (largest: {name}{at})")
