"""The blocking kernel that holds the stream while a timed launch is queued (BWPROF_STREAM_HOLD=block):
every kind of launch still gives verified rows, and a bad setting is a clear error. Each case runs in
its own process, because the backend reads the setting when it opens the GPU."""
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CODE = """
import json, bwprof
rows = []
for kernel, variant, dtype, shape in [
        ("stream_copy", None, "fp32", dict(n=1 << 24)),
        ("fill", None, "fp16", dict(n=1000003)),
        ("gemm", "tiled", "fp32", dict(M=65, N=130, K=77)),
        ("attention", "flash", "fp16", dict(heads=4, seq_q=130, head_dim=64, causal=True)),
        ("q4_0_matmul", "tiled", "fp16", dict(M=1, N=4096, K=4096)),
        ("gemv", None, "fp16", dict(N=4096, K=4096, rotate=4))]:
    for cache in ("cold", "hot"):
        d = bwprof.measure(kernel, variant=variant, dtype=dtype, device="gpu", cache=cache, repeats=5,
                           min_time_s=0.0, **shape).to_dict()
        rows.append({k: d[k] for k in ("kernel", "cache", "verified", "time_median_us", "time_min_us")})
print(json.dumps(rows))
"""


def _run(hold):
    env = dict(os.environ, BWPROF_STREAM_HOLD=hold, PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=300)


def test_held_launches_give_verified_rows():
    p = _run("block")
    assert p.returncode == 0, p.stderr[-2000:]
    rows = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(rows) == 12
    for r in rows:
        assert r["verified"], r
        assert 0 < r["time_min_us"] <= r["time_median_us"], r


def test_a_bad_stream_hold_setting_is_a_clear_error():
    p = _run("sometimes")
    assert p.returncode != 0
    assert "BWPROF_STREAM_HOLD=sometimes: expected spin or block" in p.stderr
    assert "Traceback" in p.stderr and "ValueError" in p.stderr  # a Python exception, not a crash


# ---- a callable that makes the host wait on the GPU inside it (issue #43) ----------------------
# profile() holds the stream by default; such a call cannot be held (the host waits on work queued
# behind the hold until the hold times out). No timing that waited on that timeout may come back:
# the run is timed again behind the spin, the row says so, and its time is the call's as plain CUDA
# events around it give it.

def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return torch


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


@pytest.mark.parametrize("cache,tolerance", [("hot", 0.05), ("cold", 0.08)])
def test_a_call_that_waits_on_the_gpu_is_timed_like_plain_events(cache, tolerance):
    torch = _torch_cuda()
    import bwprof
    for name, fn in _syncing_calls(torch).items():
        plain = _plain_events_us(torch, fn)
        rec = bwprof.profile(fn, name=name, bytes_read=0, bytes_written=0, flops=0, device="gpu", cache=cache,
                             repeats=21, min_time_s=0.0).to_dict()
        assert rec["host_waited"] and rec["stream_hold"] == "spin", rec
        assert rec["repeats"] == 21
        # Not a second of the hold's timeout, and not the GPU time alone: the call's own time.
        assert abs(rec["time_median_us"] - plain) <= tolerance * plain + 20.0, (name, cache, rec["time_median_us"], plain)
        assert rec["time_max_us"] < 0.5e6, rec  # no sample waited on the 1 s timeout
        assert "the call made the host wait on the GPU" in rec["bottleneck"], rec["bottleneck"]


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
