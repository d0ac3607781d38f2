"""Public analysis functions given a wrong type say which argument and what it expects (issue 45):
breakdown(5), join_counters(df, 5), per=5, rules=5, factors=2, fusions=5 were AttributeErrors or
"'int' object is not iterable"; amdahl(factors=(nan,)) and findings(cu_count=0) were taken."""
import math

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import bwprof.traces as traces
from bwprof.traces import analysis

TRACE = pd.DataFrame({"kernel_name": ["gemm_a", "norm_b"], "short_name": ["gemm_a", "norm_b"],
                      "duration_ns": [100.0, 50.0], "calls": [1, 1], "device": ["0", "0"], "pid": [1, 1]})
RESULTS = pd.DataFrame({"kernel": ["gemm_a"], "kernel_name": ["gemm_a"], "bytes_read": [10.0],
                        "bytes_written": [5.0], "time_median_us": [1.0]})

# Values of every kind but the one expected.
wrong = st.one_of(st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(), st.binary(max_size=4),
                  st.builds(object), st.complex_numbers(max_magnitude=10))


@settings(max_examples=60, deadline=None)
@given(wrong.filter(lambda v: v is not None))
def test_a_trace_that_is_not_a_frame_is_named(value):
    for call, name in ((lambda: traces.breakdown(value), "df"), (lambda: traces.amdahl(value), "df"),
                       (lambda: traces.join_counters(value, RESULTS), "trace"),
                       (lambda: traces.findings(value), "df"), (lambda: traces.breakdown(value, per="device"), "df")):
        with pytest.raises(TypeError, match=rf"^{name}: expected a kernel-trace DataFrame"):
            call()


@settings(max_examples=60, deadline=None)
@given(wrong.filter(lambda v: v is not None))
def test_other_arguments_of_a_wrong_type_are_named(value):
    cases = [(lambda: traces.join_counters(TRACE, value), r"^results: expected"),
             (lambda: traces.breakdown(TRACE, per=value), r"^per: expected a column name"),
             (lambda: traces.breakdown(TRACE, rules=value), r"^rules: expected a \{regex: category\} dict"),
             (lambda: traces.breakdown(TRACE, extra_rules=value), r"^extra_rules: expected"),
             (lambda: traces.amdahl(TRACE, factors=value), r"^factors: expected a list"),
             (lambda: traces.findings(TRACE, thresholds=value), r"^thresholds: expected a dict")]
    if not isinstance(value, int) or isinstance(value, bool):
        cases.append((lambda: traces.findings(TRACE, cu_count=value), r"^cu_count: expected"))
    for call, message in cases:
        with pytest.raises(TypeError, match=message):
            call()


def test_the_issues_examples():
    with pytest.raises(TypeError, match=r"^df: expected a kernel-trace DataFrame .* got int 5"):
        traces.breakdown(5)
    with pytest.raises(TypeError, match=r"^results: expected"):
        traces.join_counters(TRACE, 5)
    with pytest.raises(TypeError, match=r"^per: "):
        traces.breakdown(TRACE, per=5)
    with pytest.raises(TypeError, match=r"^rules: "):
        traces.breakdown(TRACE, rules=5)
    with pytest.raises(TypeError, match=r"^rules\[0\]: expected a \(regex, category\) pair"):
        traces.breakdown(TRACE, rules=[5])
    with pytest.raises(TypeError, match=r"^factors: expected a list"):
        traces.amdahl(TRACE, factors=2)
    for bad in (math.nan, math.inf, 0, -2.0):
        with pytest.raises(ValueError, match=r"^factors: each speed-up factor must be a positive finite number"):
            traces.amdahl(TRACE, factors=(bad,))
    with pytest.raises(TypeError, match=r"^factors: each speed-up factor is a number"):
        traces.amdahl(TRACE, factors=("2",))
    for bad in (0, -4):
        with pytest.raises(ValueError, match=r"^cu_count: a device has at least one compute unit"):
            traces.findings(TRACE, cu_count=bad)
    from bwprof.workloads import workload
    with pytest.raises(TypeError, match=r"^fusions: expected a list of fusions"):
        workload([{"name": "a", "kernel": "stream_copy", "params": {"n": 1024}}], fusions=5)


def test_right_types_still_work():
    assert traces.breakdown(TRACE, per=("pid", "device"))["total_time_ns"].sum() == 150.0
    assert list(traces.amdahl(TRACE, factors=[2, 4.0]).columns[-3:]) == ["speedup_if_2x", "speedup_if_4x",
                                                                         "speedup_if_free"]
    assert traces.breakdown(TRACE, rules={"gemm": "GEMM"})["category"].tolist()[0] == "GEMM"
    assert isinstance(traces.findings(TRACE, cu_count=104), pd.DataFrame)
