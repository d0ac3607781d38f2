"""Readers of today's profiler outputs: rocpd databases, rocmProfileData .rpd, Nsight Systems
SQLite exports and .nsys-rep, Nsight Compute .ncu-rep, rocprofv3 JSON.

Which samples are real and which written from a documented schema (tests/data/traces/README.md):
- rocpd_two_processes.db, rocmprofiledata.rpd, nsys_export.sqlite, rocprofv3_results.json are
  WRITTEN FROM THE DOCUMENTED SCHEMAS by tests/data/traces/make_sqlite_samples.py (no rocprofv3,
  rpd_tracer or nsys runs here); the values are invented and checked below.
- .ncu-rep: read through a STAND-IN for NVIDIA's ncu_report module that follows its documented
  API (load_report, ranges, actions, metric_by_name, value(), unit()) and is fed the REAL
  Nsight Compute sample ncu_raw_h100.csv (H100, ncu 2025.3), so the mapping is checked against
  the CSV reader on the same launches. A real .ncu-rep is made on the GPU machine by
  benchmarks/make_ncu_rep_sample.sh.
"""

import os
import shutil
import sqlite3
import stat
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bwprof.traces as traces
from bwprof.traces import TraceFormatError, sqlitedb
from bwprof.traces.formats import ncu_report
from bwprof.traces.formats.nsys_sqlite import pid_of

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"
sys.path.insert(0, str(DATA))
import make_sqlite_samples as samples  # noqa: E402

ROCPD = DATA / "rocpd_two_processes.db"
RPD = DATA / "rocmprofiledata.rpd"
NSYS = DATA / "nsys_export.sqlite"
V3JSON = DATA / "rocprofv3_results.json"


def assert_schema(df):
    assert list(df.columns[:len(traces.SCHEMA_COLUMNS)]) == traces.SCHEMA_COLUMNS


def kernels(df):
    return df[df["event_category"] == "kernel"].reset_index(drop=True)


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


# --- rocpd (rocprofiler-sdk), sample written from the documented schema ------------------

def test_rocpd_dispatches_values():
    df = traces.read(ROCPD)
    assert_schema(df)
    k = kernels(df)
    assert len(k) == 5 and (k["source_tool"] == "rocprofv3").all()
    assert k["short_name"].tolist() == ["Cijk_Ailk_Bljk_HHS_BH_MT256x128x64_MI32x32x8x1",
                                        "vectorized_elementwise_kernel",
                                        "Cijk_Ailk_Bljk_HHS_BH_MT256x128x64_MI32x32x8x1",
                                        "flash_fwd_kernel", "Cijk_Ailk_Bljk_HHS_BH_MT256x128x64_MI32x32x8x1"]
    assert k["duration_ns"].tolist() == [400000.0, 20000.0, 400000.0, 250000.0, 300000.0]
    assert k.loc[0, "start_ns"] == 1_000_000_000 and k.loc[0, "end_ns"] == 1_000_400_000
    # grid_x/grid_size_x count work-items; the schema counts work-groups: 65536/256 = 256,
    # and 1000 items in groups of 256 are 4 groups (the last one partial).
    assert k[["grid_x", "grid_y", "grid_z"]].values.tolist()[0] == [256, 8, 1]
    assert k.loc[1, "grid_x"] == 4
    assert k.loc[3, ["grid_x", "grid_y"]].tolist() == [16, 16]
    assert k[["block_x", "block_y", "block_z"]].values.tolist()[0] == [256, 1, 1]
    # registers = arch VGPRs + AGPRs; LDS is the dispatch's group segment size.
    assert k["registers"].tolist() == [256, 24, 256, 128, 256]
    assert k["shared_mem_bytes"].tolist() == [32768, 0, 32768, 65536, 32768]
    assert k["sgpr"].tolist() == [96.0, 16.0, 96.0, 64.0, 96.0]
    assert k["scratch_bytes"].tolist() == [0.0, 0.0, 0.0, 512.0, 0.0]
    assert k["device"].tolist() == ["GPU 0"] * 3 + ["GPU 1"] * 2
    assert k["pid"].tolist() == [4101] * 3 + [4102] * 2
    assert k["tid"].tolist() == [4101] * 3 + [4102] * 2
    # The correlation id is the internal one (event stack_id), as rocprofv3's CSV prints it.
    assert k["correlation_id"].tolist() == [11, 12, 13, 21, 22]
    assert k["dispatch_id"].tolist() == [1, 2, 3, 1, 2]
    assert (k["calls"] == 1).all()


def test_rocpd_graph_launched_dispatch_is_kept():
    # The third dispatch was replayed from a HIP graph: rocpd stores it as any dispatch.
    k = kernels(traces.read(ROCPD))
    assert k.loc[2, "dispatch_id"] == 3 and k.loc[2, "duration_ns"] == 400000.0


def test_rocpd_counters_summed_over_instances():
    k = kernels(traces.read(ROCPD))
    # Two instance rows of 1024 each -> 2048; process b collected none -> NaN.
    assert k["SQ_WAVES"].tolist()[:3] == [2048.0, 4.0, 2048.0]
    assert k["SQ_WAVES"].iloc[3:].isna().all()
    assert "SQ_WAVES" not in traces.read_rocpd(ROCPD, counters=False).columns


def test_rocpd_memory_copy_rows():
    df = traces.read(ROCPD)
    copy = df[df["event_category"] == "gpu_memcpy"]
    assert len(copy) == 1
    row = copy.iloc[0]
    assert row["kernel_name"] == "[memcpy Host-to-Device]" and row["copy_kind"] == "MEMORY_COPY_HOST_TO_DEVICE"
    assert row["duration_ns"] == 40000.0 and row["bytes"] == 1048576.0
    assert row["device"] == "GPU 1" and row["pid"] == 4102 and row["correlation_id"] == 20
    assert traces.categorize(copy)["category"].tolist() == ["memory copy"]
    assert len(traces.read_rocpd(ROCPD, memory_copies=False)) == 5


def test_rocpd_agents():
    agents = traces.read_rocpd_agents(ROCPD)
    gpus = agents[agents["type"] == "GPU"]
    assert gpus["device"].tolist() == ["GPU 0", "GPU 1"]
    assert gpus["cu_count"].tolist() == [304, 304]
    assert gpus["product_name"].iloc[0] == "AMD Instinct MI300X"
    assert agents[agents["type"] == "CPU"]["cpu_cores_count"].tolist() == [96]


def test_copy_names():
    from bwprof.traces.formats.rocpd import copy_name
    assert copy_name("MEMORY_COPY_DEVICE_TO_HOST") == "[memcpy Device-to-Host]"
    assert copy_name("MEMORY_COPY_PEER_TO_PEER") == "[memcpy Peer-to-Peer]"
    assert copy_name("MEMORY_COPY_NONE") == "[memcpy None]"


def _renamed_view_db(path):
    """rocpd 3 as some rocprofiler-sdk builds name the view: agent_absolute_index, correlation_id
    and no stack_id column."""
    db = samples.Rocpd(path, views=False)
    view = samples._KERNELS_VIEW.replace("AS agent_abs_index", "AS agent_absolute_index")
    view = view.replace("E.stack_id, E.parent_stack_id,\n  E.correlation_id AS corr_id",
                        "E.correlation_id AS correlation_id")
    db.con.executescript(view)
    p = db.process(77)
    gpu = db.agents(p, gpus=1)
    sym = db.symbol(p, "my_kernel", vgpr=8)
    ev = db.event(5, corr=999)
    db.insert("rocpd_kernel_dispatch", nid=db.node, pid=p["process"], tid=p["thread"], agent_id=gpu[0],
              kernel_id=sym, dispatch_id=1, queue_id=p["queue"], stream_id=p["stream"], start=10, end=35,
              workgroup_size_x=64, workgroup_size_y=1, workgroup_size_z=1, grid_size_x=640, grid_size_y=1,
              grid_size_z=1, region_name_id=db.string("my_kernel"), event_id=ev)
    db.close()


def test_rocpd_view_column_variants(tmp_path):
    path = tmp_path / "v.db"
    _renamed_view_db(path)
    df = traces.read(path)
    assert df["device"].tolist() == ["GPU 0"]
    assert df["correlation_id"].tolist() == [999]
    assert df["grid_x"].tolist() == [10] and df["duration_ns"].tolist() == [25.0]


def test_rocpd_two_sessions_in_one_database(tmp_path):
    """A merged database: two sessions (guids) whose ids repeat, views over both."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    samples.write_rocpd_sample(a)
    uuid_b = "0000ffff_eeee_7ddd_8ccc_bbbbaaaa9999"
    db = samples.Rocpd(b, uuid=uuid_b)
    p = db.process(5555)
    gpu = db.agents(p, gpus=1)
    sym = db.symbol(p, "only_in_b_kernel", vgpr=4)
    db.dispatch(p, gpu[0], sym, 1, 100, 350, (256, 1, 1), (64, 1, 1), stack_id=1)
    db.close()
    merged = tmp_path / "merged.db"
    con = sqlite3.connect(merged)
    con.execute("PRAGMA synchronous = OFF")
    uuids = (samples.ROCPD_UUID, uuid_b)
    for k, (src, uuid) in enumerate(((a, uuids[0]), (b, uuid_b))):
        con.execute(f"ATTACH DATABASE '{src}' AS s{k}")
        for table in samples._ROCPD_TABLES:
            con.execute(f'CREATE TABLE "{table}_{uuid}" AS SELECT * FROM s{k}."{table}_{uuid}"')
        con.commit()
        con.execute(f"DETACH DATABASE s{k}")
    for table in samples._ROCPD_TABLES:
        con.execute(f'CREATE VIEW "{table}" AS ' + " UNION ALL ".join(
            f'SELECT * FROM "{table}_{u}"' for u in uuids))
    con.executescript(samples._KERNELS_VIEW + samples._COPIES_VIEW)
    con.commit()
    con.close()
    df = traces.read(merged)
    k = kernels(df)
    assert len(k) == 6
    assert sorted(k["short_name"].unique()) == ["Cijk_Ailk_Bljk_HHS_BH_MT256x128x64_MI32x32x8x1",
                                               "flash_fwd_kernel", "only_in_b_kernel",
                                               "vectorized_elementwise_kernel"]
    only_b = k[k["short_name"] == "only_in_b_kernel"].iloc[0]
    assert only_b["pid"] == 5555 and only_b["duration_ns"] == 250.0 and only_b["grid_x"] == 4
    # Counters stay with their session's dispatches.
    assert k.set_index("correlation_id").loc[11, "SQ_WAVES"] == 2048.0
    assert pd.isna(only_b["SQ_WAVES"])


def test_rocpd_empty_database_is_an_empty_frame(tmp_path):
    path = tmp_path / "empty.db"
    db = samples.Rocpd(path)
    db.close()
    df = traces.read(path)
    assert df.empty
    assert_schema(df)


# --- rocpd: malformed input -----------------------------------------------------------------

def test_rocpd_wrong_schema_version(tmp_path):
    path = tmp_path / "v4.db"
    samples.Rocpd(path, schema_version="4").close()
    with pytest.raises(TraceFormatError, match=r"v4\.db: rocpd schema_version 4: bwprof reads schema version 3"):
        traces.read(path)


def test_rocpd_missing_version(tmp_path):
    path = tmp_path / "nov.db"
    shutil.copy(ROCPD, path)
    con = sqlite3.connect(path)
    con.execute(f'DELETE FROM "rocpd_metadata_{samples.ROCPD_UUID}" WHERE tag = \'schema_version\'')
    con.commit()
    con.close()
    with pytest.raises(TraceFormatError, match=r"nov\.db: rocpd database without a schema_version"):
        traces.read(path)


def test_rocpd_missing_kernels_view(tmp_path):
    path = tmp_path / "noview.db"
    shutil.copy(ROCPD, path)
    con = sqlite3.connect(path)
    con.execute("DROP VIEW kernels")
    con.commit()
    con.close()
    with pytest.raises(TraceFormatError, match=r"noview\.db: rocpd database: table or view kernels missing"):
        traces.read(path)


def test_rocpd_truncated_file(tmp_path):
    data = ROCPD.read_bytes()
    path = tmp_path / "cut.db"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFormatError, match=r"cut\.db: .*(truncated or corrupt|malformed)"):
        traces.read(path)


def test_rocpd_text_that_is_not_a_number(tmp_path):
    path = tmp_path / "text.db"
    shutil.copy(ROCPD, path)
    con = sqlite3.connect(path)
    con.execute(f'UPDATE "rocpd_kernel_dispatch_{samples.ROCPD_UUID}" SET "end" = \'soon\' WHERE id = 2')
    con.commit()
    con.close()
    with pytest.raises(TraceFormatError, match=r"text\.db: column 'end' holds 'soon', not an integer"):
        traces.read(path)


def test_rocpd_dispatch_of_unknown_symbol(tmp_path):
    path = tmp_path / "sym.db"
    shutil.copy(ROCPD, path)
    con = sqlite3.connect(path)
    # The view joins symbols, so a dangling id can only come from a view that does not.
    con.execute("DROP VIEW kernels")
    con.execute(samples._KERNELS_VIEW.replace("JOIN rocpd_info_kernel_symbol S", "LEFT JOIN rocpd_info_kernel_symbol S"))
    con.execute(f'UPDATE "rocpd_kernel_dispatch_{samples.ROCPD_UUID}" SET kernel_id = 99 WHERE id = 1')
    con.commit()
    con.close()
    with pytest.raises(TraceFormatError, match=r"symbol id\(s\) \[99\]"):
        traces.read(path)


def test_not_sqlite_and_other_databases(tmp_path):
    text = tmp_path / "results.db"
    text.write_text("this is not a database\n")
    with pytest.raises(TraceFormatError, match=r"results\.db: not an SQLite database"):
        traces.read_rocpd(text)
    with pytest.raises(TraceFormatError, match=r"results\.db, line 1: unrecognised header"):
        traces.read(text)
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE people (name TEXT)")
    con.commit()
    con.close()
    with pytest.raises(TraceFormatError, match=r"other\.db: SQLite database, but not a rocpd .* holds people"):
        traces.read(other)
    with pytest.raises(FileNotFoundError):
        traces.read(tmp_path / "missing.db")


def test_old_rocpd_refused_by_the_rocpd_reader_read_by_read():
    with pytest.raises(TraceFormatError, match=r"rocmProfileData \.rpd database .* read_rpd"):
        traces.read_rocpd(RPD)
    assert len(traces.read(RPD)) == 5


# --- rocmProfileData .rpd, sample written from the documented schema ----------------------

def test_rpd_ops():
    df = traces.read(RPD)
    assert_schema(df)
    assert (df["source_tool"] == "rpd").all()
    assert df["event_category"].tolist() == ["kernel", "kernel", "kernel", "gpu_memcpy", "gpu_memset"]
    assert df["short_name"].tolist() == ["Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_SN_1LDSB1",
                                         "CatArrayBatchedCopy", "CatArrayBatchedCopy",
                                         "[memcpy Host-to-Device]", "[memset]"]
    assert df["duration_ns"].tolist() == [60000.0, 6240.0, 6000.0, 3000.0, 1500.0]
    # The "Task" op (a HIP graph launch) is a kernel; the marker is not GPU work.
    assert df["op_type"].tolist()[:3] == ["KernelExecution", "KernelExecution", "Task"]
    assert "Marker" not in df["op_type"].tolist()
    # gridX is blocks or work-items depending on the launch API: kept raw, schema grid NA.
    assert df["grid_x"].isna().all()
    assert df["rpd_grid_x"].tolist()[:3] == [1792, 1, 1]
    assert df["block_x"].tolist()[:3] == [256, 128, 128]
    assert df["shared_mem_bytes"].tolist()[0] == 16384
    assert df["pid"].tolist() == [3001] * 5
    assert df["device"].tolist() == ["2"] * 5
    assert traces.categorize(df)["category"].iloc[[0, 3, 4]].tolist() == ["GEMM", "memory copy", "fill"]
    assert len(traces.read_rpd(RPD, memory_ops=False)) == 3


def test_rpd_missing_op_table(tmp_path):
    path = tmp_path / "broken.rpd"
    shutil.copy(RPD, path)
    con = sqlite3.connect(path)
    con.execute("DROP TABLE rocpd_op")
    con.commit()
    con.close()
    with pytest.raises(TraceFormatError, match=r"broken\.rpd: rocmProfileData .rpd database: table or view rocpd_op missing"):
        traces.read_rpd(path)


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

@pytest.fixture
def no_tools_path(tmp_path, monkeypatch):
    """PATH holds only a fresh folder (for fake tools) and the folder of python."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.path.dirname(sys.executable)]))
    return bin_dir


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


# --- rocprofv3 JSON, sample written from the documented schema ----------------------------

def test_rocprofv3_json():
    df = traces.read(V3JSON)
    assert_schema(df)
    k = kernels(df)
    assert k["short_name"].tolist() == ["bwprof_stream_copy", "Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1",
                                        "bwprof_stream_copy"]
    assert k["duration_ns"].tolist() == [10000.0, 500000.0, 11000.0]
    assert k[["grid_x", "grid_y"]].values.tolist() == [[4096, 1], [32, 64], [4096, 1]]
    assert k["registers"].tolist() == [16, 32, 16]
    assert k["shared_mem_bytes"].tolist() == [0, 16384, 0]
    assert k["device"].tolist() == ["GPU 0"] * 3 and k["pid"].tolist() == [9001] * 3
    assert k["correlation_id"].tolist() == [501, 502, 503]
    assert k["SQ_WAVES"].tolist()[0] == 4096.0 and k["SQ_WAVES"].iloc[1:].isna().all()
    copy = df[df["event_category"] == "gpu_memcpy"].iloc[0]
    assert copy["kernel_name"] == "[memcpy Host-to-Device]" and copy["bytes"] == 8388608.0
    assert copy["device"] == "GPU 0" and copy["duration_ns"] == 250000.0


def test_rocprofv3_json_malformed(tmp_path):
    doc = samples.rocprofv3_json_doc()
    del doc["rocprofiler-sdk-tool"][0]["buffer_records"]["kernel_dispatch"][1]["dispatch_info"]
    path = tmp_path / "results.json"
    path.write_text(__import__("json").dumps(doc))
    with pytest.raises(TraceFormatError, match=r"results\.json: rocprofiler-sdk-tool\[0\]\.buffer_records\."
                                               r"kernel_dispatch\[1\]: missing 'dispatch_info'"):
        traces.read(path)
    doc = samples.rocprofv3_json_doc()
    doc["rocprofiler-sdk-tool"][0]["buffer_records"]["kernel_dispatch"][0]["dispatch_info"]["kernel_id"] = 42
    path.write_text(__import__("json").dumps(doc))
    with pytest.raises(TraceFormatError, match=r"kernel_id 42 is not in kernel_symbols"):
        traces.read(path)
    text = V3JSON.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.raises(TraceFormatError, match=r"results\.json, line \d+: malformed JSON"):
        traces.read(path)


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


# --- int columns: the fast path -----------------------------------------------------------

def test_int_columns_pages_and_halves_agree(tmp_path):
    path = tmp_path / "big.db"
    samples.write_big_rocpd(path, 2500, kernels=7)
    with sqlitedb.Database(path) as db:
        exprs = {"id": '"id"', "start": '"start"', "kernel": "kernel_id"}
        one, n1 = sqlitedb.int_columns(db, "kernels", exprs, key='"id"')
        paged, n2 = sqlitedb.int_columns(db, "kernels", exprs, key='"id"', page=300)
        halves, n3 = sqlitedb.int_columns(db, "kernels", exprs, key='"id"', page=300, bounds=(1, 2500))
    assert n1 == n2 == n3 == 2500
    for name in exprs:
        assert (one[name][0] == paged[name][0]).all() and (one[name][0] == halves[name][0]).all()
    assert one["id"][0].tolist() == list(range(1, 2501))
    assert one["start"][0].tolist() == [10 ** 15 + 3000 * i for i in range(2500)]


def test_big_database_values(tmp_path):
    path = tmp_path / "big.db"
    samples.write_big_rocpd(path, 3000, kernels=40)
    df = traces.read(path)
    i = np.arange(3000)
    assert (df["start_ns"].to_numpy() == 10 ** 15 + 3000 * i).all()
    assert (df["duration_ns"].to_numpy() == 1000 + 37 * (i % 40)).all()
    assert (df["grid_x"].to_numpy() == 64 + i % 40).all()
    assert (df["device"].to_numpy() == np.where(i % 2 == 0, "GPU 0", "GPU 1")).all()


# --- Nsight Compute .ncu-rep through ncu_report (stand-in fed the real CSV sample) --------

class _Metric:
    def __init__(self, name, value, unit):
        self._name, self._value, self._unit = name, value, unit

    def name(self):
        return self._name

    def value(self):
        return self._value

    def unit(self):
        return self._unit

    def has_value(self):
        return self._value is not None


class _Action:
    NameBase_DEMANGLED = 1

    def __init__(self, name, metrics):
        self._name, self._metrics = name, metrics

    def name(self, base=0):
        return self._name

    def metric_names(self):
        return tuple(self._metrics)

    def metric_by_name(self, name):
        return self._metrics.get(name)


class _Range:
    def __init__(self, actions):
        self._actions = actions

    def num_actions(self):
        return len(self._actions)

    def action_by_idx(self, i):
        return self._actions[i]


class _Context:
    def __init__(self, ranges):
        self._ranges = ranges

    def num_ranges(self):
        return len(self._ranges)

    def range_by_idx(self, i):
        return self._ranges[i]


def stand_in_ncu_report(csv_path):
    """A module with ncu_report's documented API whose report holds the launches of an ncu
    ``--csv --page raw`` file: metric values as numbers in the units of the units row."""
    import csv as _csv

    from bwprof.traces.units import parse_number

    lines = [line for line in csv_path.read_text().splitlines() if not line.startswith("==")]
    rows = list(_csv.reader(lines))
    header, units, data = rows[0], rows[1], rows[2:]
    actions = []
    for row in data:
        metrics = {}
        for name, unit, text in zip(header, units, row):
            if "__" not in name:
                continue
            value = parse_number(text)
            metrics[name] = _Metric(name, text if value is None else value, unit)
        actions.append(_Action(row[header.index("Kernel Name")], metrics))
    module = types.ModuleType("ncu_report")
    module.IAction = _Action
    # Two ranges, as a report of two profiled ranges would have.
    module.load_report = lambda path: _Context([_Range(actions[:2]), _Range(actions[2:])])
    return module


def test_ncu_rep_matches_the_raw_csv_reader(tmp_path):
    rep = tmp_path / "h100.ncu-rep"
    rep.write_bytes(b"\x00report")
    module = stand_in_ncu_report(DATA / "ncu_raw_h100.csv")
    df = traces.read_ncu_rep(rep, module=module)
    raw = traces.read(DATA / "ncu_raw_h100.csv")
    assert_schema(df)
    assert len(df) == 5 and (df["source_tool"] == "ncu").all()
    for col in ("kernel_name", "short_name", "duration_ns", "grid_x", "grid_y", "grid_z", "block_x",
                "block_y", "block_z", "registers", "shared_mem_bytes", "device", "stream",
                "correlation_id"):
        assert df[col].tolist() == raw[col].tolist(), col
    assert df["duration_ns"].tolist() == [43136.0, 6592.0, 20640.0, 7776.0, 37696.0]
    metric_cols = [c for c in raw.columns if "__" in c]
    assert set(metric_cols) == {c for c in df.columns if "__" in c}
    for col in metric_cols:
        a, b = df[col], raw[col]
        if b.dtype == np.float64:
            assert np.allclose(a.astype(float), b, equal_nan=True), col
        else:
            assert a.tolist() == b.tolist(), col
    assert not any(c.startswith("device__attribute_") for c in df.columns)


def test_ncu_rep_without_the_module(tmp_path, monkeypatch, no_tools_path):
    # Neither ncu_report nor the ncu command (which would be tried first) is there.
    rep = tmp_path / "k.ncu-rep"
    rep.write_bytes(b"\x00report")
    monkeypatch.setattr(ncu_report, "find_ncu_report", lambda: None)
    monkeypatch.setattr(ncu_report, "locate_ncu_report", lambda: None)
    with pytest.raises(TraceFormatError, match=r"k\.ncu-rep: reading a \.ncu-rep needs NVIDIA's ncu_report "
                                               r"module .* ncu --import k\.ncu-rep --csv --page raw"):
        traces.read(rep)


def test_ncu_rep_load_failure(tmp_path):
    rep = tmp_path / "bad.ncu-rep"
    rep.write_bytes(b"garbage")
    module = types.ModuleType("ncu_report")

    def load_report(path):
        raise RuntimeError("Failed to load report")

    module.load_report = load_report
    with pytest.raises(TraceFormatError, match=r"bad\.ncu-rep: ncu_report cannot load it \(Failed to load report\)"):
        traces.read_ncu_rep(rep, module=module)


def test_find_ncu_report_in_a_named_folder(tmp_path, monkeypatch):
    folder = tmp_path / "extras" / "python"
    folder.mkdir(parents=True)
    (folder / "ncu_report.py").write_text("MARK = 'found'\n")
    monkeypatch.setenv("BWPROF_NCU_REPORT_PATH", str(folder))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "ncu_report", raising=False)
    try:
        module = ncu_report.find_ncu_report()
        assert module is not None and module.MARK == "found"
    finally:
        sys.modules.pop("ncu_report", None)
