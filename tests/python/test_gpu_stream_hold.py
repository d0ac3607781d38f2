"""How profile() holds the stream while the timed calls are queued (stream_hold="block": a kernel
that waits for the host; "spin": ~20 us of busy GPU ahead of the start event): both give the same
time for the same work, and a bad value is a clear error (GPU cases skip without a GPU and PyTorch)."""
import time

import pytest

import bwprof


def test_a_bad_stream_hold_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="stream_hold: expected one of block, spin"):
        bwprof.profile(lambda: None, device="cpu", bytes_read=8, stream_hold="sometimes")


@pytest.mark.gpu
@pytest.mark.parametrize("cache", ["cold", "hot"])
def test_held_and_spun_calls_time_the_same_work(cache):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU for PyTorch")
    src = torch.randn(1 << 24, device="cuda")
    dst = torch.empty_like(src)
    rows = {hold: bwprof.profile(dst.copy_, src, device="gpu", cache=cache, repeats=20, stream_hold=hold).to_dict()
            for hold in ("block", "spin")}
    for hold, d in rows.items():
        assert d["time_median_us"] > 0 and d["bytes_read"] == src.numel() * 4, (hold, d)
    block, spin = rows["block"]["time_median_us"], rows["spin"]["time_median_us"]
    assert 0.8 < block / spin < 1.25, rows


# ---- a callable that makes the host wait on the GPU inside it (issue #43) ----------------------
# profile() holds the stream by default; such a call cannot be held (the host waits on work queued
# behind the hold until the hold times out). No timing that waited on that timeout may come back:
# the run is timed again behind the spin, the row says so, and its time is the call's: at least the
# GPU's own work in it (CUPTI's kernel and copy times), at most the host's wall time of the call.

def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return torch


def _gpu_work_us(torch, fn, n=10):
    """The GPU's own time in one call: CUPTI's kernel, copy and memset durations (PyTorch's
    profiler) over n calls, per call. The call's work runs in order on one stream, so their sum."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
    device = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return sum(e.time_range.elapsed_us() for e in device) / n


def _wall_us(torch, fn, n=21):
    """The host's wall time of one call to the end of its GPU work (the median of n)."""
    torch.cuda.synchronize()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    return sorted(times)[n // 2]


def _plain_events_us(torch, fn, n=21):
    """The median of CUDA events around fn() on the current stream (the user's own measurement)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(n):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return sorted(times)[n // 2]


def _syncing_calls(torch):
    x = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    small = torch.randn(64, device="cuda")

    def host_bound_with_sync():
        # GPU work, a value read back (.item()), then many small launches and a synchronize: a
        # decode step's shape (host-bound, with waits on the GPU inside).
        y = x
        for _ in range(8):
            y = y * 1.0001
        if y[0, 0].item() > 1e9:
            raise AssertionError("unreachable")
        for _ in range(200):
            small.add_(1.0)
        torch.cuda.synchronize()

    def item_only():
        return float((x @ x).sum().item())

    return {"host_bound_with_sync": host_bound_with_sync, "item_only": item_only}


@pytest.mark.gpu
@pytest.mark.parametrize("cache", ["hot", "cold"])
def test_a_call_that_waits_on_the_gpu_is_timed_between_its_gpu_work_and_its_wall_time(cache):
    torch = _torch_cuda()
    import bwprof
    for name, fn in _syncing_calls(torch).items():
        # On the H200 (2026-12-03) item_only read 210-223 us in bwprof, between the GPU's own 193 us
        # and the host's 250-252 us of wall time; plain CUDA events around it read 256-265 us (they
        # also time the host's latency to its first launch). docs/measuring.md#host-waits.
        gpu, wall = _gpu_work_us(torch, fn), _wall_us(torch, fn)
        rec = bwprof.profile(fn, name=name, bytes_read=0, bytes_written=0, flops=0, device="gpu", cache=cache,
                             repeats=21, min_time_s=0.0).to_dict()
        assert rec["host_waited"] and rec["stream_hold"] == "spin", rec
        assert rec["repeats"] == 21
        got = rec["time_median_us"]
        # Not a second of the hold's timeout, and not less than the GPU's own work: the call's time.
        assert 0.97 * gpu <= got <= 1.05 * wall + 10.0, (name, cache, got, gpu, wall)
        assert rec["time_max_us"] < 0.5e6, rec  # no sample waited on the 1 s timeout
        assert "the call made the host wait on the GPU" in rec["bottleneck"], rec["bottleneck"]


@pytest.mark.gpu
def test_a_call_that_never_waits_stays_held_and_times_the_gpu_alone():
    torch = _torch_cuda()
    import bwprof
    small = torch.randn(64, device="cuda")

    def many_small_launches():
        for _ in range(200):
            small.add_(1.0)

    plain = _plain_events_us(torch, many_small_launches)
    rec = bwprof.profile(many_small_launches, bytes_read=0, bytes_written=0, flops=0, device="gpu", cache="hot",
                         repeats=21, min_time_s=0.0).to_dict()
    assert not rec["host_waited"] and rec["stream_hold"] == "block", rec
    # Held, the host's 200 launch calls are not timed: the GPU's time alone, well under plain events'.
    assert rec["time_median_us"] < plain, (rec["time_median_us"], plain)
