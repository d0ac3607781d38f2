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
