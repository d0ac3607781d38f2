"""bwprof.explain: what an instance runs where its variant chooses among kernels, its arguments
checked as measure() checks them (the GPU's answers are tested in test_gpu_gemm_rules.py and
test_gpu_gemv_q4.py)."""
import pytest

import bwprof


def test_a_variant_without_a_choice_explains_nothing():
    assert bwprof.explain("gemm", device="cpu", M=4, N=5, K=6) == ""
    assert bwprof.explain("stream_copy", device="cpu", n=4096) == ""


@pytest.mark.parametrize("kw,match", [
    (dict(M=4, N=5), "K: required parameter"),
    (dict(M=4, N=5, K=6, tile="64x64"), "tile: applies to the tensor variant of kernel 'gemm', not 'cpu'"),
    (dict(M=4, N=5, K=6, splits=0), "splits: 0 is out of range"),
    (dict(M=4, N=5, K=6, nope=1), "nope: unknown parameter"),
])
def test_bad_arguments_are_value_errors_naming_them(kw, match):
    with pytest.raises(ValueError, match=match):
        bwprof.explain("gemm", device="cpu", **kw)


def test_the_gpu_variants_choices_apply_to_them_only():
    with pytest.raises(ValueError, match="engine: applies to the flash, flash_paged variants of kernel 'attention'"):
        bwprof.explain("attention", device="cpu", heads=2, seq_q=4, head_dim=8, engine="decode")
