"""Bytes inferred from arrays (bwprof.arrays): the union of the bytes every element occupies, over
all the arrays, each byte once (issue 45). A broadcast view counts the memory it spans, an array
and an overlapping view of it count the overlap once, a strided view its elements. The reference is
brute force: every element's bytes put in a set."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from numpy.lib.stride_tricks import as_strided, sliding_window_view

from bwprof import arrays as A
from bwprof.arrays import ArrayInfo, arrays_in, unique_bytes


def brute(infos) -> int:
    seen: dict = {}
    for a in infos:
        held = seen.setdefault(a.location, set())
        strides = a.strides
        if strides is None:  # C-contiguous
            strides, step = [], a.itemsize
            for d in reversed(a.shape):
                strides.insert(0, step)
                step *= d
        for idx in np.ndindex(*a.shape):
            at = a.address + sum(i * s for i, s in zip(idx, strides))
            held.update(range(at, at + a.itemsize))
    return sum(len(s) for s in seen.values())


def test_examples_from_the_issue():
    b = np.zeros(4096, np.float32)  # 16 KB
    wide = np.broadcast_to(b, (256, 4096))  # 16 KB seen as 4 MB
    assert unique_bytes(arrays_in([wide])) == b.nbytes
    assert unique_bytes(arrays_in([b, b[::3]])) == b.nbytes  # a view inside the array: once
    assert unique_bytes(arrays_in([b[::2], b[1::2]])) == b.nbytes  # interleaved halves: together the array
    assert unique_bytes(arrays_in([b[::2]])) == b.nbytes // 2  # its elements, not its span
    m = b.reshape(64, 64)
    assert unique_bytes(arrays_in([m, m.T])) == b.nbytes  # the transpose is the same bytes
    assert unique_bytes(arrays_in([sliding_window_view(b, 8)])) == b.nbytes  # windows overlap
    assert unique_bytes(arrays_in([b[:100], b[50:150]])) == 150 * 4
    assert unique_bytes(arrays_in([b[::-1]])) == b.nbytes


def test_zero_size_and_scalars_hold_nothing():
    assert unique_bytes(arrays_in([np.zeros(0), np.zeros((3, 0)), 5, 2.0])) == 0


def test_other_locations_never_merge():
    a = ArrayInfo("host", 1000, (10,), None, 4, "f4")
    g = ArrayInfo("gpu:0", 1000, (10,), None, 4, "f4")
    assert unique_bytes([a, g]) == 80


def test_large_strided_views_are_counted_from_their_layout():
    # Too many runs to list: a view inside a contiguous array adds nothing; disjoint ones add theirs.
    n = A.RUN_BUDGET * 4
    whole = ArrayInfo("host", 1 << 32, (n,), None, 4, "f4")
    every_other = ArrayInfo("host", 1 << 32, (n // 2,), (8,), 4, "f4")
    assert unique_bytes([every_other]) == n // 2 * 4
    assert unique_bytes([whole, every_other]) == n * 4
    elsewhere = ArrayInfo("host", 1 << 40, (n // 2,), (8,), 4, "f4")
    assert unique_bytes([every_other, elsewhere]) == n * 4


# A buffer of up to 64 elements and views of it: random offsets, shapes, strides (in elements,
# negative and zero included), dtypes of 1 to 8 bytes.
@st.composite
def views(draw):
    itemsize = draw(st.sampled_from([1, 2, 4, 8]))
    n = draw(st.integers(1, 64))
    base = 1 << 20
    out = []
    for _ in range(draw(st.integers(1, 4))):
        ndim = draw(st.integers(0, 3))
        shape = tuple(draw(st.integers(0, 5)) for _ in range(ndim))
        strides = tuple(draw(st.integers(-6, 6)) * draw(st.sampled_from([itemsize, 1])) for _ in range(ndim))
        lo = sum(min(0, (d - 1) * s) for d, s in zip(shape, strides) if d > 0)
        hi = sum(max(0, (d - 1) * s) for d, s in zip(shape, strides) if d > 0)
        room = n * itemsize - itemsize - (hi - lo)
        if room < 0:
            continue
        offset = draw(st.integers(0, room)) - lo
        contiguous = draw(st.booleans()) and ndim > 0
        out.append(ArrayInfo("host", base + offset, shape, None if contiguous else strides, itemsize, "u1"))
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(views())
def test_bytes_are_the_union_of_every_elements_bytes(infos):
    assert unique_bytes(infos) == brute(infos)


@settings(max_examples=200, deadline=None)
@given(views(), st.integers(1, 3))
def test_counted_from_layouts_alone_it_is_exact_where_it_can_be_and_bounded_elsewhere(infos, budget):
    # With almost no budget for listing runs, the layout arithmetic decides: exact for views whose
    # own runs do not overlap and whose spans do not overlap one another; never fewer bytes than
    # the elements hold, never more than their logical size.
    exact = brute(infos)
    old = A.RUN_BUDGET
    A.RUN_BUDGET = budget
    try:
        counted = unique_bytes(infos)
    finally:
        A.RUN_BUDGET = old
    assert exact <= counted <= sum(a.nbytes for a in infos)
    xs = sorted({x for x in map(A.layout, infos) if x is not None}, key=lambda x: x.base)
    apart = all(p.end <= q.base for p, q in zip(xs, xs[1:]))
    if apart and all(x.disjoint for x in xs):
        assert counted == exact


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 40), st.integers(1, 6), st.integers(-4, 4), st.integers(0, 10))
def test_numpy_views_of_one_buffer(n, k, step, start):
    b = np.arange(n + 16, dtype=np.float32)
    step = step or 1
    picks = [b, b[start::step] if step > 0 else b[::step], sliding_window_view(b, min(k, b.size)),
             np.broadcast_to(b[start:start + k], (3, len(b[start:start + k]))),
             as_strided(b, (max(1, (b.size - 1) // k), 2), (4 * k, 4))]
    for subset in ([picks[0], picks[1]], picks[1:3], picks[2:], picks):
        infos = arrays_in(subset)
        assert unique_bytes(infos) == brute(infos)


class _Cuda:
    """A device array speaking __cuda_array_interface__ (as PyTorch and CuPy do)."""

    def __init__(self, ptr, shape, strides, typestr="<f4"):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape, "strides": strides,
                                         "typestr": typestr, "version": 3}


def test_device_arrays_count_what_their_strides_span():
    ptr = 1 << 36
    expanded = _Cuda(ptr, (1024, 256), (0, 4))  # a 1 KB row broadcast to 1 MB
    assert unique_bytes(arrays_in([expanded])) == 1024
    full = _Cuda(ptr, (256,), None)
    column = _Cuda(ptr, (64,), (16,))
    assert unique_bytes(arrays_in([full, column, expanded])) == 1024
    assert unique_bytes(arrays_in([_Cuda(ptr, (64,), (16,)), _Cuda(ptr + 4, (64,), (16,))])) == 512


def test_torch_views_where_torch_is_installed():
    torch = pytest.importorskip("torch")
    x = torch.arange(4096, dtype=torch.float32)
    assert unique_bytes(arrays_in([x.expand(8, 4096)])) == x.numel() * 4
    assert unique_bytes(arrays_in([x, x[::2], x.view(64, 64).t()])) == x.numel() * 4
