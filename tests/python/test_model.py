"""bwprof.model / bwprof.workload (issue #15): the op lists against the issue's shapes, the step's
arithmetic (sum of parts, gaps, shares, what-if rows), the run folder, bad input and the custom-op
path. Runs on the CPU at --quick sizes (a few seconds)."""
import json
import math
import os

import numpy as np
import pytest

import bwprof
from bwprof import _core
from bwprof.workloads import build, models as M
from bwprof.workloads.run import _core_ops


def _by_name(w, applied):
    return {op.name: op for op in w.ops_with(applied)}


# ---- the op lists against the issue's shapes ---------------------------------------------------

def test_encoder_ops_match_the_issue():
    w = build("encoder", device="cpu", batch=256)
    T = 256 * 64
    sep, fus = _by_name(w, ()), _by_name(w, ("qkv", "epilogue"))
    assert all(op.count == 15 for op in w.ops)
    assert list(fus) == ["qkv_proj", "attention", "out_proj", "residual_add_1", "layernorm_1",
                         "ffn1_bias_act_fused", "ffn2_bias_fused", "residual_add_2", "layernorm_2"]
    assert list(sep) == ["q_proj", "k_proj", "v_proj", "attention", "out_proj", "residual_add_1", "layernorm_1",
                         "ffn1", "ffn1_bias_act", "ffn2", "ffn2_bias", "residual_add_2", "layernorm_2"]
    for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
        assert sep[n].params == {"M": T, "N": 768, "K": 768, "bias": False, "act": "none"}
    assert fus["qkv_proj"].params["N"] == 3 * 768
    assert fus["ffn1_bias_act_fused"].params == {"M": T, "N": 2304, "K": 768, "bias": True, "act": "gelu"}
    assert fus["ffn2_bias_fused"].params == {"M": T, "N": 768, "K": 2304, "bias": True, "act": "none"}
    assert sep["ffn1_bias_act"].params == {"rows": T, "cols": 2304, "act": "gelu"}
    assert sep["ffn2_bias"].params == {"rows": T, "cols": 768, "act": "none"}
    assert fus["attention"].params == {"batch": 256, "heads": 24, "seq_q": 64, "seq_kv": 64, "head_dim": 32}
    assert fus["layernorm_1"].params == {"rows": T, "cols": 768}
    assert fus["residual_add_1"].params == {"n": T * 768}
    cats = {op.name: op.category for op in w.ops}
    assert cats["qkv_proj"] == "GEMM" and cats["attention"] == "attention"
    assert cats["layernorm_1"] == "normalization" and cats["ffn1_bias_act"] == "elementwise"


def _linear_weights(w, applied):
    """Weights each linear op reads per step (N x K per launch, its count times)."""
    total = 0
    for op in w.ops_with(applied):
        if op.kernel in ("gemv", "gemm", "q4_0_matmul"):
            total += op.count * op.params["N"] * op.params["K"]
    return total


@pytest.mark.parametrize("llm,hidden,ffn,heads,kv_heads,hd,layers,params_lo,params_hi", [
    ("ft054", 896, 4864, 14, 2, 64, 24, 0.35e9, 0.36e9),   # 0.5B with its embeddings
    ("8b", 4096, 14336, 32, 8, 128, 32, 6.9e9, 7.0e9),     # 8B with its embeddings and head
])
def test_decode_ops_match_the_issue(llm, hidden, ffn, heads, kv_heads, hd, layers, params_lo, params_hi):
    w = build("decode", device="cpu", llm=llm, batch=1, kv=4096)
    fus = _by_name(w, ("qkv", "gate_up"))
    assert list(fus) == ["attn_norm", "qkv_proj", "kv_append", "attention", "o_proj", "attn_residual", "ffn_norm",
                         "gate_up_proj", "act", "down_proj", "ffn_residual"]
    assert all(op.count == layers for op in w.ops)
    q, kvd = heads * hd, kv_heads * hd
    assert fus["qkv_proj"].kernel == "gemv" and fus["qkv_proj"].params == {"N": q + 2 * kvd, "K": hidden}
    assert fus["gate_up_proj"].params == {"N": 2 * ffn, "K": hidden}
    assert fus["down_proj"].params == {"N": hidden, "K": ffn}
    assert fus["o_proj"].params == {"N": hidden, "K": q}
    assert fus["attention"].params == {"batch": 1, "heads": heads, "kv_heads": kv_heads, "seq_q": 1,
                                       "seq_kv": 4096, "head_dim": hd}
    assert fus["kv_append"].params == {"batch": 1, "kv_heads": kv_heads, "head_dim": hd, "max_seq": 4096,
                                       "new_tokens": 1}
    n = _linear_weights(w, ("qkv", "gate_up"))
    assert n == _linear_weights(w, ())  # the separate form reads the same weights
    assert params_lo <= n <= params_hi
    assert w.info["weight_bytes"] == pytest.approx(2 * n)
    assert w.info["kv_bytes"] == pytest.approx(layers * 2 * kvd * 4096 * 2)
    q4 = build("decode", device="cpu", llm=llm, batch=4, kv=4096, weights="q4_0")
    assert {op.kernel for op in q4.ops if op.name.endswith("proj")} == {"q4_0_matmul"}
    assert q4.info["weight_bytes"] == pytest.approx(n * 18 / 32)
    g = build("decode", device="cpu", llm=llm, batch=8, kv=16)
    assert _by_name(g, ())["q_proj"].kernel == "gemm" and _by_name(g, ())["q_proj"].params["M"] == 8


def test_the_plan_counts_every_launch_and_byte():
    w = build("encoder", device="cpu", batch=2)
    for applied, launches in (((), 13 * 15), (("qkv", "epilogue"), 9 * 15)):
        ops = w.ops_with(applied)
        plan = _core.plan_step("cpu", _core_ops(ops, w), 0)
        assert plan["launches"] == launches
        want = 0.0
        for op in ops:  # the families' traffic formulas, FP16
            p = op.params
            if op.kernel == "gemm":
                b = 2 * (p["M"] * p["K"] + p["K"] * p["N"] + (p["N"] if p["bias"] else 0) + p["M"] * p["N"])
            elif op.kernel == "bias_act":
                b = 2 * (2 * p["rows"] * p["cols"] + p["cols"])
            elif op.kernel == "stream_add":
                b = 2 * 3 * p["n"]
            elif op.kernel == "layernorm":
                b = None
            else:
                b = 2 * 2 * p["batch"] * p["heads"] * p["seq_q"] * p["head_dim"] + \
                    2 * 2 * p["batch"] * p["heads"] * p["seq_kv"] * p["head_dim"]
            row = next(r for r in plan["ops"] if r["name"] == op.name)
            if b is not None:
                assert row["bytes_read"] + row["bytes_written"] == pytest.approx(b), op.name
            want += op.count * (row["bytes_read"] + row["bytes_written"])
        assert plan["bytes_per_step"] == pytest.approx(want)


def test_sets_rotate_or_cover_every_layer():
    w = build("decode", device="cpu", llm="ft054", quick=True)
    ops = _core_ops(w.ops_with(("qkv", "gate_up")), w)
    every = _core.plan_step("cpu", ops, -1)
    assert {r["sets"] for r in every["ops"]} == {w.info["layers"]}
    one = _core.plan_step("cpu", ops, 1)
    assert {r["sets"] for r in one["ops"]} == {1}
    assert every["host_bytes"] == pytest.approx(w.info["layers"] * one["host_bytes"])
    auto = _core.plan_step("cpu", ops, 0)
    assert {r["sets"] for r in auto["ops"]} <= set(range(1, w.info["layers"] + 1))


# ---- a run: the arithmetic of its tables --------------------------------------------------------

@pytest.fixture(scope="module")
def encoder_report():
    return bwprof.model("encoder", device="cpu", quick=True)


def test_parts_gaps_and_shares_add_up(encoder_report):
    r = encoder_report
    assert list(r.steps["step"]) == ["separate", "qkv", "epilogue", "fused"]
    for s in r.steps.itertuples():
        ops = r.ops[r.ops["step"] == s.step]
        assert s.parts_us == pytest.approx(ops["total_us"].sum())
        assert (ops["total_us"] == ops["count"] * ops["time_us"]).all()
        assert s.gap_us == pytest.approx(s.time_us - s.parts_us)
        assert s.gap_pct == pytest.approx(100 * s.gap_us / s.time_us)
        assert s.gap_per_launch_us == pytest.approx(s.gap_us / s.launches)
        assert s.launches == ops["count"].sum()
        assert ops["share_pct"].sum() == pytest.approx(100)
        assert s.mode == "cpu" and s.verified
        cats = r.categories[r.categories["step"] == s.step]
        assert cats["total_time_us"].sum() == pytest.approx(s.parts_us)
        assert s.items_per_s == pytest.approx(r.workload.info["batch"] / (s.time_us * 1e-6))
        assert s.bound_us == pytest.approx(max(s.bytes_bound_us, s.compute_bound_us))
    assert r.amdahl["fraction"].sum() == pytest.approx(1)
    a = r.amdahl.iloc[0]
    assert a["speedup_if_2x"] == pytest.approx(1 / ((1 - a["fraction"]) + a["fraction"] / 2))
    assert bool(r.ops["verified"].all())
    assert r.summary["main_step"] == "fused"


def test_whatif_rows(encoder_report):
    r = encoder_report
    wi = r.whatif.set_index("fusion")
    assert list(wi.index) == ["qkv", "epilogue", "all"]
    st = r.steps.set_index("step")["time_us"]
    sep = r.ops[r.ops["step"] == "separate"]
    fus = r.ops[r.ops["step"] == "fused"]
    q = wi.loc["qkv"]
    assert q["ops_before_us"] == pytest.approx(sep[sep["op"].isin(["q_proj", "k_proj", "v_proj"])]["total_us"].sum())
    assert q["ops_after_us"] == pytest.approx(fus[fus["op"] == "qkv_proj"]["total_us"].sum())
    assert q["ops_speedup_pct"] == pytest.approx(100 * (q["ops_before_us"] / q["ops_after_us"] - 1))
    assert q["overall_speedup_pct"] == pytest.approx(100 * (st["separate"] / st["qkv"] - 1))
    assert q["seeds_estimate_pct"] == 7.0 and q["seeds_scope"] == "overall"
    assert q["measured_vs_seeds_pct"] == pytest.approx(q["overall_speedup_pct"] - 7.0)
    e = wi.loc["epilogue"]
    assert e["ops_before"] == "ffn1, ffn1_bias_act, ffn2, ffn2_bias"
    assert e["seeds_estimate_pct"] == 15.0 and e["measured_vs_seeds_pct"] == pytest.approx(e["ops_speedup_pct"] - 15)
    a = wi.loc["all"]
    assert a["overall_speedup_pct"] == pytest.approx(100 * (st["separate"] / st["fused"] - 1))
    p = r.steps.set_index("step").loc["separate", "parts_us"]
    assert a["parts_estimate_pct"] == pytest.approx(100 * (p / (p - a["ops_before_us"] + a["ops_after_us"]) - 1))


def test_report_saves_a_run_folder(encoder_report, tmp_path):
    folder = encoder_report.save(tmp_path)
    names = set(os.listdir(folder))
    assert {"results.csv", "rows.jsonl", "bandwidth_report.json", "model_ops.csv", "model_steps.csv",
            "model_categories.csv", "model_amdahl.csv", "model_whatif.csv", "model_report.json",
            "model_breakdown.png", "model_breakdown.svg", "model_whatif.png", "model_whatif.svg"} <= names
    rows = bwprof.load_run(folder)
    # The distinct invocations: Q, K, V and the output projection share one; so do the fused QKV and
    # FFN1 (3 x width = FFN width), the two residual adds and the two norms.
    assert len(rows) == len(encoder_report.rows) == 10
    assert {"q_proj, k_proj, v_proj, out_proj", "qkv_proj, ffn1", "layernorm_1, layernorm_2"} <= set(rows["op"])
    doc = json.loads((folder / "model_report.json").read_text())
    assert doc["summary"]["step_us"] == pytest.approx(encoder_report.summary["step_us"])
    assert len(doc["whatif"]) == 3


def test_cli_model_decode(tmp_path, capsys):
    from bwprof.cli import main
    rc = main(["model", "decode", "--quick", "--device", "cpu", "--weights", "q4_0", "--batch", "2",
               "--out", str(tmp_path), "--no-plots", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "tokens/s" in out and "what-if" in out
    (folder,) = list(tmp_path.iterdir())
    assert folder.name.endswith("decode-ft054-q4_0")
    steps = __import__("pandas").read_csv(folder / "model_steps.csv")
    assert list(steps["step"]) == ["separate", "qkv", "gate_up", "fused"]
    assert (steps["item"] == "token").all()


# ---- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kw,err,text", [
    (dict(name="gpt"), ValueError, "model"),
    (dict(name="encoder", batch=0), ValueError, "batch"),
    (dict(name="decode", batch=0), ValueError, "batch"),
    (dict(name="decode", kv=0), ValueError, "kv"),
    (dict(name="decode", kv=2 ** 25), ValueError, "kv"),
    (dict(name="decode", weights="q8"), ValueError, "weights"),
    (dict(name="decode", llm="70b"), ValueError, "model"),
    (dict(name="encoder", kv=16), ValueError, "kv"),
    (dict(name="encoder", dtype="int8"), ValueError, "dtype"),
    (dict(name="decode", dtype="fp32"), ValueError, "dtype"),
    (dict(name="encoder", quick=True, sets=0), ValueError, "sets"),
    (dict(name="encoder", quick=True, op_timing="ncu"), ValueError, "op_timing"),
])
def test_bad_arguments(kw, err, text):
    with pytest.raises(err, match=text):
        bwprof.model(device="cpu", **kw)


def test_a_step_that_does_not_fit_is_refused_before_allocating():
    # 2^23 positions of the 8B model's KV cache: terabytes, refused by the plan (nothing made).
    with pytest.raises(MemoryError, match=r"needs .* GB .*(largest: attention|largest: kv_append)"):
        bwprof.model("decode", device="cpu", llm="8b", kv=2 ** 23)


def test_cli_bad_input_exits_2(tmp_path, capsys):
    from bwprof.cli import main
    assert main(["model", "decode", "--quick", "--device", "cpu", "--kv", "33554432", "--out", str(tmp_path)]) == 2
    assert "kv" in capsys.readouterr().err
    assert main(["model", "encoder", "--quick", "--device", "cpu", "--kv", "8", "--out", str(tmp_path)]) == 2
    assert list(tmp_path.iterdir()) == []  # nothing written
    with pytest.raises(SystemExit):
        main(["model", "decode", "--batch", "0"])


@pytest.mark.parametrize("ops,err,text", [
    ([], ValueError, "at least one op"),
    ("layernorm", TypeError, "list"),
    ([{"kernel": "layernorm"}], ValueError, "needs a name"),
    ([{"name": "a", "kernel": "layernorm", "params": {"rows": 4, "cols": 8}, "colour": 1}], ValueError, "colour"),
    ([{"name": "a", "kernel": "nope"}], ValueError, "op 0 'a'.*nope"),
    ([{"name": "a", "kernel": "layernorm", "params": {"rows": 4}}], ValueError, "op 0 'a'.*cols"),
    ([{"name": "a", "fn": len}], ValueError, "bytes_read"),
    ([{"name": "a", "fn": 3, "bytes_read": 1, "bytes_written": 1}], TypeError, "callable"),
    ([{"name": "a", "kernel": "layernorm", "params": {"rows": 4, "cols": 8}, "count": 0}], ValueError, "count"),
    ([{"name": "a", "kernel": "layernorm", "params": {"rows": 4, "cols": 8}},
      {"name": "a", "kernel": "layernorm", "params": {"rows": 4, "cols": 8}}], ValueError, "two ops"),
    ([{"name": "a", "kernel": "layernorm", "params": {"rows": 4, "cols": 8}, "fusion": "f", "form": "fused"}],
     ValueError, "no separate"),
    ([{"name": "a", "kernel": "layernorm", "params": {"rows": 4, "cols": 8}, "fusion": "f"}], ValueError, "form"),
])
def test_bad_ops(ops, err, text):
    with pytest.raises(err, match=text):
        bwprof.model(ops=ops, device="cpu", quick=True)


# ---- a workload the user describes ----------------------------------------------------------------

def test_custom_ops_with_a_callable_and_a_fusion():
    x = np.random.default_rng(0).standard_normal(1 << 14).astype(np.float32)
    y = np.empty_like(x)
    calls = []

    def scale():
        calls.append(1)
        np.multiply(x, 2.0, out=y)

    ops = [bwprof.Op("norm", "layernorm", {"rows": 16, "cols": 64}, count=3),
           bwprof.Op("scale", fn=scale, bytes_read=x.nbytes, bytes_written=y.nbytes, count=3, category="elementwise"),
           {"name": "two_adds", "kernel": "stream_add", "params": {"n": 4096}, "count": 3, "fusion": "adds",
            "form": "separate"},
           {"name": "one_add", "kernel": "stream_add", "params": {"n": 2048}, "count": 3, "fusion": "adds",
            "form": "fused"},
           bwprof.Op("head", "gemm", {"M": 4, "N": 64, "K": 64}, dtype="fp32")]
    r = bwprof.model(ops=ops, device="cpu", quick=True, fusions=[bwprof.Fusion("adds", "two adds as one")])
    assert list(r.steps["step"]) == ["separate", "fused"]
    assert list(r.steps["launches"]) == [10, 10]
    user = r.ops[(r.ops["op"] == "scale") & (r.ops["step"] == "fused")].iloc[0]
    assert user["variant"] == "user" and user["category"] == "elementwise" and user["count"] == 3
    assert user["bytes_per_launch"] == 2 * x.nbytes
    assert r.ops[r.ops["op"] == "head"]["dtype"].iloc[0] == "fp32"
    assert len(calls) > 3 * len(r.steps)  # profiled on its own, then in every step
    wi = r.whatif.set_index("fusion").loc["adds"]
    assert wi["what"] == "two adds as one" and math.isnan(wi["seeds_estimate_pct"])
    assert r.steps.set_index("step").loc["fused", "item"] == ""


def test_parts_are_timed_the_way_the_step_runs():
    """A step timed as one sequence (a graph; the calls back to back on a CPU) has its ops timed in
    their steady state; without a graph, or on request, each op is one launch after the flush."""
    x = np.random.default_rng(1).standard_normal(1 << 12).astype(np.float32)
    y = np.empty_like(x)
    ops = [bwprof.Op("norm", "layernorm", {"rows": 8, "cols": 64}, count=2),
           bwprof.Op("scale", fn=lambda: np.multiply(x, 2.0, out=y), bytes_read=x.nbytes, bytes_written=y.nbytes,
                     count=2)]
    graph = bwprof.model(ops=ops, device="cpu", quick=True)
    assert graph.summary["options"]["op_timing"] == "graph" and graph.summary["options"]["op_timings"] == ["graph"]
    assert "steady state" in graph.summary["parts_timing"] and "steady state" in graph.text()
    norm = graph.ops.set_index("op").loc["norm"]
    assert norm["timing"] == "graph" and norm["cache"] == "cold" and norm["timed_launches"] >= 20
    assert norm["timed_launches"] % norm["timed_sets"] == 0
    # The callable's steady state: USER_GRAPH_CALLS calls back to back, one set of data (hot).
    user = graph.ops.set_index("op").loc["scale"]
    assert user["timing"] == "graph" and user["cache"] == "hot" and user["timed_launches"] == 20
    assert user["bandwidth_gbs"] == pytest.approx(2 * x.nbytes / (user["time_us"] * 1e3))
    assert user["bound"] in ("memory", "compute", "latency")
    row = graph.rows.set_index("op").loc["scale"]
    assert row["time_median_us"] == user["time_us"] and row["timing"] == "graph"

    single = bwprof.model(ops=ops, device="cpu", quick=True, graph=False)
    assert single.summary["options"]["op_timing"] == "single" and set(single.ops["timing"]) == {"single"}
    assert set(single.ops["cache"]) == {"cold"} and set(single.ops["timed_launches"]) == {1}
    assert "one launch after the cache flush" in single.summary["parts_timing"]
    assert set(single.steps["mode"]) == {"cpu"}  # the CPU runs its step's calls itself either way
    asked = bwprof.model(ops=ops[:1], device="cpu", quick=True, op_timing="single")
    assert set(asked.ops["timing"]) == {"single"}


def test_a_callable_that_raises_is_reported():
    # New contract (issue 45): the op's own exception, of its own type, with bwprof's notes naming
    # the op (it used to become a BwprofError).
    def boom():
        raise RuntimeError("kaput")

    with pytest.raises(RuntimeError, match="kaput") as info:
        bwprof.model(ops=[bwprof.Op("boom", fn=boom, bytes_read=8, bytes_written=8)], device="cpu", quick=True)
    assert type(info.value) is RuntimeError
    assert any("bwprof.model" in n and "'boom'" in n for n in info.value.__notes__)


def test_an_op_above_its_roof_is_flagged_in_every_table_that_shows_it():
    # Issue 45: an op declaring 10^12 bytes printed 2e9 GB/s, bound "memory", in the model's tables
    # while its row said above_peak.
    from hypothesis import given, settings, strategies as st

    from bwprof import tables

    x = np.ones(256, np.float32)

    @settings(max_examples=8, deadline=None)
    @given(st.sampled_from([1e3, 1e6, 1e9, 1e12, 1e14]))
    def check(declared):
        r = bwprof.model(ops=[bwprof.Op("op", fn=lambda: x.sum(), bytes_read=declared, bytes_written=0)],
                         device="cpu", quick=True)
        row = r.ops.iloc[0]
        assert bool(row["above_peak"]) == bool(r.rows.iloc[0]["above_peak"])
        text = r.text()
        ops_table = text.split("ops of step")[1].split("\n\n")[0]
        assert (tables.MARK + " " in ops_table.split("\n")[3] + " ") == bool(row["above_peak"])
        assert (tables.ABOVE_PEAK_NOTE in text) == bool(row["above_peak"] or r.steps["above_peak"].any())
        assert r.summary["above_peak"] == bool(r.steps.set_index("step").loc[r.main_step, "above_peak"])
        html = r._repr_html_()
        assert ("above a measured roof" in html) == r.summary["above_peak"]
        if declared >= 1e12:
            assert row["above_peak"] and r.summary["ops_above_peak"] == ["op"] and "ABOVE A MEASURED ROOF" in text

    check()
