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
