"""Readers: every format into the one kernel-trace schema, values checked against the files."""

import gzip
import math
import shutil

import pytest

import bwprof.traces as traces
from bwprof.traces import TraceFormatError
from bwprof.traces.names import short_kernel_name
from bwprof.traces.units import parse_number, to_base, unit_scale

from traces_common import DATA, assert_schema


def read(name):
    return traces.read(DATA / name)


# --- units --------------------------------------------------------------------------------

@pytest.mark.parametrize("text, unit, expected, base", [
    ("1.23", "Kbyte", 1230.0, "byte"),
    ("12.29", "usecond", 12290.0, "ns"),
    ("1.05", "msecond", 1.05e6, "ns"),
    ("2.93", "Tbyte/second", 2.93e12, "byte/second"),
    ("1,012.45", "Gbyte/second", 1.01245e12, "byte/second"),
    ("2.62", "cycle/nsecond", 2.62e9, "cycle/second"),
    ("1,980,000", "", 1980000.0, ""),
    ("87.40", "%", 87.4, "%"),
    ("213.27", "Kbyte/block", 213270.0, "byte/block"),
])
def test_units_normalised_to_base(text, unit, expected, base):
    value, got_base = to_base(text, unit)
    assert value == pytest.approx(expected, rel=1e-12)
    assert got_base == base


def test_missing_and_non_numeric_values():
    assert math.isnan(parse_number("n/a"))
    assert math.isnan(parse_number(""))
    assert parse_number("PolicySpread") is None
    assert unit_scale("Mhz") == (1e6, "hz")


# --- short names --------------------------------------------------------------------------

@pytest.mark.parametrize("name, short", [
    ("void addition_kernel<float>(float*, float const*, float const*, int, int)", "addition_kernel"),
    ("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0 [clone .kd]",
     "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0"),
    ("__amd_rocclr_copyBuffer.kd", "__amd_rocclr_copyBuffer"),
    ("void at::<unnamed>::vectorized_layer_norm_kernel<c10::Half, float, 0>(int, T2, const T1 *)",
     "vectorized_layer_norm_kernel"),
    ("_Z15addition_kernelIfEvPfPKfS2_ii", "addition_kernel"),
    ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_",
     "vectorized_elementwise_kernel"),
    ("void cutlass::Kernel<cutlass_80_tensorop_s16816gemm_f16_256x128_32x3_nn_align8>(P::Params)",
     "cutlass_80_tensorop_s16816gemm_f16_256x128_32x3_nn_align8"),
    ("Memcpy DtoH (Device -> Pinned)", "Memcpy DtoH"),
    ("bwprof_stream_copy", "bwprof_stream_copy"),
])
def test_short_kernel_name(name, short):
    assert short_kernel_name(name) == short


# --- rocprofv3 ----------------------------------------------------------------------------

def test_rocprofv3_kernel_trace_sample():
    df = read("rocprofv3_kernel_trace.csv")
    assert_schema(df)
    assert traces.detect_format(DATA / "rocprofv3_kernel_trace.csv") == "rocprofv3_kernel_trace"
    assert len(df) == 8
    assert df["short_name"].value_counts().to_dict() == {
        "addition_kernel": 2, "subtract_kernel": 2, "multiply_kernel": 2, "divide_kernel": 2}
    assert df.loc[0, "start_ns"] == 2414192765353337
    assert df.loc[0, "end_ns"] == 2414192765369494
    assert (df["duration_ns"] == (df["end_ns"] - df["start_ns"]).astype(float)).all()
    assert df.loc[0, "duration_ns"] == 16157.0
    assert df["duration_ns"].sum() == 93334.0
    # Grid_Size_* counts work-items: 1024 x 1024 items in 64 x 1 x 1 groups = 16 x 1024 blocks.
    assert (df.loc[0, ["grid_x", "grid_y", "grid_z"]].tolist()) == [16, 1024, 1]
    assert (df.loc[0, ["block_x", "block_y", "block_z"]].tolist()) == [64, 1, 1]
    assert df["device"].unique().tolist() == ["2"]
    assert df["stream"].tolist() == ["1"] * 4 + ["2"] * 4
    assert df["correlation_id"].tolist() == [1937, 1945, 1953, 1961, 1969, 1977, 1985, 1993]
    assert (df["calls"] == 1).all()
    assert (df["source_tool"] == "rocprofv3").all()


def test_rocprofv3_kernel_trace_rocm7_header():
    df = read("rocprofv3_kernel_trace_rocm7.csv")
    assert len(df) == 3
    assert df["device"].tolist() == ["GPU 0"] * 3
    # VGPRs plus AGPRs; Lds_Block_Size in bytes.
    assert df.loc[0, "registers"] == 256
    assert df.loc[0, "shared_mem_bytes"] == 16384
    assert df.loc[0, ["grid_x", "grid_y", "grid_z"]].tolist() == [256, 8, 1]
    # 1000 work-items in groups of 256: a partial last group still counts.
    assert df.loc[2, "grid_x"] == 4
    assert df["duration_ns"].tolist() == [450000.0, 50000.0, 10500.0]


def test_rocprofv3_counter_collection_sample_one_row_per_dispatch():
    df = read("rocprofv3_counter_collection.csv")
    assert_schema(df)
    assert len(df) == 4
    assert df["SQ_WAVES"].tolist() == [16384.0] * 4
    assert df["registers"].tolist() == [8, 8, 8, 12]
    assert df["grid_x"].tolist() == [16384] * 4            # 1048576 items / 64 per group
    assert df["device"].tolist() == ["Agent 1"] * 4
    assert df.loc[0, "duration_ns"] == 3200098838483232 - 3200098838431081


def test_counter_collection_sums_repeated_counters():
    df = read("rocprofv3_counters_extended.csv")
    assert len(df) == 2
    copy = df.set_index("short_name").loc["bwprof_stream_copy"]
    assert copy["SQ_WAVES"] == 65536.0
    assert copy["FETCH_SIZE"] == 65536.0


def test_rocprofv3_kernel_stats():
    df = read("rocprofv3_kernel_stats.csv")
    assert_schema(df)
    assert df["calls"].tolist() == [650, 300, 75, 704]
    assert df["duration_ns"].tolist() == [121890000.0, 11440000.0, 2350000.0, 5410000.0]
    assert df["start_ns"].isna().all()
    assert df.loc[0, "min_ns"] == 150000.0
    assert (df["source_tool"] == "rocprofv3").all()


def test_rocprofv3_agent_info():
    agents = traces.read_agent_info(DATA / "rocprofv3_agent_info.csv")
    gpu = agents[agents["agent_type"] == "GPU"].iloc[0]
    assert gpu["cu_count"] == 304
    assert gpu["wave_front_size"] == 64
    assert gpu["product_name"] == "AMD Instinct MI300X"
    with pytest.raises(TraceFormatError, match="read_agent_info"):
        read("rocprofv3_agent_info.csv")


# --- legacy rocprof -----------------------------------------------------------------------

def test_rocprof_results():
    df = read("rocprof_results.csv")
    assert_schema(df)
    assert traces.detect_format(DATA / "rocprof_results.csv") == "rocprof_results"
    assert df["short_name"].tolist() == ["Cijk_Alik_Bljk_SB_MT64x64x16_SN_1LDSB0",
                                         "bwprof_q4_0_matmul", "__amd_rocclr_copyBuffer"]
    assert df["duration_ns"].tolist() == [50000.0, 10000.0, 2000.0]
    assert df["grid_x"].tolist() == [1024, 32, 4]
    assert df["shared_mem_bytes"].tolist() == [8192, 0, 0]
    assert df["FETCH_SIZE"].tolist() == [4096.0, 512.0, 64.0]
    assert (df["source_tool"] == "rocprof").all()


def test_rocprof_stats():
    df = read("rocprof_results.stats.csv")
    assert traces.detect_format(DATA / "rocprof_results.stats.csv") == "rocprof_stats"
    assert df["calls"].tolist() == [10, 10, 12]
    assert df["duration_ns"].sum() == 625000.0


# --- Nsight Compute -----------------------------------------------------------------------

def test_ncu_raw_sample():
    df = read("ncu_raw_h100.csv")
    assert_schema(df)
    assert len(df) == 5
    assert df["duration_ns"].tolist() == [43136.0, 6592.0, 20640.0, 7776.0, 37696.0]
    assert df["short_name"].tolist()[2:] == ["vectorized_elementwise_kernel",
                                             "nvjet_sm90_hsh_128x64_64x8_1x2_h_bz_NNT",
                                             "vectorized_layer_norm_kernel"]
    gemm = df.iloc[3]
    assert [gemm["grid_x"], gemm["grid_y"], gemm["grid_z"]] == [2, 64, 1]
    assert [gemm["block_x"], gemm["block_y"], gemm["block_z"]] == [384, 1, 1]
    assert gemm["registers"] == 168
    assert gemm["shared_mem_bytes"] == 213268                # static 0 + dynamic 213,268
    assert df.iloc[4]["shared_mem_bytes"] == 24
    # Thousands separators are gone; bytes are bytes.
    assert df["dram__bytes_read.sum"].tolist() == [12032.0, 10496.0, 33561344.0, 2116096.0, 33569792.0]
    assert df["dram__bytes_write.sum"].tolist() == [12013568.0, 0.0, 11023360.0, 0.0, 14798592.0]
    assert df["launch__waves_per_multiprocessor"].tolist() == [1.6, 1.6, 7.76, 0.97, 7.76]
    assert df["device"].tolist() == ["0"] * 5 and df["stream"].tolist() == ["7"] * 5
    assert df["correlation_id"].tolist() == [0, 1, 2, 3, 4]
    assert not any(c.startswith("device__attribute_") for c in df.columns)


def test_ncu_details_page():
    df = read("ncu_details.csv")
    assert traces.detect_format(DATA / "ncu_details.csv") == "ncu_details"
    assert len(df) == 2
    assert df["duration_ns"].tolist() == [12290.0, 1050000.0]          # usecond, msecond
    assert df["dram__bytes_write.sum"].tolist()[0] == pytest.approx(1230.0)   # 1.23 Kbyte
    assert df["dram__bytes_read.sum"].tolist()[1] == pytest.approx(1.07e9)
    assert df["registers"].tolist() == [16, 168]
    assert df["shared_mem_bytes"].tolist() == [0, 213270]
    assert df["Threads"].tolist() == [1048576.0, 50688.0]
    assert math.isnan(df["DRAM Throughput"].iloc[1])                    # n/a
    # "Memory Throughput" is in two sections (% and byte/second): both kept, apart.
    assert df["GPU Speed Of Light Throughput / Memory Throughput"].tolist() == [87.4, 30.1]
    assert df["Memory Workload Analysis / Memory Throughput"].iloc[1] == pytest.approx(1.01245e12)
    # The ragged old-style row is read too.
    assert df["Theoretical Occupancy"].iloc[1] == 25.0
    rules = df.attrs["rules"]
    assert [r["rule"] for r in rules] == ["AchievedOccupancy"]
    assert rules[0]["estimated_speedup"] == 26.0


def test_read_ncu_picks_the_page():
    assert len(traces.read_ncu(DATA / "ncu_raw_h100.csv")) == 5
    assert len(traces.read_ncu(DATA / "ncu_details.csv")) == 2


# --- nsys and PyTorch ---------------------------------------------------------------------

def test_nsys_kern_sum_after_preamble():
    df = read("nsys_cuda_gpu_kern_sum.csv")
    assert_schema(df)
    assert df["calls"].tolist() == [10, 20, 40]
    assert df["duration_ns"].tolist() == [500000.0, 200000.0, 100000.0]
    assert df["median_ns"].tolist() == [49800.0, 10000.0, 2400.0]
    assert df["short_name"].tolist() == ["cutlass_80_tensorop_s16816gemm_f16_256x128_32x3_nn_align8",
                                         "flash_fwd_kernel", "ncclDevKernel_AllReduce_Sum_f16_RING_LL"]


def test_pytorch_trace_gpu_events_only():
    df = read("pytorch_trace.json")
    assert_schema(df)
    assert df["event_category"].tolist() == ["kernel", "kernel", "gpu_memcpy", "gpu_memset"]
    assert df["start_ns"].tolist() == [1020500, 1130000, 1160000, 1170000]   # us -> ns
    assert df["duration_ns"].tolist() == [100250.0, 20000.0, 4500.0, 1500.0]
    assert (df["duration_ns"] == (df["end_ns"] - df["start_ns"]).astype(float)).all()
    first = df.iloc[0]
    assert [first["grid_x"], first["grid_y"], first["grid_z"]] == [32, 4, 1]
    assert first["registers"] == 232 and first["shared_mem_bytes"] == 98304
    assert first["correlation_id"] == 21 and first["stream"] == "7"


def test_pytorch_trace_gzip(tmp_path):
    target = tmp_path / "trace.json.gz"
    target.write_bytes(gzip.compress((DATA / "pytorch_trace.json").read_bytes()))
    assert len(traces.read(target)) == 4


def test_read_dir_prefers_dispatches_and_joins_counters(tmp_path):
    run = tmp_path / "host" / "1234"
    run.mkdir(parents=True)
    shutil.copy(DATA / "rocprofv3_kernel_trace.csv", run / "bwprof_kernel_trace.csv")
    shutil.copy(DATA / "rocprofv3_kernel_stats.csv", run / "bwprof_kernel_stats.csv")
    shutil.copy(DATA / "rocprofv3_agent_info.csv", run / "bwprof_agent_info.csv")
    (run / "bwprof_hip_api_trace.csv").write_text('"Domain","Function"\n"HIP","hipMalloc"\n')
    df = traces.read(tmp_path)
    assert len(df) == 8 and df["calls"].sum() == 8


# --- malformed input ----------------------------------------------------------------------

def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        traces.read(DATA / "no_such_file.csv")


def test_empty_file(tmp_path):
    path = write(tmp_path, "kernel_trace.csv", "")
    with pytest.raises(TraceFormatError, match=r"kernel_trace\.csv, line 1: file is empty"):
        traces.read(path)


def test_binary_file(tmp_path):
    path = write(tmp_path, "results.csv", b'"Index","KernelName"\n\x00\x01\x02\xff\xfe')
    with pytest.raises(TraceFormatError, match=r"results\.csv, line 2: binary"):
        traces.read(path)


def test_truncated_row(tmp_path):
    text = (DATA / "rocprofv3_kernel_trace.csv").read_text()
    path = write(tmp_path, "kernel_trace.csv", text[: text.rindex(",1024,1024")])
    with pytest.raises(TraceFormatError, match=r"kernel_trace\.csv, line 9: 16 fields .* has 19"):
        traces.read(path)


def test_unterminated_quote(tmp_path):
    text = (DATA / "rocprofv3_kernel_trace.csv").read_text()
    path = write(tmp_path, "kernel_trace.csv", text + '"KERNEL_DISPATCH",2,2,2,21228,9,11,"void add')
    # issue 45: said as what it is, at the line where the quote opens
    with pytest.raises(TraceFormatError, match=r"kernel_trace\.csv, line 1\d: a quoted field opened on "
                                               r"this line is never closed"):
        traces.read(path)


def test_wrong_columns(tmp_path):
    path = write(tmp_path, "data.csv", "a,b,c\n1,2,3\n")
    with pytest.raises(TraceFormatError, match=r"data\.csv, line 1: unrecognised header"):
        traces.read(path)
    trace = write(tmp_path, "trace.csv", '"Kernel_Name","Start_Timestamp"\n"k",1\n')
    with pytest.raises(TraceFormatError, match=r"trace\.csv, line 1: not a rocprofv3 kernel_trace\.csv: "
                                               r"missing column\(s\) End_Timestamp"):
        traces.read_rocprofv3_kernel_trace(trace)


def test_bad_number_names_its_line(tmp_path):
    text = (DATA / "rocprofv3_kernel_trace.csv").read_text().replace("2414192765435326", "soon", 1)
    path = write(tmp_path, "kernel_trace.csv", text)
    with pytest.raises(TraceFormatError, match=r"line 3: column 'End_Timestamp': 'soon'"):
        traces.read(path)


def test_truncated_json(tmp_path):
    text = (DATA / "pytorch_trace.json").read_text()
    path = write(tmp_path, "trace.json", text[: len(text) // 2])
    with pytest.raises(TraceFormatError, match=r"trace\.json, line \d+: malformed JSON"):
        traces.read(path)


def test_json_without_events(tmp_path):
    path = write(tmp_path, "trace.json", '{"schemaVersion": 1}')
    with pytest.raises(TraceFormatError, match="traceEvents"):
        traces.read(path)


def test_errors_are_value_errors():
    assert issubclass(TraceFormatError, ValueError)
