import math

import pandas as pd
import pytest

import bwprof

QUICK = dict(repeats=3, min_time_s=0.001, warmup=1)


def test_devices_lists_the_cpu_last():
    devs = bwprof.devices()
    assert devs[-1].id == "cpu" and devs[-1].kind == "cpu"
    assert bwprof.device("cpu").name == devs[-1].name
    auto = bwprof.device("auto")
    assert auto.id == (devs[0].id if devs[0].kind == "gpu" else "cpu")


def test_build_features_say_what_the_build_carries():
    f = bwprof._core.build_features()
    assert f[0] == "cpu" and len(set(f)) == len(f)
    assert set(f) <= {"cpu", "cuda", "hip", "sm90a", "vendor_blas"}
    assert not ({"cuda", "hip"} <= set(f))
    if "sm90a" in f or "vendor_blas" in f:
        assert "cuda" in f or "hip" in f
    gemm = next(k for k in bwprof._core.kernels() if k["name"] == "gemm")
    gpu_variants = {v["name"] for v in gemm["variants"] if v["backend"] == "gpu"}
    assert ("vendor" in gpu_variants) == ("vendor_blas" in f)


@pytest.mark.serial
def test_measure_returns_a_flat_record_with_derived_rates():
    m = bwprof.measure("stream_triad", dtype="fp32", device="cpu", n=1 << 20, **QUICK)
    d = m.to_dict()
    assert list(d) == bwprof.columns()
    assert d["kernel"] == "stream_triad" and d["family"] == "stream" and d["dtype"] == "fp32"
    assert d["bytes_read"] == 2 * (1 << 20) * 4 and d["bytes_written"] == (1 << 20) * 4
    assert d["flops"] == 2 * (1 << 20)
    # The one formula: GB/s = bytes / median time, 1 GB = 1e9 bytes.
    expect = (d["bytes_read"] + d["bytes_written"]) / (d["time_median_us"] * 1e-6) / 1e9
    assert d["bandwidth_gbs"] == pytest.approx(expect, rel=1e-12)
    assert d["bandwidth_pct_peak"] == pytest.approx(100 * expect / d["peak_bandwidth_gbs"], rel=1e-12)
    assert d["intensity_flop_per_byte"] == pytest.approx(d["flops"] / (d["bytes_read"] + d["bytes_written"]))
    assert d["time_min_us"] <= d["time_median_us"] <= d["time_max_us"]
    assert d["repeats"] >= 3 and d["cache"] == "cold"
    assert d["verified"] is True and d["max_rel_error"] <= d["tolerance"]
    # A grade, unless the row came out above the measured peak (a peak taken while other work
    # shared the machine): then no grade and the flag, which is the judgement's rule, not noise.
    if d["above_peak"]:
        assert d["grade"] == "n/a" and "above" in d["bottleneck"]
    else:
        assert d["grade"] in ("excellent", "good", "fair", "poor")
    assert d["bound"] in ("memory", "compute", "latency")
    assert d["bottleneck"]
    assert m.kernel == "stream_triad" and m.params == {"n": str(1 << 20)}


@pytest.mark.parametrize("kernel,shape", [
    ("gemm", dict(M=3, N=45, K=70, bias=True, act="silu")),
    ("attention", dict(heads=4, kv_heads=2, seq_q=9, head_dim=32, causal=True)),
    ("kv_cache_append", dict(batch=2, kv_heads=2, head_dim=64, max_seq=64, new_tokens=3)),
    ("q4_0_dequant", dict(rows=5, cols=64)),
    ("q4_0_matmul", dict(M=2, N=7, K=96)),
    ("layernorm", dict(rows=3, cols=100)),
    ("bias_act", dict(rows=3, cols=100, act="gelu")),
    ("intensity_sweep", dict(n=999, fmas=7)),
    ("fill", dict(n=1001)),
])
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_every_kernel_verifies_on_the_cpu(kernel, shape, dtype):
    d = bwprof.measure(kernel, dtype=dtype, device="cpu", **shape, **QUICK).to_dict()
    assert d["verified"], d
    assert d["time_median_us"] > 0 and math.isfinite(d["bandwidth_gbs"])


def test_hot_cache_is_recorded():
    d = bwprof.measure("stream_copy", device="cpu", cache="hot", n=4096, **QUICK).to_dict()
    assert d["cache"] == "hot"


def test_kernels_lists_parameters():
    names = {k["name"] for k in bwprof.kernels()}
    assert {"stream_copy", "gemm", "attention", "kv_cache_append", "q4_0_dequant", "q4_0_matmul",
            "layernorm", "bias_act"} <= names
    gemm = next(k for k in bwprof.kernels() if k["name"] == "gemm")
    assert [p["name"] for p in gemm["params"]] == ["M", "N", "K", "bias", "act", "engine", "tile", "splits"]


def test_run_suite_quick_returns_every_family(tmp_path):
    rows = []
    df = bwprof.run_suite(device="cpu", quick=True, progress=False, on_row=rows.append)
    assert isinstance(df, pd.DataFrame)
    assert len(df) == len(rows) > 40
    for col in ["kernel", "variant", "dtype", "shape", "device", "backend", "time_median_us", "time_min_us",
                "time_max_us", "time_std_us", "repeats", "cache", "bytes_read", "bytes_written", "flops",
                "bandwidth_gbs", "bandwidth_pct_peak", "gflops", "compute_pct_peak", "intensity_flop_per_byte",
                "grade", "bottleneck", "verified", "max_rel_error"]:
        assert col in df.columns, col
    assert set(df["family"]) == {"stream", "fill", "gemm", "attention", "kv_cache", "q4_0", "layernorm", "bias_act",
                                 "roofline"}
    assert set(df["dtype"]) == {"fp32", "fp16", "bf16"}  # BF16 where the suite declares it (GEMM, attention)
    assert df["verified"].all()
    assert not df.attrs["errors"]


def test_run_suite_filters_by_kernel_and_family():
    df = bwprof.run_suite(device="cpu", kernels=["layernorm", "stream"], dtypes=["fp16"], quick=True,
                          progress=False)
    assert set(df["family"]) == {"layernorm", "stream"}
    assert set(df["dtype"]) == {"fp16"}


@pytest.mark.serial
def test_intensity_sweep_walks_from_the_bandwidth_roof_to_the_compute_roof():
    # On the CPU too: 1 FMA per element is memory-bound, 2048 FMAs (512 FLOP/byte) compute-bound.
    # Ten repeats each (about 0.1 s): with three, one repeat-long stall of a core on the shared 2-core
    # CI machine halved the compute-bound point's best (116 GFLOP/s against its usual 217). A stall of
    # a whole second (every one of the ten at 116, CI at 7c81a12; the same test passed three times in a
    # row right after) is the host's, not the sweep's: the pair is measured again, up to three times,
    # and every attempt is reported if none reaches the bar.
    runs = dict(repeats=10, min_time_s=0.02, warmup=1)

    def best_gflops(r):
        return r["flops"] / (r["time_min_us"] * 1e3)

    attempts = []
    for _ in range(3):
        lo = bwprof.measure("intensity_sweep", device="cpu", n=1 << 22, fmas=1, **runs).to_dict()
        hi = bwprof.measure("intensity_sweep", device="cpu", n=1 << 18, fmas=2048, **runs).to_dict()
        assert lo["intensity_flop_per_byte"] == 0.25 and hi["intensity_flop_per_byte"] == 512
        assert lo["bound"] in ("memory", "latency") and hi["bound"] == "compute"
        # The gain from the memory roof to the compute roof is the machine's own (compute peak over
        # bandwidth x 0.25 FLOP/byte: about 22x on the 2-core CI machine, far more on a GPU); the sweep
        # must realise at least half of it. Best repeats: a shared machine stretches medians.
        predicted = hi["attainable_gflops"] / lo["attainable_gflops"]
        assert predicted > 4
        attempts.append((predicted, best_gflops(hi), best_gflops(lo)))
        if best_gflops(hi) > 0.5 * predicted * best_gflops(lo):
            return
    pytest.fail(f"(predicted gain, best GFLOP/s at 512 FLOP/byte, at 0.25) in 3 attempts: {attempts}")


def test_a_small_decode_append_is_latency_bound():
    d = bwprof.measure("kv_cache_append", device="cpu", kv_heads=2, head_dim=64, max_seq=4096,
                       new_tokens=1, **QUICK).to_dict()
    assert d["bound"] == "latency"
    assert "latency" in d["bottleneck"]


@pytest.mark.parametrize("variant,extra", [("cpu", {}), ("paged", dict(block_size=7))])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_attention_rising_scores_verify_and_are_named_in_the_shape(variant, extra, dtype):
    # scores=rising (every key tile raises the rows' maximum) checks against the float64 reference like the
    # uniform inputs; the shape names it, and leaves the default out (shapes recorded before it still match).
    shape = dict(batch=2, heads=4, kv_heads=2, seq_q=40, seq_kv=300, head_dim=32, causal=True, **extra)
    m = bwprof.measure("attention", dtype=dtype, device="cpu", variant=variant, scores="rising", **shape, **QUICK)
    d = m.to_dict()
    assert d["verified"], d
    assert d["shape"].endswith(",scores=rising") and m.params["scores"] == "rising"
    u = bwprof.measure("attention", dtype=dtype, device="cpu", variant=variant, **shape, **QUICK)
    assert "scores" not in u.to_dict()["shape"] and "scores" not in u.params
    assert u.to_dict()["shape"] == bwprof.measure("attention", dtype=dtype, device="cpu", variant=variant,
                                                  scores="uniform", **shape, **QUICK).to_dict()["shape"]
    with pytest.raises(ValueError, match="scores: unknown value 'peaky'.*uniform, rising"):
        bwprof.measure("attention", dtype=dtype, device="cpu", variant=variant, scores="peaky", **shape, **QUICK)
