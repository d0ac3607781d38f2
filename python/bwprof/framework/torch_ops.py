"""What each PyTorch op of a call reads, writes and computes, seen from the dispatcher.

A ``TorchDispatchMode`` (the mechanism of ``torch.utils.flop_counter.FlopCounterMode``) sees every
aten op with its tensors, in call order, and global ``nn.Module`` forward hooks say which module
called it. Per op: bytes read and written, each tensor counted by the memory it spans in its
storage (from its offset and strides: a transposed weight spans the whole weight, a broadcast
vector only the vector), a storage counted once per op, outputs as written; FLOPs from PyTorch's
own formula registry (matmul, convolution, attention), else none. Ops that only make views move
nothing. Nothing here times anything: the counter runs apart from the timed runs.

    from bwprof.framework.torch_ops import OpCounter
    with OpCounter() as c:
        model(x)
    c.frame()            # one row per op: op, module, bytes_read, bytes_written, flops, ...
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

# Ops that fill their destination without reading it (counted as written only).
_OVERWRITES = {"aten::copy_", "aten::fill_", "aten::zero_", "aten::uniform_", "aten::normal_",
               "aten::random_", "aten::bernoulli_", "aten::exponential_", "aten::index_put_"}
# Allocations: a buffer is made, nothing is moved.
_ALLOCATIONS = {"aten::empty", "aten::empty_strided", "aten::empty_like", "aten::new_empty",
                "aten::new_empty_strided", "aten::empty_permuted"}
# Queries of a tensor's metadata (the same list FlopCounterMode leaves alone): not ops of the step.
_QUERIES = {"aten::sym_is_contiguous", "aten::is_contiguous", "aten::is_strides_like_format",
            "aten::is_non_overlapping_and_dense", "aten::size", "aten::sym_size", "aten::stride",
            "aten::sym_stride", "aten::storage_offset", "aten::sym_storage_offset", "aten::numel",
            "aten::sym_numel", "aten::dim", "prim::layout", "prim::device"}
_DTYPE_NAMES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}

OP_COLUMNS = ["index", "op", "overload", "module", "bytes_read", "bytes_written", "flops", "has_flops",
              "matrix", "view", "dtype", "tensor_dtype", "shapes", "device"]


@dataclass
class OpRecord:
    """One aten op as the dispatcher saw it (bytes and FLOPs per call)."""

    index: int
    op: str             # "aten::mm"
    overload: str       # "default", "Tensor", "out"
    module: str         # the nn.Module path that called it ("" outside any module)
    bytes_read: float
    bytes_written: float
    flops: float        # NaN: no formula for this op
    has_flops: bool
    matrix: bool        # a matmul/convolution/attention formula: work for the matrix units
    view: bool          # returns views of its inputs only: moves no data
    dtype: str          # the roofline's dtype: fp16, bf16 or fp32 (anything else is judged as fp32)
    tensor_dtype: str   # the tensors' own dtype: float16, int64, ...
    shapes: str         # "4x4096,4096x4096"
    device: str         # "cuda:0", "cpu"


def _torch():
    import torch  # only when asked: bwprof never needs PyTorch itself

    return torch


def _tensors(obj, out: list, depth: int = 0) -> list:
    torch = _torch()
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif depth < 3 and isinstance(obj, (list, tuple)):
        for x in obj:
            _tensors(x, out, depth + 1)
    elif depth < 3 and isinstance(obj, dict):
        for x in obj.values():
            _tensors(x, out, depth + 1)
    return out


def tensor_span(t) -> tuple[Any, int, int] | None:
    """(storage key, first byte, one past the last byte) of the memory ``t`` spans in its storage;
    None for a tensor without strided storage or without elements."""
    try:
        if t.layout != _torch().strided or t.numel() == 0:
            return None
        es = t.element_size()
        lo = hi = t.storage_offset()
        for d, s in zip(t.shape, t.stride()):
            if s >= 0:
                hi += (d - 1) * s
            else:
                lo += (d - 1) * s
        key = (str(t.device), t.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError, AttributeError):  # fake, meta or sparse tensors
        return None
    return key, lo * es, (hi + 1) * es


def spanned_bytes(tensors) -> int:
    """Bytes the tensors span, each storage's bytes once (overlapping spans of one storage are
    joined)."""
    per: dict = {}
    for t in tensors:
        s = tensor_span(t)
        if s is not None:
            per.setdefault(s[0], []).append((s[1], s[2]))
    total = 0
    for spans in per.values():
        spans.sort()
        lo, hi = spans[0]
        for a, b in spans[1:]:
            if a > hi:
                total += hi - lo
                lo, hi = a, b
            else:
                hi = max(hi, b)
        total += hi - lo
    return total


def _shape_text(tensors) -> str:
    return ",".join("x".join(str(int(d)) for d in t.shape) or "scalar" for t in tensors[:6]) + \
        (",..." if len(tensors) > 6 else "")


def attention_flops(q_shape, k_shape, v_shape) -> float:
    """FLOPs of one scaled-dot-product attention call, as PyTorch's formula counts them (the two
    matmuls, 2*B*Hq*Sq*Sk*(D + Dv); no discount for a causal mask), where the keys and values have
    fewer heads than the queries (grouped-query attention: each KV head serves Hq/Hkv query heads).
    PyTorch's own formula asserts equal head counts, so such calls (transformers' Llama decode with
    enable_gqa) would get no FLOP count. NaN where the shapes are not those of attention."""
    try:
        b, hq, sq, d = (int(x) for x in q_shape)
        bk, hk, sk, dk = (int(x) for x in k_shape)
        bv, hv, sv, dv = (int(x) for x in v_shape)
    except (TypeError, ValueError):
        return math.nan
    if min(b, hq, sq, d, hk, sk, dv) <= 0 or (bk, dk) != (b, d) or (bv, hv, sv) != (b, hk, sk) or hq % hk:
        return math.nan
    return 2.0 * b * hq * sq * sk * (d + dv)


def _attention_fallback(name: str, args: tuple) -> float:
    """attention_flops for an SDPA op whose PyTorch formula refused the call, else NaN."""
    if "scaled_dot_product" not in name or len(args) < 3:
        return math.nan
    return attention_flops(*(getattr(a, "shape", None) for a in args[:3]))  # not 4-D or no shape: NaN


def _flop_registry() -> dict:
    from torch.utils.flop_counter import flop_registry

    return flop_registry


def op_traffic(func, args: tuple, kwargs: dict, out) -> dict:
    """Bytes read and written, FLOPs and the tensors' description of one op call."""
    schema = func._schema
    name = schema.name
    view = bool(schema.returns) and all(r.alias_info is not None and not r.alias_info.is_write
                                        for r in schema.returns)
    written_args, out_args = [], []
    named = dict(zip([a.name for a in schema.arguments], args))
    named.update(kwargs)
    for a in schema.arguments:
        if a.alias_info is not None and a.alias_info.is_write and a.name in named:
            (out_args if getattr(a, "is_out", False) else written_args).append(named[a.name])
    skip = {id(t) for t in _tensors(out_args, [])}
    if name in _OVERWRITES:
        skip |= {id(t) for t in _tensors(written_args, [])}
    inputs = [t for t in _tensors((args, kwargs), []) if id(t) not in skip]
    outputs = _tensors(out, []) + _tensors(written_args, []) + _tensors(out_args, [])
    if view or name in _ALLOCATIONS:
        read = written = 0
    else:
        read, written = spanned_bytes(inputs), spanned_bytes(outputs)
    packet = func._overloadpacket
    registry = _flop_registry()
    flops, has = math.nan, False
    if packet in registry:
        try:
            flops, has = float(registry[packet](*args, **kwargs, out_val=out)), True
        except Exception:  # noqa: BLE001 - a formula that does not take this call: no FLOP count
            flops = _attention_fallback(name, args)
            has = not math.isnan(flops)
    every = inputs + [t for t in outputs if id(t) not in {id(x) for x in inputs}]
    floats = [t for t in every if t.is_floating_point()]
    first = floats[0] if floats else (every[0] if every else None)
    tdt = str(first.dtype).replace("torch.", "") if first is not None else ""
    return {"op": name, "overload": schema.overload_name or "default", "bytes_read": float(read),
            "bytes_written": float(written), "flops": flops, "has_flops": has, "matrix": has,
            "view": view, "dtype": _DTYPE_NAMES.get(tdt, "fp32"), "tensor_dtype": tdt,
            "shapes": _shape_text(inputs), "device": str(first.device) if first is not None else ""}


class _ModuleStack:
    """The nn.Module path of the code running now, from global forward pre/post hooks. A module
    is named as FlopCounterMode's tracker names it: the outermost module's class, then the
    attribute names down to it ("LlamaForCausalLM.model.layers.0.mlp")."""

    def __init__(self):
        self.stack: list[str] = []
        self.names: dict[int, str] = {}
        self.handles: list = []

    def _enter(self, module, *_):
        key = id(module)
        if key not in self.names:
            if not self.stack:
                root = type(module).__name__
                for sub_name, sub in module.named_modules():
                    self.names.setdefault(id(sub), f"{root}.{sub_name}" if sub_name else root)
            else:  # made after the outermost module was named: under its caller
                self.names[key] = f"{self.stack[-1]}.{type(module).__name__}"
        self.stack.append(self.names[key])

    def _leave(self, module, *_):
        if self.stack:
            self.stack.pop()

    def __enter__(self):
        mod = _torch().nn.modules.module
        self.handles.append(mod.register_module_forward_pre_hook(self._enter))
        try:  # always_call (PyTorch >= 2.1): the stack stays right when a forward raises
            self.handles.append(mod.register_module_forward_hook(self._leave, always_call=True))
        except TypeError:
            self.handles.append(mod.register_module_forward_hook(self._leave))
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.handles.clear()
        self.stack.clear()

    @property
    def path(self) -> str:
        return self.stack[-1] if self.stack else ""


def _mode_class():
    from torch.utils._python_dispatch import TorchDispatchMode

    class _Mode(TorchDispatchMode):
        def __init__(self, counter: "OpCounter"):
            super().__init__()
            self.counter = counter

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            torch = _torch()
            if isinstance(func, torch._ops.HigherOrderOperator):
                return NotImplemented
            name = func._schema.name
            if name in _QUERIES:
                return func(*args, **kwargs)
            if func._overloadpacket not in _flop_registry():
                # A composite op is seen as the ops it is made of (as FlopCounterMode does), the
                # ones that run kernels and the profiler records inside it.
                with self:
                    r = func.decompose(*args, **kwargs)
                if r is not NotImplemented:
                    return r
            out = func(*args, **kwargs)
            self.counter._record(func, args, kwargs, out)
            return out

    return _Mode


class OpCounter:
    """Records every aten op run inside it (``records``: :class:`OpRecord` in call order)."""

    def __init__(self, modules: bool = True):
        self.records: list[OpRecord] = []
        self._modules = _ModuleStack() if modules else None
        self._mode = None

    def _record(self, func, args, kwargs, out) -> None:
        info = op_traffic(func, args, kwargs, out)
        self.records.append(OpRecord(index=len(self.records),
                                     module=self._modules.path if self._modules else "", **info))

    def __enter__(self) -> "OpCounter":
        self.records.clear()
        if self._modules is not None:
            self._modules.__enter__()
        self._mode = _mode_class()(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        try:
            self._mode.__exit__(*exc)
        finally:
            self._mode = None
            if self._modules is not None:
                self._modules.__exit__(*exc)
        return False

    def frame(self) -> pd.DataFrame:
        """The records as a DataFrame (columns OP_COLUMNS)."""
        return pd.DataFrame([asdict(r) for r in self.records], columns=OP_COLUMNS)

    @property
    def total_flops(self) -> float:
        """FLOPs of every op with a formula (0 when none has one)."""
        return float(sum(r.flops for r in self.records if r.has_flops))

    @property
    def counted(self) -> bool:
        """Whether any op had a FLOP formula."""
        return any(r.has_flops for r in self.records)


def count_ops(fn, *args, **kwargs) -> tuple[Any, OpCounter]:
    """``fn(*args, **kwargs)`` under an :class:`OpCounter`: (its result, the counter)."""
    with OpCounter() as c:
        result = fn(*args, **kwargs)
    return result, c


def uses_torch(*objs) -> bool:
    """Whether any of ``objs`` (or what lists, tuples and dicts of them hold) is a PyTorch tensor,
    without importing PyTorch where the caller never did."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        return False
    return bool(_tensors(objs, []))
