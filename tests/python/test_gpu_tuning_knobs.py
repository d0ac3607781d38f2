"""The GEMV tuning knobs benchmarks/gemv_ceiling.py compares (BWPROF_GEMV_BLOCK, BWPROF_Q4_KERNEL):
every configuration against the float64 reference at odd sizes, and a clear error for a value that
names none (skipped without a GPU)."""
import pytest

import bwprof

pytestmark = pytest.mark.gpu
Q = dict(repeats=2, min_time_s=0.0, warmup=1)


@pytest.mark.parametrize("block", ["256", "512", "1024"])
@pytest.mark.parametrize("shape", [dict(N=4096, K=4096), dict(N=1001, K=4104), dict(N=3, K=8192), dict(N=77, K=1001)])
@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_gemv_block_sizes_match_the_reference(monkeypatch, block, shape, dtype):
    monkeypatch.setenv("BWPROF_GEMV_BLOCK", block)
    d = bwprof.measure("gemv", dtype=dtype, device="gpu", **shape, **Q).to_dict()
    assert d["verified"], f"block {block} {dtype} {shape}: error {d['max_rel_error']}"
    assert d["occupancy_blocks_per_sm"] == d["runtime_blocks_per_sm"] > 0, d


@pytest.mark.parametrize("kernel", ["ring4x4", "ring8x4", "ring4x8", "ring8x8", "ring16x4", "tile"])
@pytest.mark.parametrize("shape", [dict(M=1, N=1001, K=4096), dict(M=2, N=4096, K=4096), dict(M=1, N=33, K=96),
                                   dict(M=1, N=14336, K=4096), dict(M=8, N=130, K=96)])
def test_q4_0_kernels_match_the_reference(monkeypatch, kernel, shape):
    monkeypatch.setenv("BWPROF_Q4_KERNEL", kernel)
    d = bwprof.measure("q4_0_matmul", dtype="fp16", device="gpu", variant="tiled", **shape, **Q).to_dict()
    assert d["verified"], f"{kernel} {shape}: error {d['max_rel_error']}"
    assert d["occupancy_blocks_per_sm"] == d["runtime_blocks_per_sm"] > 0, d


def test_a_knob_that_names_no_configuration_is_a_value_error(monkeypatch):
    monkeypatch.setenv("BWPROF_GEMV_BLOCK", "300")
    with pytest.raises(ValueError, match="BWPROF_GEMV_BLOCK"):
        bwprof.measure("gemv", dtype="fp16", device="gpu", N=64, K=4096, **Q)
    monkeypatch.delenv("BWPROF_GEMV_BLOCK")
    monkeypatch.setenv("BWPROF_Q4_KERNEL", "ring3x3")
    with pytest.raises(ValueError, match="BWPROF_Q4_KERNEL"):
        bwprof.measure("q4_0_matmul", dtype="fp16", device="gpu", variant="tiled", M=1, N=64, K=4096, **Q)
