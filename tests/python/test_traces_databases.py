"""Which format a database, JSON file or report is (by its tables, keys or suffix), and folders
that hold one run written in several formats, read once. The readers of each format are tested
in test_traces_<format>.py; which samples are real and which written from a documented schema:
tests/data/traces/README.md.
"""

import shutil

import pytest

import bwprof.traces as traces
from bwprof.traces import TraceFormatError

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

def test_folder_prefers_the_database(tmp_path):
    run = tmp_path / "host" / "4101"
    run.mkdir(parents=True)
    shutil.copy(ROCPD, run / "4101_results.db")
    shutil.copy(DATA / "rocprofv3_kernel_trace.csv", run / "kernel_trace.csv")
    shutil.copy(V3JSON, run / "results.json")
    df = traces.read(tmp_path)
    assert len(df) == 6 and set(df["source_tool"]) == {"rocprofv3"}
    assert df["duration_ns"].sum() == traces.read(ROCPD)["duration_ns"].sum()


def test_folder_reads_nsys_export_not_the_report(tmp_path, no_tools_path):
    shutil.copy(NSYS, tmp_path / "report.sqlite")
    (tmp_path / "report.nsys-rep").write_bytes(b"\x00report")     # nsys is not on PATH
    assert len(traces.read(tmp_path)) == 7
