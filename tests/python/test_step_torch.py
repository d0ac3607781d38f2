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
    assert d["bytes_source"] == "inferred"
    d = bwprof.profile(torch.mm, a, b, bytes_read=1, bytes_written=1, repeats=2, min_time_s=0.0,
                       max_time_s=0.2).to_dict()
    assert d["bytes_source"] == "mixed" and d["flops"] == 2 * m * k * n


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
    assert split_k["bytes_source"] == "none" and split_k["bound"] == "unknown"   # the longest kernel carries the op
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
    assert sk["bytes_source"] == "counters" and sk["bytes_read"] == 1e3 and sk["bound"] != "unknown"
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
