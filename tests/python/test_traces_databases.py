"""Which format a database, JSON file or report is (by its tables, keys or suffix), and folders
that hold one run written in several formats, read once. The readers of each format are tested
in test_traces_<format>.py; which samples are real and which written from a documented schema:
tests/data/traces/README.md.
"""

import shutil
import warnings

import pytest

import bwprof.traces as traces
from bwprof.traces import TraceFormatError
from bwprof.traces.errors import DuplicateTraceWarning

from traces_common import DATA, NSYS, ROCPD, RPD, V3JSON


# --- detection ----------------------------------------------------------------------------

@pytest.mark.parametrize("path, fmt", [(ROCPD, "rocpd"), (RPD, "rocpd_rpd"), (NSYS, "nsys_sqlite"),
                                       (V3JSON, "rocprofv3_json")])
def test_detect_new_formats(path, fmt):
    assert traces.detect_format(path) == fmt


def test_detect_reports_by_suffix_and_refuse_perfetto(tmp_path):
    for name, fmt in (("run.nsys-rep", "nsys_rep"), ("old.qdrep", "nsys_rep"), ("k.ncu-rep", "ncu_rep")):
        (tmp_path / name).write_bytes(b"\x00binary report")
        assert traces.detect_format(tmp_path / name) == fmt
    (tmp_path / "t.pftrace").write_bytes(b"\x0a\x00")
    with pytest.raises(TraceFormatError, match=r"t\.pftrace: a Perfetto trace .* is not read"):
        traces.read(tmp_path / "t.pftrace")


def test_pytorch_json_still_pytorch():
    assert traces.detect_format(DATA / "pytorch_trace.json") == "pytorch_trace"


# --- folders: one run written in several formats counts once -----------------------------

V3_HEADER = ('"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id",'
             '"Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp",'
             '"Private_Segment_Size","Group_Segment_Size","Workgroup_Size_X","Workgroup_Size_Y",'
             '"Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"')


def v3_csv_of(df):
    """A rocprofv3 kernel_trace.csv holding the kernel dispatches of ``df`` (the same run)."""
    lines = [V3_HEADER]
    for i, r in enumerate(df[df["copy_kind"].isna()].itertuples() if "copy_kind" in df else df.itertuples()):
        lines.append(f'"KERNEL_DISPATCH",2,1,1,7,{i + 1},3,"{r.kernel_name}",{i + 10},{r.start_ns},{r.end_ns},'
                     f'0,0,256,1,1,1024,1,1')
    return "\n".join(lines) + "\n"


def test_folder_counts_one_run_in_two_formats_once(tmp_path):
    # Issue 45: the database and a CSV of the same run count once, and the CSV left out is said.
    run = tmp_path / "host" / "4101"
    run.mkdir(parents=True)
    shutil.copy(ROCPD, run / "4101_results.db")
    db = traces.read(ROCPD)
    (run / "4101_kernel_trace.csv").write_text(v3_csv_of(db))
    with pytest.warns(DuplicateTraceWarning, match=r"4101_kernel_trace\.csv holds the same .* as "
                                                   r"host/4101/4101_results\.db .*counted once"):
        df = traces.read(tmp_path)
    assert len(df) == len(db) and df["duration_ns"].sum() == db["duration_ns"].sum()


def test_folder_counts_two_runs_twice(tmp_path):
    # The database, a rocprofv3 CSV and a JSON of three other runs (other processes and times):
    # each counts (before issue 45 the database alone was read, without a word).
    run = tmp_path / "host" / "4101"
    run.mkdir(parents=True)
    shutil.copy(ROCPD, run / "4101_results.db")
    shutil.copy(DATA / "rocprofv3_kernel_trace.csv", run / "kernel_trace.csv")
    shutil.copy(V3JSON, run / "results.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DuplicateTraceWarning)
        df = traces.read(tmp_path)
    parts = [traces.read(p) for p in (ROCPD, DATA / "rocprofv3_kernel_trace.csv", V3JSON)]
    assert len(df) == sum(len(p) for p in parts)
    assert df["duration_ns"].sum() == sum(p["duration_ns"].sum() for p in parts)


def test_the_same_trace_twice_in_a_folder_counts_once(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        shutil.copy(DATA / "rocprofv3_kernel_trace.csv", tmp_path / sub / "x_kernel_trace.csv")
    with pytest.warns(DuplicateTraceWarning, match=r"b/x_kernel_trace\.csv holds the same 8 dispatches as "
                                                   r"a/x_kernel_trace\.csv"):
        df = traces.read(tmp_path)
    assert len(df) == 8


def test_a_damaged_kernel_trace_in_a_folder_is_named(tmp_path):
    shutil.copy(DATA / "rocprofv3_kernel_trace.csv", tmp_path / "good_kernel_trace.csv")
    (tmp_path / "bad_kernel_trace.csv").write_bytes(b"\x00\x01 damaged")
    (tmp_path / "notes.txt").write_text("a log, not a trace")   # other files are still passed over
    with pytest.raises(TraceFormatError, match=r"bad_kernel_trace\.csv.*a kernel trace in the folder"):
        traces.read(tmp_path)


def test_folder_reads_nsys_export_not_the_report(tmp_path, no_tools_path):
    shutil.copy(NSYS, tmp_path / "report.sqlite")
    (tmp_path / "report.nsys-rep").write_bytes(b"\x00report")     # nsys is not on PATH
    assert len(traces.read(tmp_path)) == 7
