"""The rocpd reader (rocprofiler-sdk's database, ROCm 7 rocprofv3) and sqlitedb's integer
columns under it, on rocpd_two_processes.db and databases built here, both WRITTEN FROM THE
DOCUMENTED SCHEMA by tests/data/traces/sample_writers/rocpd.py (no rocprofv3 run here; the
values are invented and checked below).
"""

import shutil
import sqlite3

import numpy as np
import pandas as pd
import pytest

import bwprof.traces as traces
from bwprof.traces import TraceFormatError, sqlitedb

from sample_writers import rocpd as samples
from traces_common import ROCPD, RPD, assert_schema, kernels


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
