"""rocprofv3 ``--output-format json``, on rocprofv3_results.json, WRITTEN FROM THE DOCUMENTED
SCHEMA by tests/data/traces/sample_writers/rocprofv3_json.py (no rocprofv3 run here; the values
are invented).
"""

import pytest

import bwprof.traces as traces
from bwprof.traces import TraceFormatError

from sample_writers import rocprofv3_json as samples
from traces_common import V3JSON, assert_schema, kernels


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
