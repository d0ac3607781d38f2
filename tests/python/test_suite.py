"""The default suite comes from the kernel families' own declarations (kernels/<family>/family.cpp)
and equals, configuration for configuration, the list python/bwprof/suite.py used to hold
(tests/data/default_suite.json, written from it before the move), plus the fill family's, and BF16
where issue #18 added it (the GEMM's decode and FFN shapes, attention's decode and prefill)."""
import json
import os

from bwprof import _core
from bwprof.suite import Config, default_suite

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")


def _snapshot():
    with open(os.path.join(DATA, "default_suite.json")) as f:
        return [Config(c["kernel"], c["label"], c["params"], c["quick"], tuple(c["variants"]), tuple(c["dtypes"]))
                for c in json.load(f)]


BF16_CONFIGS = {("gemm", "decode"), ("gemm", "ffn"), ("attention", "decode kv=4096 b=4"),
                ("attention", "prefill causal 512")}


def _without_bf16(c):
    return Config(c.kernel, c.label, c.params, c.quick, c.variants, tuple(d for d in c.dtypes if d != "bf16"))


def test_the_suite_is_the_one_suite_py_held_plus_fill():
    old = _snapshot()
    new = default_suite()
    assert [_without_bf16(c) for c in new if c.kernel != "fill"] == old
    assert {(c.kernel, c.label) for c in new if "bf16" in c.dtypes} == BF16_CONFIGS
    # Types too: the parameters reach measure() as ints, bools and strings, as they always did.
    for a, b in zip([c for c in new if c.kernel != "fill"], old):
        for got, want in ((a.params, b.params), (a.quick, b.quick)):
            assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in want.items()}, a.label
    fill = [c for c in new if c.kernel == "fill"]
    assert fill == [Config("fill", "fill 64 MiB", {"n": 1 << 24}, {"n": 1 << 20})]
    # Fill's configuration sits after the stream kernels', where the family is registered.
    kernels = [c.kernel for c in new]
    assert kernels.index("fill") == 5 and kernels[:5] == [f"stream_{op}" for op in
                                                           ("copy", "scale", "add", "triad", "dot")]


def test_kernels_keep_their_order_and_say_where_their_suite_goes():
    names = [k["name"] for k in _core.kernels()]
    old = ["stream_copy", "stream_scale", "stream_add", "stream_triad", "stream_dot", "gemm", "qkv_projection",
           "gemv", "attention", "kv_cache_append", "q4_0_dequant", "q4_0_matmul", "layernorm", "bias_act",
           "intensity_sweep"]
    assert [n for n in names if n in old] == old
    assert set(names) - set(old) == {"fill", "fma_chain", "mma_peak", "l2_bandwidth", "l1_bandwidth",
                                     "shared_bandwidth"}
    for k in _core.kernels():
        assert isinstance(k["suite_order"], int) and isinstance(k["suite"], list)
        for v in k["variants"]:
            assert isinstance(v["matrix_units"], bool) and v["ceiling"] in ("none", "memory", "vector", "matrix", "l2", "l1",
                                                                          "shared")
