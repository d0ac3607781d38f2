"""A CUDA/HIP graph replay's kernels given to the ops that were captured.

Under CUPTI (and the ROCm tracer) a kernel that a graph replay runs carries the correlation id of
the ``cudaGraphLaunch``, not that of the launch the capture recorded, so the op it was launched in
is not linked to it. Two ways back, both from timelines (so tests build them by hand):

1. The capture, profiled: the launch calls made while capturing, in order, each with the op it was
   made in. A graph captured from one stream runs its nodes in that order, so the i-th kernel of a
   replay is the i-th launch of the capture, when the counts agree. A driver call made inside a
   runtime launch call (``cuLaunchKernelEx`` inside ``cudaLaunchKernelExC``) is the same launch and
   counted once.
2. An eager profiled run of the same step, whose kernels carry names and ops: the replay's kernel
   names are aligned with its names in order (``difflib``). Where a block of names differs (cuBLAS
   picks other kernels under capture), the replay's kernels take the op of the eager kernels they
   stand in for when those belong to one op call, or pair with them by place when the blocks are
   as long; a kernel that appears between two kernels of one op call takes that op; the rest have
   none and are counted.

The capture's order is used when every replay ran as many kernels as the capture launched, on one
stream, and (where the eager run is there to check it) the two ways agree on the op of nearly every
kernel; else the names. The summary says which, with the counts.
"""
from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass

from .attribute import _innermost, _nest, align
from .timeline import DeviceSpan, HostSpan, Timeline

CAPTURE_RANGE = "bwprof.capture"   # the profiler range around the capture
LAUNCH_WORDS = ("LaunchKernel", "LaunchCooperativeKernel", "MemcpyAsync", "MemsetAsync", "Memset", "ExtLaunch",
                "ModuleLaunch")
AGREE = 0.9      # the share of kernels both ways must give the same op for the capture's order to stand


@dataclass
class Given:
    """The op given to one kernel: its record (-1: none), its op call and how it was found."""

    record: int
    instance: str
    how: str       # "capture", "name", "op" (within one op call), "place", "none"


def is_launch(name: str) -> bool:
    return any(w in name for w in LAUNCH_WORDS)


def capture_range(t: Timeline) -> HostSpan | None:
    return next((h for h in t.host if h.name == CAPTURE_RANGE), None)


def capture_launches(t: Timeline, rng: HostSpan) -> list[HostSpan]:
    """The calls inside ``rng`` that put work on the device, in order, a call made inside another
    launch call of the same thread (the driver call of a runtime call) left out."""
    calls = sorted((r for r in t.runtime if rng.start_ns <= r.start_ns <= rng.end_ns and is_launch(r.name)),
                   key=lambda r: (r.start_ns, -r.end_ns))
    out: list[HostSpan] = []
    for r in calls:
        outer = next((o for o in reversed(out[-4:]) if o.thread == r.thread and o.start_ns <= r.start_ns
                      and r.end_ns <= o.end_ns), None)
        if outer is None:
            out.append(r)
    return out


def capture_ops(t: Timeline, records: list) -> tuple[list[Given], dict]:
    """Each launch call of the capture (the timeline's ``bwprof.capture`` range) with the record of
    the op it was made in, and what the capture held (for the summary)."""
    rng = capture_range(t)
    if rng is None:
        return [], {"capture_range": False}
    ops = [h for h in t.host if h.kind == "op" and h.thread == rng.thread and rng.start_ns <= h.start_ns
           and h.end_ns <= rng.end_ns]
    parents, match = _nest(ops), align(ops, records)
    by_corr = {o.corr: i for i, o in enumerate(ops) if o.corr}
    starts = [o.start_ns for o in ops]
    calls = capture_launches(t, rng)
    out = []
    for lc in calls:
        k = by_corr.get(lc.linked, -1)
        if k < 0:  # no link: the op the launch call ran in
            k = _innermost(ops, parents, starts, lc.start_ns)
        while k >= 0 and k not in match:
            k = parents[k]
        out.append(Given(match[k], f"c{k}", "capture") if k >= 0 else Given(-1, "", "none"))
    info = {"capture_range": True, "capture_ops": len(ops), "capture_matched_ops": len(match),
            "capture_calls": dict(Counter(c.name for c in calls))}
    return out, info


def replay_runs(t: Timeline) -> list[list[DeviceSpan]]:
    """The device spans of each timed run (launched inside its range), in the order they ran."""
    launched = {r.corr: r.start_ns for r in t.runtime if r.corr}
    out = []
    for step in t.steps():
        out.append(sorted((d for d in t.device if step.start_ns <= launched.get(d.corr, d.start_ns) <= step.end_ns),
                          key=lambda d: (d.start_ns, d.end_ns)))
    return out


def eager_kernels(launch_rows) -> list[tuple[str, Given]]:
    """(name, the op given) of each launch of an eager profiled run's first repeat, in the order
    they ran (from ``attribute.launches``)."""
    if not len(launch_rows):
        return []
    first = launch_rows[launch_rows["repeat"] == launch_rows["repeat"].min()].sort_values("start_ns", kind="stable")
    return [(str(r.kernel_name), Given(int(r.record), f"e{r.op_instance}" if int(r.record) >= 0 else "", "name"))
            for r in first.itertuples()]


def by_names(names: list[str], eager: list[tuple[str, Given]]) -> list[Given]:
    """The op of each replayed kernel (``names`` in order) from the eager run's kernels aligned to
    them by name (the module docstring says how blocks that differ are treated)."""
    ref = [n for n, _ in eager]
    out = [Given(-1, "", "none") for _ in names]
    sm = difflib.SequenceMatcher(None, ref, names, autojunk=False)

    def one_call(givens):
        calls = {g.instance for g in givens}
        return len(calls) == 1 and givens and givens[0].record >= 0

    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            for k in range(j2 - j1):
                out[j1 + k] = eager[i1 + k][1]
        elif tag == "replace":
            theirs = [eager[i][1] for i in range(i1, i2)]
            if one_call(theirs):
                for j in range(j1, j2):
                    out[j] = Given(theirs[0].record, theirs[0].instance, "op")
            elif i2 - i1 == j2 - j1:
                for k in range(j2 - j1):
                    g = theirs[k]
                    out[j1 + k] = Given(g.record, g.instance, "place" if g.record >= 0 else "none")
        elif tag == "insert" and 0 < i1 < len(eager):
            around = [eager[i1 - 1][1], eager[i1][1]]
            if one_call(around):
                for j in range(j1, j2):
                    out[j] = Given(around[0].record, around[0].instance, "op")
    return out


def attribute_replay(t: Timeline, captured: list[Given], eager: list[tuple[str, Given]] | None,
                     info: dict | None = None) -> dict:
    """Give each replayed span of ``t`` (its ``record`` and ``instance``) the op found for it;
    returns {"method": "capture" | "names" | "none", "text": the summary's sentence}."""
    runs = replay_runs(t)
    info = dict(info or {})
    counts = [len(r) for r in runs]
    streams = {d.stream for r in runs for d in r}
    named = [by_names([d.name for d in r], eager) for r in runs] if eager else None
    same_count = bool(runs) and all(c == len(captured) for c in counts) and len(captured) > 0
    agree = None
    if same_count and named is not None:
        both = [(c.record, n.record) for r in named for c, n in zip(captured, r) if n.record >= 0]
        agree = sum(a == b for a, b in both) / len(both) if both else None
    use_capture = same_count and len(streams) <= 1 and (agree is None or agree >= AGREE)
    if use_capture:
        method, given = "capture", [captured] * len(runs)
    elif named is not None:
        method, given = "names", named
    else:
        method, given = "none", [[Given(-1, "", "none")] * c for c in counts]
    for r, gs in zip(runs, given):
        for d, g in zip(r, gs):
            d.record, d.instance = g.record, g.instance if g.record >= 0 else ""
    how = Counter(g.how if g.record >= 0 else "none" for g in (given[0] if given else []))
    calls = info.get("capture_calls") or {}
    cap = (f"the capture made {len(captured)} launches ({', '.join(f'{n} {c}' for n, c in sorted(calls.items()))})"
           if info.get("capture_range", True) else "the capture was not profiled")
    run = f"a replay ran {counts[0] if counts and len(set(counts)) == 1 else counts} kernels"
    if len(streams) > 1:
        run += f" on {len(streams)} streams"
    check = f"; the eager run's kernel names give the same op to {100 * agree:.0f} %" if agree is not None else ""
    if method == "capture":
        head = "kernels given to the ops captured, in the capture's order"
    elif method == "names":
        head = "kernels given to ops by their names, aligned with an eager profiled run of the step"
    else:
        head = "kernels not given to ops (the capture's launches do not match the replay, and no eager run)"
    per = ", ".join(f"{k} {v}" for k, v in sorted(how.items()) if v) or "none"
    text = f"{head} ({per} of a replay's {counts[0] if counts else 0} kernels): {cap}; {run}{check}"
    return {"method": method, "text": text, "agree": agree, **info}
