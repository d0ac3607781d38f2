"""Categories, breakdown, Amdahl, DRAM-vs-logical join and findings, checked by hand."""

import pandas as pd
import pytest

import bwprof.traces as traces

from traces_common import DATA


@pytest.mark.parametrize("name, category", [
    ("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0", "GEMM"),
    ("sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64", "GEMM"),
    ("nvjet_sm90_hsh_128x64_64x8_1x2_h_bz_NNT", "GEMM"),
    ("void cutlass::Kernel<cutlass_80_tensorop_s16816gemm_f16_256x128_32x3_nn_align8>(Params)", "GEMM"),
    ("void flash_fwd_kernel<Flash_fwd_kernel_traits<128>>(Flash_fwd_params)", "attention"),
    ("fmha_cutlassF_f16_aligned_64x64_rf_sm80", "attention"),
    ("void at::native::vectorized_layer_norm_kernel<c10::Half, float>(int)", "normalization"),
    ("rms_norm_kernel<float>", "normalization"),
    ("addBiasBatched_kernel", "elementwise"),
    ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(float*)", "reduction"),
    ("__amd_rocclr_copyBuffer", "memory copy"),
    ("Memcpy DtoD (Device -> Device)", "memory copy"),
    ("__amd_rocclr_fillBufferAligned", "fill"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)", "fill"),
    ("void dequantize_block_q4_0(const void*, half*)", "quantization"),
    ("void vllm::reshape_and_cache_flash_kernel<__half>(int)", "KV cache"),
    ("ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*)", "communication"),
    ("mystery_kernel", "other"),
    # bwprof's own kernels land in their families.
    ("bwprof_gemm_fp16", "GEMM"), ("bwprof_gemv_q", "GEMM"),
    ("bwprof_attention_fp16", "attention"), ("bwprof_flash_decode", "attention"),
    ("bwprof_layernorm_fp16", "normalization"), ("bwprof_bias_act_gelu", "elementwise"),
    ("bwprof_stream_copy", "memory copy"), ("bwprof_stream_triad", "elementwise"),
    ("bwprof_stream_dot", "reduction"), ("bwprof_stream_read<float, 256, 2>", "reduction"),
    ("bwprof_kv_cache_append", "KV cache"),
    ("void bwprof_q4_0_matmul<128>(void const*)", "quantization"),
])
def test_default_categories(name, category):
    assert traces.category_of(name) == category


def test_user_rules_extend_and_override():
    df = traces.read(DATA / "rocprofv3_kernel_trace.csv")
    default = traces.categorize(df)
    assert set(default["category"]) == {"elementwise"}
    extended = traces.categorize(df, extra_rules={r"^divide_kernel": "division"})
    assert extended["category"].value_counts().to_dict() == {"elementwise": 6, "division": 2}
    replaced = traces.categorize(df, rules=[(r"add", "adds")])
    assert replaced["category"].value_counts().to_dict() == {"other": 6, "adds": 2}
    with pytest.raises(ValueError, match="bad regular expression"):
        traces.categorize(df, extra_rules={"(": "x"})


def test_breakdown_by_category_stats_file():
    table = traces.breakdown(traces.read(DATA / "rocprofv3_kernel_stats.csv"))
    total = 121890000 + 11440000 + 2350000 + 5410000
    assert table["category"].tolist() == ["GEMM", "normalization", "memory copy", "attention"]
    assert table["total_time_ns"].tolist() == [121890000.0, 11440000.0, 5410000.0, 2350000.0]
    assert table["calls"].tolist() == [650, 300, 704, 75]
    assert table["avg_time_ns"].iloc[3] == pytest.approx(2350000 / 75)
    assert table["pct_gpu_time"].iloc[0] == pytest.approx(100 * 121890000 / total)
    assert table["pct_gpu_time"].sum() == pytest.approx(100.0)


def test_breakdown_by_kernel_sample():
    table = traces.breakdown(traces.read(DATA / "rocprofv3_kernel_trace.csv"), by="kernel")
    assert table["short_name"].tolist() == ["addition_kernel", "divide_kernel",
                                            "subtract_kernel", "multiply_kernel"]
    assert table["total_time_ns"].tolist() == [16157.0 + 12830.0, 10103.0 + 11547.0,
                                               10464.0 + 10905.0, 10183.0 + 11145.0]
    assert table["calls"].tolist() == [2, 2, 2, 2]
    assert table["pct_gpu_time"].iloc[0] == pytest.approx(100 * 28987 / 93334)
    with pytest.raises(ValueError, match="by must be"):
        traces.breakdown(traces.read(DATA / "rocprofv3_kernel_trace.csv"), by="colour")


def test_amdahl_by_hand():
    df = pd.DataFrame({"kernel_name": ["Cijk_gemm", "layer_norm_kernel", "mystery"],
                       "duration_ns": [60.0, 30.0, 10.0], "calls": [1, 1, 1]})
    df["short_name"] = df["kernel_name"]
    a = traces.amdahl(df, factors=(2, 4)).set_index("category")
    assert a.loc["GEMM", "fraction"] == pytest.approx(0.6)
    # 1 / (0.4 + 0.6 / 2) = 1 / 0.7
    assert a.loc["GEMM", "speedup_if_2x"] == pytest.approx(1 / 0.7)
    assert a.loc["GEMM", "speedup_if_4x"] == pytest.approx(1 / (0.4 + 0.15))
    assert a.loc["GEMM", "speedup_if_free"] == pytest.approx(2.5)
    assert a.loc["other", "speedup_if_free"] == pytest.approx(1 / 0.9)
    only = traces.amdahl(df.iloc[:1])
    assert only["speedup_if_free"].iloc[0] == float("inf")


def test_dram_bytes_units():
    rocprof = traces.dram_bytes(traces.read(DATA / "rocprof_results.csv"))
    assert rocprof["dram_bytes_read"].tolist() == [4096 * 1024.0, 512 * 1024.0, 64 * 1024.0]
    assert rocprof["dram_bytes_written"].tolist() == [1024 * 1024.0, 2 * 1024.0, 64 * 1024.0]
    ncu = traces.dram_bytes(traces.read(DATA / "ncu_raw_h100.csv"))
    assert ncu["dram_bytes_read"].iloc[4] == 33569792.0


def test_join_counters_with_bwprof_results():
    trace = traces.read(DATA / "ncu_raw_h100.csv")
    results = pd.DataFrame({
        "kernel": ["layernorm", "layernorm"], "variant": ["torch", "torch"],
        "dtype": ["fp16", "fp32"], "shape": ["16384x1024", "16384x1024"],
        "device": ["H100", "H100"], "backend": ["cuda", "cuda"],
        "time_median_us": [37.7, 70.0], "bytes_read": [33554432.0, 67108864.0],
        "bytes_written": [16777216.0, 33554432.0], "flops": [0.0, 0.0],
        "bandwidth_gbs": [1335.0, 1438.0],
        "kernel_name": ["vectorized_layer_norm_kernel", "vectorized_layer_norm_kernel"]})
    joined = traces.join_counters(trace, results)
    assert len(joined) == 2 and joined["dtype"].tolist() == ["fp16", "fp32"]
    row = joined.iloc[0]
    assert row["dram_read_ratio"] == pytest.approx(33569792 / 33554432)
    assert row["dram_write_ratio"] == pytest.approx(14798592 / 16777216)
    assert row["dram_ratio"] == pytest.approx((33569792 + 14798592) / (33554432 + 16777216))
    assert row["dram_bandwidth_gbs"] == pytest.approx((33569792 + 14798592) / 37696)
    # The same through a mapping, when results carry no kernel_name column.
    mapped = traces.join_counters(trace, results.drop(columns="kernel_name").iloc[:1],
                                  mapping={"vectorized_layer_norm_kernel": "layernorm"})
    assert mapped["dram_read_ratio"].iloc[0] == pytest.approx(row["dram_read_ratio"])
    with pytest.raises(ValueError, match="mapping"):
        traces.join_counters(trace, results.drop(columns="kernel_name"))


def test_join_counters_rocprof_fetch_size_in_kilobytes():
    trace = traces.read(DATA / "rocprofv3_counters_extended.csv")
    results = pd.DataFrame({"kernel": ["stream"], "variant": ["copy"], "bytes_read": [32 * 2**20],
                            "bytes_written": [32 * 2**20], "kernel_name": ["bwprof_stream_copy"]})
    row = traces.join_counters(trace, results).iloc[0]
    # FETCH_SIZE 65536 KB = 64 MiB read where 32 MiB were needed: every byte read twice.
    assert row["dram_read_ratio"] == pytest.approx(2.0)
    assert row["dram_ratio"] == pytest.approx(2.0)
    found = traces.findings(traces.join_counters(trace, results).assign(
        short_name="bwprof_stream_copy"))
    assert "re-read" in found["finding"].iloc[0]


def test_findings_from_rocprof_counters():
    f = traces.findings(traces.read(DATA / "rocprofv3_counters_extended.csv"), cu_count=304)
    got = {(r.kernel, r.indicator): r.value for r in f.itertuples()}
    assert got[("bwprof_attention_fp16", "SQ_WAIT_INST_LDS / SQ_INSTS_LDS")] == pytest.approx(18.0)
    assert got[("bwprof_attention_fp16", "TCC_MISS / (TCC_HIT + TCC_MISS)")] == pytest.approx(0.75)
    assert got[("bwprof_attention_fp16", "SQ_WAVES")] == 64.0
    assert got[("bwprof_stream_copy", "SQ_INSTS_VMEM share")] == pytest.approx(131072 / 196608)
    assert len(f) == 4                      # the copy kernel's L2 (10% misses) and waves are fine
    text = " ".join(f["finding"])
    for words in ("bank conflicts", "poor locality", "occupancy-limited", "memory-bound"):
        assert words in text


def test_findings_from_ncu():
    f = traces.findings(traces.read(DATA / "ncu_details.csv"))
    assert f["indicator"].tolist() == ["DRAM throughput %", "achieved occupancy %",
                                       "ncu rule AchievedOccupancy"]
    raw = traces.findings(traces.read(DATA / "ncu_raw_h100.csv"))
    assert set(raw["kernel"]) == {"nvjet_sm90_hsh_128x64_64x8_1x2_h_bz_NNT"}
    assert raw["value"].tolist() == [0.97, 14.0]


def test_no_counters_no_findings():
    assert traces.findings(traces.read(DATA / "rocprofv3_kernel_trace.csv")).empty
