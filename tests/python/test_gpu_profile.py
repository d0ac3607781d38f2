"""bwprof.profile on a GPU: PyTorch and CuPy callables timed on their streams, bytes from
__cuda_array_interface__, host code flagged, errors leaving the device usable (skipped without a
GPU; the PyTorch/CuPy cases skip where those are not installed)."""
import numpy as np
import pytest

import bwprof

pytestmark = pytest.mark.gpu
Q = dict(warmup=1, repeats=5, min_time_s=0.0)


def _gbs(rec):
    return (rec["bytes_read"] + rec["bytes_written"]) / (rec["time_median_us"] * 1e-6) / 1e9


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return torch


def test_torch_copy_inferred_bytes_and_the_row():
    torch = _torch()
    x = torch.randn(1 << 22, device="cuda")
    y = torch.empty_like(x)
    m = bwprof.profile(lambda a, b: b.copy_(a), x, y, **Q).to_dict()
    assert m["device"].startswith("gpu:") and m["backend"] in ("cuda", "hip")
    assert m["bytes_read"] == x.numel() * 4  # b is handed back: the destination, written only
    assert m["bytes_written"] == y.numel() * 4
    assert m["bytes_source"] == "inferred" and m["variant"] == "user" and m["kernel"] == "lambda"
    assert m["bandwidth_gbs"] == pytest.approx(_gbs(m), rel=1e-12)
    assert 0 < m["bandwidth_gbs"] < 1.2 * m["theoretical_bandwidth_gbs"]


def test_torch_on_its_own_stream_and_stream_objects():
    torch = _torch()
    x = torch.randn(1 << 20, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        m = bwprof.profile(torch.neg, x, **Q).to_dict()  # the current stream: s
    assert m["bandwidth_gbs"] > 0
    explicit = bwprof.profile(lambda: torch.neg(x), inputs=[x], bytes_written=x.numel() * 4, stream=s, **Q)
    assert explicit.to_dict()["bytes_source"] == "mixed"

    class Proto:
        def __cuda_stream__(self):
            return (0, s.cuda_stream)

    with torch.cuda.stream(s):
        assert bwprof.profile(torch.neg, x, stream=Proto(), **Q).to_dict()["bandwidth_gbs"] > 0


def test_work_on_another_stream_or_on_the_host_is_flagged_not_infinite():
    torch = _torch()
    a = np.random.default_rng(0).random(1 << 20)
    # NumPy code timed on the GPU: the events see nothing while each call keeps the host busy.
    with pytest.raises(ValueError, match="queued no GPU work"):
        bwprof.profile(lambda v: np.sort(v), a, device="gpu", bytes_read=a.nbytes, bytes_written=a.nbytes, **Q)
    x = torch.randn(1 << 22, device="cuda")
    other = torch.cuda.Stream()

    def elsewhere(v):
        with torch.cuda.stream(other):
            for _ in range(20):
                v = v.sin()
        other.synchronize()
        return v

    with pytest.raises(ValueError, match="queued no GPU work"):
        bwprof.profile(elsewhere, x, stream=0, **Q)


def test_a_raising_callable_leaves_the_device_usable():
    torch = _torch()
    x = torch.randn(1 << 20, device="cuda")
    calls = []

    def sometimes(v):
        calls.append(1)
        y = v * 2
        if len(calls) == 4:  # inside the held, timed region
            raise RuntimeError("kernel failed")
        return y

    with pytest.raises(RuntimeError, match="kernel failed") as info:  # its own type, with bwprof's note
        bwprof.profile(sometimes, x, **Q)
    assert type(info.value) is RuntimeError
    assert any("bwprof.profile" in n and "'sometimes'" in n for n in info.value.__notes__)
    torch.cuda.synchronize()
    m = bwprof.profile(torch.neg, x, **Q).to_dict()
    assert m["bandwidth_gbs"] == pytest.approx(_gbs(m), rel=1e-12)
    own = bwprof.measure("stream_copy", device="gpu", n=1 << 20, repeats=3, min_time_s=0.0)
    assert own.verified


def test_rotation_and_hot_cache_on_the_gpu():
    torch = _torch()
    sets = [(torch.randn(1 << 20, device="cuda"),) for _ in range(4)]
    m = bwprof.profile(torch.neg, rotate=sets, cache="hot", **Q).to_dict()
    assert m["cache"] == "hot" and m["bytes_read"] == (1 << 20) * 4


def test_matmul_on_the_matrix_units_is_judged_against_their_roof():
    torch = _torch()
    a = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    b = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    m = bwprof.profile(torch.matmul, a, b, flops=2 * 2048 ** 3, matrix_units=True, **Q).to_dict()
    assert m["dtype"] == "fp16"
    assert not m["above_peak"], m["bottleneck"]
    assert m["gflops"] == pytest.approx(2 * 2048 ** 3 / (m["time_median_us"] * 1e-6) / 1e9, rel=1e-12)


def test_cupy_raw_kernel_on_the_current_cupy_stream():
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001
        pytest.skip("CuPy without a GPU")
    n = (1 << 22) + 3
    x = cupy.random.random(n, dtype=cupy.float32)
    y = cupy.empty_like(x)
    k = cupy.RawKernel(r'''
    extern "C" __global__ void scale2(const float* x, float* y, long long n) {
      long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
      if (i < n) y[i] = 2.0f * x[i];
    }''', "scale2")
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        m = bwprof.profile(lambda: k(((n + 255) // 256,), (256,), (x, y, cupy.int64(n))),
                           inputs=[x], outputs=[y], name="scale2", **Q).to_dict()
    assert (m["bytes_read"], m["bytes_written"]) == (n * 4, n * 4)
    assert m["bandwidth_gbs"] == pytest.approx(_gbs(m), rel=1e-12)
    assert cupy.allclose(y, 2 * x)
