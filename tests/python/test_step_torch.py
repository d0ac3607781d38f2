"""PyTorch's side of the step report without a GPU: the op counter's bytes and FLOPs against their
formulas, profile(torch.mm) getting its FLOPs, the profiler's ops read and matched to the counter's
records (CPU tensors), and a GPU timeline built by hand: each kernel to its op and module, the idle
split, a graph replay's kernels given to the captured ops, counters joined in order."""
import math

import numpy as np
import pandas as pd
import pytest

import bwprof
from bwprof import _core
from bwprof.step.attribute import align, launches, module_pattern
from bwprof.step.timeline import DeviceSpan, HostSpan, Timeline

torch = pytest.importorskip("torch")
from bwprof.framework.torch_ops import OpCounter, OpRecord  # noqa: E402


def _count(fn):
    with torch.inference_mode(), OpCounter() as c:
        fn()
    return c.frame()


def test_linear_counts_weights_bias_input_and_output():
    lin = torch.nn.Linear(64, 32)
    net = torch.nn.Sequential(lin)
    x = torch.randn(8, 64)
    f = _count(lambda: net(x))
    mm = f[f.op == "aten::addmm"].iloc[0]
    assert mm.bytes_read == 4 * (32 + 8 * 64 + 64 * 32) and mm.bytes_written == 4 * 8 * 32
    assert mm.flops == 2 * 8 * 64 * 32 and mm.has_flops and mm.matrix
    assert mm.module == "Sequential.0"
    t = f[f.op == "aten::t"].iloc[0]
    assert t.view and t.bytes_read == 0 and t.bytes_written == 0


def test_spans_broadcast_views_in_place_and_destinations():
    a, v = torch.randn(128, 256), torch.randn(256)
    f = _count(lambda: a + v)                        # the vector spans 1 KB, not 128 KB
    assert f.iloc[0].bytes_read == 4 * (128 * 256 + 256) and f.iloc[0].bytes_written == 4 * 128 * 256
    f = _count(lambda: a[:, :16].sum())              # a strided slice spans its rows' range
    assert f[f.op == "aten::slice"].iloc[0].view
    assert f[f.op == "aten::sum"].iloc[0].bytes_read == 4 * (127 * 256 + 16)
    b = a.clone()
    f = _count(lambda: b.add_(1.0))                  # in place: read and written
    assert f.iloc[0].bytes_read == f.iloc[0].bytes_written == 4 * 128 * 256
    f = _count(lambda: b.copy_(a))                   # the destination is written, not read
    assert f.iloc[0].bytes_read == 4 * 128 * 256 and f.iloc[0].bytes_written == 4 * 128 * 256
    out = torch.empty(128, 256)
    f = _count(lambda: torch.add(a, a, out=out))     # one storage read once; out= written only
    assert f.iloc[0].bytes_read == 4 * 128 * 256 and f.iloc[0].bytes_written == 4 * 128 * 256
    half = torch.randn(4, 4, dtype=torch.float16)
    f = _count(lambda: half @ half)
    assert f.iloc[0]["dtype"] == "fp16" and f.iloc[0]["tensor_dtype"] == "float16" and not math.isnan(f.iloc[0]["flops"])
    assert math.isnan(_count(lambda: a.relu()).iloc[0].flops)


def test_profile_of_torch_mm_infers_its_flops():
    m, k, n = 64, 96, 48
    a, b = torch.randn(m, k), torch.randn(k, n)
    d = bwprof.profile(torch.mm, a, b, repeats=2, min_time_s=0.0, max_time_s=0.2).to_dict()
    assert d["flops"] == 2 * m * k * n
    assert d["bytes_read"] == 4 * (m * k + k * n) and d["bytes_written"] == 4 * m * n
    assert d["bytes_source"] == "inferred" and d["flops_source"] == "inferred"
    # bytes_source speaks of the bytes alone; the FLOPs keep their own source
    d = bwprof.profile(torch.mm, a, b, bytes_read=1, bytes_written=1, repeats=2, min_time_s=0.0,
                       max_time_s=0.2).to_dict()
    assert d["bytes_source"] == "declared" and d["flops_source"] == "inferred" and d["flops"] == 2 * m * k * n
    d = bwprof.profile(torch.mm, a, b, flops=5, repeats=2, min_time_s=0.0, max_time_s=0.2).to_dict()
    assert d["flops_source"] == "declared" and d["flops"] == 5


def test_the_profilers_ops_match_the_counters_records():
    from torch.profiler import ProfilerActivity, profile, record_function

    from bwprof.step.timeline import from_kineto

    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
    x = torch.randn(4, 16)
    with torch.inference_mode():
        with OpCounter() as c:
            net(x)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            with record_function("bwprof.step#0"):
                net(x)
    t = from_kineto(prof.profiler.kineto_results.events())
    step = t.steps()[0]
    ops = [h for h in t.host if h.kind == "op" and step.start_ns <= h.start_ns <= step.end_ns]
    match = align(ops, c.records)
    got = [(ops[i].name, c.records[j].module) for i, j in sorted(match.items())]
    assert got == [(r.op, r.module) for r in c.records]    # every record, in order, nested ops skipped
    assert {ops[i].name for i in match} == {"aten::t", "aten::addmm", "aten::relu"}


def _rec(i, op, br, bw, fl=math.nan, module="M.layers.0.q"):
    return OpRecord(i, op, "default", module, br, bw, fl, not math.isnan(fl), not math.isnan(fl), False,
                    "fp16", "float16", "4x4", "cuda:0")


def _timeline(reps=2):
    us = 1000
    t = Timeline()
    for rep in range(reps):
        b = rep * 10 ** 9
        c = 1000 * rep
        t.host += [HostSpan(f"bwprof.step#{rep}", "annotation", b, b + 1000 * us, 1, 9),
                   HostSpan("aten::linear", "op", b + 10 * us, b + 60 * us, 1, c + 1),
                   HostSpan("aten::t", "op", b + 11 * us, b + 12 * us, 1, c + 2),
                   HostSpan("aten::mm", "op", b + 13 * us, b + 50 * us, 1, c + 3),
                   HostSpan("aten::relu", "op", b + 70 * us, b + 80 * us, 1, c + 4),
                   HostSpan("aten::item", "op", b + 100 * us, b + 400 * us, 1, c + 5)]
        t.runtime += [HostSpan("cudaLaunchKernel", "runtime", b + 20 * us, b + 25 * us, 1, c + 501, c + 3),
                      HostSpan("cudaLaunchKernel", "runtime", b + 26 * us, b + 27 * us, 1, c + 502, c + 3),
                      HostSpan("cudaLaunchKernel", "runtime", b + 72 * us, b + 75 * us, 1, c + 503, c + 4),
                      HostSpan("cudaMemcpyAsync", "runtime", b + 110 * us, b + 115 * us, 1, c + 504, c + 5),
                      HostSpan("cudaStreamSynchronize", "runtime", b + 116 * us, b + 390 * us, 1, 0, c + 5)]
        t.device += [DeviceSpan("sm90_xmma_gemm_f16f16_f32", "kernel", b + 30 * us, b + 330 * us, 7, c + 501, c + 3),
                     DeviceSpan("splitKreduce_kernel", "kernel", b + 331 * us, b + 333 * us, 7, c + 502, c + 3),
                     DeviceSpan("vectorized_elementwise_kernel<relu>", "kernel", b + 335 * us, b + 340 * us, 7,
                                c + 503, c + 4),
                     DeviceSpan("Memcpy DtoH (Device -> Pageable)", "memcpy", b + 341 * us, b + 342 * us, 7,
                                c + 504, c + 5)]
    t.host.sort(key=lambda h: (h.start_ns, -h.end_ns))
    return t


RECORDS = [_rec(0, "aten::t", 0, 0), _rec(1, "aten::mm", 4e6, 4e3, 8e6), _rec(2, "aten::relu", 4e3, 4e3, module="M.act"),
           _rec(3, "aten::item", 2, 0, module="")]


def test_each_kernel_gets_its_op_module_and_traffic():
    lr = launches(_timeline(), RECORDS)
    assert len(lr) == 8 and set(lr["repeat"]) == {0, 1}
    first = lr[lr["repeat"] == 0].set_index("kernel_name")
    assert first.loc["sm90_xmma_gemm_f16f16_f32", "op"] == "aten::mm"
    assert first.loc["sm90_xmma_gemm_f16f16_f32", "module"] == "M.layers.0.q"
    assert first.loc["splitKreduce_kernel", "op_kernels"] == 2      # two kernels of one mm call
    assert first.loc["vectorized_elementwise_kernel<relu>", "module"] == "M.act"
    from bwprof.step.run import gpu_report
    # the CPU's peaks stand in for a GPU's (the roofs are the device's; the wording is a GPU's)
    gpu = dict(_core.device_info("cpu"), kind="gpu")
    r = gpu_report("synthetic", gpu, _timeline(), {}, RECORDS, 1000.0, {}, 2,
                   {"graph_us": 350.0, "graph_error": "", "mode": "eager"})
    k = r.kernels.set_index("kernel")
    gemm = k.loc[k.index.str.contains("gemm")].iloc[0]
    assert gemm["bytes_read"] == 4e6 and gemm["flops"] == 8e6 and gemm["bytes_source"] == "inferred"
    assert gemm["time_median_us"] == 300 and gemm["calls_per_step"] == 1
    split_k = k.loc["splitKreduce_kernel"]
    assert split_k["bytes_source"] == "unknown" and split_k["bound"] == "unknown"   # the longest kernel carries the op
    assert k.loc["Memcpy DtoH"]["bound"] == "unknown" and "host link" in k.loc["Memcpy DtoH"]["bottleneck"]
    s = r.summary
    assert s["busy_us"] == 308 and s["kernels"] == 3 and s["copies"] == 1 and s["launches"] == 4
    assert s["host_waits"] == 2 and s["idle_before_first_us"] == 30 and s["idle_after_last_us"] == 658
    assert s["idle_launch_gaps_us"] == 4 and s["idle_host_wait_us"] == 0  # each next launch was queued before
    assert s["kernels_per_ms"] == 4.0
    assert s["verdict"] == "host-bound"
    assert s["verdict_text"].startswith("host-bound: the GPU is busy 30.8 % of the 1 ms step; 4 launches; 2 host waits")
    assert "the kernels alone take 308 us; captured in a CUDA graph the step takes 350 us (measured)" in s["verdict_text"]


def test_graph_replay_kernels_take_the_records_given_to_them():
    t = _timeline(1)
    for d, rec in zip(t.device, (1, 1, 2, 3)):
        d.record, d.instance, d.linked = rec, f"g{rec}", 0
    lr = launches(t, RECORDS)
    assert list(lr["op"]) == ["aten::mm", "aten::mm", "aten::relu", "aten::item"]
    assert list(lr["op_kernels"]) == [2, 2, 1, 1]


def test_module_pattern():
    assert module_pattern(["M.layers.0.mlp", "M.layers.3.mlp"]) == "M.layers.*.mlp"
    assert module_pattern(["M.a", "M.a"]) == "M.a"
    assert module_pattern([]) == ""


def test_counters_join_in_launch_order():
    from bwprof.step.counters import join_ncu, metric_list
    from bwprof.step.run import gpu_report

    assert metric_list("dram") == ["dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum"]
    r = gpu_report("synthetic", _core.device_info("cpu"), _timeline(), {}, RECORDS, 1000.0, {}, 2,
                   {"graph_us": math.nan, "graph_error": "x", "mode": "eager"})
    ncu = pd.DataFrame({"kernel_name": ["sm90_xmma_gemm_f16f16_f32", "splitKreduce_kernel",
                                        "vectorized_elementwise_kernel<relu>"],
                        "correlation_id": [0, 1, 2], "dram__bytes_read.sum": [3e6, 1e3, 4e3],
                        "dram__bytes_write.sum": [4e3, 1e3, 4e3], "gpu__time_duration.sum": [299e3, 2e3, 5e3],
                        "calls": [1, 1, 1], "duration_ns": [299e3, 2e3, 5e3]})
    join_ncu(r, ncu)
    k = r.kernels.set_index("kernel")
    gemm = k.loc[k.index.str.contains("gemm")].iloc[0]
    assert gemm["dram_bytes_read"] == 3e6 and gemm["counters_source"] == "ncu"
    assert gemm["dram_ratio"] == pytest.approx((3e6 + 4e3) / (4e6 + 4e3))
    assert gemm["counter_time_us"] == 299
    sk = k.loc["splitKreduce_kernel"]
    assert sk["bytes_source"] == "counters" and sk["bytes_read"] == 1e3
    # its FLOPs stay unknown and 1 GB/s proves no memory bound: judged by neither roof, and it says why
    assert sk["bound"] == "unknown" and "FLOPs unknown" in sk["bottleneck"]
    assert r.summary["counters_matched"] == "3 of 3 kernels"
    assert np.isnan(k.loc["Memcpy DtoH", "dram_bytes_read"])


def test_the_gpu_path_says_when_a_step_launches_nothing(monkeypatch):
    # PyTorch's CPU build: the GPU path runs (warm-up, timing, the op counter, the graph capture's
    # failure, the profiled runs) and finds no device work
    from bwprof.step.gpu import run_gpu

    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    lin = torch.nn.Linear(8, 8)
    x = torch.randn(2, 8)
    gpu = dict(_core.device_info("cpu"), kind="gpu")
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="fn: the step launched no GPU work"):
        run_gpu(lambda: lin(x), "cpu-only", gpu, torch, 1, 2, "auto", [], {})


def test_kernels_without_a_link_take_the_op_their_launch_was_made_in():
    t = _timeline(1)
    for d in t.device:
        d.linked = 0      # a profiler that links nothing: the launch call's time decides
    lr = launches(t, RECORDS)
    assert list(lr["op"]) == ["aten::mm", "aten::mm", "aten::relu", "aten::item"]
    assert lr["module"].iloc[0] == "M.layers.0.q"


def test_counters_that_give_nothing_are_said_and_the_report_stands(monkeypatch):
    from torch.profiler import ProfilerActivity, profile

    from bwprof.step import counters as ctr, run as run_mod
    from bwprof.step.run import gpu_report

    def cpu_profile():
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            torch.ones(4).sum()
        return prof
    assert not len(ctr.metric_events(cpu_profile(), ctr.DRAM_METRICS))     # a trace without metric values
    r = gpu_report("synthetic", _core.device_info("cpu"), _timeline(), {}, RECORDS, 1000.0, {}, 2,
                   {"graph_us": math.nan, "graph_error": "x", "mode": "eager"})
    before = r.kernels.copy()
    monkeypatch.setattr(run_mod, "profiled_runs", lambda *a, **k: (_timeline(1), {}, cpu_profile()))
    ctr.attach_counters(r, torch, lambda: None, ctr.DRAM_METRICS, RECORDS)
    assert "gave no per-kernel metric values" in r.summary["counters_error"]
    assert "--counters dram" in r.summary["counters_error"]
    pd.testing.assert_frame_equal(r.kernels, before)

    def refused(*a, **k):
        raise RuntimeError("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")
    monkeypatch.setattr(run_mod, "profiled_runs", refused)
    ctr.attach_counters(r, torch, lambda: None, ctr.DRAM_METRICS, RECORDS)
    assert r.summary["counters_error"].startswith("in-process counters failed (RuntimeError: CUPTI_ERROR_INSUFFICIENT")


# A graph replay, by hand: two layers of (linear: t + a split-K GEMM and its reduction, relu). The
# capture's launch calls are linked to their ops (the GEMM's runtime call holds the driver call it
# made); the replay's kernels carry the cudaGraphLaunch's correlation id and no op.
US = 1000
GEMM, SPLITK, RELU = "nvjet_sm90_hsh_128x8_64x12_2x1_v_bz_splitK_TNT", "splitKreduce_kernel", \
    "vectorized_elementwise_kernel<relu>"


def _graph_records(gemm_bytes):
    recs = []
    for layer in range(2):
        mod = f"M.layers.{layer}.mlp"
        recs += [_rec(len(recs), "aten::t", 0, 0, module=mod),
                 _rec(len(recs) + 1, "aten::mm", gemm_bytes, 8e3, 2e6, module=mod),
                 _rec(len(recs) + 2, "aten::relu", 8e3, 8e3, module=mod + ".act")]
    return recs


def _ops_of_layers(t, base, corr0, thread=1):
    """The host side of the two layers from ``base`` (ns): ops, and launch calls linked to them."""
    for layer in range(2):
        b, c = base + layer * 100 * US, corr0 + 10 * layer
        t.host += [HostSpan("aten::linear", "op", b + 10 * US, b + 60 * US, thread, c + 1),
                   HostSpan("aten::t", "op", b + 11 * US, b + 12 * US, thread, c + 2),
                   HostSpan("aten::mm", "op", b + 13 * US, b + 50 * US, thread, c + 3),
                   HostSpan("aten::relu", "op", b + 70 * US, b + 80 * US, thread, c + 4)]
        t.runtime += [HostSpan("cudaLaunchKernelExC", "runtime", b + 20 * US, b + 25 * US, thread, c + 501, c + 3),
                      HostSpan("cuLaunchKernelEx", "runtime", b + 21 * US, b + 24 * US, thread, c + 502, c + 3),
                      HostSpan("cudaLaunchKernel", "runtime", b + 26 * US, b + 27 * US, thread, c + 503, c + 3),
                      HostSpan("cudaStreamIsCapturing", "runtime", b + 28 * US, b + 29 * US, thread, c + 504, c + 3),
                      HostSpan("cudaLaunchKernel", "runtime", b + 72 * US, b + 75 * US, thread, c + 505, c + 4)]
    return t


def _capture_timeline():
    t = Timeline()
    t.host.append(HostSpan("bwprof.capture", "annotation", 0, 1000 * US, 1, 7))
    _ops_of_layers(t, 0, 0)
    t.host.sort(key=lambda h: (h.start_ns, -h.end_ns))
    return t


KERNELS = [(GEMM, 100), (SPLITK, 2), (RELU, 3)]


def _replay_timeline(reps=3, names=None):
    """The replays: one cudaGraphLaunch each, its kernels back to back (``names`` per layer)."""
    t = Timeline()
    for rep in range(reps):
        b = rep * 10 ** 9
        t.host.append(HostSpan(f"bwprof.step#{rep}", "annotation", b, b + 250 * US, 1, 9))
        t.runtime.append(HostSpan("cudaGraphLaunch", "runtime", b + 5 * US, b + 15 * US, 1, 900 + rep, 0))
        at = b + 20 * US
        for layer in range(2):
            for name, dur in (names or {}).get(layer, KERNELS):
                t.device.append(DeviceSpan(name, "kernel", at, at + dur * US, 7, 900 + rep, 0))
                at += dur * US + 500
    return t


def _eager_timeline():
    """One eager profiled run of the same step: its kernels linked to their ops."""
    t = Timeline()
    t.host.append(HostSpan("bwprof.step#0", "annotation", 0, 1000 * US, 1, 9))
    _ops_of_layers(t, 0, 0)
    for layer in range(2):
        b, c = layer * 150 * US, 10 * layer     # the device runs behind the host
        t.device += [DeviceSpan(GEMM, "kernel", b + 30 * US, b + 130 * US, 7, c + 501, c + 3),
                     DeviceSpan(SPLITK, "kernel", b + 131 * US, b + 133 * US, 7, c + 503, c + 3),
                     DeviceSpan(RELU, "kernel", b + 135 * US, b + 138 * US, 7, c + 505, c + 4)]
    t.device.sort(key=lambda d: d.start_ns)
    t.host.sort(key=lambda h: (h.start_ns, -h.end_ns))
    return t


def _gemm_bytes(fraction=0.8):
    """Bytes that make the 100 us GEMM run at ``fraction`` of the CPU's measured memory roof."""
    from bwprof.step.judge import peaks_for

    bw = peaks_for("cpu", ["fp16"])["fp16"]["bandwidth_gbs"]
    return float(round(fraction * bw * 1e9 * 100e-6))


def test_graph_replay_kernels_get_the_captured_ops_in_the_captures_order():
    from bwprof.step.graphs import attribute_replay, capture_ops
    from bwprof.step.run import gpu_report

    recs = _graph_records(_gemm_bytes())
    captured, info = capture_ops(_capture_timeline(), recs)
    # six launches: the driver call made inside the GEMM's runtime call is the same launch
    assert len(captured) == 6 and info["capture_calls"] == {"cudaLaunchKernelExC": 2, "cudaLaunchKernel": 4}
    assert [recs[g.record].op for g in captured] == ["aten::mm", "aten::mm", "aten::relu"] * 2
    t = _replay_timeline()
    got = attribute_replay(t, captured, None, info)
    assert got["method"] == "capture" and got["text"].startswith("kernels given to the ops captured")
    assert "capture 6 of a replay's 6 kernels" in got["text"]
    gpu = dict(_core.device_info("cpu"), kind="gpu")
    r = gpu_report("graph", gpu, t, {}, recs, 240.0, {}, 3, {"graph_us": 240.0, "graph_error": "", "mode": "graph",
                                                            "graph_attribution": got["text"]})
    k = r.kernels.set_index("kernel")
    gemm = k.loc[GEMM]
    assert gemm["op"] == "aten::mm" and gemm["module"] == "M.layers.*.mlp" and gemm["calls_per_step"] == 2
    assert gemm["bytes_read"] == recs[1].bytes_read and gemm["flops"] == 2e6 and gemm["bytes_source"] == "inferred"
    assert gemm["bound"] == "memory" and gemm["time_median_us"] == 100
    assert gemm["bandwidth_gbs"] == pytest.approx((recs[1].bytes_read + 8e3) / 100e3, rel=1e-9)
    assert k.loc[SPLITK, "bound"] == "unknown" and k.loc[SPLITK, "bytes_on"] == GEMM
    assert k.loc[SPLITK, "bottleneck"].startswith(f"bytes counted on {GEMM} of the same aten::mm")
    assert k.loc["vectorized_elementwise_kernel", "op"] == "aten::relu"
    s = r.summary
    assert s["unattributed_launches"] == 0 and s["verdict"] == "memory-bound"
    assert s["verdict_text"].startswith("memory-bound: the GPU is busy ")
    text = r.text()
    assert "graph replay: kernels given to the ops captured" in text and f"bytes counted on {GEMM}" in text


def test_graph_replay_kernels_by_name_where_the_capture_does_not_match():
    from bwprof.step.graphs import attribute_replay, capture_ops, eager_kernels

    recs = _graph_records(4e6)
    captured, info = capture_ops(_capture_timeline(), recs)
    eager = eager_kernels(launches(_eager_timeline(), recs))
    assert [n for n, _ in eager] == [GEMM, SPLITK, RELU] * 2
    # under capture cuBLAS picked one GEMM without split-K for the second layer: a replay of 5 kernels
    other = "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_TNT"
    t = _replay_timeline(names={1: [(other, 90), (RELU, 3)]})
    got = attribute_replay(t, captured, eager, info)
    assert got["method"] == "names" and "the capture made 6 launches" in got["text"]
    assert "a replay ran 5 kernels" in got["text"] and "name 4, op 1 of a replay's 5 kernels" in got["text"]
    lr = launches(t, recs)
    first = lr[lr["repeat"] == 0]
    assert list(first["op"]) == ["aten::mm", "aten::mm", "aten::relu", "aten::mm", "aten::relu"]
    assert list(first["module"]) == ["M.layers.0.mlp"] * 2 + ["M.layers.0.mlp.act", "M.layers.1.mlp",
                                                              "M.layers.1.mlp.act"]
    assert first["op_instance"].iloc[3] != first["op_instance"].iloc[0]    # each layer's mm its own call
    # no eager run to fall back on: said, nothing given
    t = _replay_timeline(names={1: [(other, 90), (RELU, 3)]})
    got = attribute_replay(t, captured, None, info)
    assert got["method"] == "none" and got["text"].startswith("kernels not given to ops")
    assert all(d.record == -1 for d in t.device)


def test_the_captures_order_gives_way_to_the_names_where_they_disagree():
    from bwprof.step.graphs import Given, attribute_replay, capture_ops, eager_kernels

    recs = _graph_records(4e6)
    captured, info = capture_ops(_capture_timeline(), recs)
    eager = eager_kernels(launches(_eager_timeline(), recs))
    wrong = captured[3:] + captured[:3]     # as many launches, in another order than the replay ran them
    t = _replay_timeline()
    got = attribute_replay(t, wrong, eager, info)
    assert got["method"] == "names" and got["agree"] == 0.0
    assert [d.record for d in t.device[:6]] == [1, 1, 2, 4, 4, 5]
    t = _replay_timeline()
    got = attribute_replay(t, captured, eager, info)    # both agree: the capture's order stands
    assert got["method"] == "capture" and got["agree"] == 1.0 and "give the same op to 100 %" in got["text"]
    assert isinstance(captured[0], Given)


def test_names_aligned_block_by_block():
    from bwprof.step.graphs import Given, by_names

    def g(rec, inst):
        return Given(rec, inst, "name")
    eager = [("a", g(0, "e0")), ("b", g(1, "e1")), ("c", g(1, "e1")), ("d", g(2, "e2")), ("e", g(3, "e3"))]
    got = by_names(["a", "b", "x", "c", "y", "z", "e"], eager)
    # x: between two kernels of one call, that call; d replaced by y and z: one call, its op
    assert [(x.record, x.how) for x in got] == [(0, "name"), (1, "name"), (1, "op"), (1, "name"), (2, "op"),
                                                (2, "op"), (3, "name")]
    got = by_names(["a", "p", "q", "r", "e"], eager)   # three calls stand for three other kernels: by place
    assert [(x.record, x.how) for x in got] == [(0, "name"), (1, "place"), (1, "place"), (2, "place"), (3, "name")]
    got = by_names(["a", "p", "e"], eager)             # three kernels of two calls for one: no op
    assert [x.record for x in got] == [0, -1, 3]
    assert by_names(["q", "a"], eager)[0].record == -1  # before the first: nothing to go by


def test_an_op_counts_its_bytes_on_the_same_kernel_every_call():
    # two kernels of one op whose times swap between runs: the op's bytes go to one of them in
    # every run, so the step's bytes are the op's once
    from bwprof.step.attribute import traffic_of

    t = _timeline(2)
    t.device[1].end_ns = t.device[1].start_ns + 301 * US     # run 0: the reduction the longer
    lr = traffic_of(launches(t, RECORDS), RECORDS)
    mm = lr[lr["op"] == "aten::mm"]
    carried = mm.groupby("kernel_name")["bytes_read"].apply(lambda s: s.notna().sum())
    assert sorted(carried) == [0, 2]
    assert mm["bytes_read"].sum() == 2 * RECORDS[1].bytes_read
    assert set(mm.loc[mm["bytes_read"].isna(), "bytes_on"]) == {short_name(carried.idxmax())}


def short_name(name):
    from bwprof.traces.names import short_kernel_name

    return short_kernel_name(name)


def test_the_idle_parts_add_up_to_the_plain_steps_idle():
    from bwprof.step.run import gpu_report

    gpu = dict(_core.device_info("cpu"), kind="gpu")
    r = gpu_report("synthetic", gpu, _timeline(), {}, RECORDS, 800.0, {}, 2,
                   {"graph_us": math.nan, "graph_error": "x", "mode": "eager"})
    s = r.summary
    parts = ("idle_before_first_us", "idle_launch_gaps_us", "idle_host_wait_us", "idle_after_last_us")
    assert s["wall_us"] == 800 and s["busy_us"] == 308 and s["idle_us"] == 492
    assert sum(s[p] for p in parts) == pytest.approx(s["idle_us"], rel=1e-12)
    # the profiled run's own split, whole: 1000 us a step, 692 us idle
    assert s["profiled_idle_before_first_us"] == 30 and s["profiled_idle_after_last_us"] == 658
    assert sum(s["profiled_" + p] for p in parts) + s["busy_us"] == pytest.approx(s["profiled_wall_us"], rel=1e-12)
    assert s["idle_scale"] == pytest.approx(492 / 692) and s["idle_after_last_us"] == pytest.approx(658 * 492 / 692)
    text = r.text()
    assert "idle 492.0 us: before the first launch 21.3, gaps between launches 2.8, after host waits 0.0, " \
           "after the last 467.8" in text
    assert "under the profiler 1000.0 us a step, idle 692.0 us: before the first launch 30.0" in text
    # a plain step shorter than the profiled kernels' union: no idle time, busy the whole step
    r = gpu_report("synthetic", gpu, _timeline(), {}, RECORDS, 300.0, {}, 2,
                   {"graph_us": math.nan, "graph_error": "x", "mode": "eager"})
    s = r.summary
    assert s["idle_us"] == 0 and s["busy_pct"] == 100 and sum(s[p] for p in parts) == 0
