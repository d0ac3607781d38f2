"""Nsight Systems SQLite exports, on nsys_export.sqlite, WRITTEN FROM THE DOCUMENTED SCHEMA by
tests/data/traces/sample_writers/nsys_sqlite.py (no nsys run here; the values are invented), and
.nsys-rep reports read through ``nsys export`` (a FAKE nsys script on PATH).
"""

import os
import shutil
import sqlite3
import stat
import sys
import textwrap

import pytest

import bwprof.traces as traces
from bwprof.traces import TraceFormatError
from bwprof.traces.formats.nsys_sqlite import pid_of

from sample_writers import nsys_sqlite as samples
from traces_common import NSYS, assert_schema, kernels


# --- Nsight Systems SQLite export, sample written from the documented schema -------------

def test_nsys_kernels_and_graph_kernels():
    df = traces.read(NSYS)
    assert_schema(df)
    k = kernels(df)
    assert len(k) == 5 and (k["source_tool"] == "nsys").all()
    assert k["short_name"].tolist()[1:4] == ["flash_fwd_kernel", "vectorized_layer_norm_kernel",
                                             "flash_fwd_kernel"]
    assert k["duration_ns"].tolist() == [80000.0, 40000.0, 5000.0, 40000.0, 60000.0]
    # The fourth kernel was replayed from a CUDA graph: kept, and marked.
    assert k["graph_node_id"].tolist()[3] == 7 and k["graph_id"].tolist()[3] == 3
    assert k["graph_node_id"].isna().sum() == 4
    assert k.loc[0, ["grid_x", "grid_y", "grid_z", "block_x"]].tolist() == [132, 1, 1, 384]
    assert k["registers"].tolist() == [168, 255, 30, 255, 168]
    assert k["shared_mem_bytes"].tolist() == [213248, 49152, 24, 49152, 213248]   # static + dynamic
    assert k["pid"].tolist() == [52001] * 4 + [52002]
    assert k["device"].tolist() == ["0"] * 4 + ["1"] and k["stream"].tolist() == ["7"] * 5
    assert k["correlation_id"].tolist() == [1, 2, 3, 4, 5]
    assert (k["device_name"] == "NVIDIA H100 80GB HBM3").all()


def test_nsys_memcpy_memset():
    df = traces.read(NSYS)
    rest = df[df["event_category"] != "kernel"]
    assert rest["kernel_name"].tolist() == ["[memcpy Host-to-Device]", "[memset]"]
    assert rest["event_category"].tolist() == ["gpu_memcpy", "gpu_memset"]
    assert rest["duration_ns"].tolist() == [700.0, 40.0]
    assert rest["bytes"].tolist() == [4194304.0, 65536.0]
    assert traces.categorize(rest)["category"].tolist() == ["memory copy", "fill"]
    assert len(traces.read_nsys_sqlite(NSYS, memory_ops=False)) == 5


def test_global_pid():
    assert pid_of([52001 << 24, (7 << 56) | (4242 << 24) | 17]).tolist() == [52001, 4242]


def test_nsys_copy_labels_without_enum_table(tmp_path):
    path = tmp_path / "noenum.sqlite"
    shutil.copy(NSYS, path)
    con = sqlite3.connect(path)
    con.execute("DROP TABLE ENUM_CUDA_MEMCPY_OPER")
    con.execute("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = 10")
    con.commit()
    con.close()
    assert "[memcpy Peer-to-Peer]" in traces.read(path)["kernel_name"].tolist()


def test_nsys_wrong_schema_version(tmp_path):
    path = tmp_path / "v4.sqlite"
    samples.write_nsys_sample(path, schema_version="4.0.0")
    with pytest.raises(TraceFormatError, match=r"v4\.sqlite: Nsight Systems export schema version 4\.0\.0"):
        traces.read(path)


def test_nsys_without_cuda_activity(tmp_path):
    path = tmp_path / "nocuda.sqlite"
    shutil.copy(NSYS, path)
    con = sqlite3.connect(path)
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        con.execute(f"DROP TABLE {t}")
    con.commit()
    con.close()
    with pytest.raises(TraceFormatError, match=r"nocuda\.sqlite: Nsight Systems export without CUDA GPU "
                                               r"activity .* --trace cuda"):
        traces.read_nsys_sqlite(path)


def test_nsys_missing_string_table_and_names(tmp_path):
    path = tmp_path / "nostrings.sqlite"
    shutil.copy(NSYS, path)
    con = sqlite3.connect(path)
    con.execute("DELETE FROM StringIds WHERE value LIKE '%layer_norm%'")
    con.commit()
    con.close()
    with pytest.raises(TraceFormatError, match=r"nostrings\.sqlite: kernel name id\(s\) \[\d+\] are not in StringIds"):
        traces.read(path)
    con = sqlite3.connect(path)
    con.execute("DROP TABLE StringIds")
    con.commit()
    con.close()
    with pytest.raises(TraceFormatError, match=r"nostrings\.sqlite: Nsight Systems export: table or view StringIds missing"):
        traces.read_nsys_sqlite(path)


def test_nsys_truncated(tmp_path):
    data = NSYS.read_bytes()
    path = tmp_path / "cut.sqlite"
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(TraceFormatError, match=r"cut\.sqlite: "):
        traces.read(path)


# --- .nsys-rep through nsys export ------------------------------------------------------------

def fake_nsys(bin_dir, body):
    path = bin_dir / "nsys"
    path.write_text(f"#!{sys.executable}\nimport shutil, sys\nargs = sys.argv[1:]\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_nsys_rep_without_nsys(tmp_path, no_tools_path):
    rep = tmp_path / "run.nsys-rep"
    rep.write_bytes(b"\x00report")
    with pytest.raises(TraceFormatError, match=r"run\.nsys-rep: reading a \.nsys-rep needs Nsight Systems' "
                                               r"nsys on PATH .* nsys export --type sqlite"):
        traces.read(rep)


def test_nsys_rep_exported_with_nsys(tmp_path, no_tools_path):
    fake_nsys(no_tools_path, f"""
        assert args[:3] == ["export", "--type", "sqlite"], args
        shutil.copy({str(NSYS)!r}, args[args.index("--output") + 1])
    """)
    rep = tmp_path / "run.nsys-rep"
    rep.write_bytes(b"\x00report")
    df = traces.read(rep)
    assert len(df) == 7 and (df["source_tool"] == "nsys").all()
    assert not (tmp_path / "run.sqlite").exists()          # exported into a temporary folder


def test_nsys_rep_export_failure(tmp_path, no_tools_path):
    fake_nsys(no_tools_path, """
        print("Error: report is damaged", file=sys.stderr)
        sys.exit(3)
    """)
    rep = tmp_path / "run.nsys-rep"
    rep.write_bytes(b"\x00report")
    with pytest.raises(TraceFormatError, match=r"run\.nsys-rep: nsys export failed \(exit 3\): Error: report is damaged"):
        traces.read(rep)


def test_nsys_rep_prefers_a_newer_export_beside_it(tmp_path, no_tools_path):
    rep = tmp_path / "run.nsys-rep"
    rep.write_bytes(b"\x00report")
    shutil.copy(NSYS, tmp_path / "run.sqlite")
    os.utime(rep, (1_000_000, 1_000_000))
    assert len(traces.read(rep)) == 7                      # no nsys on PATH needed
