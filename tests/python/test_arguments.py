"""Every public function's arguments, tried with anything (issue #12): the result is a value or a
ValueError/TypeError that names the argument, never another exception, never pybind11's
"incompatible function arguments" dump.

Each property replaces one argument of a valid, tiny call with a value drawn from: integers of
the whole Python range, numpy integers of every width, floats (NaN, infinities), bools, None,
strings (also with NUL and unpaired surrogates), bytes, lists, complex numbers, decimals,
fractions and plain objects.
"""
import math
import os
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bwprof
from bwprof import arguments, baseline, roofline
from bwprof.suite import Config

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

_NUMPY_INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
numpy_ints = st.sampled_from(_NUMPY_INTS).flatmap(
    lambda t: st.integers(int(np.iinfo(t).min), int(np.iinfo(t).max)).map(t))
anything = st.one_of(
    st.integers(),
    st.integers(min_value=-2**80, max_value=2**80),
    st.sampled_from([0, 1, -1, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 2**64, 10**6, 10**6 + 1, 10**5, 10**12]),
    numpy_ints,
    st.floats(),
    st.floats(min_value=-1e7, max_value=1e7).map(np.float64),
    st.booleans(), st.just(np.bool_(True)), st.none(),
    st.text(max_size=12), st.sampled_from(["", "\x00", "\ud800", "cpu", "fp32", "cold", "12", "1e3"]),
    st.binary(max_size=4), st.lists(st.integers(), max_size=2), st.complex_numbers(),
    st.decimals(allow_nan=True), st.fractions(), st.just(Fraction(10**400)), st.just(object()),
)


def _named(exc: BaseException, names) -> bool:
    msg = str(exc)
    return any(n in msg for n in ([names] if isinstance(names, str) else names))


def _check(call, value, names, allowed=(ValueError, TypeError)):
    """``call(value)`` returns, or raises one of ``allowed`` naming one of ``names``."""
    try:
        return call(value)
    except MemoryError as e:  # a shape that is valid but does not fit (docs/errors.md)
        assert "needs" in str(e) and "available" in str(e), e
        return None
    except allowed as e:
        assert "incompatible function arguments" not in str(e), e
        assert _named(e, names), f"{type(e).__name__}: {e} does not name {names}"
        return None


# ---- measure -------------------------------------------------------------------------------------

TINY = dict(dtype="fp32", device="cpu", variant=None, cache="cold", warmup=0, repeats=1, min_time_s=0.0,
            max_repeats=1, max_time_s=0.0, verify=False)


@pytest.mark.parametrize("arg", ["dtype", "device", "variant", "cache", "warmup", "repeats", "min_time_s",
                                 "max_repeats", "max_time_s", "verify"])
@SETTINGS
@given(value=anything)
def test_measure_any_value_of_an_argument(arg, value):
    kwargs = dict(TINY)
    kwargs[arg] = value
    if arg == "repeats":  # the pair must stay ordered for a valid count to be a valid call
        kwargs["max_repeats"] = 10**6
    m = _check(lambda v: bwprof.measure("stream_copy", n=16, **kwargs), value, arg)
    if m is not None:
        assert m.to_dict()["kernel"] == "stream_copy"
        if arg in ("repeats", "warmup"):
            assert m.to_dict()[arg] == int(value)


@SETTINGS
@given(value=anything)
def test_measure_any_kernel_name(value):
    _check(lambda v: bwprof.measure(v, n=16, **TINY), value, ["kernel", "n:"])


@pytest.fixture
def small_machine(monkeypatch):
    """The core's limits, lowered so that any size may be drawn: at most 256 MB of memory counts
    as available and one launch may take 0.05 s (at the assumed CPU rates). Sizes beyond them are
    refused before anything is allocated (MemoryError, ValueError); the others run, and stay small."""
    bwprof.peaks("cpu")  # measured once, before the limits bite (the peaks' own arrays are 100 MB)
    monkeypatch.setenv("BWPROF_MEMORY_LIMIT", str(256 << 20))
    monkeypatch.setenv("BWPROF_MAX_LAUNCH_S", "0.05")


@SETTINGS
@given(value=anything)
def test_measure_any_shape_value(value, small_machine):
    m = _check(lambda v: bwprof.measure("stream_copy", n=v, **TINY), value, "n")
    if m is not None:  # an integral value of any type, or a string the core parses
        assert m.params["n"] == str(int(value) if not isinstance(value, str) else int(value.strip()))


@SETTINGS
@given(name=st.text(max_size=8), value=st.integers(1, 64))
def test_measure_any_shape_parameter_name(name, value):
    _check(lambda v: bwprof.measure("stream_copy", **{"n": 16, name: v}, **TINY) if name != "n" else None,
           value, [name or "unknown parameter", repr(name), "parameter name"])


def test_numpy_integers_work_as_counts_and_shapes():
    m = bwprof.measure("stream_copy", n=np.int64(1024), dtype="fp32", device="cpu", repeats=np.int32(2),
                       warmup=np.uint8(0), max_repeats=np.int64(3), min_time_s=np.float64(0), verify=np.bool_(True))
    d = m.to_dict()
    assert d["shape"] == "n=1024" and d["repeats"] >= 2 and d["warmup"] == 0 and d["verified"]


@pytest.mark.parametrize("kwargs,needle", [
    (dict(repeats=10**12), "repeats: must be between 1 and 1000000"),
    (dict(repeats=0), "repeats"),
    (dict(warmup=10**5 + 1), "warmup: must be between 0 and 100000"),
    (dict(max_repeats=2**31), "max_repeats"),
    (dict(max_time_s=86401.0), "max_time_s"),
    (dict(min_time_s=float("nan")), "min_time_s"),
    (dict(repeats=5, max_repeats=4), "max_repeats: must be at least repeats"),
    (dict(repeats=True), "repeats"),
    (dict(n=2**70), "n:"),
    (dict(n=1.5), "n:"),
    (dict(n=float("inf")), "n:"),
])
def test_out_of_range_values_name_the_argument_and_the_range(kwargs, needle):
    call = dict(TINY, max_repeats=10)
    call.update(kwargs)
    shape = {"n": call.pop("n", 16)}
    with pytest.raises(ValueError, match=needle):
        bwprof.measure("stream_copy", **call, **shape)


# ---- devices, peaks, occupancy -------------------------------------------------------------------

@SETTINGS
@given(value=anything)
def test_device_any_id(value):
    d = _check(bwprof.device, value, "device")
    if d is not None:
        assert d.id in [x.id for x in bwprof.devices()]


@pytest.mark.parametrize("arg", ["device", "dtype", "refresh"])
@settings(max_examples=25, deadline=None)
@given(value=anything)
def test_peaks_any_value_of_an_argument(arg, value):
    kwargs = dict(device="cpu", dtype="fp32", refresh=False)
    kwargs[arg] = value
    p = _check(lambda v: bwprof.peaks(**kwargs), value, arg)
    if p is not None:
        assert p["bandwidth_gbs"] > 0


@pytest.mark.parametrize("arg", ["arch", "threads_per_block", "registers_per_thread", "shared_mem_per_block",
                                 "wave64", "cu_mode"])
@SETTINGS
@given(value=anything)
def test_occupancy_any_value_of_an_argument(arg, value):
    kwargs = dict(arch="gfx1100", threads_per_block=256, registers_per_thread=32, shared_mem_per_block=0,
                  wave64=False, cu_mode=False)
    kwargs[arg] = value
    o = _check(lambda v: bwprof.occupancy(**kwargs), value, [arg, "wave64", "cu_mode"])
    if o is not None:
        assert 0 <= o.occupancy_pct <= 100


# ---- the suite ---------------------------------------------------------------------------------

ONE = [Config("stream_copy", "tiny", {"n": 64}, {"n": 64}, dtypes=("fp32",))]


@pytest.mark.parametrize("arg", ["device", "kernels", "dtypes", "quick", "cache", "progress", "on_row", "configs"])
@settings(max_examples=25, deadline=None)
@given(value=anything)
def test_run_suite_any_value_of_an_argument(arg, value):
    kwargs = dict(device="cpu", kernels=None, dtypes=["fp32"], quick=True, cache="cold", progress=False,
                  on_row=None, configs=ONE)
    kwargs[arg] = value
    df = _check(lambda v: bwprof.run_suite(**kwargs), value, arg)
    if df is not None:
        assert list(df.columns) == bwprof.columns() + ["label"]


def test_run_suite_checks_on_row_before_measuring():
    with pytest.raises(ValueError, match="on_row"):
        bwprof.run_suite(device="cpu", configs=ONE, dtypes=["fp32"], quick=True, progress=False, on_row=42)


# ---- run folders ---------------------------------------------------------------------------------

@pytest.mark.parametrize("arg", ["df", "out_dir", "device"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=anything)
def test_save_run_any_value_of_an_argument(arg, value, tmp_path_factory):
    base = tmp_path_factory.mktemp("runs")
    df = pd.DataFrame({"kernel": ["k"], "dtype": ["fp32"], "time_median_us": [1.0]})
    kwargs = dict(df=df, out_dir=base, device={"id": "cpu"})
    if arg == "out_dir" and isinstance(value, str) and value:
        value = str(base / value.replace("\x00", "")) if "\x00" not in value else value
    kwargs[arg] = value
    cwd = os.getcwd()
    os.chdir(base)  # out_dir=None writes ./results
    try:
        p = _check(lambda v: bwprof.save_run(**kwargs), value, [arg, "run_id"])
        if p is not None:
            assert len(bwprof.load_run(p)) == 1
    finally:
        os.chdir(cwd)


@SETTINGS
@given(value=anything)
def test_load_run_any_path(value):
    _check(bwprof.load_run, value, ["path", "no bwprof run"], (ValueError, TypeError, FileNotFoundError))


# ---- plots -------------------------------------------------------------------------------------

@pytest.mark.parametrize("arg", ["df", "out_dir"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=anything)
def test_plot_all_any_value_of_an_argument(arg, value, tmp_path_factory):
    from bwprof import plots
    base = tmp_path_factory.mktemp("plots")
    # A table with nothing to draw: every chart is skipped, so a valid call is quick.
    kwargs = dict(df=pd.DataFrame({"kernel": ["k"], "dtype": ["int8"], "time_median_us": [1.0]}), out_dir=base)
    if arg == "out_dir" and isinstance(value, str) and value and "\x00" not in value:
        value = str(base / value)
    kwargs[arg] = value
    paths = _check(lambda v: plots.plot_all(**kwargs), value, [arg, "plot_all"])
    assert paths in (None, [])


# ---- baselines ---------------------------------------------------------------------------------

def _rows(times):
    return pd.DataFrame({"device": "cpu", "backend": "cpu", "kernel": [f"k{i}" for i in range(len(times))],
                         "variant": "cpu", "dtype": "fp32", "shape": "n=1", "time_median_us": times,
                         "time_min_us": [t * 0.99 for t in times], "time_max_us": [t * 1.02 for t in times],
                         "time_std_us": [t * 0.01 for t in times], "repeats": 20})


@pytest.mark.parametrize("arg", ["df", "baseline", "force", "min_effect_pct", "noise_floor_pct", "k",
                                 "noise_floor_us", "unstable_floor_pct"])
@SETTINGS
@given(value=anything)
def test_compare_any_value_of_an_argument(arg, value):
    kwargs = dict(df=_rows([10.0, 20.0]), baseline=_rows([10.0, 20.0]))
    kwargs[arg] = value
    names = {"df": ["df", "new run", "path"], "baseline": ["baseline", "path"]}.get(arg, arg)
    out = _check(lambda v: baseline.compare(**kwargs), value, names,
                 (ValueError, TypeError, FileNotFoundError))
    if out is not None:
        assert set(out["verdict"]) <= set(baseline.VERDICTS)


@SETTINGS
@given(value=anything)
def test_baseline_save_and_load_any_path(value):
    _check(lambda v: baseline.load(v), value, ["path", "no such file", "baseline"],
           (ValueError, TypeError, FileNotFoundError))
    # save into a path that cannot be a file (a folder, or under a file) or anything that is not a path
    if not isinstance(value, str) or value in ("", ".") or "\x00" in value or "\ud800" in value:
        _check(lambda v: baseline.save(_rows([1.0]), v), value, ["path", "baseline"])


# ---- roofline ----------------------------------------------------------------------------------

@pytest.mark.parametrize("arg", ["df", "ceilings", "prefer", "matrix_families", "info"])
@SETTINGS
@given(value=anything)
def test_classify_any_value_of_an_argument(arg, value):
    df = pd.DataFrame({"kernel": ["k"], "dtype": ["fp32"], "time_median_us": [1.0], "bytes_read": [1e6],
                       "bytes_written": [0.0], "flops": [1e6], "peak_bandwidth_gbs": [100.0],
                       "peak_gflops": [1000.0]})
    kwargs = dict(df=df, ceilings=None, prefer="measured", matrix_families=None, info={})
    kwargs[arg] = value
    out = _check(lambda v: roofline.classify(**kwargs), value, arg)
    if out is not None:
        assert "bound" in out


@pytest.mark.parametrize("arg", ["source", "dtypes", "info", "matrix"])
@SETTINGS
@given(value=anything)
def test_ceilings_any_value_of_an_argument(arg, value):
    kwargs = dict(source={"bandwidth_gbs": 100.0, "gflops": 1000.0}, dtypes=None, info=None, matrix=True)
    kwargs[arg] = value
    out = _check(lambda v: roofline.ceilings(**kwargs), value, [arg, "device"] if arg == "source" else arg)
    if out is not None:
        assert list(out.columns) == roofline.CEILING_COLUMNS


# ---- the helpers themselves ------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(value=anything, lo=st.integers(0, 5), hi=st.integers(5, 2**40))
def test_count_takes_exactly_the_integers_in_range(value, lo, hi):
    try:
        got = arguments.count("x", value, lo, hi)
    except ValueError as e:
        assert str(e).startswith("x: ")
        integral = not isinstance(value, (bool, np.bool_)) and hasattr(value, "__index__")
        assert not integral or not lo <= int(value) <= hi
    else:
        assert isinstance(got, int) and not isinstance(got, bool) and lo <= got <= hi and got == value


@settings(max_examples=200, deadline=None)
@given(value=anything)
def test_seconds_are_finite_and_within_a_day(value):
    try:
        got = arguments.seconds("t", value)
    except ValueError as e:
        assert str(e).startswith("t: ")
    else:
        assert isinstance(got, float) and math.isfinite(got) and 0.0 <= got <= 86400.0
        assert not isinstance(value, (bool, str, Decimal, complex))
