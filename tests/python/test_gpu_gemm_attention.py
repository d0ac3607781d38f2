"""GEMM, QKV projection and flash attention on the GPU against the float64 reference (skipped
without a GPU). Sizes that are not multiples of any tile sit beside aligned ones."""

import pytest
from hypothesis import assume, example, given, settings, strategies as st

import bwprof
from bwprof import _core

pytestmark = pytest.mark.gpu
Q = dict(repeats=2, min_time_s=0.0, warmup=1)


def gpu_variants(kernel):
    for k in _core.kernels():
        if k["name"] == kernel:
            return [v["name"] for v in k["variants"] if v["backend"] == "gpu"]
    return []


GEMM_SHAPES = [
    dict(M=1, N=896, K=896),
    dict(M=128, N=256, K=64),
    dict(M=257, N=130, K=96),          # M, N not multiples of any tile; K, N multiples of 8
    dict(M=33, N=77, K=129),           # nothing aligned: the plain-load path
    dict(M=5, N=3, K=7),
    dict(M=300, N=520, K=1000, bias=True, act="gelu"),
    dict(M=70, N=100, K=40, bias=True, act="silu"),
    dict(M=64, N=64, K=9, bias=True, act="relu"),
    dict(M=19, N=24, K=16, act="gelu"),
    dict(M=513, N=1031, K=259, bias=True),
    dict(M=1, N=4097, K=4095),                  # the skinny tile, unaligned, K split over blocks
    dict(M=16, N=1000, K=11009, bias=True, act="gelu"),
    dict(M=33, N=4095, K=1000),                 # few tiles: K split on the 64 x 64 tile
    dict(M=13, N=4097, K=2049, bias=True, act="silu"),  # the skinny kernel's two groups of rows, unaligned
    dict(M=700, N=2049, K=1031, bias=True),     # odd N and K: wgmma on padded copies where that pays
    dict(M=2, N=11007, K=515, bias=True),       # the skinny tensor kernel: 8-row tile, many slabs, unaligned
    dict(M=40, N=1031, K=2051, act="relu"),     # its 64-row tile, K split, odd N and K
]


def _gemm_cases():
    out = []
    for v in ("tiled", "tensor", "vendor", "unfused"):
        for s in GEMM_SHAPES:
            for dt in ("fp32", "fp16", "bf16"):
                if v == "tensor" and dt == "fp32":
                    continue
                out.append((v, dt, s))
    return out


@pytest.mark.parametrize("variant,dtype,shape", _gemm_cases())
def test_gemm_variant_matches_reference(variant, dtype, shape):
    if variant not in gpu_variants("gemm"):
        pytest.skip(f"{variant} not in this build")
    epilogue = shape.get("bias") or shape.get("act", "none") != "none"
    if variant == "vendor" and epilogue and "hip" in _core.build_features():  # rocBLAS: no epilogue
        with pytest.raises(ValueError, match="rocBLAS"):
            bwprof.measure("gemm", dtype=dtype, device="gpu", variant=variant, **shape, **Q)
        return
    if variant == "vendor" and shape.get("act") == "silu":
        with pytest.raises(ValueError, match="silu"):
            bwprof.measure("gemm", dtype=dtype, device="gpu", variant=variant, **shape, **Q)
        return
    d = bwprof.measure("gemm", dtype=dtype, device="gpu", variant=variant, **shape, **Q).to_dict()
    assert d["verified"], f"gemm {variant} {dtype} {shape}: error {d['max_rel_error']} > {d['tolerance']}"
    assert d["time_median_us"] > 0
    if variant in ("tiled", "tensor") or (variant == "unfused" and epilogue):  # the library's are not ours
        assert d["registers_per_thread"] > 0 and d["block_size"] > 0
        assert d["shared_mem_per_block"] > 0 or variant == "unfused"


# The Hopper path of `tensor` (wgmma fed by the copy engine), each tile shape asked for in turn:
# threads per block and shared memory identify the kernel that ran (mma.sync uses other sizes).
WGMMA_TILES = {  # tile: (threads, dynamic shared memory) -- stages x (A + B tile) + 1 KB + barriers
    "128x256": (384, 4 * (128 * 64 + 64 * 256) * 2 + 1024 + 64),
    "128x128": (384, 6 * (128 * 64 + 64 * 128) * 2 + 1024 + 96),
    "64x128": (256, 8 * (64 * 64 + 64 * 128) * 2 + 1024 + 128),
    "64x64": (256, 8 * (64 * 64 + 64 * 64) * 2 + 1024 + 128),
}
WGMMA_SHAPES = [
    dict(M=200, N=264, K=200, bias=True, act="gelu"),  # partial tiles in M, N and K
    dict(M=64, N=8, K=8),                                # one narrow tile, K shorter than a step
    dict(M=390, N=648, K=1096, bias=True),              # many steps: the stage ring wraps
    dict(M=130, N=520, K=72, act="relu"),
    dict(M=3, N=200, K=64, bias=True),                  # decode-sized M: rows past M come in as zeros
]


def _hopper_wgmma_build():
    return "sm90a" in _core.build_features() and any(d.arch == "sm_90" for d in bwprof.devices())


@pytest.mark.parametrize("tile", list(WGMMA_TILES))
@pytest.mark.parametrize("shape", WGMMA_SHAPES)
def test_tensor_wgmma_tiles_match_reference(tile, shape):
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    d = bwprof.measure("gemm", dtype="fp16", device="gpu", variant="tensor", engine="wgmma", tile=tile, **shape,
                       **Q).to_dict()
    assert d["verified"], f"wgmma {tile} {shape}: error {d['max_rel_error']} > {d['tolerance']}"
    assert (d["block_size"], d["shared_mem_per_block"]) == WGMMA_TILES[tile]
    assert d["shape"].endswith(f",engine=wgmma,tile={tile}"), d["shape"]


def test_tensor_mma_runs_where_wgmma_would():
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    d = bwprof.measure("gemm", dtype="fp16", device="gpu", variant="tensor", engine="mma", M=256, N=256, K=256,
                       **Q).to_dict()
    assert d["verified"] and d["block_size"] in (128, 256) and d["shared_mem_per_block"] < 110000


def test_tensor_variant_is_fp16_bf16_only_and_names_the_alternatives():
    with pytest.raises(ValueError, match="tensor.*fp32|fp32.*tensor"):
        bwprof.measure("gemm", dtype="fp32", device="gpu", variant="tensor", M=8, N=8, K=8, **Q)


def test_unknown_gemm_variant_lists_the_available_ones():
    with pytest.raises(ValueError, match="available: .*tiled"):
        bwprof.measure("gemm", device="gpu", variant="cutlass", M=8, N=8, K=8, **Q)


@pytest.mark.parametrize("variant", ["fused", "separate"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("shape", [dict(tokens=64, hidden=768), dict(tokens=37, hidden=100)])
def test_qkv_projection_matches_reference(variant, dtype, shape):
    d = bwprof.measure("qkv_projection", dtype=dtype, device="gpu", variant=variant, **shape, **Q).to_dict()
    assert d["verified"], f"qkv {variant} {dtype} {shape}: error {d['max_rel_error']} > {d['tolerance']}"


ATTN = [
    dict(heads=4, seq_q=64, head_dim=64),
    dict(heads=4, seq_q=100, head_dim=128, causal=True),                  # not a multiple of the tile
    dict(batch=2, heads=6, kv_heads=2, seq_q=77, seq_kv=200, head_dim=32, causal=True),
    dict(batch=2, heads=8, kv_heads=2, seq_q=130, head_dim=64),
    dict(heads=2, seq_q=16, seq_kv=1000, head_dim=128),
    dict(heads=4, seq_q=5, seq_kv=300, head_dim=64, causal=True),          # short queries: the rows kernel
    dict(batch=3, heads=8, kv_heads=8, seq_q=1, seq_kv=4097, head_dim=128),   # decode, split over the KV length
    dict(batch=2, heads=32, kv_heads=4, seq_q=1, seq_kv=1500, head_dim=64),   # decode with GQA groups of 8
    dict(heads=12, kv_heads=4, seq_q=1, seq_kv=33, head_dim=32),
    dict(batch=3, heads=21, kv_heads=3, seq_q=67, seq_kv=99, head_dim=80, causal=True),   # GQA 7
    dict(batch=2, heads=9, kv_heads=3, seq_q=1, seq_kv=5000, head_dim=96),                 # decode, GQA 3
    dict(heads=4, kv_heads=1, seq_q=129, head_dim=256, causal=True),
    dict(batch=3, heads=8, kv_heads=2, seq_q=1, seq_kv=3001, head_dim=256),
]


@pytest.mark.parametrize("variant", ["flash", "flash_paged"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("shape", ATTN)
def test_flash_attention_matches_reference(variant, dtype, shape):
    extra = dict(block_size=16 if shape["seq_q"] % 2 else 7) if variant == "flash_paged" else {}
    d = bwprof.measure("attention", dtype=dtype, device="gpu", variant=variant, **shape, **extra, **Q).to_dict()
    assert d["verified"], f"attention {variant} {dtype} {shape}: error {d['max_rel_error']} > {d['tolerance']}"
    assert d["registers_per_thread"] > 0 and d["block_size"] > 0


@settings(max_examples=30, deadline=None)
@given(batch=st.integers(1, 3), kv_heads=st.integers(1, 3), group=st.integers(1, 8), seq_q=st.integers(1, 300),
       extra=st.integers(0, 700), head_dim=st.sampled_from([32, 64, 80, 96, 128, 256]), causal=st.booleans(),
       dtype=st.sampled_from(["fp16", "bf16", "fp32"]), paged=st.booleans(), block=st.integers(1, 33))
def test_flash_attention_random_shapes(batch, kv_heads, group, seq_q, extra, head_dim, causal, dtype, paged, block):
    kw = dict(batch=batch, heads=kv_heads * group, kv_heads=kv_heads, seq_q=seq_q, seq_kv=seq_q + extra,
              head_dim=head_dim, causal=causal)
    if paged:
        kw["block_size"] = block
    d = bwprof.measure("attention", dtype=dtype, device="gpu", variant="flash_paged" if paged else "flash",
                       **kw, **Q).to_dict()
    assert d["verified"], f"attention {dtype} {kw}: error {d['max_rel_error']} > {d['tolerance']}"


@settings(max_examples=40, deadline=None)
@given(kernel=st.sampled_from(["wgmma", "decode", "flash"]), batch=st.integers(1, 3), kv_heads=st.integers(1, 3),
       group=st.integers(1, 8), seq_q=st.one_of(st.integers(1, 4), st.integers(1, 400)), extra=st.integers(0, 700),
       head_dim=st.sampled_from([32, 64, 80, 96, 128, 256]), causal=st.booleans(),
       dtype=st.sampled_from(["fp16", "bf16"]), block=st.sampled_from([0, 7, 8, 16, 32, 64]), splits=st.integers(0, 9))
def test_each_attention_kernel_random_shapes(kernel, batch, kv_heads, group, seq_q, extra, head_dim, causal, dtype,
                                             block, splits):
    # Each matrix-unit kernel by name (engine), wherever it takes the shape on this GPU; block 0:
    # contiguous K/V; splits (1-9, not wgmma): the keys split as asked (0: the rule's).
    kw = dict(batch=batch, heads=kv_heads * group, kv_heads=kv_heads, seq_q=seq_q, seq_kv=seq_q + extra,
              head_dim=head_dim, causal=causal, engine=kernel)
    if block:
        kw["block_size"] = block
    if splits and kernel != "wgmma":
        kw["splits"] = splits
    try:
        d = bwprof.measure("attention", dtype=dtype, device="gpu", variant="flash_paged" if block else "flash",
                           **kw, **Q).to_dict()
    except ValueError as e:  # a kernel that does not take the shape here
        assume("engine:" not in str(e))
        raise
    assert d["verified"], f"attention {kernel} {dtype} {kw}: error {d['max_rel_error']} > {d['tolerance']}"
    assert f"engine={kernel}" in d["shape"]


# scores=rising: every key tile raises each row's maximum, so the Hopper kernel at head dim 256 moves its lazy
# reference and rescales O at nearly every step (the uniform inputs take the other path: the reference held).
RISING = [dict(batch=2, heads=8, kv_heads=2, seq_q=300, seq_kv=1000, causal=True), dict(heads=6, kv_heads=3, seq_q=517),
          dict(heads=4, kv_heads=1, seq_q=2, seq_kv=3001), dict(batch=2, heads=4, seq_q=200, seq_kv=777, block_size=16),
          dict(heads=4, kv_heads=2, seq_q=1, seq_kv=2500, causal=True, block_size=64)]


@pytest.mark.parametrize("kernel", ["wgmma", "decode", "flash"])
@pytest.mark.parametrize("head_dim", [32, 64, 80, 96, 128, 256])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_each_attention_kernel_on_rising_scores(kernel, head_dim, dtype):
    ran = 0
    for kw in RISING:
        variant = "flash_paged" if "block_size" in kw else "flash"
        try:
            d = bwprof.measure("attention", dtype=dtype, device="gpu", variant=variant, head_dim=head_dim,
                               scores="rising", engine=kernel, **kw, **Q).to_dict()
        except ValueError as e:  # a kernel that does not take the shape (or the head dim) here
            assert "engine:" in str(e), e
            continue
        assert "scores=rising" in d["shape"]
        assert d["verified"], f"attention {kernel} {dtype} D{head_dim} {kw}: error {d['max_rel_error']} > {d['tolerance']}"
        ran += 1
    if not ran:
        pytest.skip(f"the {kernel} kernel takes none of these shapes at head dim {head_dim} here")


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 300), n=st.integers(1, 700), k=st.integers(1, 3000), bias=st.booleans(),
       act=st.sampled_from(["none", "relu", "gelu"]), dtype=st.sampled_from(["fp16", "bf16"]))
@example(m=1, n=1, k=75, bias=False, act="gelu", dtype="fp16")  # failed on an older skinny kernel (0.0133)
@example(m=1, n=1, k=75, bias=False, act="gelu", dtype="bf16")
@example(m=16, n=1, k=3000, bias=True, act="gelu", dtype="fp16")
def test_gemm_tensor_random_shapes(m, n, k, bias, act, dtype):
    d = bwprof.measure("gemm", dtype=dtype, device="gpu", variant="tensor", M=m, N=n, K=k, bias=bias, act=act,
                       **Q).to_dict()
    assert d["verified"], f"gemm tensor {dtype} M={m} N={n} K={k}: error {d['max_rel_error']} > {d['tolerance']}"


# The `tensor` engines that bwprof's dispatch takes only at some shapes, asked for by name at any
# shape they take: the skinny tensor kernel up to 64 rows (K split its way, whole, 3 ways), mma.sync
# and its tiles with K split (finished by each tile's last block), wgmma and its tiles (on padded
# copies of operands whose rows are off 16 bytes) with K split (the tile sums in slots that the last
# split adds, or in split order where slots would not fit), up to more splits than K has steps of 64.
CHOICES = {
    "skinny": dict(engine="skinny"),
    "skinny-whole-k": dict(engine="skinny", splits=1),
    "skinny-split-3": dict(engine="skinny", splits=3),
    "wgmma": dict(engine="wgmma"),
    "wgmma-64x128": dict(engine="wgmma", tile="64x128"),
    "split-3": dict(splits=3),
    "split-128x256-5": dict(engine="wgmma", tile="128x256", splits=5),
    "split-64x64-32": dict(engine="wgmma", tile="64x64", splits=32),
    "mma": dict(engine="mma"),
    "mma-64x64-split-5": dict(engine="mma", tile="64x64", splits=5),
    "mma-128x128-split-2": dict(engine="mma", tile="128x128", splits=2),
}


@settings(max_examples=40, deadline=None)
@given(choice=st.sampled_from(sorted(CHOICES)), m=st.integers(1, 300), n=st.integers(1, 1100), k=st.integers(1, 3000),
       bias=st.booleans(), act=st.sampled_from(["none", "relu", "gelu", "silu"]), dtype=st.sampled_from(["fp16", "bf16"]))
def test_gemm_tensor_engines_by_name_random_shapes(choice, m, n, k, bias, act, dtype):
    if choice.startswith("skinny"):
        m = 1 + m % 64
    else:
        m = 17 + m % 284  # past the skinny kernels' rows, where the default dispatch takes wgmma/mma.sync
    kw = CHOICES[choice]
    if kw.get("engine") == "wgmma" and not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    d = bwprof.measure("gemm", dtype=dtype, device="gpu", variant="tensor", M=m, N=n, K=k, bias=bias, act=act, **kw,
                       **Q).to_dict()
    assert d["verified"], (f"gemm tensor {choice} {dtype} M={m} N={n} K={k} bias={bias} act={act}: "
                           f"error {d['max_rel_error']} > {d['tolerance']}")


def test_gemm_unknown_wgmma_tile_is_a_clear_error():
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    with pytest.raises(ValueError, match=r"tile: unknown value '96x96' \(choices: auto, 16x128, 64x64, 128x128, 64x128, "
                                         r"128x256\)"):
        bwprof.measure("gemm", dtype="fp16", device="gpu", variant="tensor", M=64, N=64, K=64, engine="wgmma",
                       tile="96x96", **Q)
    with pytest.raises(ValueError, match="tile: unknown value 'Large'"):  # a typo is never the default tile
        bwprof.measure("gemm", dtype="fp16", device="gpu", variant="tensor", M=200, N=64, K=64, engine="mma",
                       tile="Large", **Q)


def _sm90_smem(dp, bc, stages, qslots, paged=False, o_tma=False):
    # flash_sm90.hip's shared memory: the Q slots, the K/V stages, 1248 bytes of alignment and barriers;
    # paged, two key tiles' K/V buffer rows (an int a key) for the cp.async loader; O by the copy
    # engine, a buffer of 128 rows as wide as a Q slot
    return (qslots + o_tma) * 128 * dp * 2 + 2 * stages * bc * dp * 2 + 1248 + (8 * bc if paged else 0)


def _sm90_rings_with_o(dp, bc, seq_kv, paged):
    # choose_rings with O by the copy engine: (stages, qslots, O buffer), no buffer where 2+1 with it do
    # not fit or for paged K/V (those kernels store O from registers: the buffer would be held unused)
    o = not paged and _sm90_smem(dp, bc, 2, 1, paged, True) <= 232448
    if seq_kv <= bc and _sm90_smem(dp, bc, 2, 2, paged, o) <= 232448:
        return 2, 2, o
    return (3 if _sm90_smem(dp, bc, 3, 1, paged, o) <= 232448 else 2), 1, o


# The Hopper attention kernel's rings and key tiles (flash_sm90.hip): shapes with more tiles than SMs
# (the rings go round) or lengths off the key tile, each with the rule's choice.
# Rule: rows of one key tile (seq_kv <= 128): two stages and two Q slots where they fit; else three
# and one where they fit (head dims up to 128), else two and one. Head dim 256: key tiles of 64.
WGMMA_ATTN = [
    (dict(batch=3, heads=48, kv_heads=6, seq_q=100, head_dim=64, causal=True), (64, 128, 2, 2)),  # one key tile
    (dict(batch=2, heads=24, kv_heads=3, seq_q=260, head_dim=64, causal=True), (64, 128, 3, 1)),
    # head dim 64 past 1024 keys: O from registers by default (the copy engine's store up to 1024)
    (dict(heads=4, kv_heads=2, seq_q=90, seq_kv=1100, head_dim=64, causal=True), (64, 128, 3, 1)),
    (dict(batch=3, heads=16, kv_heads=2, seq_q=130, seq_kv=203, head_dim=128), (128, 128, 3, 1)),
    (dict(batch=2, heads=8, kv_heads=1, seq_q=384, seq_kv=700, head_dim=80, causal=True), (128, 128, 3, 1)),
    (dict(heads=2, seq_q=200, seq_kv=333, head_dim=256), (256, 64, 2, 1)),
    (dict(batch=2, heads=6, kv_heads=3, seq_q=257, head_dim=256, causal=True), (256, 64, 2, 1)),
    (dict(batch=16, heads=8, kv_heads=1, seq_q=100, head_dim=256, causal=True), (256, 64, 2, 1)),  # 2+2 too big
    (dict(heads=4, kv_heads=2, seq_q=129, head_dim=96, causal=True, block_size=16), (128, 128, 3, 1)),  # paged
    (dict(batch=2, heads=8, kv_heads=2, seq_q=77, seq_kv=120, head_dim=128, block_size=32), (128, 128, 2, 2)),
    # head dim 256 paged (K and V of a stage on barriers of their own): cp.async at pages of 16, the copy
    # engine at pages of 64
    (dict(batch=2, heads=4, kv_heads=2, seq_q=150, seq_kv=290, head_dim=256, causal=True, block_size=16),
     (256, 64, 2, 1)),
    (dict(heads=3, seq_q=70, seq_kv=333, head_dim=256, block_size=64), (256, 64, 2, 1)),
]


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("shape,rings", WGMMA_ATTN)
def test_wgmma_attention_rings_match_reference(shape, rings, dtype):
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    dp, bc, stages, qslots = rings
    variant = "flash_paged" if "block_size" in shape else "flash"
    o_tma = False
    # O by the copy engine: the rule for contiguous K/V at head dim 64 up to 1024 keys and at 80-128
    # up to 512 keys
    keys = shape.get("seq_kv", shape["seq_q"])
    if variant == "flash" and ((dp == 64 and keys <= 1024) or (dp == 128 and keys <= 512)):
        stages, qslots, o_tma = _sm90_rings_with_o(dp, bc, keys, False)
    d = bwprof.measure("attention", dtype=dtype, device="gpu", variant=variant, engine="wgmma", **shape, **Q).to_dict()
    assert d["verified"], f"wgmma {dtype} {shape}: error {d['max_rel_error']} > {d['tolerance']}"
    assert d["shared_mem_per_block"] == _sm90_smem(dp, bc, stages, qslots, variant == "flash_paged", o_tma)


# The Hopper kernel's tile order (kernels/attention/tile_order.hpp), the host's choice: chunks of 32
# heads at the first shape (192 tiles on at most 132 blocks), one head at the second.
@pytest.mark.parametrize("shape", [dict(batch=4, heads=16, kv_heads=4, seq_q=300, head_dim=64, causal=True),
                                   dict(batch=4, heads=16, kv_heads=4, seq_q=300, head_dim=64, causal=True, block_size=16),
                                   dict(batch=2, heads=20, kv_heads=5, seq_q=200, seq_kv=333, head_dim=128, causal=True,
                                        block_size=32)])
def test_wgmma_attention_tile_orders_match_reference(shape):
    if not _hopper_wgmma_build():
        pytest.skip("needs an sm_90 GPU and a build with sm_90a code")
    variant = "flash_paged" if "block_size" in shape else "flash"
    d = bwprof.measure("attention", dtype="bf16", device="gpu", variant=variant, engine="wgmma", **shape, **Q).to_dict()
    assert d["verified"], f"{shape}: error {d['max_rel_error']} > {d['tolerance']}"


def test_attention_choices_out_of_range_are_clear_errors():
    shape = dict(heads=2, seq_q=256, head_dim=128)
    if _hopper_wgmma_build():
        with pytest.raises(ValueError, match="splits: the wgmma kernel does not split the keys"):
            bwprof.measure("attention", dtype="bf16", device="gpu", variant="flash", engine="wgmma", splits=2, **shape,
                           **Q)
    with pytest.raises(ValueError, match="engine: unknown value 'fastest'"):
        bwprof.measure("attention", dtype="bf16", device="gpu", variant="flash", engine="fastest", **shape, **Q)
    with pytest.raises(ValueError, match="engine: decode does not take this problem here"):
        bwprof.measure("attention", dtype="bf16", device="gpu", variant="flash", engine="decode", **shape, **Q)
    with pytest.raises(ValueError, match="splits: 0 is out of range"):
        bwprof.measure("attention", dtype="bf16", device="gpu", variant="flash", splits=0, **shape, **Q)


def test_gemm_skinny_tensor_kernel_past_64_rows_is_a_clear_error():
    if not any(d.arch.startswith("sm_") and int(d.arch[3:]) >= 80 for d in bwprof.devices()):
        pytest.skip("the NVIDIA dispatch (sm_80+)")
    with pytest.raises(ValueError, match="engine: the skinny kernel takes M <= 64"):
        bwprof.measure("gemm", dtype="fp16", device="gpu", variant="tensor", M=65, N=8, K=8, engine="skinny", **Q)


def test_unsupported_head_dim_names_the_supported_ones():
    with pytest.raises(ValueError, match="head_dim.*32, 64, 80, 96, 128 and 256"):
        bwprof.measure("attention", device="gpu", variant="flash", heads=2, seq_q=8, head_dim=48, **Q)


def test_mismatched_heads_are_value_errors():
    with pytest.raises(ValueError, match="kv_heads"):
        bwprof.measure("attention", device="gpu", variant="flash", heads=6, kv_heads=4, seq_q=8, head_dim=64, **Q)
    with pytest.raises(ValueError, match="seq_q"):
        bwprof.measure("attention", device="gpu", variant="flash", heads=2, seq_q=9, seq_kv=4, causal=True,
                       head_dim=64, **Q)


def test_fp16_work_on_matrix_units_is_judged_against_their_roof():
    # A tensor-core GEMM far above the FP16 vector roof is neither "above peak" nor "in cache".
    d = bwprof.measure("gemm", dtype="fp16", device="gpu", variant="tensor", M=2048, N=2048, K=2048,
                       repeats=3, min_time_s=0, warmup=1).to_dict()
    # Its roof is bwprof's own matrix peak (mma_peak), never the datasheet's when that was measured.
    assert d["peak_compute_source"] == "measured:mma_peak_fp16 (matrix units)"
    assert d["peak_gflops"] == bwprof.peaks("gpu", "fp16")["matrix_gflops"] == d["peak_matrix_gflops"] > 0
    assert d["gflops"] > bwprof.peaks("gpu", "fp16")["gflops"]  # beyond the vector roof ...
    assert not d["above_peak"] and 0 < d["compute_pct_peak"] < 100  # ... but under the matrix roof
    tiled = bwprof.measure("gemm", dtype="fp16", device="gpu", variant="tiled", M=256, N=256, K=256,
                           repeats=3, min_time_s=0, warmup=1).to_dict()
    assert tiled["peak_compute_source"].startswith("measured:fma_chain")  # CUDA cores: the vector roof
