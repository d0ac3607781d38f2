"""What an array-like object occupies, read through the protocols every array library speaks:
``__cuda_array_interface__`` (PyTorch, CuPy, JAX, Numba on a GPU), ``__array_interface__`` (NumPy),
DLPack (``__dlpack__``/``__dlpack_device__``: PyTorch on the CPU, JAX, ...) and the buffer protocol
(bytes, bytearray, array.array, memoryview). No library is imported here.

``profile`` counts the minimal traffic of a callable from them: each input read once, each output
written once, a buffer passed twice (or overlapping another) counted once.
"""
from __future__ import annotations

import ctypes
import sys
from dataclasses import dataclass
from typing import Any, Iterable

# DLPack's device types (dlpack.h): where the data lives.
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_ROCM, _DL_ROCM_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 10, 11, 13
_DL_HOST = {_DL_CPU, _DL_CUDA_HOST, _DL_ROCM_HOST}


@dataclass(frozen=True)
class ArrayInfo:
    """One array: where it lives, its first byte, and what it holds."""

    location: str          # "host" or "gpu:N"
    address: int           # of the first element
    shape: tuple
    strides: tuple | None  # in bytes; None when C-contiguous
    itemsize: int
    kind: str              # "f2", "bf16", "f4", "i1", ...: the element type, for dtype inference

    @property
    def nbytes(self) -> int:
        """Bytes of the elements themselves (each element once, whatever the strides)."""
        n = self.itemsize
        for d in self.shape:
            n *= d
        return n

    @property
    def contiguous(self) -> bool:
        if self.strides is None:
            return True
        expect = self.itemsize
        for d, s in zip(reversed(self.shape), reversed(self.strides)):
            if d != 1 and s != expect:
                return False
            expect *= d
        return True

    @property
    def shape_text(self) -> str:
        return "x".join(str(d) for d in self.shape) if self.shape else "scalar"


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = ctypes.c_int
_capsule_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]

_DL_KINDS = {0: "i", 1: "u", 2: "f", 4: "bf", 5: "c", 6: "b"}


def _from_interface(d: dict, location: str) -> ArrayInfo | None:
    data = d.get("data")
    if not isinstance(data, tuple) or not data:
        return None
    typestr = str(d["typestr"])
    itemsize = int(typestr[2:]) if typestr[2:].isdigit() else 0
    shape = tuple(int(x) for x in d["shape"])
    strides = d.get("strides")
    return ArrayInfo(location, int(data[0] or 0), shape,
                     None if strides is None else tuple(int(s) for s in strides), itemsize, typestr[1:])


def _from_dlpack(obj: Any) -> ArrayInfo | None:
    dev_type, dev_id = obj.__dlpack_device__()
    capsule = obj.__dlpack__()
    if not _capsule_valid(capsule, b"dltensor"):
        return None
    # The managed tensor starts with its DLTensor; the capsule stays unconsumed, so its own
    # destructor frees it when it is dropped.
    t = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    bits = t.dtype.bits * max(1, t.dtype.lanes)
    itemsize = max(1, bits // 8)
    strides = None if not t.strides else tuple(int(t.strides[i]) * itemsize for i in range(t.ndim))
    location = "host" if int(dev_type) in _DL_HOST else f"gpu:{int(dev_id)}"
    kind = _DL_KINDS.get(int(t.dtype.code), "?")
    kind = "bf16" if kind == "bf" else f"{kind}{itemsize}"
    return ArrayInfo(location, int(t.data or 0) + int(t.byte_offset), shape, strides, itemsize, kind)


def _cuda_location(obj: Any) -> str:
    """The GPU of a __cuda_array_interface__ object (its __dlpack_device__ or .device where it says)."""
    try:
        dev_type, dev_id = obj.__dlpack_device__()
        if int(dev_type) not in _DL_HOST:
            return f"gpu:{int(dev_id)}"
    except Exception:  # noqa: BLE001 - optional: the first GPU otherwise
        pass
    dev = getattr(obj, "device", None)
    index = getattr(dev, "index", None)
    if index is None:
        index = getattr(dev, "id", None)
    return f"gpu:{int(index)}" if isinstance(index, int) else "gpu:0"


def _is_numpy_scalar(obj: Any) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(obj, np.generic)


def describe(obj: Any) -> ArrayInfo | None:
    """The array behind ``obj``, or None when it speaks none of the array protocols."""
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)) or _is_numpy_scalar(obj):
        return None  # passed by value: no memory traffic (bytes objects are immutable values too)
    try:
        cai = getattr(obj, "__cuda_array_interface__", None)
    except Exception:  # noqa: BLE001 - e.g. a PyTorch tensor that requires grad
        cai = None
    if isinstance(cai, dict):
        info = _from_interface(cai, _cuda_location(obj))
        if info is not None:
            return info
    try:
        ai = getattr(obj, "__array_interface__", None)
    except Exception:  # noqa: BLE001
        ai = None
    if isinstance(ai, dict):
        info = _from_interface(ai, "host")
        if info is not None:
            return info
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        try:
            info = _from_dlpack(obj)
        except Exception:  # noqa: BLE001 - e.g. a tensor that requires grad: try the next protocol
            info = None
        if info is not None:
            return info
    if callable(getattr(obj, "data_ptr", None)) and callable(getattr(obj, "element_size", None)):
        # A PyTorch tensor none of the protocols would give (one that requires grad).
        try:
            itemsize = int(obj.element_size())
            strides = tuple(int(s) * itemsize for s in obj.stride())
            dev = getattr(obj, "device", None)
            location = "host" if getattr(dev, "type", "cpu") == "cpu" else f"gpu:{getattr(dev, 'index', 0) or 0}"
            kind = str(getattr(obj, "dtype", "?")).replace("torch.", "")
            return ArrayInfo(location, int(obj.data_ptr()), tuple(int(d) for d in obj.shape), strides,
                             itemsize, {"float16": "f2", "bfloat16": "bf16", "float32": "f4"}.get(kind, kind))
        except Exception:  # noqa: BLE001
            pass
    try:
        view = memoryview(obj)
    except TypeError:
        return None
    import numpy as np  # a dependency of bwprof (pandas needs it)

    flat = np.asarray(view)
    return _from_interface(flat.__array_interface__, "host")


def flatten(obj: Any, depth: int = 0) -> Iterable[Any]:
    """``obj`` and what lists, tuples and dict values hold, a few levels deep (arrays stay whole)."""
    if depth > 4:
        return
    if isinstance(obj, (list, tuple)):
        for x in obj:
            yield from flatten(x, depth + 1)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from flatten(x, depth + 1)
    else:
        yield obj


def arrays_in(obj: Any) -> list[ArrayInfo]:
    """Every array in ``obj`` (an array, or lists / tuples / dicts of them)."""
    return [a for a in (describe(x) for x in flatten(obj)) if a is not None]


def span(a: ArrayInfo) -> tuple[int, int]:
    """The lowest and one past the highest byte an array touches."""
    if a.nbytes == 0:
        return a.address, a.address
    if a.strides is None:
        return a.address, a.address + a.nbytes
    lo = hi = a.address
    for d, s in zip(a.shape, a.strides):
        if s >= 0:
            hi += (d - 1) * s
        else:
            lo += (d - 1) * s
    return lo, hi + a.itemsize


# Arrays whose runs (contiguous pieces) together number at most this are counted exactly by listing
# every run; beyond it each array is counted from its layout alone (see unique_bytes).
RUN_BUDGET = 1 << 22


@dataclass(frozen=True)
class Layout:
    """The bytes an array's elements occupy, in canonical form: runs of ``run`` contiguous bytes
    at ``base + sum(i_k * stride_k)`` for ``0 <= i_k < count_k`` over ``dims`` (count, stride),
    strides positive and ascending. Broadcast dimensions (stride 0) and dimensions of one element
    add no bytes and are gone; negative strides are turned round; a dimension whose copies of the
    inner block touch or overlap it is folded into the run. Two views of the same bytes (an array
    and its transpose, a broadcast of it) have the same layout."""

    location: str
    base: int
    run: int
    dims: tuple  # ((count, stride), ...), strides > run, ascending

    @property
    def runs(self) -> int:
        n = 1
        for d, _ in self.dims:
            n *= d
        return n

    @property
    def end(self) -> int:
        """One past the last byte."""
        return self.base + self.run + sum((d - 1) * s for d, s in self.dims)

    @property
    def disjoint(self) -> bool:
        """True when no two runs overlap (each dimension's stride clears the block inside it)."""
        extent = self.run
        for d, s in self.dims:
            if s < extent:
                return False
            extent += (d - 1) * s
        return True

    def starts(self):
        """Every run's first byte (a NumPy array; ``runs`` of them)."""
        import numpy as np

        out = np.array([self.base], dtype=np.int64)
        for d, s in self.dims:
            out = (out[None, :] + (np.arange(d, dtype=np.int64) * s)[:, None]).ravel()
        return out


def layout(a: ArrayInfo) -> Layout | None:
    """``a``'s :class:`Layout`, or None when it holds no bytes."""
    if a.nbytes == 0 or a.itemsize <= 0:
        return None
    if a.strides is None:
        return Layout(a.location, a.address, a.nbytes, ())
    base = a.address
    dims = []
    for d, s in zip(a.shape, a.strides):
        if d == 1 or s == 0:
            continue  # one element, or the same element again (a broadcast): no new bytes
        if s < 0:
            base += (d - 1) * s
            s = -s
        dims.append((d, s))
    dims.sort(key=lambda ds: ds[1])
    run = a.itemsize
    rest = []
    for d, s in dims:
        if not rest and s <= run:
            run += (d - 1) * s  # copies of a contiguous block at most its length apart: still contiguous
        else:
            rest.append((d, s))
    return Layout(a.location, base, run, tuple(rest))


def _own_bytes(x: Layout) -> int:
    """Bytes of one layout, each once: exact for runs that do not overlap and for any layout of at
    most RUN_BUDGET runs; beyond that an overlapping lattice counts at most its span."""
    if x.disjoint:
        return x.run * x.runs
    if x.runs <= RUN_BUDGET:
        return _union_of_runs([(x.starts(), x.run)])
    return min(x.run * x.runs, x.end - x.base)


def _union_of_runs(groups) -> int:
    """Bytes in the union of runs: ``groups`` of (starts, length)."""
    import numpy as np

    starts = np.concatenate([st for st, _ in groups])
    ends = np.concatenate([st + n for st, n in groups])
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)  # the furthest byte covered by any run so far
    # Each run adds what lies beyond everything before it.
    before = np.concatenate([[starts[0]], reach[:-1]])
    return int(np.sum(np.maximum(ends - np.maximum(starts, before), 0)))


def _inside(x: Layout, intervals: list[tuple[int, int]]) -> bool:
    return any(lo <= x.base and x.end <= hi for lo, hi in intervals)


def unique_bytes(arrays: Iterable[ArrayInfo]) -> int:
    """Bytes the arrays' elements occupy, each byte once: the union of every element's bytes,
    over all the arrays, per location. A broadcast view (stride 0) counts the memory it spans, not
    its logical size; an array and a view of it count their overlap once; a strided view counts
    its elements' bytes.

    Exact whenever the views' runs (contiguous pieces) together number at most RUN_BUDGET, and
    for any views whose spans do not overlap or that lie inside a contiguous array. Views with more
    runs than that which overlap one another are counted each on its own (exactly) and together
    at most the bytes their spans cover."""
    per_location: dict[str, dict[Layout, None]] = {}
    for a in arrays:
        x = layout(a)
        if x is not None:
            per_location.setdefault(x.location, {})[x] = None  # the same bytes twice count once
    return sum(_bytes_at(list(xs)) for xs in per_location.values())


def _bytes_at(xs: list[Layout]) -> int:
    # A view inside a contiguous one adds nothing; of the rest, groups whose spans overlap are
    # counted together, the others alone.
    solid = [(x.base, x.end) for x in xs if not x.dims]
    rest = [x for x in xs if x.dims and not _inside(x, solid)]
    pieces = sorted([(lo, hi, None) for lo, hi in solid] + [(x.base, x.end, x) for x in rest],
                    key=lambda p: p[0])
    total = 0
    group: list = []
    reach = None
    for lo, hi, x in pieces:
        if group and lo >= reach:
            total += _group_bytes(group)
            group = []
        group.append((lo, hi, x))
        reach = hi if reach is None or len(group) == 1 else max(reach, hi)
    if group:
        total += _group_bytes(group)
    return total


def _group_bytes(group: list) -> int:
    if len(group) == 1:
        lo, hi, x = group[0]
        return hi - lo if x is None else _own_bytes(x)
    runs = sum(1 if x is None else x.runs for _, _, x in group)
    if runs <= RUN_BUDGET:
        import numpy as np

        groups = [(np.array([lo], dtype=np.int64), hi - lo) if x is None else (x.starts(), x.run)
                  for lo, hi, x in group]
        # Runs of different lengths: one group each (lengths broadcast per group).
        return _union_of_runs([(st, np.full(len(st), n, dtype=np.int64)) for st, n in groups])
    lo = min(p[0] for p in group)
    hi = max(p[1] for p in group)
    own = sum(hi_ - lo_ if x is None else _own_bytes(x) for lo_, hi_, x in group)
    return min(own, hi - lo)
