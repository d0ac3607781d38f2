"""Rows whose duration cannot be right (issue #12): negative, empty, NaN, infinite durations and
timestamps beyond 64-bit nanoseconds, in every format, are an error naming the file and the
rows, or, with drop_invalid=True, left out and counted in a warning. Deeply nested JSON and huge
numbers are clear errors, never RecursionError/OverflowError.

This file: frames built by hand and given to the analyses, the drop_invalid switch, the valid
samples read unchanged with it. Each format's bad rows: test_traces_invalid_csv.py,
test_traces_invalid_json.py, test_traces_invalid_databases.py (helpers in invalid_rows.py).
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bwprof.traces as traces
from bwprof.traces.errors import InvalidRowsWarning

from invalid_rows import SETTINGS
from traces_common import DATA


# --- frames given to the analyses ---------------------------------------------------------

def frame(durations, calls=None):
    n = len(durations)
    return pd.DataFrame({"kernel_name": [f"gemm_{i}" for i in range(n)],
                         "short_name": [f"gemm_{i}" for i in range(n)],
                         "duration_ns": durations, "calls": calls or [1] * n})


@SETTINGS
@given(values=st.lists(st.one_of(st.floats(0, 1e9), st.floats(-1e9, -1e-3),
                                 st.sampled_from([math.nan, math.inf])), min_size=1, max_size=10))
def test_breakdown_amdahl_diff_refuse_invalid_frames(values):
    df = frame(values)
    bad = [i for i, v in enumerate(values) if not (v >= 0 and math.isfinite(v))]
    if len(bad) == len(values) and all(math.isnan(v) for v in values):
        with pytest.raises(ValueError, match="no row has a duration"):
            traces.breakdown(df)
        return
    if not bad:
        assert traces.breakdown(df)["total_time_ns"].sum() == pytest.approx(sum(values))
        return
    for call in (lambda **kw: traces.breakdown(df, **kw), lambda **kw: traces.amdahl(df, **kw),
                 lambda **kw: traces.breakdown(df, per="short_name", **kw),
                 lambda **kw: traces.diff(df, frame([1.0]), **kw)):
        with pytest.raises(ValueError, match=rf"{len(bad)} of {len(values)} rows .*row {bad[0]}: "):
            call()
    with pytest.warns(InvalidRowsWarning, match=f"left out {len(bad)} of {len(values)}"):
        table = traces.breakdown(df, drop_invalid=True)
    good = [v for v in values if v >= 0 and math.isfinite(v)]
    assert table["total_time_ns"].sum() == pytest.approx(sum(good))
    assert table["calls"].sum() == len(good)


def test_drop_invalid_must_be_a_bool():
    with pytest.raises(TypeError, match="drop_invalid must be True or False"):
        traces.breakdown(frame([1.0]), drop_invalid="yes")
    with pytest.raises(TypeError, match="drop_invalid must be True or False"):
        traces.read(DATA / "rocprofv3_kernel_trace.csv", drop_invalid="no")


def test_valid_samples_read_unchanged_with_drop_invalid():
    for name in ("rocprofv3_kernel_trace.csv", "pytorch_trace.json", "nsys_export.sqlite",
                 "rocpd_two_processes.db", "rocprofv3_results.json", "ncu_raw_h100.csv"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", InvalidRowsWarning)
            a = traces.read(DATA / name)
            b = traces.read(DATA / name, drop_invalid=True)
        pd.testing.assert_frame_equal(a, b)
        assert np.isfinite(a["duration_ns"]).all() and (a["duration_ns"] >= 0).all()
