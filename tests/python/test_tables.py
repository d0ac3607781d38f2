"""The one fixed-width table printer (bwprof.tables) and the layouts its callers print."""
import math

import pandas as pd
import pytest

from bwprof import cli, tables


def test_house_layout_text_left_numbers_right_missing_and_booleans():
    df = pd.DataFrame({"kernel": ["gemm", "stream_triad"], "time_median_us": [12.345, math.nan],
                       "verified": [True, False], "unused": [1, 2]})
    out = tables.format_table(df, [("kernel", "kernel", "{}"), ("time_median_us", "time_us", "{:.1f}"),
                                   ("verified", "ok", "{}"), ("absent", "never", "{}")])
    assert out.splitlines() == [
        "kernel        time_us  ok",
        "------------  -------  ---",
        "gemm             12.3  yes",
        "stream_triad        -  NO",   # trailing blanks are dropped
    ]


def test_a_value_the_format_refuses_prints_as_text_and_callables_format():
    df = pd.DataFrame({"x": ["n/a", 2.0]})
    assert tables.format_table(df, [("x", "x", "{:.2f}")], rule=False).splitlines() == ["   x", " n/a", "2.00"]
    assert tables.format_table(df.iloc[1:], [("x", "X", lambda v: f"<{v:g}>")]).splitlines() == \
        ["  X", "---", "<2>"]
    with pytest.raises(ValueError, match="text_align"):
        tables.format_table(df, [("x", "x", "{}")], text_align="centre")


def test_frame_layout_matches_what_pandas_printed():
    df = pd.DataFrame({"category": ["GEMM", "elementwise"], "calls": [650, 3],
                       "total_ms": [1.05, float("nan")], "pct": [98.8431, 1.1569]})
    spec = tables.frame_columns(df, "{:.3f}")
    out = tables.format_table(df, spec, sep=" ", missing="NaN", rule=False, text_align="right")
    # pandas' to_string(index=False) layout, which the trace tables had: numeric headers indented
    assert out.splitlines() == [
        "   category  calls  total_ms    pct",
        "       GEMM    650     1.050 98.843",
        "elementwise      3       NaN  1.157",
    ]


def test_the_bench_table_is_the_house_layout():
    df = pd.DataFrame({"kernel": ["gemm"], "dtype": ["fp16"], "time_median_us": [3.0], "bandwidth_gbs": [1.0e3],
                       "verified": [True], "bound": [None]})
    assert cli.format_table(df).splitlines() == [
        "kernel  dtype  time_us    GB/s  bound  ok",
        "------  -----  -------  ------  -----  ---",
        "gemm    fp16       3.0  1000.0  -      yes",
    ]


# ---- figures above a roof are marked wherever a table shows them (issue 45) ----------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

from bwprof import tables as _tables  # noqa: E402

_SPEC = [("kernel", "kernel", "{}"), ("bandwidth_gbs", "GB/s", "{:.1f}"), ("gflops", "GFLOP/s", "{:.0f}"),
         ("bound", "bound", "{}"), ("time_us", "us", "{:.2f}")]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.floats(0, 1e12), st.just(float("nan"))), st.sampled_from(
    [True, False, "True", "False", None, 1, 0, float("nan")])), min_size=1, max_size=8))
def test_rows_above_a_peak_are_marked_and_explained(rows):
    df = pd.DataFrame({"kernel": [f"k{i}" for i in range(len(rows))], "bandwidth_gbs": [r[0] for r in rows],
                       "gflops": [1.0] * len(rows), "bound": ["memory"] * len(rows), "time_us": [2.0] * len(rows),
                       "above_peak": [r[1] for r in rows]})
    lines = _tables.format_table(df, _SPEC).splitlines()
    flagged = [r[1] in (True, "True", 1) for r in rows]
    body = lines[2:2 + len(rows)]
    for line, flag, (gbs, _) in zip(body, flagged, rows):
        cells = line.split()
        assert cells[3].endswith("!") == flag  # the bound
        assert cells[2].endswith("!") == flag  # GFLOP/s
        assert cells[1].endswith("!") == (flag and gbs == gbs)  # a missing figure stays "-"
        assert not cells[4].endswith("!")  # the time is a measurement, not judged
    assert (lines[-1] == _tables.ABOVE_PEAK_NOTE) == any(flagged)
    assert len(lines) == 2 + len(rows) + any(flagged)
    # flag=None: the table as it was.
    assert "!" not in _tables.format_table(df, _SPEC, flag=None)


def test_a_table_without_judged_columns_has_no_note():
    df = pd.DataFrame({"kernel": ["a"], "time_us": [1.0], "above_peak": [True]})
    assert _tables.ABOVE_PEAK_NOTE not in _tables.format_table(df, _SPEC)
