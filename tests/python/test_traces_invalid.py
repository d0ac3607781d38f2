"""Rows whose duration cannot be right (issue #12): negative, empty, NaN, infinite durations and
timestamps beyond 64-bit nanoseconds, in every format, are an error naming the file and the
rows, or, with drop_invalid=True, left out and counted in a warning. Deeply nested JSON and huge
numbers are clear errors, never RecursionError/OverflowError.

Hypothesis writes many traces of each format with such rows placed anywhere; the figures that
remain are checked against durations computed here from the values written.
"""

import json
import math
import re
import shutil
import sqlite3
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bwprof.traces as traces
from bwprof.traces import TraceFormatError
from bwprof.traces.errors import InvalidRowsError, InvalidRowsWarning

from test_traces_readers import DATA

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
BIG = 2 ** 63

# What a bad row holds: (kind, how the writer spells it). "ok" rows are valid.
KINDS = ("ok", "negative", "empty", "nan", "inf", "huge", "negtime")


def rows_strategy(max_rows=12):
    """A list of row kinds, at least one row, bad ones anywhere."""
    return st.lists(st.sampled_from(KINDS), min_size=1, max_size=max_rows)


def expect(path, kinds, read, valid_durations, label):
    """Reading fails naming the first bad rows (``label(i)``) and their count; with
    drop_invalid=True the valid rows remain with their durations, and one warning counts
    the rest."""
    bad = [i for i, k in enumerate(kinds) if k != "ok"]
    if not bad:
        df = read(path)
        assert df["duration_ns"].tolist() == valid_durations
        return
    with pytest.raises(InvalidRowsError) as info:
        read(path)
    err = info.value
    assert isinstance(err, TraceFormatError) and isinstance(err, ValueError)
    message = str(err)
    assert message.startswith(f"{path}: {len(bad)} of {len(kinds)} rows have an invalid duration")
    assert err.count == len(bad)
    assert err.rows == [label(i) for i in bad[:5]]
    for i in bad[:5]:
        assert f"{label(i)}: " in message
    assert "drop_invalid=True" in message
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = read(path, drop_invalid=True)
    ours = [w for w in caught if issubclass(w.category, InvalidRowsWarning)]
    assert len(ours) == 1
    assert f"left out {len(bad)} of {len(kinds)} rows" in str(ours[0].message)
    assert df["duration_ns"].tolist() == valid_durations
    assert (df["duration_ns"] >= 0).all()


# --- rocprofv3 kernel_trace.csv -----------------------------------------------------------

V3_HEADER = ('"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id",'
             '"Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp",'
             '"Private_Segment_Size","Group_Segment_Size","Workgroup_Size_X","Workgroup_Size_Y",'
             '"Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"')


def v3_times(kind, start, dur):
    end = start + dur
    return {"ok": (start, end), "negative": (start, start - dur), "empty": (start, ""),
            "nan": ("nan", end), "inf": (start, "inf"), "huge": (start, 10 ** 20),
            "negtime": (-1, end)}[kind]


def write_v3(path, kinds, durs):
    lines, start, valid = [V3_HEADER], 2_414_192_765_353_337, []
    for i, (kind, dur) in enumerate(zip(kinds, durs)):
        s, e = v3_times(kind, start, dur)
        lines.append(f'"KERNEL_DISPATCH",2,1,1,7,{i + 1},3,"void k{i % 3}<float>(float*, int)",{i + 10},'
                     f'{s},{e},0,0,256,1,1,65536,1,1')
        if kind == "ok":
            valid.append(float(dur))
        start += dur + 1000
    path.write_text("\n".join(lines) + "\n")
    return valid


@SETTINGS
@given(kinds=rows_strategy(), durs=st.lists(st.integers(1, 10 ** 9), min_size=12, max_size=12))
def test_rocprofv3_csv_invalid_rows(tmp_path, kinds, durs):
    path = tmp_path / "kernel_trace.csv"
    valid = write_v3(path, kinds, durs)
    expect(path, kinds, traces.read, valid, lambda i: f"line {i + 2}")


def test_rocprofv3_csv_message_names_file_line_and_value(tmp_path):
    path = tmp_path / "kernel_trace.csv"
    write_v3(path, ["ok", "negative", "ok", "huge", "empty"], [100, 200, 300, 400, 500])
    with pytest.raises(InvalidRowsError, match=re.escape(
            f"{path}: 3 of 5 rows have an invalid duration or timestamp (line 3: negative duration "
            "(-200 ns); line 5: end_ns 100000000000000000000 is beyond 64-bit integers; line 6: "
            "no duration (empty or missing))")):
        traces.read(path)


def test_many_bad_rows_are_counted_not_all_listed(tmp_path):
    path = tmp_path / "kernel_trace.csv"
    write_v3(path, ["negative"] * 40, [10] * 40)
    with pytest.raises(InvalidRowsError, match=r"40 of 40 rows .*line 6: negative duration \(-10 ns\); "
                                               r"and 35 more\)"):
        traces.read(path)


# --- legacy rocprof results.csv, kernel stats, nsys summaries ------------------------------

def write_rocprof(path, kinds, durs):
    lines = ['"Index","KernelName","gpu-id","queue-id","pid","grd","wgr","BeginNs","EndNs"']
    start, valid = 5000, []
    for i, (kind, dur) in enumerate(zip(kinds, durs)):
        s, e = v3_times(kind, start, dur)
        lines.append(f'{i},"kern_{i}",2,0,31,1024,256,{s},{e}')
        if kind == "ok":
            valid.append(float(dur))
        start += dur + 10
    path.write_text("\n".join(lines) + "\n")
    return valid


@SETTINGS
@given(kinds=rows_strategy(), durs=st.lists(st.integers(1, 10 ** 9), min_size=12, max_size=12))
def test_rocprof_results_invalid_rows(tmp_path, kinds, durs):
    path = tmp_path / "results.csv"
    valid = write_rocprof(path, kinds, durs)
    expect(path, kinds, traces.read, valid, lambda i: f"line {i + 2}")


def total_text(kind, total):
    return {"ok": str(total), "negative": str(-total), "empty": "", "nan": "nan", "inf": "inf",
            "huge": "1e400", "negtime": str(-total)}[kind]


@SETTINGS
@given(kinds=rows_strategy(), totals=st.lists(st.integers(1, 10 ** 12), min_size=12, max_size=12))
def test_kernel_stats_invalid_totals(tmp_path, kinds, totals):
    path = tmp_path / "kernel_stats.csv"
    lines = ['"Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs","StdDev"']
    valid = []
    for i, (kind, total) in enumerate(zip(kinds, totals)):
        lines.append(f'"kernel_{i}",3,{total_text(kind, total)},1.0,1.0,1,2,0.5')
        if kind == "ok":
            valid.append(float(total))
    path.write_text("\n".join(lines) + "\n")
    expect(path, kinds, traces.read, valid, lambda i: f"line {i + 2}")


@SETTINGS
@given(kinds=rows_strategy(), totals=st.lists(st.integers(1, 10 ** 12), min_size=12, max_size=12))
def test_nsys_summary_invalid_totals(tmp_path, kinds, totals):
    path = tmp_path / "kern_sum.csv"
    lines = ["Generating SQLite file r.sqlite from r.nsys-rep", "",
             "Time (%),Total Time (ns),Instances,Avg (ns),Name"]
    valid = []
    for i, (kind, total) in enumerate(zip(kinds, totals)):
        lines.append(f'1.0,{total_text(kind, total)},4,1.0,"k{i}"')
        if kind == "ok":
            valid.append(float(total))
    path.write_text("\n".join(lines) + "\n")
    expect(path, kinds, traces.read, valid, lambda i: f"line {i + 4}")


def test_negative_call_count_is_invalid(tmp_path):
    path = tmp_path / "kernel_stats.csv"
    path.write_text('"Name","Calls","TotalDurationNs","MinNs"\n"a",2,10,1\n"b",-3,10,1\n')
    with pytest.raises(InvalidRowsError, match=r"line 3: negative call count \(-3\)"):
        traces.read(path)


# --- ncu CSV pages ------------------------------------------------------------------------

def test_ncu_raw_invalid_durations_and_drop(tmp_path):
    text = (DATA / "ncu_raw_h100.csv").read_text()
    good = traces.read(DATA / "ncu_raw_h100.csv")
    lines = text.splitlines()
    header_at = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    header = next(__import__("csv").reader([lines[header_at]]))
    col = header.index("gpu__time_duration.sum")
    rows = list(__import__("csv").reader(lines[header_at + 2:header_at + 7]))
    rows[1][col] = "-5"
    rows[3][col] = ""
    out = lines[:header_at + 2] + [",".join(f'"{v}"' for v in r) for r in rows] + lines[header_at + 7:]
    path = tmp_path / "raw.csv"
    path.write_text("\n".join(out) + "\n")
    first = header_at + 3
    with pytest.raises(InvalidRowsError, match=rf"2 of 5 rows .*line {first + 1}: negative duration "
                                               rf"\(-5 ns\); line {first + 3}: no duration"):
        traces.read(path)
    with pytest.warns(InvalidRowsWarning, match="left out 2 of 5 rows"):
        df = traces.read(path, drop_invalid=True)
    assert df["duration_ns"].tolist() == [good["duration_ns"][i] for i in (0, 2, 4)]


def test_ncu_details_negative_duration(tmp_path):
    text = (DATA / "ncu_details.csv").read_text()
    assert '"Duration","usecond"' in text or '"Duration"' in text
    bad = re.sub(r'("Duration","[^"]*",")([\d.,]+)(")', r"\1-\2\3", text, count=1)
    assert bad != text
    path = tmp_path / "details.csv"
    path.write_text(bad)
    with pytest.raises(InvalidRowsError, match="negative duration"):
        traces.read(path)


# --- PyTorch trace JSON -------------------------------------------------------------------

def torch_event(kind, i, ts, dur):
    ev = {"ph": "X", "cat": "kernel", "name": f"kernel_{i}", "pid": 0, "tid": 7, "ts": ts,
          "dur": dur, "args": {"device": 0, "stream": 7, "correlation": i, "grid": [4, 1, 1],
                               "block": [128, 1, 1]}}
    if kind == "negative":
        ev["dur"] = -dur
    elif kind == "empty":
        del ev["dur"]
    elif kind == "nan":
        ev["dur"] = float("nan")
    elif kind == "inf":
        ev["dur"] = float("inf")
    elif kind == "huge":
        ev["ts"] = 10 ** 30
    elif kind == "negtime":
        ev["ts"] = -ts
    return ev


@SETTINGS
@given(kinds=rows_strategy(), durs=st.lists(st.integers(1, 10 ** 6), min_size=12, max_size=12),
       cpu_first=st.booleans())
def test_pytorch_invalid_events(tmp_path, kinds, durs, cpu_first):
    events, valid, index = [], [], []
    if cpu_first:
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": -4})
    for i, (kind, dur) in enumerate(zip(kinds, durs)):
        index.append(len(events))
        events.append(torch_event(kind, i, 1000.0 + 10 * i, dur / 4))
        if kind == "ok":
            valid.append(dur / 4 * 1000.0)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))       # NaN, Infinity as JSON allows
    expect(path, kinds, traces.read, valid, lambda i: f"traceEvents[{index[i]}]")


def test_pytorch_missing_ts_is_malformed(tmp_path):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "dur": 3}]}))
    with pytest.raises(TraceFormatError, match=r"traceEvents\[0\] \('k'\) has no numeric ts"):
        traces.read(path)


@SETTINGS
@given(base=st.one_of(st.integers(2 ** 63, 2 ** 200), st.integers(-2 ** 200, -2 ** 63 - 1),
                      st.sampled_from([float("inf"), float("-inf"), float("nan"), "soon"])))
def test_pytorch_bad_base_time(tmp_path, base):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"baseTimeNanoseconds": base, "traceEvents": [
        torch_event("ok", 0, 1.0, 2.0)]}))
    with pytest.raises(TraceFormatError, match="baseTimeNanoseconds .* is not a 64-bit integer"):
        traces.read(path)


@SETTINGS
@given(value=st.one_of(st.integers(2 ** 63, 2 ** 300), st.integers(-2 ** 300, -2 ** 63 - 1),
                       st.sampled_from([float("inf"), -float("inf")])),
       field=st.sampled_from(["ts", "dur", "grid", "registers", "correlation"]))
def test_pytorch_huge_numbers_are_clear(tmp_path, value, field):
    ev = torch_event("ok", 0, 1.0, 2.0)
    if field in ("ts", "dur"):
        ev[field] = value
    elif field == "grid":
        ev["args"]["grid"] = [value, 1, 1]
    elif field == "registers":
        ev["args"]["registers per thread"] = value
    else:
        ev["args"]["correlation"] = value
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": [torch_event("ok", 1, 0.5, 1.0), ev]}))
    with pytest.raises(InvalidRowsError, match=r"1 of 2 rows .*traceEvents\[1\]: "):
        traces.read(path)
    with pytest.warns(InvalidRowsWarning):
        df = traces.read(path, drop_invalid=True)
    assert df["kernel_name"].tolist() == ["kernel_1"] and df["duration_ns"].tolist() == [1000.0]


# --- deeply nested JSON --------------------------------------------------------------------

@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(depth=st.one_of(st.integers(1, 50), st.integers(5_000, 200_000)),
       fmt=st.sampled_from(["pytorch", "rocprofv3", "bare"]))
def test_deeply_nested_json_is_a_clear_error(tmp_path, depth, fmt):
    nest = "[" * depth + "]" * depth
    if fmt == "pytorch":
        text = ('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, '
                f'"args": {{"deep": {nest}}}}}]}}')
    elif fmt == "rocprofv3":
        text = f'{{"rocprofiler-sdk-tool": [{{"metadata": {{"pid": 1}}, "deep": {nest}}}]}}'
    else:
        text = nest
    path = tmp_path / "trace.json"
    path.write_text(text)
    try:
        df = traces.read(path)
    except TraceFormatError as exc:
        assert str(exc).startswith(str(path))
        if depth >= 5_000:
            assert "nested too deeply" in str(exc)
        return
    assert depth < 5_000
    # A bare list is read as a list of events (none of them a GPU event).
    assert len(df) == (1 if fmt == "pytorch" else 0)


# --- rocprofv3 JSON -----------------------------------------------------------------------

@SETTINGS
@given(kinds=rows_strategy(max_rows=8))
def test_rocprofv3_json_invalid_dispatches(tmp_path, kinds):
    doc = json.loads((DATA / "rocprofv3_results.json").read_text())
    proc = doc["rocprofiler-sdk-tool"][0]
    proc["buffer_records"]["memory_copy"] = []
    template = proc["buffer_records"]["kernel_dispatch"][0]
    dispatches, valid = [], []
    for i, kind in enumerate(kinds):
        rec = json.loads(json.dumps(template))
        rec["start_timestamp"] = 1_000_000 + 1000 * i
        rec["end_timestamp"] = rec["start_timestamp"] + 100 + i
        if kind == "negative":
            rec["end_timestamp"] = rec["start_timestamp"] - 7
        elif kind == "empty":
            rec["end_timestamp"] = None
        elif kind == "nan":
            rec["start_timestamp"] = float("nan")
        elif kind == "inf":
            rec["end_timestamp"] = float("inf")
        elif kind == "huge":
            rec["start_timestamp"] = 10 ** 25
        elif kind == "negtime":
            rec["start_timestamp"] = -5
        else:
            valid.append(float(100 + i))
        dispatches.append(rec)
    proc["buffer_records"]["kernel_dispatch"] = dispatches
    proc.setdefault("callback_records", {})["counter_collection"] = []
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    expect(path, kinds, traces.read, valid,
           lambda i: f"rocprofiler-sdk-tool[0].buffer_records.kernel_dispatch[{i}]")


# --- databases ----------------------------------------------------------------------------

def db_kinds(n_max):
    # The schemas declare the timestamps NOT NULL: no "empty" rows in a database.
    return st.lists(st.sampled_from(("ok", "negative", "real", "inf", "negtime")), min_size=1,
                    max_size=n_max)


def corrupt(db, table, key, kinds, start_col="start", end_col="end"):
    """Rewrite the timestamps of the rows of ``table`` (in ``key`` order) per ``kinds``;
    returns the durations of the valid ones and the keys of all."""
    con = sqlite3.connect(db)
    try:
        keys = [r[0] for r in con.execute(f'SELECT {key} FROM "{table}" ORDER BY {key}')]
        valid = []
        for i, (k, kind) in enumerate(zip(keys, kinds)):
            start, end = 10 ** 15 + 10_000 * i, 10 ** 15 + 10_000 * i + 50 + i
            if kind == "negative":
                end = start - 3
            elif kind == "real":
                start = 1.5e300
            elif kind == "inf":
                end = float("inf")
            elif kind == "negtime":
                start = -5
            else:
                valid.append(float(end - start))
            con.execute(f'UPDATE "{table}" SET "{start_col}" = ?, "{end_col}" = ? WHERE {key} = ?',
                        (start, end, k))
        con.commit()
    finally:
        con.close()
    return valid, keys


@SETTINGS
@given(kinds=db_kinds(6))
def test_rocpd_invalid_dispatches(tmp_path, kinds):
    db = tmp_path / "results.db"
    shutil.copy(DATA / "rocpd_two_processes.db", db)
    con = sqlite3.connect(db)
    table = next(n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name LIKE 'rocpd_kernel_dispatch_%'"))
    n = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
    con.close()
    kinds = (kinds + ["ok"] * n)[:n]
    valid, keys = corrupt(db, table, "id", kinds)
    read = lambda p, **kw: traces.read(p, memory_copies=False, **kw)   # noqa: E731
    expect(db, kinds, read, valid, lambda i: f"kernels id {keys[i]}")


@SETTINGS
@given(kinds=db_kinds(4))
def test_nsys_invalid_kernels(tmp_path, kinds):
    db = tmp_path / "report.sqlite"
    shutil.copy(DATA / "nsys_export.sqlite", db)
    con = sqlite3.connect(db)
    n = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    con.close()
    kinds = (kinds + ["ok"] * n)[:n]
    valid, keys = corrupt(db, "CUPTI_ACTIVITY_KIND_KERNEL", "rowid", kinds)
    read = lambda p, **kw: traces.read(p, memory_ops=False, **kw)     # noqa: E731
    expect(db, kinds, read, valid, lambda i: f"CUPTI_ACTIVITY_KIND_KERNEL rowid {keys[i]}")


def rpd_row_ops(db):
    """Ids of the rocpd_op rows that the reader turns into trace rows (markers are not)."""
    from bwprof.traces.formats.rpd import _op_class

    con = sqlite3.connect(db)
    try:
        strings = dict(con.execute("SELECT id, string FROM rocpd_string"))
        ops = con.execute("SELECT id, opType_id, description_id FROM rocpd_op ORDER BY id").fetchall()
    finally:
        con.close()
    return [i for i, t, d in ops if _op_class(strings.get(t), strings.get(d))[0] is not None]


@SETTINGS
@given(kinds=db_kinds(6))
def test_rpd_invalid_ops(tmp_path, kinds):
    db = tmp_path / "trace.rpd"
    shutil.copy(DATA / "rocmprofiledata.rpd", db)
    rows = rpd_row_ops(db)
    assert len(rows) == len(traces.read(db))
    kinds = (kinds + ["ok"] * len(rows))[:len(rows)]
    # Only the ops that are rows are rewritten, in order.
    valid, keys = corrupt_rows(db, "rocpd_op", rows, kinds)
    expect(db, kinds, traces.read, valid, lambda i: f"rocpd_op id {keys[i]}")


def corrupt_rows(db, table, keys, kinds):
    """corrupt() for the rows of ``table`` whose id is in ``keys`` (in that order)."""
    con = sqlite3.connect(db)
    try:
        valid = []
        for i, (k, kind) in enumerate(zip(keys, kinds)):
            start, end = 10 ** 15 + 10_000 * i, 10 ** 15 + 10_000 * i + 50 + i
            if kind == "negative":
                end = start - 3
            elif kind == "real":
                start = 1.5e300
            elif kind == "inf":
                end = float("inf")
            elif kind == "negtime":
                start = -5
            else:
                valid.append(float(end - start))
            con.execute(f'UPDATE "{table}" SET "start" = ?, "end" = ? WHERE id = ?', (start, end, k))
        con.commit()
    finally:
        con.close()
    return valid, keys


def test_database_real_number_timestamp_message(tmp_path):
    db = tmp_path / "report.sqlite"
    shutil.copy(DATA / "nsys_export.sqlite", db)
    corrupt(db, "CUPTI_ACTIVITY_KIND_KERNEL", "rowid", ["real"])
    with pytest.raises(InvalidRowsError, match=r"rowid 1: start_ns holds a real number, not integer "
                                               r"nanoseconds"):
        traces.read(db)


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


# --- big files are checked all through -----------------------------------------------------

@pytest.mark.parametrize("junk, what", [(b"\x00", "NUL byte"), (b"\xff\xfe", "not UTF-8"),
                                        (b"\xc3", "not UTF-8")])
def test_binary_data_far_into_a_big_file(tmp_path, junk, what):
    """The CSV layer streams files in 16 MB blocks: junk after the first block (or a character
    cut at a block's end) is still an error at its line."""
    row = '"KERNEL_DISPATCH",2,1,1,7,1,3,"k",1,1000,2000,0,0,256,1,1,65536,1,1\n'.encode()
    rows = (1 << 24) // len(row) + 1000
    path = tmp_path / "kernel_trace.csv"
    with open(path, "wb") as f:
        f.write(V3_HEADER.encode() + b"\n")
        f.write(row * rows)
        f.write(b'"KERNEL_DISPATCH",2,1,1,7,1,3,"k' + junk + b'",1,1000,2000,0,0,256,1,1,65536,1,1\n')
        f.write(row)
    with pytest.raises(TraceFormatError, match=rf"kernel_trace\.csv, line {rows + 2}: binary data "
                                               rf"\({what}"):
        traces.read(path)
