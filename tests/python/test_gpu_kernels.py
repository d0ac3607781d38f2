"""GPU kernels against the float64 reference, timing and errors (skipped without a GPU)."""
import pytest

import bwprof

pytestmark = pytest.mark.gpu
Q = dict(repeats=3, min_time_s=0.0, warmup=1)

# Sizes deliberately not multiples of 8, 32 or 128 next to aligned ones.
CASES = [
    ("stream_copy", None, dict(n=1000003)),
    ("stream_scale", None, dict(n=777)),
    ("stream_add", None, dict(n=65537)),
    ("stream_triad", None, dict(n=1 << 20)),
    ("stream_dot", None, dict(n=999999)),
    ("stream_read", None, dict(n=999983)),
    ("stream_read", None, dict(n=5)),
    ("layernorm", None, dict(rows=37, cols=4096)),
    ("layernorm", None, dict(rows=5, cols=896)),
    ("layernorm", None, dict(rows=9, cols=771)),
    ("layernorm", None, dict(rows=3, cols=65536)),
    ("bias_act", "fused", dict(rows=33, cols=4864, act="gelu")),
    ("bias_act", "fused", dict(rows=7, cols=333, act="silu")),
    ("bias_act", "unfused", dict(rows=17, cols=1000, act="relu")),
    ("bias_act", "unfused", dict(rows=3, cols=127, act="gelu")),
    ("kv_cache_append", "contiguous", dict(batch=3, kv_heads=2, head_dim=64, max_seq=300, new_tokens=37)),
    ("kv_cache_append", "contiguous", dict(batch=2, kv_heads=3, head_dim=33, max_seq=50, new_tokens=5)),
    ("kv_cache_append", "paged", dict(batch=4, kv_heads=2, head_dim=128, max_seq=257, new_tokens=41, block_size=16)),
    ("kv_cache_append", "paged", dict(batch=2, kv_heads=1, head_dim=7, max_seq=64, new_tokens=9, block_size=5)),
    ("q4_0_dequant", None, dict(rows=33, cols=4096)),
    ("q4_0_dequant", None, dict(rows=7, cols=96)),
    ("q4_0_matmul", "llama", dict(M=1, N=1000, K=4096)),
    ("q4_0_matmul", "llama", dict(M=5, N=77, K=160)),
    ("q4_0_matmul", "tiled", dict(M=1, N=1001, K=4096)),
    ("q4_0_matmul", "tiled", dict(M=8, N=130, K=96)),
    ("q4_0_matmul", "tiled", dict(M=11, N=33, K=64)),
    ("q4_0_matmul", "tiled", dict(M=2, N=8500, K=96)),  # 532 tiles: the 4-warp ring kernel on an H100
    ("gemv", None, dict(N=4096, K=4096)),
    ("gemv", None, dict(N=77, K=1001)),
    ("gemv", None, dict(N=130, K=128)),
    ("gemv", None, dict(N=65, K=264, rotate=3)),  # three copies of W used in turn
    ("intensity_sweep", None, dict(n=100003, fmas=1)),
    ("intensity_sweep", None, dict(n=4096, fmas=333)),
    ("fill", None, dict(n=1000003)),
    ("fill", None, dict(n=4096)),
]


@pytest.mark.parametrize("kernel,variant,shape", CASES)
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_gpu_kernel_matches_reference(kernel, variant, shape, dtype):
    d = bwprof.measure(kernel, dtype=dtype, device="gpu", variant=variant, **shape, **Q).to_dict()
    assert d["backend"] in ("cuda", "hip")
    assert d["verified"], f"{kernel} {variant} {dtype} {shape}: error {d['max_rel_error']} > {d['tolerance']}"
    assert d["time_median_us"] > 0
    assert d["registers_per_thread"] > 0 and d["block_size"] > 0
    # bwprof's occupancy calculator agrees exactly with the runtime's occupancy API.
    assert d["occupancy_blocks_per_sm"] == d["runtime_blocks_per_sm"] > 0, d
    assert 0 < d["occupancy_pct"] <= 100 and d["occupancy_limiter"]


def test_device_information_and_peaks():
    dev = bwprof.device("gpu")
    info = dev.info
    assert info["compute_units"] > 0 and info["cache_bytes"] > 0 and info["memory_bytes"] > 0
    assert info["bandwidth_theoretical_gbs"] > 100
    p = bwprof.peaks("gpu", "fp32")
    assert p["bandwidth_source"].startswith("measured:stream_")
    assert 0 < p["bandwidth_gbs"] <= 1.05 * info["bandwidth_theoretical_gbs"]
    assert set(p["bandwidth_by_kernel"]) == {f"stream_{k}" for k in ("copy", "scale", "add", "triad", "dot", "read")}
    assert p["gflops"] > 0 and p["gflops"] <= 1.05 * info["fp32_gflops_theoretical"]


def test_rows_report_both_peaks():
    d = bwprof.measure("stream_triad", device="gpu", n=1 << 26, **Q).to_dict()
    assert d["theoretical_bandwidth_gbs"] > d["peak_bandwidth_gbs"] * 0.9
    assert d["bandwidth_pct_theoretical"] == pytest.approx(
        100 * d["bandwidth_gbs"] / d["theoretical_bandwidth_gbs"], rel=1e-9)
    assert d["cache"] == "cold"


def test_out_of_device_memory_is_memory_error_and_the_device_still_works():
    # The largest n the kernel takes (2^36: 512 GiB of FP32 arrays) is more than any GPU holds;
    # beyond the kernel's range it is a ValueError naming n before memory is asked about.
    with pytest.raises(MemoryError):
        bwprof.measure("stream_copy", device="gpu", n=1 << 36, verify=False, **Q)
    with pytest.raises(ValueError, match="n: "):
        bwprof.measure("stream_copy", device="gpu", n=1 << 40, verify=False, **Q)
    d = bwprof.measure("stream_copy", device="gpu", n=4096, **Q).to_dict()
    assert d["verified"]


def test_bad_shapes_are_value_errors_on_the_gpu():
    with pytest.raises(ValueError, match="K"):
        bwprof.measure("q4_0_matmul", device="gpu", N=4, K=33, **Q)
    with pytest.raises(ValueError, match="variant"):
        bwprof.measure("q4_0_matmul", device="gpu", variant="cpu", N=4, K=32, **Q)
    with pytest.raises(ValueError, match="new_tokens"):
        bwprof.measure("kv_cache_append", device="gpu", kv_heads=1, head_dim=8, max_seq=4, new_tokens=9, **Q)


def test_intensity_sweep_climbs_from_the_bandwidth_roof_to_the_compute_roof():
    lo = bwprof.measure("intensity_sweep", device="gpu", n=1 << 26, fmas=1, **Q).to_dict()
    hi = bwprof.measure("intensity_sweep", device="gpu", n=1 << 24, fmas=2048, **Q).to_dict()
    assert lo["bound"] == "memory" and lo["bandwidth_pct_peak"] > 60
    assert hi["bound"] == "compute" and hi["compute_pct_peak"] > 50


def test_single_decode_append_is_latency_bound():
    d = bwprof.measure("kv_cache_append", device="gpu", kv_heads=2, head_dim=64, max_seq=4096, new_tokens=1,
                       **Q).to_dict()
    assert d["bound"] == "latency" and "latency" in d["bottleneck"]


def test_quick_suite_runs_on_the_gpu():
    df = bwprof.run_suite(device="gpu", quick=True, progress=False,
                          kernels=["stream", "layernorm", "bias_act", "kv_cache", "q4_0", "gemv"])
    assert len(df) > 20 and df["verified"].all(), df[~df["verified"]][["kernel", "variant", "dtype", "shape"]]
    assert not df.attrs["errors"]
