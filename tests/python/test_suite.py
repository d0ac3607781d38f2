"""The default suite comes from the kernel families' own declarations (kernels/<family>/family.cpp)
and equals, configuration for configuration, the list python/bwprof/suite.py used to hold
(tests/data/default_suite.json, written from it before the move, its labels since written from the
shapes), plus the fill family's, the clean read's and the transfer family's (host copies, d2d and
memset, 4 KB to 1 GB), and BF16 where issue #18 added it (the GEMM's decode and FFN shapes, attention's decode and prefill).
Every label describes the shape that runs, full and --quick."""
import dataclasses
import json
import os
import re

import pytest

import bwprof
from bwprof import _core
from bwprof.suite import Config, default_suite

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")


def _snapshot():
    with open(os.path.join(DATA, "default_suite.json")) as f:
        return [Config(c["kernel"], c["label"], c["params"], c["quick"], tuple(c["variants"]), tuple(c["dtypes"]),
                       c["quick_label"])
                for c in json.load(f)]


TRANSFERS = ("h2d", "d2h", "d2d", "memset")
BF16_CONFIGS = {("gemm", "decode"), ("gemm", "ffn"), ("attention", "decode kv=4096 b=4"),
                ("attention", "prefill causal 512")}


def _without_bf16(c):
    return dataclasses.replace(c, dtypes=tuple(d for d in c.dtypes if d != "bf16"))


NEW = ("fill", "stream_read", *TRANSFERS)  # the kernels added since suite.py


def test_the_suite_is_the_one_suite_py_held_plus_fill():
    old = _snapshot()
    new = default_suite()
    assert [_without_bf16(c) for c in new if c.kernel not in NEW] == old
    assert {(c.kernel, c.label) for c in new if "bf16" in c.dtypes} == BF16_CONFIGS
    # The transfers: host copies pinned and pageable at six sizes, d2d and memset at four, FP32 only.
    sizes = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30]
    for k in ("h2d", "d2h"):
        got = [c for c in new if c.kernel == k]
        assert [c.params["bytes"] for c in got] == sizes
        assert all(c.variants == ("pinned", "pageable") and c.dtypes == ("fp32",) for c in got)
        assert [c.quick["bytes"] for c in got] == [min(s, 64 << 20) for s in sizes]
    for k in ("d2d", "memset"):
        assert [c.params["bytes"] for c in new if c.kernel == k] == [4 << 10, 1 << 20, 256 << 20, 1 << 30]
    # Types too: the parameters reach measure() as ints, bools and strings, as they always did.
    for a, b in zip([c for c in new if c.kernel not in NEW], old):
        for got, want in ((a.params, b.params), (a.quick, b.quick)):
            assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in want.items()}, a.label
    fill = [c for c in new if c.kernel == "fill"]
    assert fill == [Config("fill", "fill n=16Mi", {"n": 1 << 24}, {"n": 1 << 20}, quick_label="fill n=1Mi")]
    # The clean read's configuration is the other stream kernels' (the size curve's read line);
    # fill's sits after the stream kernels', where the family is registered.
    read = [c for c in new if c.kernel == "stream_read"]
    assert read == [Config("stream_read", "stream n=16Mi", {"n": 1 << 24}, {"n": 1 << 20}, quick_label="stream n=1Mi")]
    kernels = [c.kernel for c in new]
    assert kernels.index("fill") == 6 and kernels[:6] == [f"stream_{op}" for op in
                                                           ("copy", "scale", "add", "triad", "dot", "read")]


def test_kernels_keep_their_order_and_say_where_their_suite_goes():
    names = [k["name"] for k in _core.kernels()]
    old = ["stream_copy", "stream_scale", "stream_add", "stream_triad", "stream_dot", "gemm", "qkv_projection",
           "gemv", "attention", "kv_cache_append", "q4_0_dequant", "q4_0_matmul", "layernorm", "bias_act",
           "intensity_sweep"]
    assert [n for n in names if n in old] == old
    assert set(names) - set(old) == {"fill", "stream_read", "fma_chain", "mma_peak", "l2_bandwidth", "l1_bandwidth",
                                     "shared_bandwidth", *TRANSFERS, "p2p_copy", "all_reduce", "all_gather",
                                     "reduce_scatter", "all_to_all", "broadcast"}
    for k in _core.kernels():
        assert isinstance(k["suite_order"], int) and isinstance(k["suite"], list)
        for v in k["variants"]:
            assert isinstance(v["matrix_units"], bool) and v["ceiling"] in ("none", "memory", "vector", "matrix", "l2", "l1",
                                                                          "shared")


# ---- labels describe the shape that runs -----------------------------------------------------------

_BIN = {"": 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
_ALIASES = {"kv": "seq_kv", "b": "batch"}  # the short names labels use
_ELEM = {"fp32": 4, "fp16": 2}


def _defaults(kernel):
    spec = next(k for k in _core.kernels() if k["name"] == kernel)["params"]
    return {p["name"]: int(p["default"]) for p in spec if p["kind"] == "int" and p["default"].isdigit()}


def label_problems(kernel, label, params, dtypes, intensity=None):
    """What in ``label`` disagrees with the shape: every ``name=value`` is that parameter's value
    (``I=x`` the FLOP/byte intensity), every ``AxB`` two consecutive dimensions, every other number
    one of the parameters, and a ``N MiB`` figure the bytes of an array of ``n`` elements in every
    dtype the configuration runs."""
    shape = {**_defaults(kernel), **{k: v for k, v in params.items() if not isinstance(v, (bool, str))}}
    ints = [v for k, v in params.items() if not isinstance(v, (bool, str))]
    wrong, rest = [], label
    for m in re.finditer(r"(\d+(?:\.\d+)?) MiB", label):
        for dt in dtypes:
            if float(m.group(1)) * 2**20 != shape.get("n", -1) * _ELEM[dt]:
                wrong.append(f"{m.group(0)} is not the bytes of n={shape.get('n')} in {dt}")
    rest = re.sub(r"(\d+(?:\.\d+)?) MiB", " ", rest)
    for m in re.finditer(r"(\w+)=(\d+(?:\.\d+)?)(Ki|Mi|Gi)?\b", rest):
        name, value = m.group(1), float(m.group(2)) * _BIN[m.group(3) or ""]
        if name == "I":
            got = intensity(dtypes) if intensity else None
            if got is None or any(g != value for g in got):
                wrong.append(f"{m.group(0)}: the intensity is {got}")
        elif shape.get(_ALIASES.get(name, name)) != value:
            wrong.append(f"{m.group(0)}: {_ALIASES.get(name, name)} is {shape.get(_ALIASES.get(name, name))}")
    rest = re.sub(r"(\w+)=(\d+(?:\.\d+)?)(Ki|Mi|Gi)?\b", " ", rest)
    for m in re.finditer(r"\b(\d+)x(\d+)\b", rest):
        pair = [int(m.group(1)), int(m.group(2))]
        if not any(ints[i:i + 2] == pair for i in range(len(ints) - 1)):
            wrong.append(f"{m.group(0)} is not two dimensions of {params}")
    rest = re.sub(r"\b(\d+)x(\d+)\b", " ", rest)
    for m in re.finditer(r"\b\d+\b", rest):
        if int(m.group(0)) not in shape.values():
            wrong.append(f"{m.group(0)} is none of {shape}")
    return wrong


def _sweep_intensity(params):
    # intensity_sweep: 2 FLOPs per FMA over one element read and one written.
    return lambda dtypes: [2 * params["fmas"] / (2 * _ELEM[dt]) for dt in dtypes]


@pytest.mark.parametrize("quick", [False, True], ids=["full", "quick"])
def test_every_suite_label_describes_its_shape(quick):
    # One list of configurations for every backend: the CPU's and the GPU's rows take these labels.
    configs = default_suite()
    assert len(configs) > 40
    for c in configs:
        params = c.quick if quick else c.params
        label = c.label_for(quick)
        intensity = _sweep_intensity(params) if c.kernel == "intensity_sweep" else None
        assert not label_problems(c.kernel, label, params, c.dtypes, intensity), (c.kernel, label, params)
    # The shapes that differ say so: the --quick stream and GEMV labels are their own.
    by = {(c.kernel, c.label): c for c in configs}
    assert by[("stream_copy", "stream n=16Mi")].label_for(True) == "stream n=1Mi"
    assert by[("gemv", "4096x4096")].label_for(True) == "512x512"
    assert by[("attention", "decode kv=4096 b=4")].label_for(True) == "decode kv=512 b=2"


def test_the_label_check_catches_the_old_labels():
    # What the --quick suite printed before (issue #12): each is caught.
    assert label_problems("stream_copy", "stream 64 MiB", {"n": 1 << 20}, ("fp32",))
    assert label_problems("stream_copy", "stream 64 MiB", {"n": 1 << 24}, ("fp32", "fp16"))  # FP16: 32 MiB
    assert not label_problems("stream_copy", "stream 64 MiB", {"n": 1 << 24}, ("fp32",))
    assert label_problems("gemv", "4096x4096", {"N": 512, "K": 512}, ("fp32",))
    assert label_problems("gemv", "decode 896x896", {"N": 896, "K": 256}, ("fp32",))
    assert label_problems("attention", "decode kv=4096 b=4", {"heads": 14, "seq_q": 1, "seq_kv": 512, "batch": 2},
                          ("fp32",))
    assert label_problems("layernorm", "prefill 128", {"rows": 32, "cols": 896}, ("fp32",))
    assert label_problems("intensity_sweep", "I=2", {"n": 64, "fmas": 4}, ("fp32",), _sweep_intensity({"fmas": 4}))
    assert not label_problems("intensity_sweep", "I=1", {"n": 64, "fmas": 4}, ("fp32",), _sweep_intensity({"fmas": 4}))


def test_quick_suite_rows_carry_the_labels_of_the_shapes_that_ran():
    df = bwprof.run_suite(device="cpu", kernels=["stream_copy", "gemv", "attention", "layernorm",
                                                 "kv_cache_append", "intensity_sweep"],
                          dtypes=["fp32", "fp16"], quick=True, progress=False)
    assert not df.attrs["errors"] and len(df) > 20
    for r in df.itertuples():
        params = {k: int(v) for k, v in (kv.split("=") for kv in r.shape.split(",")) if v.lstrip("-").isdigit()}
        intensity = (lambda dtypes, r=r: [r.intensity_flop_per_byte]) if r.kernel == "intensity_sweep" else None
        assert not label_problems(r.kernel, r.label, params, (r.dtype,), intensity), (r.kernel, r.label, r.shape)
