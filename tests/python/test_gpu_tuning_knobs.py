"""The tuning knobs benchmarks/gemv_ceiling.py compares (BWPROF_GEMV_BLOCK, BWPROF_GEMV_LOADS,
BWPROF_Q4_KERNEL, BWPROF_STREAM_READ): every configuration against the float64 reference at odd
sizes, and a clear error for a value that names none (skipped without a GPU)."""
import pytest

import bwprof

pytestmark = pytest.mark.gpu
Q = dict(repeats=2, min_time_s=0.0, warmup=1)


@pytest.mark.parametrize("block", ["128", "256"])
@pytest.mark.parametrize("shape", [dict(N=4096, K=4096), dict(N=1001, K=4104), dict(N=3, K=8192), dict(N=77, K=1001),
                                   dict(N=333, K=1024), dict(N=7, K=14336)])
@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_gemv_block_sizes_match_the_reference(monkeypatch, block, shape, dtype):
    monkeypatch.setenv("BWPROF_GEMV_BLOCK", block)
    d = bwprof.measure("gemv", dtype=dtype, device="gpu", **shape, **Q).to_dict()
    assert d["verified"], f"block {block} {dtype} {shape}: error {d['max_rel_error']}"
    assert d["occupancy_blocks_per_sm"] == d["runtime_blocks_per_sm"] > 0, d


@pytest.mark.parametrize("loads", ["2", "4", "8"])
@pytest.mark.parametrize("shape", [dict(N=4096, K=4096), dict(N=1001, K=4104), dict(N=3, K=8192), dict(N=77, K=1001),
                                   dict(N=5, K=64), dict(N=129, K=2048), dict(N=33, K=14336)])
@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_gemv_loads_a_thread_match_the_reference(monkeypatch, loads, shape, dtype):
    monkeypatch.setenv("BWPROF_GEMV_LOADS", loads)
    d = bwprof.measure("gemv", dtype=dtype, device="gpu", **shape, **Q).to_dict()
    assert d["verified"], f"loads {loads} {dtype} {shape}: error {d['max_rel_error']}"
    assert d["occupancy_blocks_per_sm"] == d["runtime_blocks_per_sm"] > 0, d


Q4_KERNELS = ["ring4x4", "ring8x4", "ring4x8", "ring8x8", "ring16x4", "tile", "ring4x4t2", "ring8x4t2", "ringx8x2",
              "ringx4x4", "ringx8x4",
              # lean (one-LOP3 decode), weights as records (quants then scales), both
              "ring4x4l", "ring8x4l", "ringx8x2l", "ringx8x4l", "ring4x4r", "ring8x4r", "ringx8x2r", "ringx8x4r",
              "ring4x4rl", "ring8x4rl", "ringx8x2rl", "ringx8x4rl",
              # 16 warps x 2 chunks; "e": the quants refilled between a chunk's decode and its mma
              "ring16x2rl", "ring16x2rle",
              # one row of X, 32 warps x 2 chunks in one round (at M > 1 or K > 4096 the default runs)
              "flood32x2"]
Q4_PROBES = ["probe-loads-ring4x4", "probe-loads-ringx8x2", "probe-loads-ring4x4r", "probe-loads-ringx8x2r",
             "probe-math-ring4x4", "probe-math-ringx8x2", "probe-math-ring4x4l", "probe-math-ringx8x2l",
             "probe-loads-ringx8x4r"]


@pytest.mark.parametrize("kernel", Q4_KERNELS)
@pytest.mark.parametrize("shape", [dict(M=1, N=1001, K=4096), dict(M=2, N=4096, K=4096), dict(M=1, N=33, K=96),
                                   dict(M=1, N=14336, K=4096), dict(M=8, N=130, K=96), dict(M=1, N=17, K=4096),
                                   dict(M=3, N=48, K=160), dict(M=9, N=40, K=160), dict(M=1, N=16, K=32)])
def test_q4_0_kernels_match_the_reference(monkeypatch, kernel, shape):
    monkeypatch.setenv("BWPROF_Q4_KERNEL", kernel)
    d = bwprof.measure("q4_0_matmul", dtype="fp16", device="gpu", variant="tiled", **shape, **Q).to_dict()
    assert d["verified"], f"{kernel} {shape}: error {d['max_rel_error']}"
    assert d["occupancy_blocks_per_sm"] == d["runtime_blocks_per_sm"] > 0, d


@pytest.mark.parametrize("kernel", Q4_PROBES)
def test_q4_0_probes_run_and_do_not_pass_for_the_product(monkeypatch, kernel):
    """The probes time a kernel's loads without its math (or its math without most loads): they run
    to completion and their check FAILS, so that no figure of theirs can pass for the product."""
    monkeypatch.setenv("BWPROF_Q4_KERNEL", kernel)
    d = bwprof.measure("q4_0_matmul", dtype="fp16", device="gpu", variant="tiled", M=1, N=4096, K=4096, **Q).to_dict()
    assert not d["verified"], d
    assert d["time_median_us"] > 0, d


READ_SHAPES = ["256x2", "128x4", "256x1", "256x4", "256x8", "512x1", "512x2", "1024x1"]


@pytest.mark.parametrize("shape", READ_SHAPES)
@pytest.mark.parametrize("n", [5, 4099, 1000003])
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_read_shapes_match_the_reference(monkeypatch, shape, n, dtype):
    monkeypatch.setenv("BWPROF_STREAM_READ", shape)
    d = bwprof.measure("stream_read", dtype=dtype, device="gpu", n=n, **Q).to_dict()
    assert d["verified"], f"read {shape} {dtype} n={n}: error {d['max_rel_error']}"
    assert d["block_size"] == int(shape.split("x")[0])
    assert d["occupancy_blocks_per_sm"] == d["runtime_blocks_per_sm"] > 0, d


def test_a_knob_that_names_no_configuration_is_a_value_error(monkeypatch):
    monkeypatch.setenv("BWPROF_GEMV_BLOCK", "300")
    with pytest.raises(ValueError, match="BWPROF_GEMV_BLOCK"):
        bwprof.measure("gemv", dtype="fp16", device="gpu", N=64, K=4096, **Q)
    monkeypatch.delenv("BWPROF_GEMV_BLOCK")
    monkeypatch.setenv("BWPROF_Q4_KERNEL", "ring3x3")
    with pytest.raises(ValueError, match="BWPROF_Q4_KERNEL"):
        bwprof.measure("q4_0_matmul", dtype="fp16", device="gpu", variant="tiled", M=1, N=64, K=4096, **Q)
    monkeypatch.delenv("BWPROF_Q4_KERNEL")
    monkeypatch.setenv("BWPROF_GEMV_LOADS", "3")
    with pytest.raises(ValueError, match="BWPROF_GEMV_LOADS"):
        bwprof.measure("gemv", dtype="fp16", device="gpu", N=64, K=4096, **Q)
    monkeypatch.delenv("BWPROF_GEMV_LOADS")
    monkeypatch.setenv("BWPROF_STREAM_READ", "256x3")
    with pytest.raises(ValueError, match="BWPROF_STREAM_READ"):
        bwprof.measure("stream_read", device="gpu", n=4096, **Q)


# Every knob reads its value whole through one reader (bwprof/knobs.hpp): a typo is an error that names
# the variable, the value and what it takes, never a silent default (atoi read "x" as 0 and "3x" as 3).
ATTN_DECODE = dict(heads=8, kv_heads=2, seq_q=1, seq_kv=1000, head_dim=64)
GEMM_SMALL = dict(variant="tensor", M=4, N=64, K=256)


@pytest.mark.parametrize("env,family,kw,match", [
    ({"BWPROF_ATTN_DECODE_WAVES": "x"}, "attention", ATTN_DECODE,
     "BWPROF_ATTN_DECODE_WAVES=x: expected a number above 0 and at most 64"),
    ({"BWPROF_ATTN_DECODE_WAVES": "0"}, "attention", ATTN_DECODE,
     "BWPROF_ATTN_DECODE_WAVES=0: expected a number above 0 and at most 64"),
    ({"BWPROF_ATTN_DECODE_SPLITS": "0"}, "attention", ATTN_DECODE,
     "BWPROF_ATTN_DECODE_SPLITS=0: expected an integer from 1 to 65535"),
    ({"BWPROF_ATTN_DECODE_STAGES": "3x"}, "attention", ATTN_DECODE,
     "BWPROF_ATTN_DECODE_STAGES=3x: expected an integer from 2 to 8"),
    ({"BWPROF_ATTN_KERNEL": "fast"}, "attention", ATTN_DECODE,
     "BWPROF_ATTN_KERNEL=fast: expected one of rows, flash, decode or wgmma"),
    ({"BWPROF_ATTN_KERNEL": "flash", "BWPROF_FLASH_TILE": "7"}, "attention",
     dict(heads=4, kv_heads=2, seq_q=200, seq_kv=200, head_dim=64), "BWPROF_FLASH_TILE=7: expected an integer from 0 to 2"),
    ({"BWPROF_GEMM_TILE": "tc_skinny", "BWPROF_GEMM_LDMATRIX": "2"}, "gemm", GEMM_SMALL,
     "BWPROF_GEMM_LDMATRIX=2: expected 0 or 1"),
    ({"BWPROF_GEMM_TILE": "tc_skinny", "BWPROF_GEMM_SMALL_WAVES": "0"}, "gemm", GEMM_SMALL,
     "BWPROF_GEMM_SMALL_WAVES=0: expected a number above 0 and at most 64"),
    ({"BWPROF_GEMM_TILE": "tc_skinny", "BWPROF_GEMM_SPLITS": "x"}, "gemm", GEMM_SMALL,
     "BWPROF_GEMM_SPLITS=x: expected an integer from 1 to 65535"),
    ({"BWPROF_GEMM_TILE": "gemv", "BWPROF_GEMM_SPLITS": "-2"}, "gemm", GEMM_SMALL,
     "BWPROF_GEMM_SPLITS=-2: expected an integer from 1 to 65535"),
    ({"BWPROF_GEMM_TILE": "small", "BWPROF_GEMM_SPLITS": "2.5"}, "gemm", dict(variant="tensor", M=100, N=200, K=4096),
     "BWPROF_GEMM_SPLITS=2.5: expected an integer from 1 to 65535"),
    ({"BWPROF_GEMM_PAD": "2"}, "gemm", dict(variant="tensor", M=200, N=304, K=4096),
     "BWPROF_GEMM_PAD=2: expected one of 0, 1 or 128"),
    ({"BWPROF_GEMV_LOADS": "3"}, "gemv", dict(N=64, K=4096), "BWPROF_GEMV_LOADS=3: expected one of 2, 4 or 8"),
    ({"BWPROF_GEMV_BLOCK": "300"}, "gemv", dict(N=64, K=4096), "BWPROF_GEMV_BLOCK=300: expected 128 or 256"),
    ({"BWPROF_STREAM_READ": "256x3"}, "stream_read", dict(n=4096), "BWPROF_STREAM_READ=256x3: expected one of 256x2, "),
])
def test_every_knob_refuses_a_value_it_does_not_take(env, family, kw, match, monkeypatch):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(ValueError, match=match):
        bwprof.measure(family, dtype="fp16", device="gpu", **kw, **Q)


def test_the_peak_arrays_knob_refuses_what_it_does_not_take(monkeypatch):
    monkeypatch.setenv("BWPROF_PEAK_ARRAY_BYTES", "lots")
    with pytest.raises(ValueError, match=r"BWPROF_PEAK_ARRAY_BYTES=lots: expected an integer from 4096 to 1099511627776"):
        bwprof.peaks("gpu", refresh=True)


def _q4_row(monkeypatch, kernel=None, **shape):
    """A verified row of the tensor-core Q4_0 matmul, by the library's choice or the kernel named."""
    if kernel:
        monkeypatch.setenv("BWPROF_Q4_KERNEL", kernel)
    else:
        monkeypatch.delenv("BWPROF_Q4_KERNEL", raising=False)
    d = bwprof.measure("q4_0_matmul", dtype="fp16", device="gpu", variant="tiled", **shape, **Q).to_dict()
    assert d["verified"], d
    return d


def test_q4_0_default_keeps_x_in_registers_only_while_its_grid_fits_at_once(monkeypatch):
    """ringx8x4rl (X in registers) is the default for 2 rows of X only while every tile's block fits on
    the GPU at once: one tile more and ring8x4rl (X in shared memory) runs instead (on an H200 the second
    wave of ringx8x4rl cost 11-19 %, 5120-8192 rows). Which kernel ran is told by the row's registers,
    compared with the two kernels' own rows."""
    def row(n, kernel=None):
        return _q4_row(monkeypatch, kernel, M=2, N=n, K=4096)
    gpu = next(d for d in bwprof.devices() if d.kind == "gpu")
    sms = int(gpu.info["compute_units"])
    rx, rs = row(4096, "ringx8x4rl"), row(4096, "ring8x4rl")
    if rx["registers_per_thread"] == rs["registers_per_thread"]:
        pytest.skip("the two ring kernels take the same registers here: a row cannot tell them apart")
    edge = rx["runtime_blocks_per_sm"] * sms  # tiles of one wave of ringx8x4rl
    if not (4 * edge > 5 * sms and edge < 4 * sms):
        pytest.skip(f"one wave of ringx8x4rl ({edge} tiles) is outside the range where the fill would choose it")
    assert row(16 * edge)["registers_per_thread"] == rx["registers_per_thread"]
    assert row(16 * (edge + 1))["registers_per_thread"] == rs["registers_per_thread"]
    # One row of X with rows of 4096 or shorter takes flood32x2 instead (below).
    assert _q4_row(monkeypatch, M=1, N=16 * edge, K=2048)["block_size"] == 1024


def test_q4_0_default_takes_the_16_warp_ring_for_one_long_row_in_one_wave(monkeypatch):
    """ring16x2rle is the default for ONE row of X with K > 4096 while its whole grid is resident at
    once (on an H200 3-11 % faster there than the kernels chosen before, slower for two rows of X or
    past one wave). Told apart by registers, as above."""
    gpu = next(d for d in bwprof.devices() if d.kind == "gpu")
    sms = int(gpu.info["compute_units"])
    r16 = _q4_row(monkeypatch, "ring16x2rle", M=1, N=4096, K=4128)
    rx = _q4_row(monkeypatch, "ringx8x4rl", M=1, N=4096, K=4096)
    rs = _q4_row(monkeypatch, "ring8x4rl", M=1, N=4096, K=4128)
    regs = {r16["registers_per_thread"], rx["registers_per_thread"], rs["registers_per_thread"]}
    if len(regs) < 3:
        pytest.skip("the ring kernels take the same registers here: a row cannot tell them apart")
    edge = r16["runtime_blocks_per_sm"] * sms  # tiles of one wave of ring16x2rle
    assert edge > 0, r16
    mine = r16["registers_per_thread"]
    assert _q4_row(monkeypatch, M=1, N=16 * edge, K=4128)["registers_per_thread"] == mine
    assert _q4_row(monkeypatch, M=1, N=16 * min(edge, 64) - 3, K=14336)["registers_per_thread"] == mine
    # X of 49088 bytes, with the kernel's own shared memory past the default 48 KB: still chosen
    assert _q4_row(monkeypatch, M=1, N=33, K=24512)["registers_per_thread"] == mine
    assert _q4_row(monkeypatch, M=1, N=16 * (edge + 1), K=4128)["registers_per_thread"] != mine
    assert _q4_row(monkeypatch, M=2, N=16 * min(edge, 64), K=4128)["registers_per_thread"] != mine


def test_q4_0_default_takes_the_flood_for_one_row_up_to_4096_up_to_five_quarter_waves(monkeypatch):
    """flood32x2 (one row of X, every chunk of a tile in one round, 32 warps a block: the only
    1024-thread Q4_0 kernel) is the default for ONE row of X with K <= 4096 up to 1.25 waves of its
    blocks; two rows of X, a longer row or one tile past that take another kernel. Named by the knob
    where it does not apply, the default runs instead (and checks)."""
    gpu = next(d for d in bwprof.devices() if d.kind == "gpu")
    sms = int(gpu.info["compute_units"])
    fl = _q4_row(monkeypatch, "flood32x2", M=1, N=4096, K=4096)
    assert fl["block_size"] == 1024 and fl["registers_per_thread"] <= 32, fl
    assert fl["runtime_blocks_per_sm"] >= 1, fl  # (2 on sm_80 and sm_90: 64 warps an SM)
    edge = 5 * fl["runtime_blocks_per_sm"] * sms // 4  # tiles of 1.25 waves of it
    for shape in [dict(N=16 * edge, K=4096), dict(N=4096, K=4064), dict(N=1001, K=2080), dict(N=17, K=32),
                  dict(N=16 * edge - 5, K=1024), dict(N=16 * fl["runtime_blocks_per_sm"] * sms + 1, K=4096)]:
        assert _q4_row(monkeypatch, M=1, **shape)["block_size"] == 1024, shape
    for shape in [dict(M=1, N=16 * edge + 1, K=4096), dict(M=1, N=4096, K=4128), dict(M=2, N=4096, K=4096)]:
        assert _q4_row(monkeypatch, **shape)["block_size"] != 1024, shape
    for shape in [dict(M=2, N=40, K=160), dict(M=1, N=40, K=4128), dict(M=8, N=130, K=96)]:
        assert _q4_row(monkeypatch, "flood32x2", **shape)["block_size"] != 1024, shape


@pytest.mark.parametrize("kernel", [None, "ring8x4rl", "ring16x2rle", "ring4x4rl"])
@pytest.mark.parametrize("shape", [dict(M=1, N=33, K=24512), dict(M=2, N=40, K=12224), dict(M=1, N=4100, K=24480)])
def test_q4_0_x_near_48_kb_of_shared_memory_launches(monkeypatch, kernel, shape):
    """X staged in shared memory just under 48 KB, with the kernel's own shared memory on top: the
    launch asks for the larger limit (before, ring8x4rl at M = 1, K = 24512 failed to launch)."""
    d = _q4_row(monkeypatch, kernel, **shape)
    assert d["shared_mem_per_block"] > 48 * 1024, d
