"""The reader of rocmProfileData's .rpd databases (roctracer-era rpd_tracer), on
rocmprofiledata.rpd, WRITTEN FROM THE DOCUMENTED SCHEMA by
tests/data/traces/sample_writers/rpd.py (no rpd_tracer run here; the values are invented).
"""

import shutil
import sqlite3

import pytest

import bwprof.traces as traces
from bwprof.traces import TraceFormatError

from traces_common import RPD, assert_schema


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
