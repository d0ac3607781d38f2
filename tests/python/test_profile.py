"""bwprof.profile and bwprof.sweep on the CPU: the user's own callables get bwprof's row, their bytes
inferred from the arrays they take and return, and every bad input a clear error."""
import array
import sys
import types

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bwprof
from bwprof import arrays as bwarrays, streams

FAST = dict(device="cpu", warmup=0, repeats=2, min_time_s=0.0, cache="hot")


def _gbs(rec):
    return (rec["bytes_read"] + rec["bytes_written"]) / (rec["time_median_us"] * 1e-6) / 1e9


def test_numpy_callable_gets_the_row_of_bwprofs_kernels():
    rng = np.random.default_rng(1)
    a, b = rng.random(100_003, dtype=np.float32), rng.random(100_003, dtype=np.float32)
    m = bwprof.profile(np.add, a, b, repeats=5, min_time_s=0.0)
    rec = m.to_dict()
    assert list(rec) == bwprof.columns()
    assert rec["kernel"] == "add" and rec["variant"] == "user" and rec["family"] == "user"
    assert rec["device"] == "cpu" and rec["cache"] == "cold" and rec["repeats"] == 5
    assert rec["bytes_source"] == "inferred"
    assert rec["bytes_read"] == 2 * a.nbytes and rec["bytes_written"] == a.nbytes
    assert rec["dtype"] == "fp32"
    assert rec["shape"] == "in=100003+100003,out=100003"
    assert rec["bandwidth_gbs"] > 0
    assert rec["bandwidth_gbs"] == pytest.approx(_gbs(rec), rel=1e-12)
    # No FLOPs given: unknown, so bandwidth judges the row only where it proves it memory-bound.
    assert rec["flops_source"] == "unknown" and np.isnan(rec["flops"]) and np.isnan(rec["gflops"])
    assert rec["bound"] in ("memory", "unknown") and rec["bottleneck"]
    if rec["bound"] == "unknown":
        assert rec["bottleneck"].startswith("FLOPs unknown: at ") and "pass flops=" in rec["bottleneck"]
    else:
        assert rec["bandwidth_pct_peak"] >= 50.0  # proven, or above the peak (the text says which)
        assert rec["above_peak"] or "whatever its FLOPs" in rec["bottleneck"]


def test_flops_zero_declares_pure_data_movement_and_a_count_is_declared():
    x = np.random.default_rng(2).random(100_003)
    zero = bwprof.profile(np.negative, x, flops=0, **FAST).to_dict()
    assert zero["flops_source"] == "declared" and zero["flops"] == 0.0 and zero["gflops"] == 0.0
    assert zero["bound"] in ("memory", "latency") and not zero["bottleneck"].startswith("FLOPs unknown")
    some = bwprof.profile(np.negative, x, flops=x.size, **FAST).to_dict()
    assert some["flops_source"] == "declared" and some["flops"] == x.size
    assert some["intensity_flop_per_byte"] == pytest.approx(x.size / (2 * x.nbytes), rel=1e-12)


def test_cold_cpu_runs_evict_only_live_memory():
    # The first call's return value (64 MiB: mmapped by malloc, unmapped when freed) is gone when
    # the timed runs flush the caches: evicting it would touch unmapped memory.
    a = np.ones(1 << 24, np.float32)
    rec = bwprof.profile(np.negative, a, device="cpu", warmup=0, repeats=2, min_time_s=0.0).to_dict()
    assert rec["bytes_written"] == a.nbytes and rec["cache"] == "cold"


def test_declared_bytes_flops_and_name():
    x = np.ones(4096, np.float16)
    m = bwprof.profile(lambda v: v * 2, x, bytes_read=1000, bytes_written=500, flops=4096, **FAST)
    rec = m.to_dict()
    assert rec["kernel"] == "lambda" and rec["bytes_source"] == "declared"
    assert (rec["bytes_read"], rec["bytes_written"], rec["flops"]) == (1000, 500, 4096)
    assert rec["dtype"] == "fp16"  # every float input is 16-bit
    assert rec["gflops"] == pytest.approx(4096 / (rec["time_median_us"] * 1e-6) / 1e9, rel=1e-12)
    assert rec["bandwidth_gbs"] == pytest.approx(_gbs(rec), rel=1e-12)
    named = bwprof.profile(lambda v: v * 2, x, name="double_it", bytes_written=0, dtype="fp32", **FAST)
    assert named.to_dict()["kernel"] == "double_it"
    assert named.to_dict()["bytes_source"] == "mixed" and named.to_dict()["dtype"] == "fp32"


def test_duplicates_overlaps_and_in_place():
    a = np.arange(1000, dtype=np.float64)
    twice = bwprof.profile(np.add, a, a, **FAST).to_dict()
    assert twice["bytes_read"] == a.nbytes  # the same buffer twice: read once
    overlap = bwprof.profile(np.add, a[:600], a[400:], **FAST).to_dict()
    assert overlap["bytes_read"] == a.nbytes  # two views covering the buffer once
    strided = bwprof.profile(np.negative, a[::2], **FAST).to_dict()
    assert strided["bytes_read"] == 500 * 8 and strided["bytes_written"] == 500 * 8

    def in_place(x):
        x += 1.0
        return x

    # An argument handed back is taken as the destination: written only, never read-and-written
    # by guess (b.copy_(a) counted b as read too and showed a copy above the memory's peak).
    inp = bwprof.profile(in_place, a, **FAST).to_dict()
    assert inp["bytes_read"] == 0 and inp["bytes_written"] == a.nbytes
    declared = bwprof.profile(in_place, a, inputs=[a], **FAST).to_dict()
    assert declared["bytes_read"] == a.nbytes and declared["bytes_written"] == a.nbytes
    src, dst = np.ones(700), np.zeros(700)
    copy = bwprof.profile(lambda x, y: np.add(x, 0.0, out=y), src, dst, **FAST).to_dict()
    assert (copy["bytes_read"], copy["bytes_written"]) == (src.nbytes, dst.nbytes)
    sets = [(np.ones(700), np.zeros(700)) for _ in range(3)]
    rot = bwprof.profile(lambda x, y: np.add(x, 0.0, out=y), rotate=sets, **FAST).to_dict()
    assert (rot["bytes_read"], rot["bytes_written"]) == (src.nbytes, dst.nbytes)


def test_inputs_and_outputs_given():
    a, b, out = np.ones(300), np.ones(300), np.empty(300)
    m = bwprof.profile(lambda: np.add(a, b, out=out), inputs=[a, b], outputs=out, **FAST).to_dict()
    assert (m["bytes_read"], m["bytes_written"]) == (2 * a.nbytes, out.nbytes)
    m = bwprof.profile(lambda: None, inputs={"x": a}, outputs=[out, out], **FAST).to_dict()
    assert (m["bytes_read"], m["bytes_written"]) == (a.nbytes, out.nbytes)


_DTYPES = st.sampled_from([np.float16, np.float32, np.float64, np.int8, np.int32, np.uint16])
_SHAPES = st.lists(st.integers(0, 9), min_size=0, max_size=3).map(tuple)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(st.tuples(_SHAPES, _DTYPES), min_size=1, max_size=4),
       dups=st.lists(st.integers(0, 3), max_size=3), out_spec=st.tuples(_SHAPES, _DTYPES))
def test_inferred_bytes_equal_declared_for_numpy_arrays(specs, dups, out_spec):
    rng = np.random.default_rng(0)
    arrs = [np.asarray(rng.random(s) * 10).astype(d) for s, d in specs]
    args = arrs + [arrs[i % len(arrs)] for i in dups]  # the same array again: counted once
    out = np.zeros(out_spec[0], out_spec[1])
    declared_read = float(sum(x.nbytes for x in arrs))
    inferred = bwprof.profile(lambda *xs: out, *args, **FAST).to_dict()
    declared = bwprof.profile(lambda *xs: out, *args, bytes_read=declared_read, bytes_written=out.nbytes,
                              **FAST).to_dict()
    if declared_read == 0 and out.nbytes == 0:
        return
    assert inferred["bytes_read"] == declared["bytes_read"] == declared_read
    assert inferred["bytes_written"] == declared["bytes_written"] == out.nbytes
    assert inferred["bytes_source"] == "inferred" and declared["bytes_source"] == "declared"


class _DLPackOnly:
    """An array seen only through DLPack."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int64])
def test_every_protocol_sees_the_same_array(dtype):
    a = np.arange(24, dtype=dtype).reshape(4, 6)
    via_ai = bwarrays.describe(a)
    via_dl = bwarrays.describe(_DLPackOnly(a))
    assert via_ai.location == via_dl.location == "host"
    assert via_ai.address == via_dl.address == a.ctypes.data
    assert via_ai.nbytes == via_dl.nbytes == a.nbytes
    assert via_ai.shape == via_dl.shape == (4, 6)
    t = a[:, ::2]
    assert bwarrays.describe(_DLPackOnly(t)).nbytes == t.nbytes == bwarrays.describe(t).nbytes
    assert not bwarrays.describe(t).contiguous
    assert bwarrays.describe(np.asarray(2.5)).nbytes == 8  # a 0-d array lives in memory
    buf = bytearray(100)
    assert bwarrays.describe(buf).nbytes == 100
    assert bwarrays.describe(memoryview(buf)[10:30]).nbytes == 20
    assert bwarrays.describe(array.array("d", [1.0] * 7)).nbytes == 56
    for not_an_array in (None, 3, 2.5, "text", b"bytes", np.float32(1.5), object()):
        assert bwarrays.describe(not_an_array) is None


def test_unique_bytes_merges_overlaps_only_on_one_device():
    a = np.zeros(100, np.uint8)
    info = bwarrays.describe(a)
    same_address_elsewhere = bwarrays.ArrayInfo("gpu:0", info.address, (100,), None, 1, "u1")
    assert bwarrays.unique_bytes([info, info]) == 100
    assert bwarrays.unique_bytes([info, same_address_elsewhere]) == 200
    assert bwarrays.unique_bytes([bwarrays.describe(a[:10]), bwarrays.describe(a[50:60])]) == 20


def test_rotate_uses_each_argument_set_in_turn():
    sets = [(np.full(512, i, np.float32),) for i in range(3)]
    seen = []
    m = bwprof.profile(lambda x: seen.append(int(x[0])) or x.copy(), rotate=sets, device="cpu", warmup=1,
                       repeats=6, min_time_s=0.0, max_repeats=6).to_dict()
    assert m["bytes_read"] == 512 * 4  # one set per call
    assert m["bytes_written"] == 512 * 4
    assert set(seen) == {0, 1, 2}
    assert seen[1:] == [i % 3 for i in range(len(seen) - 1)]  # after the first call, in turn


def test_failures_are_clear_errors():
    a = np.ones(64, np.float32)
    with pytest.raises(TypeError, match="fn: expected a callable"):
        bwprof.profile(42)
    for bad in (-1, float("nan"), float("inf"), "12", True, [3]):
        with pytest.raises(ValueError, match="bytes_read"):
            bwprof.profile(np.negative, a, bytes_read=bad, **FAST)
    with pytest.raises(ValueError, match="bytes_written"):
        bwprof.profile(np.negative, a, bytes_written=-5, **FAST)
    with pytest.raises(ValueError, match="flops"):
        bwprof.profile(np.negative, a, flops=-1, **FAST)
    # Arrays named explicitly that hold none are a mistake (a closure without them is timed: below).
    with pytest.raises(ValueError, match="bytes_read: nothing to infer it from \\(inputs= holds no array\\)"):
        bwprof.profile(lambda: a.copy(), inputs=[3], **FAST)
    with pytest.raises(ValueError, match="bytes_written: nothing to infer it from \\(outputs= holds no array\\)"):
        bwprof.profile(lambda x: None, a, outputs=(), **FAST)
    with pytest.raises(ValueError, match="dtype"):
        bwprof.profile(np.negative, a, dtype="int4", **FAST)
    with pytest.raises(ValueError, match="device"):
        bwprof.profile(np.negative, a, device="gpu:9", warmup=0, repeats=1)
    with pytest.raises(ValueError, match="cache"):
        bwprof.profile(np.negative, a, device="cpu", cache="warm")
    with pytest.raises(ValueError, match="repeats"):
        bwprof.profile(np.negative, a, device="cpu", repeats=0)
    with pytest.raises(ValueError, match="rotate"):
        bwprof.profile(np.negative, a, rotate=[(a,)], device="cpu")
    with pytest.raises(ValueError, match="rotate"):
        bwprof.profile(np.negative, rotate=[], device="cpu")
    with pytest.raises(TypeError, match=r"rotate\[1\]"):
        bwprof.profile(np.negative, rotate=[(a,), a], device="cpu")
    with pytest.raises(TypeError, match="stream"):
        bwprof.profile(np.negative, a, stream="s0", **FAST)


def test_a_callable_that_raises_propagates_its_own_exception_with_a_note_and_bwprof_stays_usable():
    # New contract (issue 45): the user's exception goes on with its own type (``except MyError``
    # catches it), bwprof's context a PEP 678 note; it used to become a BwprofError.
    a = np.ones(64, np.float32)
    calls = []

    def flaky(x):
        calls.append(1)
        if len(calls) == 3:  # inside the timed loop, not the first call
            raise ZeroDivisionError("bad luck")
        return x + 1

    with pytest.raises(ZeroDivisionError, match="bad luck") as info:
        bwprof.profile(flaky, a, device="cpu", warmup=1, repeats=5, min_time_s=0.0)
    assert any("bwprof.profile" in n and "'flaky'" in n and "a timed call" in n for n in info.value.__notes__)

    err = KeyError("first call")

    def at_once(x):
        raise err

    with pytest.raises(KeyError) as info:
        bwprof.profile(at_once, a, **FAST)
    assert info.value is err and any("its first call" in n for n in err.__notes__)
    again = bwprof.profile(np.negative, a, **FAST).to_dict()
    assert again["bandwidth_gbs"] == pytest.approx(_gbs(again), rel=1e-12)


def test_stream_handles():
    class Proto:
        def __cuda_stream__(self):
            return (0, 0xABC)

    assert streams.handle_of(7) == 7
    assert streams.handle_of(np.uint64(9)) == 9
    assert streams.handle_of(Proto()) == 0xABC
    assert streams.handle_of(types.SimpleNamespace(cuda_stream=11)) == 11
    assert streams.handle_of(types.SimpleNamespace(ptr=12)) == 12
    with pytest.raises(TypeError, match="stream"):
        streams.handle_of(True)
    with pytest.raises(TypeError, match="stream"):
        streams.handle_of(object())
    with pytest.raises(ValueError, match="stream"):
        streams.handle_of(-1)

    class BadProto:
        def __cuda_stream__(self):
            return 5

    with pytest.raises(TypeError, match="__cuda_stream__"):
        streams.handle_of(BadProto())


def test_current_stream_is_the_one_a_library_set(monkeypatch):
    def torch_on(handle):
        cuda = types.SimpleNamespace(is_initialized=lambda: True,
                                     current_stream=lambda i: types.SimpleNamespace(cuda_stream=handle + i))
        return types.SimpleNamespace(cuda=cuda)

    def cupy_on(handle):
        return types.SimpleNamespace(cuda=types.SimpleNamespace(get_current_stream=lambda: types.SimpleNamespace(ptr=handle)))

    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    assert streams.current_handle(0) == (0, "default")
    monkeypatch.setitem(sys.modules, "cupy", cupy_on(77))
    assert streams.current_handle(0) == (77, "cupy")
    # PyTorch on its default stream, CuPy inside `with cupy.cuda.Stream()`: CuPy's is where work goes
    # (the GPU notebook timed an empty stream before this rule).
    monkeypatch.setitem(sys.modules, "torch", torch_on(0))
    assert streams.current_handle(0) == (77, "cupy")
    monkeypatch.setitem(sys.modules, "cupy", cupy_on(0))
    assert streams.current_handle(1) == (1, "torch")
    assert streams.current_handle(0) == (0, "torch")
    monkeypatch.setitem(sys.modules, "torch", torch_on(1000))
    assert streams.current_handle(1) == (1001, "torch")
    monkeypatch.setitem(sys.modules, "cupy", cupy_on(77))
    with pytest.raises(ValueError, match="both set and differ; pass stream="):
        streams.current_handle(1)
    idle = types.SimpleNamespace(is_initialized=lambda: False, current_stream=None)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=idle))
    assert streams.current_handle(0) == (77, "cupy")  # a PyTorch that never started CUDA launches nothing


def test_sweep_over_a_grid_returns_one_frame_that_the_tools_take(tmp_path):
    def factory(n, dtype):
        x = np.ones(n, dtype)
        return (np.negative, x)

    df = bwprof.sweep(factory, {"n": [1000, 3000], "dtype": [np.float32, np.float16]}, **FAST)
    assert len(df) == 4
    assert list(df.columns) == ["n", "grid_dtype"] + bwprof.columns()
    assert list(df["n"]) == [1000, 1000, 3000, 3000]
    assert set(df["kernel"]) == {"factory"}
    assert df["shape"].iloc[0] == "n=1000,dtype=<class 'numpy.float32'>"
    assert list(df["bytes_read"]) == [4000, 2000, 12000, 6000]
    assert list(df["bandwidth_gbs"]) == pytest.approx([_gbs(r) for _, r in df.iterrows()], rel=1e-12)

    listed = bwprof.sweep(lambda n: {"fn": np.negative, "args": (np.ones(n),), "name": "neg"},
                          [{"n": 10}, {"n": 20}], **FAST)
    assert list(listed["kernel"]) == ["neg", "neg"] and list(listed["bytes_read"]) == [80, 160]

    folder = bwprof.save_run(df, tmp_path / "run")
    back = bwprof.load_run(folder)
    assert list(back["kernel"]) == list(df["kernel"])
    from bwprof import baseline, plots

    assert (baseline.compare(back, df)["verdict"].notna()).all()
    with_flops = bwprof.sweep(lambda n: (np.negative, np.ones(n)), {"n": [1000, 2000]}, flops=1000, **FAST)
    fig = plots.roofline(pd.concat([with_flops, df]), path=tmp_path / "roofline.png")
    assert fig is not None and (tmp_path / "roofline.png").exists()


def test_sweep_bad_grids():
    with pytest.raises(TypeError, match="fn_factory"):
        bwprof.sweep(5, {"n": [1]})
    with pytest.raises(ValueError, match="grid"):
        bwprof.sweep(lambda n: np.negative, {})
    with pytest.raises(TypeError, match="grid"):
        bwprof.sweep(lambda n: np.negative, {"n": 5})
    with pytest.raises(ValueError, match="grid"):
        bwprof.sweep(lambda n: np.negative, {"n": []})
    with pytest.raises(TypeError, match="grid"):
        bwprof.sweep(lambda n: np.negative, [1, 2])
    with pytest.raises(TypeError, match="factory returned"):
        bwprof.sweep(lambda n: 5, {"n": [1]}, **FAST)


def test_a_closure_without_arrays_is_timed_with_its_bytes_and_bound_unknown():
    a = np.random.default_rng(4).random(300_007)
    with pytest.warns(bwprof.usercode.BytesUnknownWarning) as caught:
        rec = bwprof.profile(lambda: np.sort(a), **FAST).to_dict()
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "no array in its arguments of lambda" in text and "pass bytes_read= (or inputs=[...])" in text
    assert rec["time_median_us"] > 0 and rec["repeats"] == 2 and rec["time_min_us"] <= rec["time_median_us"]
    assert np.isnan(rec["bytes_read"]) and rec["bytes_written"] == a.nbytes  # the return value is seen
    assert rec["bytes_source"] == "unknown" and np.isnan(rec["bandwidth_gbs"]) and np.isnan(rec["bandwidth_pct_peak"])
    assert rec["bound"] == "unknown" and rec["grade"] == "n/a"
    assert rec["bottleneck"].startswith("bytes and FLOPs unknown: only the time")
    assert "pass bytes_read= and bytes_written= (and flops=)" in rec["bottleneck"]


def test_a_call_that_returns_nothing_and_sees_nothing_names_both_sides():
    a = np.random.default_rng(5).random(10_007)
    out = np.empty_like(a)

    def neg():
        np.negative(a, out=out)

    with pytest.warns(bwprof.usercode.BytesUnknownWarning, match="its arguments and its return value of neg") as caught:
        rec = bwprof.profile(neg, flops=a.size, **FAST).to_dict()
    assert len(caught) == 1 and "bytes_written= (0 if it writes nothing" in str(caught[0].message)
    assert np.isnan(rec["bytes_read"]) and np.isnan(rec["bytes_written"]) and rec["bytes_source"] == "unknown"
    assert rec["flops_source"] == "declared" and rec["gflops"] == pytest.approx(
        a.size / (rec["time_median_us"] * 1e-6) / 1e9, rel=1e-12)
    # FLOPs known, bytes not: the compute roof judges it only where it proves it compute-bound.
    assert rec["bound"] in ("unknown", "compute")
    if rec["bound"] == "unknown":
        assert rec["bottleneck"].startswith("bytes unknown: ")
    # Declared bytes need no warning.
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rec = bwprof.profile(lambda: np.negative(a, out=out), bytes_read=a.nbytes, bytes_written=a.nbytes,
                             **FAST).to_dict()
    assert rec["bytes_source"] == "declared" and rec["bandwidth_gbs"] > 0
