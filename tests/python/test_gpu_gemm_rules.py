"""The `tensor` GEMM's dispatch rules on the GPU (kernels/gemm/choice.hpp, dispatch.hip): which
kernel, split and copies it takes where, by the lines BWPROF_GEMM_EXPLAIN writes, each run checked
against the float64 reference (skipped without a GPU)."""
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


@pytest.mark.parametrize("reduce", ["", "chain", "slots"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_gemm_split_k_chosen_for_few_tiles_and_long_k(dtype, reduce, tmp_path, monkeypatch):
    # M = 200, N = 304 (partial tiles of every shape), K = 4096: few output tiles and a long K,
    # where bwprof splits K on wgmma; run several times (the tile counters reset after each
    # launch), with a bias and GELU in the last split's epilogue. The splits meet in slots unless
    # BWPROF_GEMM_REDUCE=chain.
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    log = tmp_path / "explain.txt"
    monkeypatch.setenv("BWPROF_GEMM_EXPLAIN", str(log))
    if reduce:
        monkeypatch.setenv("BWPROF_GEMM_REDUCE", reduce)
    d = bwprof.measure("gemm", dtype=dtype, device="gpu", variant="tensor", M=200, N=304, K=4096, bias=True,
                       act="gelu", repeats=5, warmup=2, min_time_s=0.0, max_time_s=1.0).to_dict()
    assert d["verified"], f"error {d['max_rel_error']} > {d['tolerance']}"
    said = log.read_text()
    assert "wgmma" in said and "splits 1 " not in said, said
    assert ("by slots" in said) == (reduce != "chain"), said


@pytest.mark.parametrize("key,value,match", [("BWPROF_GEMM_REDUCE", "tree", "expected slots or chain"),
                                             ("BWPROF_GEMM_CLUSTER", "4", "expected 1 or 2"),
                                             ("BWPROF_GEMM_SPLITS", "two", "expected an integer from 1 to 65535"),
                                             ("BWPROF_GEMM_SPLITS", "0", "expected an integer from 1 to 65535"),
                                             ("BWPROF_GEMM_WGMMA", "off", "expected 0 or 1")])
def test_gemm_wgmma_knobs_out_of_range_are_clear_errors(key, value, match, monkeypatch):
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    monkeypatch.setenv(key, value)
    with pytest.raises(ValueError, match=f"{key}={value}: {match}"):
        bwprof.measure("gemm", dtype="fp16", device="gpu", variant="tensor", M=200, N=304, K=4096, **Q)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("m,n,k,engine", [(1, 1037, 1531, "tc skinny rows 8 unaligned"),
                                          (2, 1037, 1531, "tc skinny rows 8 unaligned"),
                                          (16, 1037, 1531, "tc skinny rows 16 unaligned"),
                                          (5, 1024, 1531, "tc skinny rows 8 aligned"),
                                          (1, 1024, 1536, "mma.sync skinny"),
                                          (7, 1024, 1544, "mma.sync skinny"),
                                          (16, 1160, 1536, "mma.sync skinny"),
                                          (17, 1037, 1531, "not tc skinny"),
                                          (40, 1160, 1536, "not tc skinny")])
def test_gemm_few_rows_take_the_kernels_built_around_b(m, n, k, engine, dtype, tmp_path, monkeypatch):
    # dispatch.hip's rule (choice.hpp: small_m_mma): up to 16 rows, mma.sync's 16-row tile where
    # the rows of A and B are on 16 bytes, else the skinny tensor kernel (its 16-bit reads where
    # B's rows are off 16 bytes, ldmatrix where only A's are); from 17 rows the general rules
    # (wgmma or mma.sync tiles). With a bias and an activation; make gpu-gemm-small runs these
    # under memcheck.
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    log = tmp_path / "explain.txt"
    monkeypatch.setenv("BWPROF_GEMM_EXPLAIN", str(log))
    d = bwprof.measure("gemm", dtype=dtype, device="gpu", variant="tensor", M=m, N=n, K=k, bias=True,
                       act="silu", **Q).to_dict()
    assert d["verified"], f"M={m}: error {d['max_rel_error']} > {d['tolerance']}"
    said = log.read_text()
    if engine == "not tc skinny":
        assert "tc skinny" not in said and ("wgmma" in said or "mma.sync" in said), said
    else:
        assert engine in said, said


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("add", ["vector", "scalar"])
@pytest.mark.parametrize("finish", ["last", "kernel"])
@pytest.mark.parametrize("m,n,k", [(1, 1024, 4096), (7, 1160, 1544), (16, 4096, 4096)])
def test_gemm_split_k_finish_matches_reference(m, n, k, finish, add, dtype, tmp_path, monkeypatch):
    # mma.sync's 16-row tile with K split, its tiles finished by their last block (the default) or
    # by a second kernel (BWPROF_GEMM_SPLIT_FINISH=kernel), the partial sums added four columns a
    # request (the default) or one element an atomic
    # (BWPROF_GEMM_SPLIT_ADD=scalar). Graph timing replays the launch many times and checks the
    # output after the replays: the counts and the accumulator must be back at zero after every launch.
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    log = tmp_path / "explain.txt"
    monkeypatch.setenv("BWPROF_GEMM_EXPLAIN", str(log))
    if finish == "kernel":
        monkeypatch.setenv("BWPROF_GEMM_SPLIT_FINISH", "kernel")
    monkeypatch.setenv("BWPROF_GEMM_SPLIT_ADD", add)
    d = bwprof.measure("gemm", dtype=dtype, device="gpu", variant="tensor", M=m, N=n, K=k, bias=True,
                       act="silu", timing="graph", **Q).to_dict()
    assert d["verified"], f"M={m} N={n} K={k}: error {d['max_rel_error']} > {d['tolerance']}"
    said = log.read_text()
    assert "mma.sync skinny" in said and ("last-block finish" in said) == (finish == "last"), said
    assert (_quad_adds() in said) == (add == "vector"), said


@pytest.mark.parametrize("env,match,m,n,k", [
    ({"BWPROF_GEMM_SPLIT_ADD": "atomic"}, "BWPROF_GEMM_SPLIT_ADD=atomic: expected vector or scalar", 4, 1024, 4096),
    ({"BWPROF_GEMM_SPLIT_FINISH": "first"}, "BWPROF_GEMM_SPLIT_FINISH=first: expected last or kernel", 4, 1024, 4096),
    ({"BWPROF_GEMM_UNALIGNED": "shift", "BWPROF_GEMM_TILE": "small"},
     "BWPROF_GEMM_UNALIGNED=shift: expected regs or realign", 40, 1001, 1003),
])
def test_gemm_mma_knobs_out_of_range_are_clear_errors(env, match, m, n, k, monkeypatch):
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ValueError, match=match):
        bwprof.measure("gemm", dtype="fp16", device="gpu", variant="tensor", M=m, N=n, K=k, **Q)


def _quad_adds():
    """What an explain line calls mma.sync's four-column adds of its K splits on this GPU: one vector
    reduction from sm_90, four atomics before."""
    return "vector adds" if _nvidia_sm_at_least(90) else "quad adds"


def _explained(log, **kw):
    """The BWPROF_GEMM_EXPLAIN lines of one verified `tensor` GEMM (the log emptied first)."""
    log.write_text("")
    d = bwprof.measure("gemm", device="gpu", variant="tensor", **kw, **Q).to_dict()
    assert d["verified"], f"{kw}: error {d['max_rel_error']} > {d['tolerance']}"
    return log.read_text().splitlines()


def test_gemm_skinny_tensor_halves_its_blocks_where_splits_are_short(tmp_path, monkeypatch):
    # skinny_mma.hip: half a wave of blocks where a wave's K splits would be 128 rows or shorter
    # (on an H100, N = 11009 K = 1000: 64 rows), a wave where they are longer (N = 4097 K = 4095:
    # 224 rows on an H100): every waves-1 line's split is over 128 rows.
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    log = tmp_path / "explain.txt"
    monkeypatch.setenv("BWPROF_GEMM_EXPLAIN", str(log))
    hopper = any(d.arch == "sm_90" for d in bwprof.devices())
    for n, k, want in ((11009, 1000, "waves 0.5"), (4097, 4095, "waves 1)")):
        said = [ln for ln in _explained(log, dtype="fp16", M=3, N=n, K=k) if "tc skinny" in ln]
        assert said, f"N={n} K={k}: no skinny tensor kernel"
        if hopper:
            assert all(want in ln for ln in said), said
        for ln in said:
            if "waves 1)" in ln:
                splits = int(ln.split(" splits ")[1].split()[0])
                assert -(-k // splits) > 128, ln


def test_gemm_b_rows_off_128_bytes_shared_by_clusters_or_copied(tmp_path, monkeypatch):
    # choice.hpp: from 256 rows B's 2000-byte rows (N = 1000) are read in place by clusters of two
    # blocks that share each stage of B (multicast_b; M = 1024 K = 4096: the copy, ~9.6 us by the
    # estimate, is over a tenth of wgmma's ~21), copied into 128-byte rows where the copy is under a
    # tenth of wgmma's estimate (M = 8192: 168 us); rows on 128 bytes (N = 1024) take no clusters there.
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    log = tmp_path / "explain.txt"
    monkeypatch.setenv("BWPROF_GEMM_EXPLAIN", str(log))
    said = _explained(log, dtype="bf16", M=1024, N=1000, K=4096, bias=True, act="relu")
    assert len(said) == 1 and said[0].startswith("wgmma") and "cluster 2 sharing B" in said[0], said
    said = _explained(log, dtype="fp16", M=8192, N=1000, K=4096)
    assert said and said[0] == "pad B, then:" and said[1].startswith("wgmma") and "cluster" not in said[1], said
    said = _explained(log, dtype="fp16", M=1024, N=1024, K=4096)
    assert len(said) == 1 and said[0].startswith("wgmma") and "cluster" not in said[0], said


@pytest.mark.parametrize("m,n,k", [(128, 1000, 11008), (128, 4096, 4096), (160, 1000, 11008), (128, 11009, 1000),
                                   (224, 4095, 4097)])
def test_gemm_clusters_below_256_rows_where_the_row_tiles_pair_up(m, n, k, tmp_path, monkeypatch):
    # choice.hpp's clusters_pay: from 128 to 255 rows, clusters wherever the chosen tile's row tiles
    # pair up (B aligned or not; on copies too), never on an odd number of them.
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    log = tmp_path / "explain.txt"
    monkeypatch.setenv("BWPROF_GEMM_EXPLAIN", str(log))
    said = [ln for ln in _explained(log, dtype="fp16", M=m, N=n, K=k) if ln.startswith("wgmma")]
    assert len(said) == 1, said
    rows = int(said[0].split()[1].split("x")[0])
    assert ("cluster 2 sharing B" in said[0]) == ((-(-m // rows)) % 2 == 0), said


@pytest.mark.parametrize("m,n,k,tile,splits", [(257, 1000, 2056, "64x128", "1"), (300, 520, 700, "128x128", "3"),
                                               (1000, 1000, 1024, "128x256", "2")])
def test_gemm_clusters_sharing_b_at_any_shape(m, n, k, tile, splits, tmp_path, monkeypatch):
    # BWPROF_GEMM_CLUSTER=2: clusters of two blocks sharing B wherever wgmma runs, odd numbers of row
    # tiles included (the last pair's second block lies past M: it brings its half of B and stores
    # nothing), K split; graph timing replays the launch with the splits' counters reset.
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    log = tmp_path / "explain.txt"
    for key, value in (("BWPROF_GEMM_EXPLAIN", str(log)), ("BWPROF_GEMM_CLUSTER", "2"), ("BWPROF_GEMM_TILE", tile),
                       ("BWPROF_GEMM_SPLITS", splits)):
        monkeypatch.setenv(key, value)
    for dtype in ("fp16", "bf16"):
        log.write_text("")
        d = bwprof.measure("gemm", dtype=dtype, device="gpu", variant="tensor", M=m, N=n, K=k, bias=True, act="silu",
                           timing="graph", **Q).to_dict()
        assert d["verified"], f"{dtype} M={m} N={n} K={k}: error {d['max_rel_error']} > {d['tolerance']}"
        assert f"wgmma {tile} splits {splits} " in log.read_text() and "cluster 2 sharing B" in log.read_text()


@pytest.mark.parametrize("m,n,k,want", [(33, 4095, 4097, "mma.sync small unaligned (realigned in shared memory)"),
                                        (17, 4097, 4095, "mma.sync small unaligned (realigned in shared memory)"),
                                        (64, 4095, 4097, "pad A B, then:"),
                                        (33, 1000, 11007, "pad A, then:")])
def test_gemm_few_rows_with_b_off_16_bytes_stay_in_place(m, n, k, want, tmp_path, monkeypatch):
    # choice.hpp's pad_pays with mma.sync realigning in place: up to about 48 rows with B's rows off
    # 16 bytes, B is read in place (a copy would move it twice more); from 64 rows, or where only A
    # (small) needs the copy, wgmma on padded copies. Graph timing: the 64x64 tile's K splits, finished
    # by each tile's last block, leave their counts and sums at zero for the next launch.
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    log = tmp_path / "explain.txt"
    monkeypatch.setenv("BWPROF_GEMM_EXPLAIN", str(log))
    for dtype in ("fp16", "bf16"):
        log.write_text("")
        d = bwprof.measure("gemm", dtype=dtype, device="gpu", variant="tensor", M=m, N=n, K=k, bias=True,
                           act="gelu", timing="graph", **Q).to_dict()
        assert d["verified"], f"{dtype} M={m} N={n} K={k}: error {d['max_rel_error']} > {d['tolerance']}"
        said = log.read_text()
        assert want in said, said
        if "realigned" in want:
            assert "last-block finish" in said and "pad" not in said, said


@pytest.mark.parametrize("m,n,k", [(33, 4095, 4097), (17, 4097, 4095), (40, 640, 8192)])
def test_gemm_mma_small_tile_splits_k_over_one_wave_of_resident_blocks(m, n, k, tmp_path, monkeypatch):
    # mma.sync's 64x64 tile splits K as many ways as one wave of the GPU's resident blocks holds
    # (tiles x splits <= SMs x blocks an SM < tiles x (splits + 1)), unless K runs short first (each
    # split at least 4 steps of 64); rows off 16 bytes in place (BWPROF_GEMM_PAD=0) and aligned ones.
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    log = tmp_path / "explain.txt"
    monkeypatch.setenv("BWPROF_GEMM_EXPLAIN", str(log))
    monkeypatch.setenv("BWPROF_GEMM_PAD", "0")
    monkeypatch.setenv("BWPROF_GEMM_TILE", "small")
    d = bwprof.measure("gemm", dtype="fp16", device="gpu", variant="tensor", M=m, N=n, K=k, **Q).to_dict()
    assert d["verified"], f"M={m} N={n} K={k}: error {d['max_rel_error']} > {d['tolerance']}"
    said = [ln for ln in log.read_text().splitlines() if ln.startswith("mma.sync small")]
    assert said, log.read_text()
    splits = int(said[0].split(" splits ")[1].split()[0])
    tiles = -(-m // 64) * -(-n // 64)
    slots = bwprof.device("gpu").info["compute_units"] * d["runtime_blocks_per_sm"]
    ksteps = -(-k // 64)
    ways = max(1, min(slots // tiles, ksteps // 4))  # then K in equal whole steps of 64
    assert splits == -(-k // (-(-ksteps // ways) * 64)), (splits, ways, tiles, slots)
    assert tiles * splits <= slots, (splits, tiles, slots)


@pytest.mark.parametrize("load", ["realign", "regs", "aligned"])
@pytest.mark.parametrize("tile", ["small", "medium", "large"])
def test_gemm_mma_tiles_split_and_finished_by_their_last_block(tile, load, tmp_path, monkeypatch):
    # Each mma.sync tile with K split 3 ways and its tiles finished by their last block (or by the
    # second kernel: the large tile here), on rows off 16 bytes realigned in shared memory, loaded
    # through registers (BWPROF_GEMM_UNALIGNED=regs) and on aligned rows; M = 130 and N = 1001 / 1000
    # leave partial tiles, K = 3001 / 3000 a short last step. Graph timing replays the launch.
    if not _nvidia_sm_at_least(80):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    log = tmp_path / "explain.txt"
    monkeypatch.setenv("BWPROF_GEMM_EXPLAIN", str(log))
    monkeypatch.setenv("BWPROF_GEMM_TILE", tile)
    monkeypatch.setenv("BWPROF_GEMM_SPLITS", "3")
    if tile == "large":
        monkeypatch.setenv("BWPROF_GEMM_SPLIT_FINISH", "kernel")
    if load == "regs":
        monkeypatch.setenv("BWPROF_GEMM_UNALIGNED", "regs")
    n, k = (1000, 3000) if load == "aligned" else (1001, 3001)
    for dtype, act in (("fp16", "silu"), ("bf16", "relu")):
        log.write_text("")
        d = bwprof.measure("gemm", dtype=dtype, device="gpu", variant="tensor", M=130, N=n, K=k, bias=True,
                           act=act, timing="graph", **Q).to_dict()
        assert d["verified"], f"{tile} {load} {dtype}: error {d['max_rel_error']} > {d['tolerance']}"
        said = log.read_text()
        assert f"mma.sync {tile}" in said and "splits 3" in said, said
        assert ("last-block finish" in said) == (tile != "large"), said
        assert ("realigned" in said) == (load == "realign") and ("registers" in said) == (load == "regs"), said
        assert _quad_adds() in said, said  # N = 1001 too: the accumulator's rows are padded to 4 floats
