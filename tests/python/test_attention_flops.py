"""FLOPs of grouped-query attention calls, which PyTorch's own SDPA formula refuses (it asserts as
many KV heads as query heads): counted as the same call with the KV heads repeated (no PyTorch
needed; the dispatcher path is checked on a GPU by benchmarks/step_check.py)."""
import math
from types import SimpleNamespace

from hypothesis import given, strategies as st

from bwprof.framework.torch_ops import _attention_fallback, attention_flops

dims = st.integers(1, 64)


def naive_count(b, hq, sq, sk, d, dv):
    # One multiply and one add per term of each dot product: scores (Sk per query row and head,
    # D terms each), then the weighted sum of values (Dv outputs per row and head, Sk terms each).
    return b * hq * sq * (sk * 2 * d + dv * 2 * sk)


@given(b=dims, hk=st.integers(1, 8), group=st.integers(1, 8), sq=dims, sk=dims, d=dims, dv=dims)
def test_grouped_heads_count_as_the_call_with_repeated_kv_heads(b, hk, group, sq, sk, d, dv):
    hq = hk * group
    gqa = attention_flops((b, hq, sq, d), (b, hk, sk, d), (b, hk, sk, dv))
    repeated = attention_flops((b, hq, sq, d), (b, hq, sk, d), (b, hq, sk, dv))
    assert gqa == repeated == naive_count(b, hq, sq, sk, d, dv)


@given(b=dims, hq=st.integers(2, 16), hk=st.integers(1, 16), sq=dims, sk=dims, d=dims)
def test_shapes_that_are_not_attention_count_nothing(b, hq, hk, sq, sk, d):
    if hq % hk:
        assert math.isnan(attention_flops((b, hq, sq, d), (b, hk, sk, d), (b, hk, sk, d)))
    assert math.isnan(attention_flops((b, hq, sq, d), (b + 1, hq, sk, d), (b + 1, hq, sk, d)))  # batch
    assert math.isnan(attention_flops((b, hq, sq, d), (b, hq, sk, d + 1), (b, hq, sk, d)))  # head size
    assert math.isnan(attention_flops((b, hq, sq, d), (b, hq, sk, d), (b, hq, sk + 1, d)))  # keys vs values
    assert math.isnan(attention_flops((b, hq, sq, d), (b, hq, sk), (b, hq, sk, d)))  # not 4-D
    assert math.isnan(attention_flops((b, hq, sq, d), (b, 0, sk, d), (b, 0, sk, d)))


def test_only_sdpa_ops_fall_back():
    q, k, v = (SimpleNamespace(shape=s) for s in ((4, 32, 1, 128), (4, 8, 1025, 128), (4, 8, 1025, 128)))
    expected = 2.0 * 4 * 32 * 1 * 1025 * 256
    assert _attention_fallback("aten::_scaled_dot_product_cudnn_attention", (q, k, v)) == expected
    assert _attention_fallback("aten::_scaled_dot_product_flash_attention", (q, k, v, 0.0, True)) == expected
    assert math.isnan(_attention_fallback("aten::bmm", (q, k, v)))
    assert math.isnan(_attention_fallback("aten::_scaled_dot_product_cudnn_attention", (q, k)))
    assert math.isnan(_attention_fallback("aten::_scaled_dot_product_cudnn_attention", (q, k, None)))
