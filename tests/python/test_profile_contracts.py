"""The user's code surface (issue 45): the callable's own exceptions go on as themselves with
bwprof's note, sweep keeps the rows measured before a failure, the callable's keywords can be
passed whatever their names, work that did not run is told, and whole calls are bounded."""
from __future__ import annotations

import asyncio
import builtins
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bwprof
from bwprof import sweeps, usercode

FAST = dict(device="cpu", warmup=0, repeats=1, min_time_s=0.0, max_time_s=0.05)
HYP = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class MyError(Exception):
    pass


class WithArgs(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)
        self.a, self.b = a, b


class Slotted(ValueError):
    __slots__ = ()


# Exception types a user's code raises: their own classes and the builtins.
EXCEPTIONS = [MyError, WithArgs, Slotted, KeyError, ValueError, TypeError, RuntimeError, ZeroDivisionError,
              IndexError, AttributeError, OSError, FileNotFoundError, MemoryError, NotImplementedError,
              AssertionError, LookupError, ArithmeticError, OverflowError, UnicodeError, StopIteration]


def _make(kind, text):
    return kind(text, 1) if kind is WithArgs else kind(text)


@HYP
@given(st.sampled_from(EXCEPTIONS), st.integers(0, 3), st.text(max_size=20))
def test_profile_lets_the_users_exception_go_on_as_itself(kind, when, text):
    err = _make(kind, text)
    calls = []

    def work(x):
        calls.append(1)
        if len(calls) > when:  # the first call (when 0) or one inside the core's timed loop
            raise err
        return x + 1

    with pytest.raises(kind) as info:
        bwprof.profile(work, np.ones(16, np.float32), device="cpu", warmup=1, repeats=3, min_time_s=0.0)
    assert info.value is err and type(info.value) is kind
    assert any(n.startswith("bwprof.profile: raised by 'work'") for n in err.__notes__)


@HYP
@given(st.sampled_from(EXCEPTIONS), st.integers(0, 3))
def test_sweep_lets_the_users_exception_go_on_and_keeps_the_rows_before_it(kind, bad):
    a = np.ones(64, np.float32)

    def factory(n):
        if n == bad:
            raise _make(kind, f"point {n}")
        return np.negative, a

    with pytest.raises(kind) as info:
        bwprof.sweep(factory, {"n": [0, 1, 2, 3]}, **FAST)
    partial = getattr(info.value, sweeps.PARTIAL)
    assert list(partial["n"]) == list(range(bad))
    assert list(partial.columns) == ["n"] + bwprof.columns()
    assert any(f"point {bad + 1} of 4 (n={bad})" in n and f"{bad} row(s)" in n for n in info.value.__notes__)


def test_sweep_keeps_rows_when_the_callable_or_bwprof_fails_at_a_later_point():
    a = np.ones(64, np.float32)

    def boom(x):
        raise MyError("third point")

    pick = {1: np.negative, 2: np.negative, 3: boom, 4: np.negative}
    with pytest.raises(MyError) as info:
        bwprof.sweep(lambda k: (pick[k], a), {"k": [1, 2, 3, 4]}, **FAST)
    assert list(info.value.bwprof_partial["k"]) == [1, 2]
    assert (info.value.bwprof_partial["bandwidth_gbs"] > 0).all()
    # bwprof's own refusal at a point keeps them too.
    with pytest.raises(ValueError, match="repeats") as info:
        bwprof.sweep(lambda k: {"fn": np.negative, "args": (a,), "repeats": 1 if k < 2 else 0},
                     {"k": [0, 1, 2]}, device="cpu", warmup=0, min_time_s=0.0)
    assert len(info.value.bwprof_partial) == 2


def test_a_workload_op_and_a_step_let_the_users_exception_go_on():
    for when in (1, 4, 40):  # the op's first call, its timed calls, the step's timing
        calls = []

        def op():
            calls.append(1)
            if len(calls) >= when:
                raise MyError("op failed")

        with pytest.raises(MyError) as info:
            bwprof.model(ops=[bwprof.Op("mine", fn=op, bytes_read=8, bytes_written=8)], device="cpu", quick=True)
        assert any("bwprof.model" in n and "'mine'" in n for n in info.value.__notes__), when

    def step():
        with bwprof.region("r", bytes_read=8, bytes_written=8):
            raise MyError("step failed")

    with pytest.raises(MyError) as info:
        bwprof.profile_step(step, device="cpu")
    assert any("bwprof.profile_step" in n for n in info.value.__notes__)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(EXCEPTIONS), st.sampled_from([1, 3, 30]))
def test_a_workload_op_keeps_any_exception_type(kind, when):
    calls = []

    def op():
        calls.append(1)
        if len(calls) >= when:
            raise _make(kind, "op")

    with pytest.raises(kind) as info:
        bwprof.model(ops=[bwprof.Op("mine", fn=op, bytes_read=8, bytes_written=8)], device="cpu", quick=True)
    assert type(info.value) is kind and any("'mine'" in n for n in info.value.__notes__)


@HYP
@given(st.sampled_from(EXCEPTIONS), st.integers(0, 4))
def test_a_step_keeps_any_exception_type(kind, when):
    err = _make(kind, "step")
    calls = []

    def step():
        calls.append(1)
        with bwprof.region("r", bytes_read=8, bytes_written=8):
            if len(calls) > when:
                raise err

    with pytest.raises(kind) as info:
        bwprof.profile_step(step, device="cpu", warmup=2, repeats=3)
    assert info.value is err and any("bwprof.profile_step" in n for n in err.__notes__)


def test_keyboard_interrupt_is_not_dressed():
    def stop(x):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bwprof.profile(stop, np.ones(4), **FAST)


# ---- the callable's keywords ---------------------------------------------------------------------

def test_kwargs_passes_the_callables_keywords_of_bwprofs_names():
    seen = {}

    def op(x, device="cuda", name="none", repeats=0):
        seen.update(device=device, name=name, repeats=repeats)
        return x + 1

    a = np.ones(32, np.float32)
    m = bwprof.profile(op, a, kwargs={"device": "mine", "name": "also mine", "repeats": 7}, **FAST)
    assert seen == {"device": "mine", "name": "also mine", "repeats": 7}
    assert m.to_dict()["kernel"] == "op" and m.to_dict()["device"] == "cpu"
    with pytest.warns(usercode.ArgumentNameWarning, match="kwargs=") as w:
        bwprof.profile(op, a, name="row", **FAST)
    assert "'device'" in str(w[0].message) and "'name'" in str(w[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bwprof.profile(op, a, name="row", kwargs={}, **FAST)  # said: nothing of bwprof's goes to op
    with pytest.raises(ValueError, match="both"):
        bwprof.profile(op, a, kwargs={"scale": 2}, scale=3, **FAST)
    with pytest.raises(TypeError, match="kwargs"):
        bwprof.profile(op, a, kwargs=[("device", 1)], **FAST)


def test_a_keyword_the_callable_does_not_take_says_which_are_bwprofs():
    with pytest.raises(TypeError) as info:
        bwprof.profile(lambda x: x + 1, np.ones(4), flop=3, **FAST)
    assert any("bwprof's are" in n and "bytes_read" in n and "kwargs=" in n for n in info.value.__notes__)
    assert "kwargs" in usercode.PROFILE_ARGUMENTS and "device" in usercode.PROFILE_ARGUMENTS


@HYP
@given(st.sampled_from(sorted(set(usercode.PROFILE_ARGUMENTS) - {"kwargs"})), st.integers())
def test_any_of_bwprofs_names_reaches_the_callable_through_kwargs(key, value):
    got = {}

    def op(x, **kw):
        got.update(kw)
        return x + 1

    bwprof.profile(op, np.ones(8, np.float32), kwargs={key: value}, **FAST)
    assert got == {key: value}


# ---- work that did not run -----------------------------------------------------------------------

def test_a_generator_or_coroutine_is_told_not_timed_as_the_work():
    a = np.ones(16, np.float32)

    def gen(x):
        yield x + 1

    async def coro(x):
        return x + 1

    async def agen(x):
        yield x

    for fn, kind in ((gen, "generator"), (coro, "coroutine"), (agen, "asynchronous generator")):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            bwprof.profile(fn, a, bytes_written=0, **FAST)
        told = [x for x in w if issubclass(x.category, usercode.NotRunWarning)]
        assert len(told) == 1 and f"returned a {kind}" in str(told[0].message)
        assert not [x for x in w if issubclass(x.category, RuntimeWarning) and "never awaited" in str(x.message)]
    # Running the work is the way: no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", usercode.NotRunWarning)
        bwprof.profile(lambda x: asyncio.run(coro(x)), a, **FAST)


def test_quick_keeps_an_explicit_warmup():
    ops = [bwprof.Op("c", fn=lambda: None, bytes_read=8, bytes_written=8)]
    for warmup in (0, 5):
        r = bwprof.model(ops=ops, device="cpu", quick=True, warmup=warmup, op_timing="single", repeats=1)
        assert list(r.rows["warmup"]) == [warmup]
    assert list(bwprof.model(ops=ops, device="cpu", quick=True, op_timing="single").rows["warmup"]) == [1]


# ---- bounds on whole calls -----------------------------------------------------------------------

def test_a_long_measure_is_refused_before_it_runs_with_how_to_allow_it():
    # A CPU GEMM whose launch takes long: the first launch estimates the call.
    with pytest.raises(ValueError, match=r"max_total_s: .*math\.inf") as info:
        bwprof.measure("gemm", device="cpu", M=512, N=512, K=512, max_total_s=1e-4, verify=False)
    assert "a launch took" in str(info.value)
    m = bwprof.measure("gemm", device="cpu", M=64, N=64, K=64, max_total_s=math.inf, repeats=2, warmup=0,
                       min_time_s=0.0)
    assert m.to_dict()["repeats"] >= 2
    for bad in (0, -1, float("nan"), "10", True):
        with pytest.raises(ValueError, match="max_total_s"):
            bwprof.measure("stream_copy", device="cpu", n=1024, max_total_s=bad)


def test_a_long_profile_is_refused_from_its_first_call():
    import time

    def slow(x):
        time.sleep(0.02)
        return x + 1

    with pytest.raises(ValueError, match="max_total_s") as info:
        bwprof.profile(slow, np.ones(8), device="cpu", warmup=2, repeats=10, max_total_s=0.1)
    assert "11 more are to come" in str(info.value)  # after the core's first warm-up call
    calls = []

    def compiles_once(x):  # a first call that pays a one-time cost does not count
        calls.append(1)
        time.sleep(0.3 if len(calls) == 1 else 0.0)
        return x + 1

    bwprof.profile(compiles_once, np.ones(8), device="cpu", warmup=2, repeats=3, min_time_s=0, max_total_s=0.25)
    bwprof.profile(slow, np.ones(8), device="cpu", warmup=0, repeats=1, min_time_s=0, max_total_s=5)


def test_a_sweep_too_long_for_its_bound_stops_early_keeping_its_rows():
    import time

    def factory(n):
        return (lambda x: (time.sleep(0.005), x + 1)[1]), np.ones(8)

    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"sweep of 1000000 points .*max_total_s") as info:
        bwprof.sweep(factory, {"n": range(10**6)}, max_total_s=5.0, **FAST)
    assert time.perf_counter() - started < 30
    assert 1 <= len(info.value.bwprof_partial) <= 3
    df = bwprof.sweep(factory, {"n": range(3)}, max_total_s=math.inf, **FAST)
    assert len(df) == 3


def test_a_grid_of_a_billion_points_is_never_held_and_is_refused_from_its_first_points():
    import time

    grid = {"a": range(1000), "b": range(1000), "c": range(1000)}
    with pytest.raises(ValueError, match="sweep of 1000000000000 points"):
        bwprof.sweep(lambda n: (np.negative, np.ones(8)), {"n": range(10**12)}, max_total_s=60.0, **FAST)
    started = time.perf_counter()
    with pytest.raises(ValueError, match="sweep of 1000000000 points") as info:
        bwprof.sweep(lambda a, b, c: (np.negative, np.ones(8)), grid, max_total_s=60.0, **FAST)
    assert time.perf_counter() - started < 20
    assert list(info.value.bwprof_partial.columns[:3]) == ["a", "b", "c"]
    assert any("point 3 of 1000000000 (a=0, b=0, c=2)" in n for n in info.value.__notes__)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([8.0, 1e6, 1e12, 1e15]))
def test_a_measurements_repr_says_when_it_is_above_a_peak(declared):
    x = np.ones(64)
    m = bwprof.profile(lambda: x.sum(), bytes_read=declared, bytes_written=0, **FAST)
    assert ("ABOVE PEAK" in repr(m)) == bool(m.to_dict()["above_peak"])
    if declared >= 1e12:
        assert m.to_dict()["above_peak"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(), min_size=1, max_size=4), min_size=1, max_size=4))
def test_a_grids_points_are_every_combination_in_order(values):
    import itertools

    grid = {f"k{i}": v for i, v in enumerate(values)}
    points = sweeps._grid_points(grid)
    want = [dict(zip(grid, combo)) for combo in itertools.product(*values)]
    assert len(points) == len(want) and list(points) == want


def test_the_docs_name_every_keyword_that_is_bwprofs():
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "profiling.md").read_text()
    para = doc[doc.index("- **Keywords**"):doc.index("- **Bytes**")]
    listed = re.findall(r"`(\w+)`", para.split("(", 1)[1].split(")", 1)[0])
    assert listed == list(usercode.PROFILE_ARGUMENTS)
