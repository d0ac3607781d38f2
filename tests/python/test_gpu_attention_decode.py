"""The GPU decode kernel (its ring depths, splits and the merge of the splits) and the paged K/V
loaders against the float64 reference (skipped without a GPU), at fixed shapes short enough for
compute-sanitizer and at random shapes."""
import pytest
from hypothesis import assume, given, settings, strategies as st

import bwprof

pytestmark = pytest.mark.gpu
Q = dict(repeats=2, min_time_s=0.0, warmup=1)

# The decode kernel and the paged loaders at fixed shapes (short enough for compute-sanitizer): every
# head dim, GQA 1-8, odd lengths, pages of 16, 32, 64 and 128, the decode kernel's split counts (its
# rule's, and as `splits` asks), and the Hopper prefill's paged K/V by cp.async (pages under 64 keys)
# and by the copy engine (from 64).
DECODE_PAGED = [
    ("fp16", dict(batch=1, heads=8, kv_heads=2, seq_q=1, seq_kv=3001, head_dim=64), dict(engine="decode", splits=5)),
    ("bf16", dict(batch=2, heads=8, kv_heads=2, seq_q=1, seq_kv=1999, head_dim=64), {}),
    ("bf16", dict(batch=3, heads=16, kv_heads=2, seq_q=1, seq_kv=1001, head_dim=80, block_size=16), {}),
    ("fp16", dict(batch=2, heads=9, kv_heads=3, seq_q=1, seq_kv=777, head_dim=96, block_size=32), dict(splits=1)),
    ("bf16", dict(batch=1, heads=8, kv_heads=4, seq_q=3, seq_kv=1000, head_dim=128, block_size=128, causal=True),
     dict(splits=1000)),
    ("fp16", dict(batch=2, heads=4, kv_heads=4, seq_q=1, seq_kv=517, head_dim=256, block_size=16), {}),
    ("bf16", dict(batch=1, heads=6, kv_heads=2, seq_q=1, seq_kv=333, head_dim=32), {}),
    ("bf16", dict(batch=1, heads=4, kv_heads=1, seq_q=300, seq_kv=300, head_dim=128, block_size=16, causal=True), {}),
    ("fp16", dict(batch=2, heads=4, kv_heads=2, seq_q=150, seq_kv=290, head_dim=80, block_size=32, causal=True), {}),
    ("fp16", dict(batch=1, heads=2, kv_heads=1, seq_q=200, seq_kv=400, head_dim=64, block_size=128), {}),
    ("bf16", dict(batch=1, heads=2, kv_heads=2, seq_q=129, seq_kv=129, head_dim=256, block_size=16, causal=True), {}),
    ("bf16", dict(batch=2, heads=6, kv_heads=2, seq_q=200, seq_kv=333, head_dim=96, block_size=64, causal=True), {}),
    # The decode kernel's merge of its splits: 32 rows of 128 (four passes of two items a thread),
    # 33 splits (five batches of 8, the last partial); one row of 32 (16 parts a column); 3 rows of 80
    # (2 parts) over 9 splits.
    ("fp16", dict(batch=1, heads=8, kv_heads=1, seq_q=4, seq_kv=4099, head_dim=128, causal=True),
     dict(engine="decode", splits=33)),
    ("bf16", dict(batch=2, heads=3, kv_heads=3, seq_q=1, seq_kv=5000, head_dim=32), dict(engine="decode", splits=37)),
    ("fp16", dict(batch=1, heads=6, kv_heads=2, seq_q=1, seq_kv=2000, head_dim=80, block_size=16),
     dict(engine="decode", splits=9)),
]


@pytest.mark.parametrize("dtype,shape,choice", DECODE_PAGED)
def test_decode_and_paged_fixed_shapes(dtype, shape, choice):
    d = bwprof.measure("attention", dtype=dtype, device="gpu", variant="flash_paged" if "block_size" in shape else "flash",
                       **shape, **choice, **Q).to_dict()
    assert d["verified"], f"attention {dtype} {shape} {choice}: error {d['max_rel_error']} > {d['tolerance']}"
    for k, v in choice.items():
        assert f"{k}={v}" in d["shape"], d["shape"]


@settings(max_examples=30, deadline=None)
@given(batch=st.integers(1, 3), kv_heads=st.integers(1, 3), group=st.integers(1, 8), seq_q=st.integers(1, 4),
       extra=st.integers(0, 3000), head_dim=st.sampled_from([32, 64, 80, 96, 128, 256]), causal=st.booleans(),
       dtype=st.sampled_from(["fp16", "bf16"]), block=st.sampled_from([0, 16, 32, 128]),
       splits=st.sampled_from([0, 1, 2, 7, 33, 1000]))
def test_decode_splits_random_shapes(batch, kv_heads, group, seq_q, extra, head_dim, causal, dtype, block, splits):
    # The decode kernel by name at random decode shapes, with its split count asked for (0: the rule's).
    kw = dict(batch=batch, heads=kv_heads * group, kv_heads=kv_heads, seq_q=seq_q, seq_kv=seq_q + extra,
              head_dim=head_dim, causal=causal, engine="decode")
    if block:
        kw["block_size"] = block
    if splits:
        kw["splits"] = splits
    try:
        d = bwprof.measure("attention", dtype=dtype, device="gpu", variant="flash_paged" if block else "flash",
                           **kw, **Q).to_dict()
    except ValueError as e:
        assume("engine: decode does not take" not in str(e))  # more rows than the decode kernel takes
        raise
    assert d["verified"], f"attention decode {dtype} {kw}: error {d['max_rel_error']} > {d['tolerance']}"


def _decode_smem(d, stages, mt=1):
    # decode_sm80.hpp's DecodeCfg<D, MT>::bytes(stages): the ring (or the merges' buffers), Q, statistics;
    # the ring's rows D elements (permuted chunks, decode_ring.hpp), Q's padded by 8
    chunk = 16 * d
    ring, merge, need = 4 * stages * 2 * chunk * 2, 4 * 16 * mt * d * 4, 4 * (4096 + 4096)
    big = max(ring, need) if ring > merge else max(merge, need)
    return big + 16 * mt * (d + 8) * 2 + (2 * 4 + 2) * 16 * mt * 4 + 16


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("head_dim,seq_kv,stages", [(80, 8192, 4), (80, 8193, 2), (80, 300, 4), (96, 300, 3),
                                                    (96, 8193, 3), (64, 300, 5), (128, 300, 3)])
def test_decode_default_ring_by_head_dim_and_keys(dtype, head_dim, seq_kv, stages):
    # The decode kernel's default ring: 5 steps at head dim 64, 3 up to 128, but at 80 4 up to 8192
    # keys and 2 beyond;
    # read from the kernel's shared memory a block, then right on random data.
    d = bwprof.measure("attention", dtype=dtype, device="gpu", engine="decode", batch=2, heads=8, kv_heads=2, seq_q=1,
                       seq_kv=seq_kv, head_dim=head_dim, **Q).to_dict()
    assert d["shared_mem_per_block"] == _decode_smem(head_dim, stages)
    assert d["verified"], f"decode D{head_dim} S{seq_kv}: error {d['max_rel_error']} > {d['tolerance']}"


@pytest.mark.parametrize("head_dim,seq_kv,stages", [(64, 1024, 2), (64, 1008, 5), (128, 2048, 2), (128, 1000, 3)])
def test_decode_ring_without_splits(head_dim, seq_kv, stages):
    # 512 KV heads fill half a wave of an H100 or H200 without a split: from 1024 keys the ring that
    # keeps about 32 KB in flight an SM (gpu.hpp's decode_unsplit_ring: 2 steps at four blocks an SM),
    # the default ring below.
    d = bwprof.measure("attention", dtype="fp16", device="gpu", engine="decode", batch=16, heads=32, kv_heads=32, seq_q=1,
                       seq_kv=seq_kv, head_dim=head_dim, **Q).to_dict()
    assert d["shared_mem_per_block"] == _decode_smem(head_dim, stages)
    assert d["verified"], f"decode D{head_dim} S{seq_kv}: error {d['max_rel_error']} > {d['tolerance']}"


def _unsplit_ring(d, blocks, sms, bandwidth_gbs, default):
    # gpu.hpp's decode_unsplit_ring: one step of every warp of an SM against the SM's share of the
    # theoretical bandwidth times the time that makes 32 KB on the H100 (3352.3 GB/s, 132 SMs)
    step = -(-blocks // sms) * 4 * 16 * d * 2 * 2
    flight = bandwidth_gbs * 1e9 / sms * (32768 / (3352.3e9 / 132)) if bandwidth_gbs > 0 else 32768
    ring = 2
    while ring < default and (ring - 1) * step < 0.99 * flight:
        ring += 1
    return ring


def test_decode_ring_without_splits_follows_the_memory_bandwidth():
    # 256 KV heads of 64 (two blocks an SM on 132 SMs, half a wave not split): one step of an SM's
    # warps is 32 KB, which is what the H100 needs in flight (2 steps), less than a faster memory
    # does (the H200: 3). The ring read from the kernel's shared memory a block.
    info = bwprof.device("gpu").info
    sms, bw = int(info["compute_units"]), float(info.get("bandwidth_theoretical_gbs") or 0)
    if sms > 200:  # half a wave of two blocks an SM would then split the keys
        pytest.skip(f"{sms} SMs: 256 KV heads are split there")
    d = bwprof.measure("attention", dtype="bf16", device="gpu", engine="decode", batch=8, heads=32, kv_heads=32, seq_q=1,
                       seq_kv=1024, head_dim=64, **Q).to_dict()
    want = _unsplit_ring(64, 256, sms, bw, 5)
    assert d["shared_mem_per_block"] == _decode_smem(64, want), (sms, bw, d["shared_mem_per_block"])
    assert d["verified"], f"decode D64 S1024: error {d['max_rel_error']} > {d['tolerance']}"
