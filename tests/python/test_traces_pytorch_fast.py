"""The fast PyTorch trace reader gives what the plain per-event one gave (pytorch_trace_oracle.py)
on any trace: the same frame to the dtype, the same error, the same warning. Hypothesis writes
traces with every kind of event the reader meets or must survive (CPU-side events, flows, events
that are not objects, categories in other cases or of other types, missing or odd fields, grids
that are not integer triples, numbers beyond 64 bits); the benchmark's own generator writes a
realistic one. The garbage collector pause around the parse leaves the collector as it found it.
"""

import gc
import importlib.util
import json
import math
import threading
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bwprof.traces as traces
from bwprof.traces import source
from bwprof.traces.formats.pytorch import read_pytorch_trace

from pytorch_trace_oracle import read_pytorch_trace_plain
from traces_common import DATA

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


def outcome(read, path, **options):
    """(frame or None, (error type, message) or None, warning messages) of one read."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            df, err = read(path, **options), None
        except Exception as exc:            # noqa: BLE001 - compared, not hidden
            df, err = None, (type(exc).__name__, str(exc))
    return df, err, [f"{w.category.__name__}: {w.message}" for w in caught]


def assert_same(path):
    for options in ({}, {"drop_invalid": True}):
        fast = outcome(read_pytorch_trace, path, **options)
        plain = outcome(read_pytorch_trace_plain, path, **options)
        assert fast[1] == plain[1], (options, fast[1], plain[1])
        assert fast[2] == plain[2], (options, fast[2], plain[2])
        if plain[0] is not None:
            pd.testing.assert_frame_equal(fast[0], plain[0], check_exact=True)


# --- what an event may hold -----------------------------------------------------------------

_big = st.integers(2 ** 63, 2 ** 70) | st.integers(-2 ** 70, -2 ** 63 - 1)
_int = st.integers(0, 2 ** 31) | st.integers(-5, 5) | st.sampled_from([2 ** 63 - 1, -2 ** 63])
_number = (_int | st.floats(-1e6, 1e12, allow_nan=False) | st.sampled_from([0.5, 1.5, 2.5, 1e30]))
_odd = (st.none() | st.booleans() | st.text(max_size=4) | _big
        | st.floats(allow_nan=False, allow_infinity=True) | st.just([]) | st.just({"x": 1}))
_name = st.text(max_size=12) | st.sampled_from([
    "void at::native::vectorized_elementwise_kernel<4, at::native::{lambda(float)#1}>(int)",
    'kernel "quoted" \\ back', "Memcpy HtoD (Pinned -> Device)", "}, {\"cat\": \"kernel\"",
    "_ZN2at6native18elementwise_kernelILi128ELi4EEEviT1_", "ncclDevKernel_AllReduce"])

# A trace's integer fields come in one flavour per trace, so that the whole-column paths (every
# value an integer, or an integer triple) are taken as often as the value-by-value ones.
_INTS = {
    "ints": _int,
    "ints or none": _int | st.none(),
    "numbers": _int | st.floats(-1e3, 1e3, allow_nan=False),
    "anything": _int | _odd,
}
_TRIPLES = {
    "triples": lambda v: st.lists(v, min_size=3, max_size=3),
    "triples or not": lambda v: st.lists(v, min_size=3, max_size=3) | st.none() | st.lists(v, max_size=4),
    "anything": lambda v: st.lists(v, min_size=3, max_size=3) | st.lists(v, max_size=4) | _odd,
}


@st.composite
def args_st(draw, ints, triples):
    args = {}
    for key, values in (("grid", triples), ("block", triples), ("registers per thread", ints),
                        ("shared memory", ints), ("correlation", ints),
                        ("device", _int | st.text(max_size=3) | _odd),
                        ("stream", _int | st.text(max_size=3) | _odd)):
        if draw(st.integers(0, 6)):         # most events have most fields
            args[key] = draw(values)
    return args


_GPU_CAT = st.sampled_from(["kernel", "kernel", "gpu_memcpy", "gpu_memset", "Kernel", "GPU_MEMCPY"])
_OTHER_CAT = st.sampled_from(["cpu_op", "cuda_runtime", "ac2g", "python_function", "", "kernels"]) \
    | st.none() | st.integers(0, 3)
_PH = st.sampled_from(["i", "s", "f", "M", "x", "B"]) | st.none() | st.integers(0, 2)


@st.composite
def event(draw, ints, triples, wild):
    """Half the events are GPU events ("X" or no phase, a GPU category), the rest CPU-side
    ones, flows, instants, and (in wild traces) things that are not events at all."""
    role = draw(st.integers(0, 15 if wild else 14))
    if role == 15:
        return draw(st.none() | st.integers() | st.text(max_size=3) | st.just([1, 2]))
    ev = {}
    if role < 8:                            # a GPU event
        ev["cat"] = draw(_GPU_CAT)
        if draw(st.integers(0, 4)):
            ev["ph"] = "X"
    else:                                   # anything else, some of them GPU-like
        if draw(st.integers(0, 6)):
            ev["cat"] = draw(_OTHER_CAT | _GPU_CAT)
        if draw(st.integers(0, 6)):
            ev["ph"] = draw(_PH | st.just("X"))
    for key, values, p in (("name", _name | _odd, 12), ("pid", _int | st.text(max_size=3), 4),
                           ("tid", _int | st.text(max_size=3), 4)):
        if draw(st.integers(0, p)):
            ev[key] = draw(values)
    # ts: nearly always a number, now and then missing, text or beyond 64 bits (errors and
    # invalid rows, which both readers must name alike); dur likewise, NaN and infinity too.
    kind = draw(st.integers(0, 30)) if wild else 30
    if kind:
        ev["ts"] = draw(_number) if kind > 3 else draw(_odd | _big)
    kind = draw(st.integers(0, 30)) if wild else 30
    if kind:
        ev["dur"] = draw(_number) if kind > 3 else draw(_odd | st.just(-3.0) | st.just(math.nan))
    if draw(st.integers(0, 6)):
        ev["args"] = draw(args_st(ints, triples)) if draw(st.integers(0, 8)) or not wild else draw(_odd)
    return ev


@st.composite
def trace_doc(draw):
    ints = _INTS[draw(st.sampled_from(sorted(_INTS)))]
    triples = _TRIPLES[draw(st.sampled_from(sorted(_TRIPLES)))](draw(st.sampled_from([_int, ints])))
    events = draw(st.lists(event(ints, triples, wild=draw(st.booleans())), max_size=25))
    shape = draw(st.integers(0, 5))
    if shape == 0:
        return events                       # a bare list of events
    doc = {"schemaVersion": 1, "traceEvents": events}
    if shape == 1:
        doc["baseTimeNanoseconds"] = draw(st.integers(0, 2 ** 62))
    return doc


@SETTINGS
@given(doc=trace_doc(), indent=st.sampled_from([None, 1, "\t"]))
def test_any_trace_reads_as_the_plain_reader_read_it(tmp_path, doc, indent):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(doc, indent=indent))     # NaN as json writes it
    assert_same(path)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_benchmarks_trace_reads_as_the_plain_reader_read_it(tmp_path, seed):
    spec = importlib.util.spec_from_file_location("trace_read_speed", ROOT / "benchmarks" / "trace_read_speed.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    path = tmp_path / "trace.json"
    gpu_ns = bench.write_pytorch_trace(path, 4000, seed=seed)
    assert_same(path)
    df = read_pytorch_trace(path)
    assert len(df) > 500 and df["duration_ns"].sum() == pytest.approx(gpu_ns, rel=1e-12)


def test_the_sample_reads_as_the_plain_reader_read_it():
    assert_same(DATA / "pytorch_trace.json")


def test_a_category_that_is_not_text_is_no_gpu_event(tmp_path):
    # The plain reader stopped with "unhashable type: 'list'" on such a category.
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": ["kernel"], "name": "a", "ts": 1, "dur": 2},
        {"ph": "X", "cat": {"kind": "kernel"}, "name": "b", "ts": 1, "dur": 2},
        {"ph": "X", "cat": "kernel", "name": "c", "ts": 3, "dur": 4}, 7]}))
    df = traces.read(path)
    assert df["kernel_name"].tolist() == ["c"] and df["duration_ns"].tolist() == [4000.0]


# --- the collector pause ----------------------------------------------------------------------

@pytest.mark.parametrize("enabled", [True, False])
def test_reading_leaves_the_collector_as_it_found_it(tmp_path, enabled):
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [1, 2')
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        assert len(traces.read(DATA / "pytorch_trace.json")) == 4
        assert gc.isenabled() == enabled
        with pytest.raises(traces.TraceFormatError, match="malformed JSON"):
            traces.read(bad)
        assert gc.isenabled() == enabled
        with source.paused_gc():
            assert not gc.isenabled()
            with source.paused_gc():
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled() == enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_the_collector_comes_back_when_the_last_of_several_threads_is_done():
    assert gc.isenabled()
    inside, release = threading.Barrier(3), threading.Event()

    def reader():
        with source.paused_gc():
            inside.wait()
            release.wait()

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    inside.wait()
    assert not gc.isenabled()
    release.set()
    for t in threads:
        t.join()
    assert gc.isenabled()
