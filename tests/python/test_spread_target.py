"""Noise-based stopping (issue 45): ``target_rel_spread=`` of measure, profile, sweep and run_suite,
its columns, the one warning when the budget ran out first, and its argument checks."""
from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bwprof
from bwprof import spread

# A tiny kernel on a small budget: a CPU kernel of microseconds spreads tens of percent here.
QUICK = dict(device="cpu", warmup=0, repeats=5, min_time_s=0.0, max_time_s=0.02, n=4096)
FAST = dict(device="cpu", warmup=0, repeats=5, min_time_s=0.0, max_time_s=0.02)
HYP = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
UNREACHABLE = 1e-9  # no timing is that steady


def spread_warnings(caught):
    return [w for w in caught if issubclass(w.category, bwprof.SpreadTargetWarning)]


def test_the_columns_sit_beside_the_spread_and_the_throttle_count():
    cols = bwprof.columns()
    assert cols.index("target_rel_spread") == cols.index("unstable") + 1
    assert cols.index("spread_target_met") == cols.index("target_rel_spread") + 1
    assert cols.index("throttled_retaken") == cols.index("throttled_samples") + 1
    assert bwprof.SCHEMA_VERSION == 4


def test_without_a_target_the_row_says_none_and_nothing_warns():
    with warnings.catch_warnings():
        warnings.simplefilter("error", bwprof.SpreadTargetWarning)
        d = bwprof.measure("stream_copy", **QUICK).to_dict()
    assert math.isnan(d["target_rel_spread"]) and d["spread_target_met"] is True
    assert d["throttled_retaken"] == 0 and d["throttled_samples"] == 0  # the CPU never throttles
    assert d["repeats"] == 5  # stopped at the minimum, as before


def test_a_target_out_of_reach_runs_to_the_budget_and_warns_once_at_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = bwprof.measure("stream_copy", target_rel_spread=UNREACHABLE, **QUICK)
    got = spread_warnings(caught)
    assert len(got) == 1 and got[0].filename == __file__
    text = str(got[0].message)
    assert "measure: stream_copy fp32 n=4096" in text and "target_rel_spread=1e-09" in text
    assert "spread_target_met False" in text and "time_cv" in text
    d = m.to_dict()
    assert d["target_rel_spread"] == UNREACHABLE and d["spread_target_met"] is False
    assert m.spread_target_met is False and m.target_rel_spread == UNREACHABLE
    assert d["repeats"] > 5  # the target added repeats until the 0.02 s ran out


def test_max_repeats_bounds_what_a_target_adds():
    with pytest.warns(bwprof.SpreadTargetWarning):
        d = bwprof.measure("stream_copy", target_rel_spread=UNREACHABLE, max_repeats=12,
                           **dict(QUICK, max_time_s=60)).to_dict()
    assert d["repeats"] == 12 and d["spread_target_met"] is False


def test_an_easy_target_is_met_and_the_row_spread_is_under_it():
    # 100 % of spread: a CPU copy of 16 KB meets it almost always; met means time_cv is under it.
    d = bwprof.measure("stream_copy", target_rel_spread=1.0, **dict(QUICK, max_time_s=0.5)).to_dict()
    assert d["target_rel_spread"] == 1.0
    assert not d["spread_target_met"] or (d["time_cv"] <= 1.0 and d["repeats"] >= 5)


@HYP
@given(st.floats(min_value=0.0, max_value=1.0, exclude_min=True))
def test_any_fraction_in_range_is_a_target_the_row_records(t):
    assert spread.target("target_rel_spread", t) == t
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = bwprof.measure("stream_copy", target_rel_spread=t, **QUICK).to_dict()
    assert d["target_rel_spread"] == t
    missed = spread_warnings(caught)
    if d["spread_target_met"]:
        assert d["time_cv"] <= t and not missed
    else:  # the budget ran out first: said once
        assert len(missed) == 1


INVALID = st.one_of(
    st.floats(max_value=0.0),  # negative, zero, -inf
    st.floats(min_value=1.0, exclude_min=True),  # above 1, inf
    st.just(math.nan), st.just(np.float64("nan")), st.just(-np.float32(0.5)),
    st.integers(max_value=0), st.integers(min_value=2),
    st.booleans(), st.text(max_size=5), st.just("0.02"), st.just([0.02]), st.just(1j), st.just(b"0.1"),
)


@HYP
@given(INVALID)
def test_a_bad_target_is_a_value_error_naming_it_and_what_it_takes(bad):
    for call in (lambda: bwprof.measure("stream_copy", target_rel_spread=bad, **QUICK),
                 lambda: bwprof.profile(np.negative, np.ones(64, np.float32), target_rel_spread=bad, **FAST)):
        with pytest.raises(ValueError) as info:
            call()
        text = str(info.value)
        assert text.startswith("target_rel_spread: ") and "fraction in (0, 1]" in text, text


def test_a_bad_target_fails_before_anything_runs():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1

    with pytest.raises(ValueError, match="target_rel_spread"):
        bwprof.profile(f, np.ones(8, np.float32), target_rel_spread=-0.1, **FAST)
    with pytest.raises(ValueError, match="target_rel_spread"):
        bwprof.sweep(lambda n: (f, np.ones(n, np.float32)), {"n": [8, 16]}, target_rel_spread=2, **FAST)
    with pytest.raises(ValueError, match="target_rel_spread"):
        bwprof.run_suite(device="cpu", kernels=["stream_copy"], quick=True, progress=False, target_rel_spread=math.nan)
    assert calls == []


@pytest.mark.parametrize("ok", [0.02, 1, np.float32(0.25), np.float64(0.5), Fraction(1, 50)])
def test_numbers_of_any_real_type_are_taken(ok):
    assert spread.target("target_rel_spread", ok) == pytest.approx(float(ok))
    assert spread.target("target_rel_spread", None) == 0.0  # None: no target


def test_profile_records_the_target_and_warns_once():
    x = np.ones(1024, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = bwprof.profile(np.negative, x, target_rel_spread=UNREACHABLE, **FAST)
    got = spread_warnings(caught)
    assert len(got) == 1 and got[0].filename == __file__ and "profile: negative" in str(got[0].message)
    d = m.to_dict()
    assert d["target_rel_spread"] == UNREACHABLE and d["spread_target_met"] is False and d["repeats"] > 5
    assert "target_rel_spread" in bwprof.usercode.PROFILE_ARGUMENTS


def test_a_sweep_warns_once_naming_its_points():
    make = lambda n: (np.negative, np.ones(n, np.float32))  # noqa: E731
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = bwprof.sweep(make, {"n": [256, 512, 1024]}, target_rel_spread=UNREACHABLE,
                          **dict(FAST, max_time_s=0.01))
    got = spread_warnings(caught)
    assert len(got) == 1 and got[0].filename == __file__
    assert str(got[0].message).startswith("sweep: 3 row(s) stayed above target_rel_spread=1e-09")
    assert (~df["spread_target_met"]).all() and (df["target_rel_spread"] == UNREACHABLE).all()


def test_a_suite_warns_once_for_all_its_rows():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = bwprof.run_suite(device="cpu", kernels=["stream_copy"], quick=True, progress=False,
                              target_rel_spread=UNREACHABLE)
    got = spread_warnings(caught)
    assert len(got) == 1 and got[0].filename == __file__
    assert f"run_suite: {len(df)} row(s) stayed above" in str(got[0].message)
    assert len(df) and (~df["spread_target_met"]).all()
    plain = bwprof.run_suite(device="cpu", kernels=["stream_copy"], quick=True, progress=False)
    assert plain["spread_target_met"].all() and plain["target_rel_spread"].isna().all()


def test_a_gatherer_keeps_the_rows_and_nests():
    row = {"kernel": "k", "dtype": "fp32", "shape": "n=1", "time_cv": 0.5, "repeats": 9,
           "target_rel_spread": 0.01, "spread_target_met": False}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with spread.gathered("outer"):
            with spread.gathered("inner"):
                spread.check(row, "measure")
            spread.check(dict(row, spread_target_met=True), "measure")  # met: nothing to say
            spread.check(row, "measure")
    got = spread_warnings(caught)
    assert len(got) == 1 and str(got[0].message).startswith("outer: 2 row(s)")
    assert "k fp32 n=1 (time_cv 50.0 % after 9 repeats)" in str(got[0].message)


def test_results_files_with_bad_counts_of_the_new_columns_are_refused():
    from bwprof.results import check_results

    good = bwprof.measure("stream_copy", **QUICK).to_dict()
    check_results(pd.DataFrame([good]), "run.csv")
    for col, bad, what in (("throttled_retaken", -1, "negative"), ("throttled_retaken", 1.5, "whole number"),
                           ("target_rel_spread", -0.5, "negative")):
        with pytest.raises(ValueError, match=f"field {col} of row 1 .*{what}"):
            check_results(pd.DataFrame([dict(good, **{col: bad})]), "run.csv")
