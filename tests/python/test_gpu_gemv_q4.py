"""The GEMV, the tensor-core Q4_0 matmul and the clean read on the GPU: the kernels their rules
choose (gemv.hpp's gemv_gpu_shape, q4_0.hpp's q4_ring_choice, the read's one shape) against the
float64 reference at odd sizes, and which Q4_0 kernel runs where, by bwprof.explain (skipped
without a GPU)."""
import pytest

import bwprof

pytestmark = pytest.mark.gpu
Q = dict(repeats=2, min_time_s=0.0, warmup=1)
Q4_KERNELS = {"ringx8x2rl", "ringx8x4rl", "ring8x4rl", "ring16x2rle", "flood32x2"}


@pytest.mark.parametrize("shape", [dict(N=4096, K=4096), dict(N=1001, K=4104), dict(N=3, K=8192), dict(N=77, K=1001),
                                   dict(N=333, K=1024), dict(N=7, K=14336), dict(N=5, K=64), dict(N=129, K=2048),
                                   dict(N=33, K=14336)])
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_gemv_shapes_match_the_reference(shape, dtype):
    d = bwprof.measure("gemv", dtype=dtype, device="gpu", **shape, **Q).to_dict()
    assert d["verified"], f"{dtype} {shape}: error {d['max_rel_error']}"
    assert d["occupancy_blocks_per_sm"] == d["runtime_blocks_per_sm"] > 0, d


def _q4(**shape):
    """A verified row of the tensor-core Q4_0 matmul and the kernel it ran."""
    kw = dict(dtype="fp16", device="gpu", variant="tiled", **shape)
    kernel = bwprof.explain("q4_0_matmul", **kw)
    d = bwprof.measure("q4_0_matmul", **kw, **Q).to_dict()
    assert d["verified"], (shape, kernel, d["max_rel_error"])
    return kernel, d


def _tensor_core_q4():
    if not any(d.arch.startswith("sm_") and int(d.arch[3:]) >= 80 for d in bwprof.devices()):
        pytest.skip("the tensor-core Q4_0 kernels (NVIDIA sm_80+)")


@pytest.mark.parametrize("shape", [dict(M=1, N=1001, K=4096), dict(M=2, N=4096, K=4096), dict(M=1, N=33, K=96),
                                   dict(M=1, N=14336, K=4096), dict(M=8, N=130, K=96), dict(M=1, N=17, K=4096),
                                   dict(M=3, N=48, K=160), dict(M=9, N=40, K=160), dict(M=1, N=16, K=32),
                                   dict(M=2, N=4100, K=12224), dict(M=1, N=4096, K=14336)])
def test_q4_0_kernels_match_the_reference(shape):
    _tensor_core_q4()
    kernel, d = _q4(**shape)
    assert kernel in Q4_KERNELS, kernel
    assert d["occupancy_blocks_per_sm"] == d["runtime_blocks_per_sm"] > 0, d


def test_q4_0_two_rows_keep_x_in_registers_only_while_the_grid_fits_at_once():
    """ringx8x4rl (X in registers) for 2 rows of X only while every tile's block fits on the GPU at
    once: one tile more and ring8x4rl (X in shared memory) runs (on an H200 the second wave of
    ringx8x4rl cost 11-19 %, 5120-8192 rows); 3 rows or more take ringx8x2rl."""
    _tensor_core_q4()
    sms = int(bwprof.device("gpu").info["compute_units"])
    kernel, d = _q4(M=2, N=4096, K=4096)
    if kernel != "ringx8x4rl":
        pytest.skip(f"{sms} SMs: 4096 rows are not one wave of ringx8x4rl here ({kernel})")
    edge = d["runtime_blocks_per_sm"] * sms  # tiles of one wave of ringx8x4rl
    assert _q4(M=2, N=16 * edge, K=4096)[0] == "ringx8x4rl"
    assert _q4(M=2, N=16 * (edge + 1), K=4096)[0] == "ring8x4rl"
    assert _q4(M=3, N=4096, K=4096)[0] == "ringx8x2rl"


def test_q4_0_one_long_row_takes_the_16_warp_ring_in_one_wave():
    """ring16x2rle for ONE row of X with K > 4096 while its whole grid is resident at once (on an
    H200 3-11 % faster there than the kernels chosen before), not for two rows or past one wave."""
    _tensor_core_q4()
    sms = int(bwprof.device("gpu").info["compute_units"])
    kernel, d = _q4(M=1, N=4096, K=4128)
    assert kernel == "ring16x2rle", kernel
    edge = d["runtime_blocks_per_sm"] * sms  # tiles of one wave of it
    assert _q4(M=1, N=16 * edge, K=4128)[0] == "ring16x2rle"
    assert _q4(M=1, N=33, K=24512)[0] == "ring16x2rle"  # X of 49088 bytes, its own shared memory past 48 KB
    assert _q4(M=1, N=16 * (edge + 1), K=4128)[0] != "ring16x2rle"
    assert _q4(M=2, N=16 * min(edge, 64), K=4128)[0] != "ring16x2rle"


def test_q4_0_one_row_up_to_4096_takes_the_flood_up_to_five_quarter_waves():
    """flood32x2 (one row of X, every chunk of a tile in one round, 32 warps a block: the only
    1024-thread Q4_0 kernel) for ONE row of X with K <= 4096 up to 1.25 waves of its blocks; two
    rows of X, a longer row or one tile past that take another kernel."""
    _tensor_core_q4()
    sms = int(bwprof.device("gpu").info["compute_units"])
    kernel, fl = _q4(M=1, N=4096, K=4096)
    assert kernel == "flood32x2" and fl["block_size"] == 1024 and fl["registers_per_thread"] <= 32, (kernel, fl)
    edge = 5 * fl["runtime_blocks_per_sm"] * sms // 4  # tiles of 1.25 waves of it
    for shape in [dict(N=16 * edge, K=4096), dict(N=4096, K=4064), dict(N=1001, K=2080), dict(N=17, K=32),
                  dict(N=16 * edge - 5, K=1024), dict(N=16 * fl["runtime_blocks_per_sm"] * sms + 1, K=4096)]:
        assert _q4(M=1, **shape)[0] == "flood32x2", shape
    for shape in [dict(M=1, N=16 * edge + 1, K=4096), dict(M=1, N=4096, K=4128), dict(M=2, N=4096, K=4096)]:
        assert _q4(**shape)[0] != "flood32x2", shape


@pytest.mark.parametrize("shape", [dict(M=1, N=33, K=24512), dict(M=2, N=40, K=12224), dict(M=1, N=4100, K=24480)])
def test_q4_0_x_near_48_kb_of_shared_memory_launches(shape):
    """X staged in shared memory just under 48 KB, with the kernel's own shared memory on top: the
    launch asks for the larger limit (ring8x4rl at M = 1, K = 24512 once failed to launch)."""
    _tensor_core_q4()
    kernel, d = _q4(**shape)
    assert kernel in ("ring8x4rl", "ring16x2rle") and d["shared_mem_per_block"] > 48 * 1024, (kernel, d)


@pytest.mark.parametrize("n", [5, 4099, 1000003])
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_the_read_matches_the_reference(n, dtype):
    d = bwprof.measure("stream_read", dtype=dtype, device="gpu", n=n, **Q).to_dict()
    assert d["verified"], f"read {dtype} n={n}: error {d['max_rel_error']}"
    assert d["block_size"] == 256 and d["occupancy_blocks_per_sm"] == d["runtime_blocks_per_sm"] > 0, d


def test_the_peak_arrays_setting_refuses_what_it_does_not_take(monkeypatch):
    monkeypatch.setenv("BWPROF_PEAK_ARRAY_BYTES", "lots")
    with pytest.raises(ValueError, match=r"BWPROF_PEAK_ARRAY_BYTES=lots: expected an integer from 4096 to 1099511627776"):
        bwprof.peaks("gpu", refresh=True)
