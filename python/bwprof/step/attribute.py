"""Which op and module launched each kernel: the timed runs' profiled ops matched to the ops the
dispatcher saw in the separate inference run (by name, in call order), each kernel to the op it was
launched in (its correlation id), and the kernels of a run as a table of launches.

The profiler records every op with its nesting (``aten::linear`` holding ``aten::t`` and
``aten::addmm``); the dispatcher saw the ops below composites. Walking a run's ops in order, an op
outside the last matched one whose name is the next inference record's is matched to it (a few
records may be skipped, where the two runs differ); a kernel goes to its op's nearest matched
ancestor, and so gets that record's module, bytes and FLOPs.
"""
from __future__ import annotations

import math

import pandas as pd

from .regions import RANGE_PREFIX
from .timeline import Timeline

LOOKAHEAD = 8   # inference records an alignment may skip to find a name again
LAUNCH_COLUMNS = ["repeat", "kernel_name", "kind", "start_ns", "end_ns", "duration_us", "stream", "op", "module",
                  "record", "op_instance", "op_kernels", "region", "region_call", "launch_ns"]


def _nest(ops: list) -> list[int]:
    """Parent index of each op (sorted by start, longest first) within one thread; -1: none."""
    parents, stack = [], []
    for i, o in enumerate(ops):
        while stack and not (o.start_ns >= ops[stack[-1]].start_ns and o.end_ns <= ops[stack[-1]].end_ns):
            stack.pop()
        parents.append(stack[-1] if stack else -1)
        stack.append(i)
    return parents


def align(ops: list, records: list) -> dict[int, int]:
    """{index of an op in ``ops``: index of its inference record}; ``ops`` sorted by start (longest
    first), ``records`` the inference run's ops in call order (each with ``.op``)."""
    names = [r.op for r in records]
    known = set(names)
    match, j, covered = {}, 0, -1
    for i, o in enumerate(ops):
        if o.kind != "op" or o.start_ns < covered or o.name not in known:
            continue
        for k in range(j, min(len(names), j + LOOKAHEAD + 1)):
            if names[k] == o.name:
                match[i] = k
                j, covered = k + 1, o.end_ns
                break
    return match


def _region_of(launch_ns: int, regions: list) -> tuple[str, int]:
    for r in regions:
        if r.start_ns <= launch_ns <= r.end_ns:
            name, _, call = r.name[len(RANGE_PREFIX):].rpartition("#")
            return name, int(call or 0)
    return "", -1


def launches(t: Timeline, records: list, *, thread: int | None = None) -> pd.DataFrame:
    """One row per device span of the timed runs (LAUNCH_COLUMNS): its run, op, module, inference
    record (-1: none matched), the op call it belongs to and how many spans that call launched."""
    steps = t.steps()
    runtime_start = {r.corr: r.start_ns for r in t.runtime if r.corr}
    rows = []
    for rep, step in enumerate(steps):
        th = step.thread if thread is None else thread
        inside = [h for h in t.host if h.thread == th and h.start_ns >= step.start_ns and h.end_ns <= step.end_ns
                  and h is not step]
        ops = [h for h in inside if h.kind == "op"]
        regions = [h for h in inside if h.kind == "annotation" and h.name.startswith(RANGE_PREFIX)]
        parents = _nest(ops)
        match = align(ops, records)
        owner = []   # the nearest matched op (self or ancestor) of each op
        for i in range(len(ops)):
            k = i
            while k >= 0 and k not in match:
                k = parents[k]
            owner.append(k)
        by_corr = {o.corr: i for i, o in enumerate(ops) if o.corr}
        starts = [o.start_ns for o in ops]
        mine = []
        for d in t.device:
            launch = runtime_start.get(d.corr)
            i = by_corr.get(d.linked, -1)
            if i < 0 and launch is not None:  # no link to an op: the op the launch call was made in
                i = _innermost(ops, parents, starts, launch)
            if launch is None:
                launch = ops[i].start_ns if i >= 0 else d.start_ns
            if not step.start_ns <= launch <= step.end_ns:
                continue
            mine.append((d, launch, i))
        found = []   # (span, launch, record index, op call) of each of the run's spans
        for d, launch, i in mine:
            if d.record >= 0:
                found.append((d, launch, d.record, f"{rep}:{d.instance}", i))
                continue
            k = owner[i] if i >= 0 else -1
            found.append((d, launch, match[k] if k >= 0 else -1, f"{rep}:{k}" if k >= 0 else "", i))
        per_instance: dict = {}
        for _, _, r, inst, _ in found:
            if r >= 0:
                per_instance[inst] = per_instance.get(inst, 0) + 1
        for d, launch, r, inst, i in found:
            rec = records[r] if r >= 0 else None
            region, call = _region_of(launch, regions)
            op_name = rec.op if rec is not None else (_outermost(ops, parents, i) if i >= 0 else "")
            rows.append({"repeat": rep, "kernel_name": d.name, "kind": d.kind, "start_ns": d.start_ns,
                         "end_ns": d.end_ns, "duration_us": (d.end_ns - d.start_ns) / 1e3, "stream": d.stream,
                         "op": op_name, "module": rec.module if rec is not None else "",
                         "record": r, "op_instance": inst if rec is not None else "",
                         "op_kernels": per_instance.get(inst, 1) if rec is not None else 1, "region": region,
                         "region_call": call, "launch_ns": launch})
    return pd.DataFrame(rows, columns=LAUNCH_COLUMNS)


def _innermost(ops: list, parents: list, starts: list, t_ns: int) -> int:
    """The innermost op running at ``t_ns`` (ops sorted by start, longest first); -1: none."""
    import bisect

    i = bisect.bisect_right(starts, t_ns) - 1
    while i >= 0 and ops[i].end_ns < t_ns:
        i = parents[i]
    return i


def _outermost(ops: list, parents: list, i: int) -> str:
    """The name of the outermost op around op ``i`` (what the user called), for unmatched kernels."""
    while parents[i] >= 0:
        i = parents[i]
    return ops[i].name


def module_pattern(modules) -> str:
    """One module path for a row: the path itself when all calls share it, else the paths with the
    parts that differ (layer numbers) as '*'."""
    mods = [m for m in dict.fromkeys(modules) if isinstance(m, str)]
    if not mods:
        return ""
    if len(mods) == 1:
        return mods[0]
    parts = [m.split(".") for m in mods]
    if len({len(p) for p in parts}) != 1:
        return mods[0] + f" (+{len(mods) - 1} more)"
    return ".".join(p[0] if len({q[i] for q in parts}) == 1 else "*" for i, p in enumerate(zip(*parts)))


def carriers(launch_rows: pd.DataFrame) -> tuple[dict, dict]:
    """{index of the launch that carries its op call's bytes and FLOPs: True} and, per op call, the
    name of that kernel: the kernel of the op (its record) with the longest median time, in each
    call its launch of that name (a call without it: its longest launch). Chosen per op rather
    than per call, so that a kernel's row carries the op's traffic in every call or in none."""
    att = launch_rows[launch_rows["record"] >= 0]
    if not len(att):
        return {}, {}
    med = att.groupby(["record", "kernel_name"], sort=False)["duration_us"].median()
    best = {r: name for (r, name) in med.groupby(level=0).idxmax()}
    chosen, names = {}, {}
    for inst, g in att.groupby("op_instance", sort=False):
        cand = g[g["kernel_name"] == best[g["record"].iloc[0]]]
        idx = (cand if len(cand) else g)["duration_us"].idxmax()
        chosen[idx] = True
        names[inst] = str(launch_rows.at[idx, "kernel_name"])
    return chosen, names


def traffic_of(launch_rows: pd.DataFrame, records: list) -> pd.DataFrame:
    """Per launch: the bytes and FLOPs of its op (one kernel of each op call carries them, see
    ``carriers``; its other kernels have none and name it in ``bytes_on``), the op's dtype and
    shapes, and where they came from."""
    from ..traces.names import short_kernel_name

    out = launch_rows.copy()
    nan = math.nan
    br, bw, fl, src, fsrc, dt, tdt, shp, mx, on = [], [], [], [], [], [], [], [], [], []
    chosen, names = carriers(out)
    for idx, row in out.iterrows():
        rec = records[row["record"]] if row["record"] >= 0 else None
        carries = rec is not None and idx in chosen
        br.append(rec.bytes_read if carries else nan)
        bw.append(rec.bytes_written if carries else nan)
        fl.append(rec.flops if carries and rec.has_flops else nan)
        src.append("inferred" if carries else "unknown")
        fsrc.append("inferred" if carries and rec.has_flops else "unknown")
        dt.append(rec.dtype if rec is not None else "fp32")
        tdt.append(rec.tensor_dtype if rec is not None else "")
        shp.append(rec.shapes if rec is not None else "")
        mx.append(bool(rec.matrix) if rec is not None else False)
        on.append(short_kernel_name(names[row["op_instance"]]) if rec is not None and not carries
                  and row["op_instance"] in names else "")
    out["bytes_read"], out["bytes_written"], out["flops"] = br, bw, fl
    out["bytes_source"], out["flops_source"] = src, fsrc
    out["dtype"], out["tensor_dtype"], out["shape"], out["matrix"] = dt, tdt, shp, mx
    out["bytes_on"] = on
    return out
