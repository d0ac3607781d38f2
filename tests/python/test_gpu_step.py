"""profile_step on a GPU (PyTorch): kernels given to their ops with the inferred traffic, the
verdicts of a host-bound and of a device-bound step, a graph replay's kernels given to the ops
captured. Skipped without a GPU."""
import math

import pytest

import bwprof

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu
if not torch.cuda.is_available():
    pytest.skip("PyTorch sees no GPU", allow_module_level=True)


def test_a_matmul_step():
    n = 4096
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    r = bwprof.profile_step(lambda: torch.mm(a, b), graph="off", repeats=3)
    row = r.kernels.iloc[0]
    assert row["op"] == "aten::mm" and row["calls_per_step"] == 1
    assert row["flops"] == 2 * n ** 3 and row["flops_source"] == "inferred"
    assert row["bytes_read"] == 2 * 2 * n * n and row["bytes_written"] == 2 * n * n
    assert row["bound"] == "compute" and "matrix" in row["peak_compute_source"]
    assert r.summary["verdict"] != "host-bound" and r.summary["busy_pct"] > 50


def test_a_host_bound_step_and_its_graph():
    x = torch.randn(256, device="cuda")
    lin = torch.nn.Linear(256, 256).cuda()

    def step():
        y = x
        for _ in range(50):
            y = torch.relu(lin(y))
        return y

    r = bwprof.profile_step(step, repeats=3)
    s = r.summary
    assert s["verdict"] == "host-bound" and s["busy_pct"] < 50
    assert s["verdict_text"].startswith(f"host-bound: the GPU is busy {s['busy_pct']:.1f} % of the ")
    assert s["kernels"] >= 100 and math.isfinite(s["graph_us"]) and s["graph_us"] < s["wall_us"]
    mods = set(r.kernels["module"])
    assert "" not in mods or s["unattributed_launches"] < s["launches"]
    parts = ("idle_before_first_us", "idle_launch_gaps_us", "idle_host_wait_us", "idle_after_last_us")
    assert sum(s[p] for p in parts) == pytest.approx(s["idle_us"], rel=1e-9)     # the plain step's idle
    assert sum(s["profiled_" + p] for p in parts) + s["busy_us"] == pytest.approx(s["profiled_wall_us"], rel=1e-9)
    g = bwprof.profile_step(step, repeats=3, graph="on")
    gs = g.summary
    assert gs["mode"] == "graph" and gs["graph_attributed_by"] in ("capture", "names"), gs.get("graph_attribution")
    assert gs["unattributed_launches"] == 0, gs["graph_attribution"]
    assert set(g.kernels["op"]) >= {"aten::addmm", "aten::relu"} or set(g.kernels["op"]) >= {"aten::mm", "aten::relu"}
    relu = g.kernels[g.kernels["op"] == "aten::relu"].iloc[0]
    assert relu["calls_per_step"] == 50 and relu["bytes_source"] == "inferred" and relu["bytes_read"] == 4 * 256
    assert "graph replay: kernels given to" in g.text()


def test_a_step_that_raises_and_one_that_launches_nothing():
    err = RuntimeError("mine")

    def bad():
        raise err
    with pytest.raises(RuntimeError) as info:
        bwprof.profile_step(bad)
    assert info.value is err
    with pytest.raises(ValueError, match="launched no GPU work"):
        bwprof.profile_step(lambda: None, graph="off")
