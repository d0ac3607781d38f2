"""The `tensor` GEMM's dispatch rules on the GPU (kernels/gemm/choice.hpp, dispatch.hip): which
kernel, split and copies it takes where, by what bwprof.explain says the instance runs, each run
checked against the float64 reference; and the engine, tile and splits parameters that ask for one
(skipped without a GPU)."""
import re

import pytest

import bwprof
from bwprof import _core

pytestmark = pytest.mark.gpu
Q = dict(repeats=2, min_time_s=0.0, warmup=1)


def _nvidia_sm_at_least(version):
    """Whether an NVIDIA GPU of this architecture number or newer (sm_80: 80) is present."""
    return any(d.arch.startswith("sm_") and int(d.arch[3:]) >= version for d in bwprof.devices())


def _hopper_wgmma_build():
    return "sm90a" in _core.build_features() and any(d.arch == "sm_90" for d in bwprof.devices())


def _run(timing="single", **kw):
    """What one verified `tensor` GEMM runs (bwprof.explain), and its row."""
    kw = dict(kw, variant="tensor", device="gpu")
    said = bwprof.explain("gemm", **kw)
    d = bwprof.measure("gemm", timing=timing, **kw, **Q).to_dict()
    assert d["verified"], f"{kw}: error {d['max_rel_error']} > {d['tolerance']}"
    return said, d


def _quad_adds():
    """What explain calls mma.sync's four-column adds of its K splits on this GPU: one vector
    reduction from sm_90, four atomics before."""
    return "vector adds" if _nvidia_sm_at_least(90) else "quad adds"


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_gemm_split_k_chosen_for_few_tiles_and_long_k(dtype):
    # M = 200, N = 304 (partial tiles of every shape), K = 4096: few output tiles and a long K,
    # where bwprof splits K on wgmma, the splits meeting in slots; run several times (the tile
    # counters reset after each launch), with a bias and GELU in the last split's epilogue.
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    kw = dict(dtype=dtype, variant="tensor", device="gpu", M=200, N=304, K=4096, bias=True, act="gelu")
    said = bwprof.explain("gemm", **kw)
    d = bwprof.measure("gemm", repeats=5, warmup=2, min_time_s=0.0, max_time_s=1.0, **kw).to_dict()
    assert d["verified"], f"error {d['max_rel_error']} > {d['tolerance']}"
    assert said.startswith("wgmma") and not re.search(r" splits 1\b", said) and "by slots" in said, said


@pytest.mark.parametrize("kw,match", [
    (dict(engine="wgmma", tile="16x128"), "tile: wgmma has no 16x128 tile"),
    (dict(tile="64x64"), "tile: name the engine too"),
    (dict(engine="mma", tile="16x128"), "tile: mma's 16x128 tile takes M <= 16"),
    (dict(engine="skinny", M=65), "engine: the skinny kernel takes M <= 64"),
    (dict(splits=0), "splits: 0 is out of range"),
    (dict(splits="two"), "splits: expected an integer or 'auto', got 'two'"),
    (dict(engine="fast"), "engine: unknown value 'fast'"),
])
def test_gemm_choices_out_of_range_are_clear_errors(kw, match):
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    shape = dict(M=200, N=304, K=4096)
    shape.update(kw)
    with pytest.raises(ValueError, match=match):
        bwprof.measure("gemm", dtype="fp16", device="gpu", variant="tensor", **shape, **Q)


def test_gemm_choices_apply_to_the_tensor_variant_only():
    with pytest.raises(ValueError, match="engine: applies to the tensor variant of kernel 'gemm', not 'tiled'"):
        bwprof.measure("gemm", dtype="fp16", device="gpu", variant="tiled", M=64, N=64, K=64, engine="mma",
                       tile="64x64", **Q)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("m,n,k,engine", [(1, 1037, 1531, "skinny rows 8 unaligned"),
                                          (2, 1037, 1531, "skinny rows 8 unaligned"),
                                          (16, 1037, 1531, "skinny rows 16 unaligned"),
                                          (5, 1024, 1531, "skinny rows 8 aligned"),
                                          (1, 1024, 1536, "mma.sync 16x128"),
                                          (7, 1024, 1544, "mma.sync 16x128"),
                                          (16, 1160, 1536, "mma.sync 16x128"),
                                          (17, 1037, 1531, "not skinny"),
                                          (40, 1160, 1536, "not skinny")])
def test_gemm_few_rows_take_the_kernels_built_around_b(m, n, k, engine, dtype):
    # dispatch.hip's rule (choice.hpp: small_m_mma): up to 16 rows, mma.sync's 16-row tile where
    # the rows of A and B are on 16 bytes, else the skinny tensor kernel (its 16-bit reads where
    # B's rows are off 16 bytes, ldmatrix where only A's are); from 17 rows the general rules
    # (wgmma or mma.sync tiles). With a bias and an activation.
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    said, _ = _run(dtype=dtype, M=m, N=n, K=k, bias=True, act="silu")
    if engine == "not skinny":
        assert not said.startswith("skinny") and ("wgmma" in said or "mma.sync" in said), said
    else:
        assert said.startswith(engine), said


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("m,n,k", [(1, 1024, 4096), (7, 1160, 1544), (16, 4096, 4096)])
def test_gemm_split_k_finished_by_the_last_block_matches_reference(m, n, k, dtype):
    # mma.sync's 16-row tile with K split, its tiles finished by their last block, the partial sums
    # added four columns a request. Graph timing replays the launch many times and checks the output
    # after the replays: the counts and the accumulator must be back at zero after every launch.
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    said, _ = _run(timing="graph", dtype=dtype, M=m, N=n, K=k, bias=True, act="silu")
    assert said.startswith("mma.sync 16x128") and not re.search(r" splits 1\b", said) and _quad_adds() in said, said


@pytest.mark.parametrize("splits", [1, 2, 5])
@pytest.mark.parametrize("m,n,k", [(3, 4097, 3000), (40, 1000, 320)])
def test_gemm_skinny_kernel_takes_the_splits_asked(m, n, k, splits):
    # K within what A's slice in shared memory holds at once (3040 rows for 8 rows of A, 352 for
    # 64), so that the split asked is the split that runs.
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    said, d = _run(timing="graph", dtype="fp16", M=m, N=n, K=k, engine="skinny", splits=splits, bias=True, act="relu")
    assert said.startswith("skinny") and f" splits {splits} " in said, said
    assert d["shape"].endswith(f",engine=skinny,splits={splits}"), d["shape"]


def test_gemm_skinny_tensor_halves_its_blocks_where_splits_are_short():
    # skinny_mma.hip: half a wave of blocks where a wave's K splits would be 128 rows or shorter
    # (on an H100, N = 11009 K = 1000: 64 rows), a wave where they are longer (N = 4097 K = 4095:
    # 224 rows on an H100): every waves-1 split is over 128 rows.
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    hopper = any(d.arch == "sm_90" for d in bwprof.devices())
    for n, k, want in ((11009, 1000, "waves 0.5"), (4097, 4095, "waves 1)")):
        said, _ = _run(dtype="fp16", M=3, N=n, K=k)
        assert said.startswith("skinny"), f"N={n} K={k}: {said}"
        if hopper:
            assert want in said, said
        if "waves 1)" in said:
            splits = int(said.split(" splits ")[1].split()[0])
            assert -(-k // splits) > 128, said


def test_gemm_b_rows_off_128_bytes_shared_by_clusters_or_copied():
    # choice.hpp: from 256 rows B's 2000-byte rows (N = 1000) are read in place by clusters of two
    # blocks that share each stage of B (multicast_b; M = 1024 K = 4096: the copy, ~9.6 us by the
    # estimate, is over a tenth of wgmma's ~21), copied into 128-byte rows where the copy is under a
    # tenth of wgmma's estimate (M = 8192: 168 us); rows on 128 bytes (N = 1024) take no clusters there.
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    said, _ = _run(dtype="bf16", M=1024, N=1000, K=4096, bias=True, act="relu")
    assert said.startswith("wgmma") and "cluster 2 sharing B" in said, said
    said, _ = _run(dtype="fp16", M=8192, N=1000, K=4096)
    assert said.startswith("pad B to 128-byte rows, then wgmma") and "cluster" not in said, said
    said, _ = _run(dtype="fp16", M=1024, N=1024, K=4096)
    assert said.startswith("wgmma") and "cluster" not in said, said


@pytest.mark.parametrize("m,n,k", [(128, 1000, 11008), (128, 4096, 4096), (160, 1000, 11008), (128, 11009, 1000),
                                   (224, 4095, 4097)])
def test_gemm_clusters_below_256_rows_where_the_row_tiles_pair_up(m, n, k):
    # choice.hpp's clusters_pay: from 128 to 255 rows, clusters wherever the chosen tile's row tiles
    # pair up (B aligned or not; on copies too), never on an odd number of them.
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    said, _ = _run(dtype="fp16", M=m, N=n, K=k)
    wg = said[said.index("wgmma"):]
    rows = int(wg.split()[1].split("x")[0])
    assert ("cluster 2 sharing B" in said) == ((-(-m // rows)) % 2 == 0), said


@pytest.mark.parametrize("m,n,k,tile,splits", [(257, 1000, 2056, "64x128", 1), (300, 520, 700, "128x128", 3),
                                               (1000, 1000, 1024, "128x256", 2)])
def test_gemm_clusters_sharing_b_with_the_tile_and_splits_asked(m, n, k, tile, splits):
    # From 256 rows with B's rows off 128 bytes clusters of two blocks share B whatever the tile:
    # odd numbers of row tiles included (5 of 64 rows at M = 257, 3 of 128 at M = 300: the last
    # pair's second block lies past M, brings its half of B and stores nothing), K split; graph
    # timing replays the launch with the splits' counters reset.
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    for dtype in ("fp16", "bf16"):
        said, d = _run(timing="graph", dtype=dtype, M=m, N=n, K=k, bias=True, act="silu", engine="wgmma", tile=tile,
                       splits=splits)
        assert f"wgmma {tile} splits {splits} " in said and "cluster 2 sharing B" in said, said
        assert d["shape"].endswith(f",engine=wgmma,tile={tile},splits={splits}"), d["shape"]


@pytest.mark.parametrize("m,n,k,want", [(33, 4095, 4097, "mma.sync 64x64 unaligned (realigned in shared memory)"),
                                        (17, 4097, 4095, "mma.sync 64x64 unaligned (realigned in shared memory)"),
                                        (64, 4095, 4097, "pad A B to 16-byte rows, then wgmma"),
                                        (33, 1000, 11007, "pad A to 16-byte rows, then wgmma")])
def test_gemm_few_rows_with_b_off_16_bytes_stay_in_place(m, n, k, want):
    # choice.hpp's pad_pays with mma.sync realigning in place: up to about 48 rows with B's rows off
    # 16 bytes, B is read in place (a copy would move it twice more); from 64 rows, or where only A
    # (small) needs the copy, wgmma on padded copies. Graph timing: the 64x64 tile's K splits, finished
    # by each tile's last block, leave their counts and sums at zero for the next launch.
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    for dtype in ("fp16", "bf16"):
        said, _ = _run(timing="graph", dtype=dtype, M=m, N=n, K=k, bias=True, act="gelu")
        assert said.startswith(want), said


@pytest.mark.parametrize("m,n,k", [(33, 4095, 4097), (17, 4097, 4095), (40, 640, 8192)])
def test_gemm_mma_small_tile_splits_k_over_one_wave_of_resident_blocks(m, n, k):
    # mma.sync's 64x64 tile splits K as many ways as one wave of the GPU's resident blocks holds
    # (tiles x splits <= SMs x blocks an SM < tiles x (splits + 1)), unless K runs short first (each
    # split at least 4 steps of 64); rows off 16 bytes in place and aligned ones.
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    said, d = _run(dtype="fp16", M=m, N=n, K=k, engine="mma", tile="64x64")
    assert said.startswith("mma.sync 64x64"), said
    splits = int(said.split(" splits ")[1].split()[0])
    tiles = -(-m // 64) * -(-n // 64)
    slots = bwprof.device("gpu").info["compute_units"] * d["runtime_blocks_per_sm"]
    ksteps = -(-k // 64)
    ways = max(1, min(slots // tiles, ksteps // 4))  # then K in equal whole steps of 64
    assert splits == -(-k // (-(-ksteps // ways) * 64)), (splits, ways, tiles, slots)
    assert tiles * splits <= slots, (splits, tiles, slots)


@pytest.mark.parametrize("load", ["realign", "aligned"])
@pytest.mark.parametrize("tile", ["64x64", "128x128"])
def test_gemm_mma_tiles_split_and_finished_by_their_last_block(tile, load):
    # Each mma.sync tile with K split 3 ways and its tiles finished by their last block, on rows off
    # 16 bytes realigned in shared memory and on aligned rows; M = 130 and N = 1001 / 1000 leave
    # partial tiles, K = 3001 / 3000 a short last step. Graph timing replays the launch.
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    n, k = (1000, 3000) if load == "aligned" else (1001, 3001)
    for dtype, act in (("fp16", "silu"), ("bf16", "relu")):
        said, d = _run(timing="graph", dtype=dtype, M=130, N=n, K=k, bias=True, act=act, engine="mma", tile=tile,
                       splits=3)
        assert said.startswith(f"mma.sync {tile}") and "splits 3" in said, said
        assert ("realigned" in said) == (load == "realign"), said
        assert _quad_adds() in said, said  # N = 1001 too: the accumulator's rows are padded to 4 floats
        assert d["shape"] == f"M=130,N={n},K={k},bias=1,act={act},engine=mma,tile={tile},splits=3", d["shape"]
