"""bwprof.model on a GPU (issue #15; skipped without one): the whole step is one graph, every op and
every step checked against its reference, the instances' rotation, and a PyTorch callable in the
step (captured with bwprof's kernels on PyTorch's stream, or timed on that stream)."""
import pytest

import bwprof

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name,kw", [("encoder", {}), ("decode", {"weights": "fp16"}),
                                     ("decode", {"weights": "q4_0", "llm": "8b", "batch": 4}),
                                     # one row of X: the Q4_0 kernels that stage X in shared memory
                                     ("decode", {"weights": "q4_0", "llm": "8b", "batch": 1})])
def test_quick_workloads_run_as_one_graph(name, kw):
    r = bwprof.model(name, device="gpu", quick=True, **kw)
    assert set(r.steps["mode"]) == {"graph"}
    assert bool(r.steps["verified"].all()) and bool(r.ops["verified"].all())
    for s in r.steps.itertuples():
        assert s.parts_us == pytest.approx(r.ops[r.ops["step"] == s.step]["total_us"].sum())
        assert s.time_us > 0 and s.gap_us == pytest.approx(s.time_us - s.parts_us)
        # The parts are the ops' steady states in graphs, as the step runs them: the whole step is
        # neither half nor twice their sum (one launch's timing floor per op would break the lower
        # bound; idle time between launches of several us each the upper).
        assert 0.5 * s.parts_us <= s.time_us <= 2.0 * s.parts_us
    assert (r.ops["variant"] != "cpu").all()
    assert set(r.ops["timing"]) == {"graph"} and r.summary["options"]["op_timing"] == "graph"


def test_every_layer_distinct_and_a_smaller_rotation_time_alike():
    every = bwprof.model("decode", device="gpu", quick=True, sets="every")
    assert set(every.ops["sets"]) == {every.workload.info["layers"]}
    one = bwprof.model("decode", device="gpu", quick=True, sets=1)
    assert set(one.ops["sets"]) == {1}


def test_the_full_size_step_fits_and_reports_its_bound():
    r = bwprof.model("decode", device="gpu", llm="ft054", weights="fp16", batch=1, kv=1024, repeats=5)
    s = r.steps.set_index("step").loc["fused"]
    assert s["mode"] == "graph" and s["verified"]
    assert 0 < s["pct_of_bound"] <= 100  # no step beats reading its weights and KV cache at the measured peak
    assert s["model_bytes"] == pytest.approx(r.workload.info["model_bytes"])
    # 264 launches of a few us each: with the parts timed as graphs the gap is what lies between
    # the launches (and the step's colder data), a fraction of the step; single cold launches made
    # the step 0.52x its parts on the H100 (a gap of -91 %).
    assert 0.67 * s["parts_us"] <= s["time_us"] <= 2.0 * s["parts_us"]


def test_a_torch_op_in_the_step():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    x = torch.randn(1 << 20, device="cuda")
    y = torch.empty_like(x)
    torch.cuda.synchronize()

    def scale():
        torch.mul(x, 2.0, out=y)

    ops = [bwprof.Op("norm", "layernorm", {"rows": 64, "cols": 768}, count=4),
           bwprof.Op("scale", fn=scale, bytes_read=x.nbytes, bytes_written=y.nbytes, count=4)]
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):  # a stream that can be captured: bwprof's kernels follow it
        r = bwprof.model(ops=ops, device="gpu", quick=True)
    s = r.steps.iloc[0]
    assert s["mode"] in ("graph", "stream") and s["verified"]
    user = r.ops[r.ops["op"] == "scale"].iloc[0]
    assert user["variant"] == "user" and user["time_us"] > 0
    # The callable's part is its steady state on the same stream: captured in a graph where the
    # step was, and the step's whole time within a sane band of its graph-timed parts.
    assert user["timing"] == ("graph" if s["mode"] == "graph" else "stream") and user["timed_launches"] == 20
    assert 0.5 * s["parts_us"] <= s["time_us"] <= 2.0 * s["parts_us"]
    single = bwprof.model(ops=ops[:1], device="gpu", quick=True, op_timing="single")
    assert set(single.ops["timing"]) == {"single"} and "cache flush" in single.summary["parts_timing"]
