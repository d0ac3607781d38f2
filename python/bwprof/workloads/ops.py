"""A workload: an ordered list of ops (bwprof kernels with their parameters, or the user's own
callables), each run ``count`` times a step, and the fusions that some of its ops stand for.

Consecutive ops of equal count form a block that repeats as a whole: the ops of layer 0, then
layer 1's, and so on. An op that belongs to a fusion has a ``form``: its ``separate`` ops run in
the step without the fusion, its ``fused`` ops in the step with it; every other op runs in both.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, Iterable

from .. import arguments as _args
from ..traces.categories import CATEGORIES, category_of

FORMS = ("separate", "fused")
MAX_COUNT = 1_000_000


@dataclass
class Op:
    """One op of a workload's step.

    A bwprof kernel (``kernel`` with its ``params``; ``variant`` None takes the one the workload's
    device prefers, else the backend's default; ``dtype`` None the workload's), or the user's own
    callable (``fn``, called with no arguments; on a GPU it queues its work on the current stream
    of PyTorch or CuPy, as :func:`bwprof.profile` times it) with its declared ``bytes_read``,
    ``bytes_written`` and optional ``flops`` per call. ``count``: launches per step. ``category``
    defaults to the trace breakdown's category of the kernel (``bwprof_<kernel>``) or of the
    callable's name. ``fusion``/``form`` tie the op to a fusion of the workload.
    """

    name: str
    kernel: str | None = None
    params: dict = field(default_factory=dict)
    fn: Callable | None = None
    variant: str | None = None
    dtype: str | None = None
    count: int = 1
    category: str | None = None
    bytes_read: float | None = None
    bytes_written: float | None = None
    flops: float | None = None
    fusion: str | None = None
    form: str | None = None

    @property
    def is_user(self) -> bool:
        return self.fn is not None


@dataclass
class Fusion:
    """A fusion some ops of a workload stand for, with the estimate it is compared with."""

    name: str
    label: str
    estimate: str = ""             # the seeds' estimate as they put it ("about +7 % overall")
    estimate_pct: float | None = None
    estimate_scope: str = ""       # "overall" or "on its ops"


@dataclass
class Workload:
    """A model's step (or any step the user describes), in the order its ops run."""

    name: str
    ops: list
    dtype: str = "fp16"
    fusions: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)   # what the model is: layers, batch, kv, weights, ...

    def steps(self) -> list[tuple[str, tuple, list]]:
        """The steps to time: (name, fusions applied, ops). Without fusions one step, "step";
        with them "separate" (none applied), each fusion alone (when there are several), and
        "fused" (all)."""
        if not self.fusions:
            return [("step", (), list(self.ops))]
        names = list(self.fusions)
        plan = [("separate", ())]
        if len(names) > 1:
            plan += [(f, (f,)) for f in names]
        plan.append(("fused", tuple(names)))
        return [(step, applied, self.ops_with(applied)) for step, applied in plan]

    def ops_with(self, applied: Iterable[str]) -> list:
        applied = set(applied)
        return [op for op in self.ops
                if op.fusion is None or (op.form == "fused") == (op.fusion in applied)]


def _count(name: str, value: Any) -> int:
    return _args.count(name, value, 1, MAX_COUNT)


def _bytes(name: str, value: Any) -> float | None:
    if value is None:
        return None
    v = _args.number(name, value)
    if not math.isfinite(v):
        raise ValueError(f"{name}: must be finite, got {value!r}")
    return v


def as_op(value: Any, where: str) -> Op:
    """An Op from an Op or a dict of its fields, checked; errors name ``where`` and the field."""
    if isinstance(value, dict):
        known = {f.name for f in fields(Op)}
        unknown = sorted(set(map(str, value)) - known)
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {', '.join(unknown)} (fields: {', '.join(sorted(known))})")
        if "name" not in value:
            raise ValueError(f"{where}: every op needs a name")
        value = Op(**value)
    if not isinstance(value, Op):
        raise TypeError(f"{where}: expected an Op or a dict, got {type(value).__name__}")
    name = _args.text(f"{where}.name", value.name)
    if not name.strip():
        raise ValueError(f"{where}.name: must not be empty")
    where = f"op '{name}'"
    op = replace(value, name=name, count=_count(f"{where}: count", value.count))
    if op.fn is not None:
        if not callable(op.fn):
            raise TypeError(f"{where}: fn must be callable, got {type(op.fn).__name__}")
        if op.kernel is not None:
            raise ValueError(f"{where}: give a kernel or a callable (fn), not both")
        if op.bytes_read is None or op.bytes_written is None:
            raise ValueError(f"{where}: a callable op declares bytes_read= and bytes_written= (bytes per call)")
        op.bytes_read = _bytes(f"{where}: bytes_read", op.bytes_read)
        op.bytes_written = _bytes(f"{where}: bytes_written", op.bytes_written)
        op.flops = _bytes(f"{where}: flops", op.flops) or 0.0
    else:
        if op.kernel is None:
            raise ValueError(f"{where}: give a kernel (a bwprof kernel name) or fn (a callable)")
        op.kernel = _args.text(f"{where}: kernel", op.kernel)
        for k in ("bytes_read", "bytes_written", "flops"):
            if getattr(op, k) is not None:
                raise ValueError(f"{where}: {k} is for callables; a kernel declares its own traffic")
    params = _args.mapping(f"{where}: params", op.params) or {}
    op.params = {_args.text(f"{where}: parameter name", k): _args.shape_value(k, v) for k, v in params.items()}
    op.variant = _args.optional_text(f"{where}: variant", op.variant)
    op.dtype = _args.optional_text(f"{where}: dtype", op.dtype)
    if op.category is None:
        op.category = category_of(f"bwprof_{op.kernel}" if op.kernel else name)
    op.category = _args.text(f"{where}: category", op.category)
    if (op.fusion is None) != (op.form is None):
        raise ValueError(f"{where}: fusion and form go together (form: {' or '.join(FORMS)})")
    if op.form is not None:
        op.form = _args.text(f"{where}: form", op.form, FORMS)
        op.fusion = _args.text(f"{where}: fusion", op.fusion)
    return op


def workload(ops: Any, *, name: str = "custom", dtype: str = "fp16", fusions: Any = None,
             info: dict | None = None) -> Workload:
    """A workload from a list of ops (:class:`Op` or dicts of its fields), checked: every op named
    once, known fields, counts 1 .. 10^6, callables with their bytes, and each fusion named by
    ``fusions`` (a list of names, :class:`Fusion` or dicts) with both its separate and its fused
    ops. Bad input is a ValueError or TypeError naming the op and the field."""
    if isinstance(ops, (str, bytes)) or not isinstance(ops, (list, tuple)):
        raise TypeError(f"ops: expected a list of ops, got {type(ops).__name__}")
    if not ops:
        raise ValueError("ops: a workload needs at least one op")
    checked = [as_op(o, f"ops[{i}]") for i, o in enumerate(ops)]
    seen = set()
    for op in checked:
        if op.name in seen:
            raise ValueError(f"ops: two ops are named '{op.name}'; each op needs a name of its own")
        seen.add(op.name)
    dtype = _args.text("dtype", dtype, ("fp32", "fp16"))
    if fusions is not None and (isinstance(fusions, (str, bytes, dict)) or not isinstance(fusions, (list, tuple))):
        raise TypeError(f"fusions: expected a list of fusions (names, Fusion or dicts), got "
                        f"{type(fusions).__name__} {_args.show(fusions)}")
    table = {}
    for i, f in enumerate(fusions or []):
        if isinstance(f, str):
            f = Fusion(f, f)
        elif isinstance(f, dict):
            f = Fusion(**f)
        if not isinstance(f, Fusion):
            raise TypeError(f"fusions[{i}]: expected a name, a Fusion or a dict, got {type(f).__name__}")
        table[f.name] = f
    for op in checked:
        if op.fusion is not None and op.fusion not in table:
            table[op.fusion] = Fusion(op.fusion, op.fusion)
    for f in table:
        forms = {op.form for op in checked if op.fusion == f}
        if forms != set(FORMS):
            missing = ", ".join(sorted(set(FORMS) - forms))
            raise ValueError(f"fusions: '{f}' has no {missing} op(s); a fusion names the ops it replaces "
                             f"(form='separate') and the ops that replace them (form='fused')")
    return Workload(_args.text("name", name), checked, dtype, table, dict(info or {}))


__all__ = ["CATEGORIES", "FORMS", "Fusion", "Op", "Workload", "as_op", "workload"]
