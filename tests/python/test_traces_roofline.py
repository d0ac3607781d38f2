"""A program's kernels on the measured roofline from a profiler's counters (issue #43): the per-kernel
table of bwprof.traces.kernel_roofline, judged by the core, and the trace/profile commands that
print it and draw the chart. Real ncu output (tests/data/traces/ncu_raw_h100.csv), the documented
rocprofv3 counter layout, and FLOP counters added to them where a test needs a known count."""
import json
import math

import numpy as np
import pandas as pd
import pytest

import bwprof
import bwprof.traces as traces
from bwprof.traces import kernels as K
from bwprof.traces import profilers

from test_traces_cli import APP, bin_dir, cli, fake_tool  # noqa: F401 (bin_dir: the fake-tools fixture)
from traces_common import DATA

PEAKS = {"bandwidth_gbs": 3000.0, "bandwidth_theoretical_gbs": 3350.0, "bandwidth_source": "measured:stream_copy",
         "gflops": 50000.0, "gflops_theoretical": 67000.0, "compute_source": "measured:fma_chain",
         "vector": {"fp32": {"gflops": 50000.0, "gflops_theoretical": 67000.0, "source": "measured:fma_chain"},
                    "fp16": {"gflops": 100000.0, "gflops_theoretical": 134000.0, "source": "measured:fma_chain"}},
         "matrix": {"fp16": {"gflops": 800000.0, "gflops_theoretical": 989000.0, "source": "measured:mma_peak_fp16"}}}
NCU = DATA / "ncu_raw_h100.csv"


def _by_hand(trace):
    """Per kernel name (each kernel of this sample has one launch shape): calls, seconds a call and
    DRAM bytes a call, straight from the trace's columns."""
    t = traces.dram_bytes(trace)
    g = t.groupby("short_name").agg(calls=("calls", "sum"), ns=("duration_ns", "sum"),
                                    rd=("dram_bytes_read", "sum"), wr=("dram_bytes_written", "sum"))
    return {k: (int(r.calls), r.ns / r.calls * 1e-9, (r.rd + r.wr) / r.calls) for k, r in g.iterrows()}


def test_every_ncu_kernel_gets_its_bandwidth_and_a_bound_that_bandwidth_can_prove():
    trace = traces.read(NCU)
    k = K.kernel_roofline(trace, PEAKS)
    assert list(k.columns) == K.KERNEL_COLUMNS
    hand = _by_hand(trace)
    assert set(k["kernel"]) == set(hand) and len(k) == 4
    for _, r in k.iterrows():
        calls, seconds, nbytes = hand[r["kernel"]]
        assert r["calls"] == calls
        assert r["bandwidth_gbs"] == pytest.approx(nbytes / seconds / 1e9, rel=1e-12)
        assert r["bandwidth_pct_peak"] == pytest.approx(100 * nbytes / seconds / 1e9 / 3000.0, rel=1e-12)
        assert r["bytes_source"] == "counters" and r["flops_source"] == "unknown" and math.isnan(r["flops"])
        # No FLOP counters in this run: memory-bound where bandwidth proves it, else unknown, never latency.
        if r["bandwidth_pct_peak"] >= 50:
            assert r["bound"] == "memory" and "whatever its FLOPs" in r["bottleneck"]
        else:
            assert r["bound"] == "unknown"
            assert r["bottleneck"].startswith(f"FLOPs unknown: at {r['bandwidth_pct_peak']:.1f} % of the memory roof")
            assert "--counters roofline" in r["bottleneck"]
    assert list(k["bound"]) .count("memory") == 1  # vectorized_elementwise_kernel, at 72 %
    assert k["time_total_us"].is_monotonic_decreasing
    assert k["pct_gpu_time"].sum() == pytest.approx(100.0)


def _with_flops(trace, **per_kernel):
    """The trace with ncu's SASS FLOP counts set for the named kernels (0 for the others)."""
    t = trace.copy()
    for col in K.NCU_FLOP_METRICS:
        t[col] = 0.0
    for name, cols in per_kernel.items():
        for col, v in cols.items():
            t.loc[t["short_name"] == name, col] = v
    return t


def test_ncu_flop_counters_place_kernels_on_the_roofline_and_the_core_judges_them():
    ffma, fadd = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
    hfma = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"
    trace = traces.read(NCU)
    _, ln_s, ln_b = _by_hand(trace)["vectorized_layer_norm_kernel"]
    # layer norm: 40 % of the fp32 roof in FLOPs, at 42.8 % of the memory roof
    ln_ffma = 0.4 * 50000e9 * ln_s / 2
    t = _with_flops(trace, vectorized_layer_norm_kernel={ffma: ln_ffma, fadd: 1000.0},
                    vectorized_elementwise_kernel={hfma: 5e6},
                    nvjet_sm90_hsh_128x64_64x8_1x2_h_bz_NNT={K.NCU_TENSOR: 12345.0})
    k = K.kernel_roofline(t, PEAKS).set_index("kernel")
    ln = k.loc["vectorized_layer_norm_kernel"]
    assert ln["flops_source"] == "counters" and ln["dtype"] == "fp32"
    assert ln["flops"] == pytest.approx(2 * ln_ffma + 1000.0)
    assert ln["intensity_flop_per_byte"] == pytest.approx((2 * ln_ffma + 1000.0) / ln_b, rel=1e-12)
    assert ln["gflops"] == pytest.approx((2 * ln_ffma + 1000.0) / ln_s / 1e9, rel=1e-12)
    # The core's judgement on the same figures, by the column path classify uses.
    j = bwprof._core.judge({"bytes": [ln_b], "flops": [ln["flops"]], "time_us": [ln_s * 1e6],
                            "bandwidth_roof_gbs": [3000.0], "bandwidth_theoretical_gbs": [3350.0],
                            "gflops_roof": [50000.0], "gflops_theoretical": [67000.0], "compute_name": "fp32 vector"})
    assert ln["bound"] == j["bound"][0] and ln["bottleneck"] == j["bottleneck"][0]
    assert ln["compute_pct_peak"] == pytest.approx(100 * ln["gflops"] / 50000.0, rel=1e-9)
    ew = k.loc["vectorized_elementwise_kernel"]
    assert ew["dtype"] == "fp16" and ew["flops"] == pytest.approx(1e7) and ew["peak_gflops"] == 100000.0
    # Tensor-pipe work: ncu's instruction counts hold none of its FLOPs, so they are unknown.
    gemm = k.loc["nvjet_sm90_hsh_128x64_64x8_1x2_h_bz_NNT"]
    assert gemm["flops_source"] == "unknown" and gemm["bound"] == "unknown"
    assert "tensor-core FLOPs are not in ncu's instruction counts" in gemm["bottleneck"]
    # A kernel whose counts are all zero did no floating-point work: declared by the counters, 0.
    dist = k.loc["distribution_elementwise_grid_stride_kernel"]
    assert dist["flops_source"] == "counters" and dist["flops"] == 0.0 and dist["bound"] == "latency"


def test_rocprofv3_dram_and_flop_counters_with_mfma_on_the_matrix_roof():
    trace = traces.read(DATA / "rocprofv3_counters_extended.csv")
    t = trace.copy()
    for col in K.ROCPROF_FLOP_COUNTERS:
        t[col] = 0.0
    att = t["short_name"] == "bwprof_attention_fp16"
    t.loc[att, "SQ_INSTS_VALU_MFMA_MOPS_F16"] = 1e6      # 512 FLOPs each
    t.loc[att, "SQ_INSTS_VALU_FMA_F32"] = 1000.0         # 64 lanes x 2 FLOPs each
    k = K.kernel_roofline(t, PEAKS).set_index("kernel")
    a = k.loc["bwprof_attention_fp16"]
    fetch, write = (float(trace.loc[att, c].iloc[0]) for c in ("FETCH_SIZE", "WRITE_SIZE"))
    assert a["bytes_read"] == fetch * 1024 and a["bytes_written"] == write * 1024   # kilobytes
    assert a["flops"] == pytest.approx(512e6 + 128e3)
    assert a["dtype"] == "fp16" and a["matrix_units"] and a["peak_gflops"] == 800000.0
    assert a["compute_pct_peak"] == pytest.approx(100 * a["flops"] / (a["time_median_us"] * 1e-6) / 1e9 / 800000.0)
    j = bwprof._core.judge({"bytes": [a["bytes_read"] + a["bytes_written"]], "flops": [a["flops"]],
                            "time_us": [a["time_median_us"]], "bandwidth_roof_gbs": [3000.0],
                            "bandwidth_theoretical_gbs": [3350.0], "gflops_roof": [800000.0],
                            "gflops_theoretical": [989000.0], "compute_name": "fp16 matrix"})
    assert (a["bound"], a["bottleneck"]) == (j["bound"][0], j["bottleneck"][0])
    copy = k.loc["bwprof_stream_copy"]
    assert copy["flops"] == 0.0 and not copy["matrix_units"]


def test_no_dram_counters_and_bad_input_are_clear_errors():
    with pytest.raises(ValueError, match="no DRAM counters .*--counters bandwidth"):
        K.kernel_roofline(traces.read(DATA / "rocprofv3_counter_collection.csv"), PEAKS)
    with pytest.raises(ValueError, match="trace: expected a DataFrame"):
        K.kernel_roofline("ncu.csv", PEAKS)
    with pytest.raises(ValueError, match="peaks: expected a bwprof.peaks"):
        K.kernel_roofline(traces.read(NCU), [3000.0])
    # Without roofs every kernel keeps its rates and says that no peak is known.
    k = K.kernel_roofline(traces.read(NCU), None)
    assert (k["bound"] == "unknown").all() and k["bandwidth_gbs"].gt(0).all()
    assert k["bottleneck"].str.contains("no peak is known").all()


def test_the_chart_takes_the_table_and_draws_the_kernels_with_flops(tmp_path):
    from bwprof.plots.style import POINTS_GID

    t = _with_flops(traces.read(NCU),
                    vectorized_layer_norm_kernel={"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 1e8},
                    vectorized_elementwise_kernel={"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum": 5e6})
    k = K.kernel_roofline(t, PEAKS)
    ceil = K.roofline_ceilings(PEAKS, k)
    assert set(ceil["dtype"]) == {"fp32", "fp16"} and "matrix" not in set(ceil["kind"])
    fig = bwprof.plots.roofline(k, ceil, path=tmp_path / "r")
    points = [c for c in fig.axes[0].collections if c.get_gid() == POINTS_GID]
    assert sum(len(c.get_offsets()) for c in points) == (k["gflops"] > 0).sum() == 2
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


def _peaks_file(tmp_path):
    path = tmp_path / "peaks.json"
    path.write_text(json.dumps(PEAKS))
    return path


def test_trace_roofline_prints_the_table_and_writes_the_chart(tmp_path, capsys):
    rc = cli("trace", NCU, "--roofline", "--peaks", _peaks_file(tmp_path), "--roofline-file", tmp_path / "rl")
    out = capsys.readouterr().out
    assert rc == 0
    assert "judged against the peaks in" in out and "memory 3000 GB/s (measured:stream_copy)" in out
    assert "vectorized_elementwise_kernel: memory-bound at 72 % of peak bandwidth (good)" in out
    header = next(line for line in out.splitlines() if "pct_peak" in line).split()
    assert header == ["kernel", "calls", "avg_us", "pct_time", "dram_MB", "GB/s", "pct_peak", "GFLOP/s", "bound"]
    assert (tmp_path / "rl.png").exists() and (tmp_path / "rl.svg").exists()


def test_trace_roofline_without_peaks_here_says_what_to_pass(tmp_path, capsys):
    if any(d.kind == "gpu" for d in bwprof.devices()):
        pytest.skip("a GPU here: its peaks are measured")
    assert cli("trace", NCU, "--roofline", "--roofline-file", tmp_path / "rl") == 0
    captured = capsys.readouterr()
    assert "bwprof: no peaks (" in captured.err and "pass --peaks (bwprof peaks --json" in captured.err
    assert "no peak is known" in captured.out and not (tmp_path / "rl.png").exists()
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    assert cli("trace", NCU, "--roofline", "--peaks", bad) == 2
    assert "is not a peaks file (write one with: bwprof peaks --json" in capsys.readouterr().err


NCU_WRITES = f"""
    log = args[args.index("--log-file") + 1]
    metrics = args[args.index("--metrics") + 1].split(",")
    open(os.path.join(os.path.dirname(log), "metrics_asked.txt"), "w").write(",".join(metrics))
    open(log, "w").write({NCU.read_text()!r})
    cmd = args[args.index("--metrics") + 2:]
    sys.exit(subprocess.call(cmd))
"""


def test_profile_with_ncu_prints_the_kernels_and_draws_them(bin_dir, tmp_path, capsys):
    fake_tool(bin_dir, "ncu", NCU_WRITES)
    rc = cli("profile", "--tool", "ncu", "--counters", "bandwidth", "--peaks", _peaks_file(tmp_path),
             "--out", tmp_path / "run", "--", *APP)
    out = capsys.readouterr().out
    assert rc == 3  # the command's own exit code
    asked = (tmp_path / "run" / "metrics_asked.txt").read_text().split(",")
    assert "dram__bytes_read.sum" in asked and "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in asked
    assert "GPU time 0.116 ms in 5 kernel calls" in out          # the breakdown, as before
    assert "Kernels on the roofline" in out and "vectorized_layer_norm_kernel" in out
    saved = pd.read_csv(tmp_path / "run" / "kernels.csv")
    assert list(saved.columns) == K.KERNEL_COLUMNS and len(saved) == 4
    assert (tmp_path / "run" / "roofline.png").exists()


def test_rocprofv3_counter_sets():
    argv, _ = profilers.build_command("rocprofv3", ["./app"], "out", "bandwidth")
    assert argv[argv.index("--pmc") + 1:argv.index("--")] == ["FETCH_SIZE", "WRITE_SIZE"]
    argv, _ = profilers.build_command("rocprofv3", ["./app"], "out", "roofline")
    pmc = argv[argv.index("--pmc") + 1:argv.index("--")]
    assert pmc[:2] == ["FETCH_SIZE", "WRITE_SIZE"] and "SQ_INSTS_VALU_MFMA_MOPS_F16" in pmc
    assert profilers.NCU_METRICS["roofline"] == profilers.NCU_METRICS["bandwidth"]
    assert len(set(profilers.NCU_METRICS["bandwidth"])) == len(profilers.NCU_METRICS["bandwidth"])
