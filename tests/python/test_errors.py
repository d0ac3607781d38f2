"""Bad input is a ValueError naming the argument; a failed allocation is MemoryError."""
import pytest

import bwprof

Q = dict(repeats=1, min_time_s=0, warmup=0)


@pytest.mark.parametrize("kwargs,needle", [
    (dict(kernel="nope"), "kernel"),
    (dict(kernel="gemm", M=0, N=4, K=4), "M"),
    (dict(kernel="gemm", M=-1, N=4, K=4), "M"),
    (dict(kernel="gemm", M=4, N=4), "K"),
    (dict(kernel="gemm", M="x", N=4, K=4), "M"),
    (dict(kernel="gemm", M=1.5, N=4, K=4), "M"),
    (dict(kernel="gemm", M=[1], N=4, K=4), "M"),
    (dict(kernel="gemm", M=2**40, N=2**40, K=4), "M: 1099511627776 is out of range for kernel 'gemm'"),
    # Each dimension in range, their product beyond 64 bits.
    (dict(kernel="attention", batch=2**16, heads=2**12, seq_q=2**24, head_dim=2**12), "shape too large"),
    (dict(kernel="gemm", M=2**62, N=4, K=4), "M"),
    (dict(kernel="gemm", M=4, N=4, K=4, zz=1), "zz"),
    (dict(kernel="gemm", M=4, N=4, K=4, act="tanh"), "act"),
    (dict(kernel="gemm", dtype="int8", M=4, N=4, K=4), "dtype"),
    (dict(kernel="gemm", variant="tensor", M=4, N=4, K=4), "variant"),
    (dict(kernel="gemm", device="gpu:7", M=4, N=4, K=4), "device"),
    (dict(kernel="gemm", device="tpu", M=4, N=4, K=4), "device"),
    (dict(kernel="gemm", cache="warm", M=4, N=4, K=4), "cache"),
    (dict(kernel="q4_0_matmul", N=4, K=33), "K"),
    (dict(kernel="attention", heads=6, kv_heads=4, seq_q=4, head_dim=8), "kv_heads"),
    (dict(kernel="attention", heads=2, seq_q=8, seq_kv=4, head_dim=8, causal=True), "seq_q"),
    (dict(kernel="kv_cache_append", kv_heads=1, head_dim=4, max_seq=4, new_tokens=5), "new_tokens"),
    (dict(kernel="gemv", N=4, K=4, rotate=0), "rotate"),
    (dict(kernel="gemv", N=4, K=4, rotate=2), "rotate"),  # GPU only
])
def test_bad_input_is_a_value_error_naming_the_argument(kwargs, needle):
    kwargs = dict(kwargs)
    kernel = kwargs.pop("kernel")
    kwargs.setdefault("device", "cpu")
    with pytest.raises(ValueError, match=needle):
        bwprof.measure(kernel, **kwargs, **Q)


def test_a_huge_allocation_is_memory_error_and_the_next_call_works():
    with pytest.raises(MemoryError):
        bwprof.measure("stream_copy", device="cpu", n=2**36, **Q)  # the largest n: 3 x 256 GiB
    d = bwprof.measure("stream_copy", device="cpu", n=1024, **Q).to_dict()
    assert d["verified"]


def test_suite_arguments_are_checked():
    with pytest.raises(ValueError, match="dtypes"):
        bwprof.run_suite(device="cpu", dtypes=["fp8"], progress=False)
    with pytest.raises(ValueError, match="kernels"):
        bwprof.run_suite(device="cpu", kernels=["warp_drive"], progress=False)
    with pytest.raises(ValueError, match="device"):
        bwprof.run_suite(device="gpu:3", progress=False)
    with pytest.raises(ValueError, match="cache"):
        bwprof.run_suite(device="cpu", cache="lukewarm", progress=False)


def test_repeat_options_are_checked():
    with pytest.raises(ValueError, match="repeats"):
        bwprof.measure("stream_copy", device="cpu", n=16, repeats=0)
    with pytest.raises(ValueError, match="warmup"):
        bwprof.measure("stream_copy", device="cpu", n=16, warmup=-1)
