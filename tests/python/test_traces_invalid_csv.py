"""Rows whose duration cannot be right (issue #12) in the CSV formats: rocprofv3 kernel traces,
legacy rocprof results, kernel statistics, nsys summaries and ncu pages; and binary data far
into a big CSV file. Hypothesis writes many traces of each format with bad rows placed anywhere;
the figures that remain are checked against durations computed here from the values written.
"""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bwprof.traces as traces
from bwprof.traces import TraceFormatError
from bwprof.traces.errors import InvalidRowsError, InvalidRowsWarning

from invalid_rows import SETTINGS, expect, rows_strategy
from traces_common import DATA


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
