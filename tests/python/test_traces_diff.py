"""The difference between two traces, the breakdown per process and GPU, and their CLI.

Traces here are the samples written from documented schemas (rocpd_two_processes.db,
nsys_export.sqlite, rocprofv3_results.json: see tests/data/traces/README.md) and frames derived
from them with known changes.
"""

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bwprof.traces as traces
from bwprof.traces.cli import register_cli

from traces_common import DATA, NSYS, ROCPD, V3JSON

GEMM = "Cijk_Ailk_Bljk_HHS_BH_MT256x128x64_MI32x32x8x1"


def cli(*argv):
    parser = argparse.ArgumentParser(prog="bwprof")
    register_cli(parser.add_subparsers(dest="command_name", required=True))
    args = parser.parse_args([str(a) for a in argv])
    return args.func(args)


def changed_trace():
    """The rocpd sample with known changes: GEMMs twice as fast, the SiLU kernel gone, a new
    40 us RMS norm, attention 10 us slower, the copy unchanged."""
    a = traces.read(ROCPD)
    b = a.copy()
    gemm = b["short_name"] == GEMM
    b.loc[gemm, "duration_ns"] = b.loc[gemm, "duration_ns"] / 2
    b = b[b["short_name"] != "vectorized_elementwise_kernel"]
    attn = b["short_name"] == "flash_fwd_kernel"
    b.loc[attn, "duration_ns"] = b.loc[attn, "duration_ns"] + 10_000
    norm = b.iloc[[0]].copy()
    norm["kernel_name"] = "void rms_norm_kernel<c10::Half>(c10::Half*, c10::Half const*, float, int)"
    norm["short_name"] = "rms_norm_kernel"
    norm["duration_ns"] = 40_000.0
    return a, pd.concat([b, norm], ignore_index=True)


# --- diff -----------------------------------------------------------------------------------

def test_diff_known_changes():
    a, b = changed_trace()
    d = traces.diff(a, b)
    k = d.kernels.set_index("kernel")
    # GEMM: 3 dispatches, 1.1 ms -> 0.55 ms.
    assert k.loc[GEMM, "time_ns_a"] == 1_100_000.0 and k.loc[GEMM, "time_ns_b"] == 550_000.0
    assert k.loc[GEMM, "delta_ns"] == -550_000.0 and k.loc[GEMM, "delta_pct"] == pytest.approx(-50.0)
    assert k.loc[GEMM, "calls_a"] == 3 and k.loc[GEMM, "calls_b"] == 3 and k.loc[GEMM, "status"] == "both"
    assert k.loc["flash_fwd_kernel", "delta_ns"] == 10_000.0
    assert k.loc["flash_fwd_kernel", "delta_pct"] == pytest.approx(4.0)
    assert k.loc["[memcpy Host-to-Device]", "delta_ns"] == 0.0
    assert k.loc["vectorized_elementwise_kernel", "status"] == "disappeared"
    assert k.loc["vectorized_elementwise_kernel", "delta_pct"] == -100.0
    assert k.loc["rms_norm_kernel", "status"] == "appeared"
    assert k.loc["rms_norm_kernel", "delta_pct"] == np.inf
    assert k.loc["rms_norm_kernel", "category"] == "normalization"
    assert d.appeared["kernel"].tolist() == ["rms_norm_kernel"]
    assert d.disappeared["kernel"].tolist() == ["vectorized_elementwise_kernel"]
    # Largest change first.
    assert d.kernels["kernel"].iloc[0] == GEMM


def test_diff_totals_add_up():
    a, b = changed_trace()
    d = traces.diff(a, b)
    t = d.totals
    assert t["time_a_ns"] == a["duration_ns"].sum() == 1_410_000.0
    assert t["time_b_ns"] == b["duration_ns"].sum() == 1_410_000.0 - 550_000 - 20_000 + 10_000 + 40_000
    assert t["delta_ns"] == -520_000.0
    assert t["delta_pct"] == pytest.approx(-520_000 / 1_410_000 * 100)
    assert t["calls_a"] == 6 and t["calls_b"] == 6
    assert d.kernels["delta_ns"].sum() == pytest.approx(t["delta_ns"])
    assert d.categories["delta_ns"].sum() == pytest.approx(t["delta_ns"])
    assert d.kernels["pct_of_change"].sum() == pytest.approx(100.0)
    assert d.categories["time_ns_b"].sum() == t["time_b_ns"]
    cats = d.categories.set_index("category")
    assert cats.loc["GEMM", "delta_ns"] == -550_000.0
    assert cats.loc["elementwise", "status"] == "disappeared"
    assert cats.loc["normalization", "status"] == "appeared"


def test_diff_explains_most_of_the_change():
    a, b = changed_trace()
    d = traces.diff(a, b)
    # GEMM alone is -550 us of the net -520 us: 105.8%, past the 80% mark.
    assert d.explain["kernel"].tolist() == [GEMM]
    assert d.explain["cumulative_pct_of_change"].iloc[-1] == pytest.approx(550 / 520 * 100)
    assert "1 kernel change(s) explain 106% of it" in d.summary()


def test_diff_of_a_trace_with_itself():
    a = traces.read(ROCPD)
    d = traces.diff(a, a)
    assert (d.kernels["delta_ns"] == 0).all() and (d.kernels["status"] == "both").all()
    assert d.appeared.empty and d.disappeared.empty and d.explain.empty
    assert d.totals["delta_ns"] == 0 and d.totals["delta_pct"] == 0
    assert d.kernels["pct_of_change"].isna().all()


def test_diff_across_vendors_matches_categories():
    d = traces.diff(ROCPD, NSYS)                             # paths are read first
    cats = d.categories.set_index("category")
    assert cats.loc["GEMM", ["time_ns_a", "time_ns_b"]].tolist() == [1_100_000.0, 140_000.0]
    assert cats.loc["attention", ["time_ns_a", "time_ns_b", "calls_a", "calls_b"]].tolist() == \
        [250_000.0, 80_000.0, 1, 2]
    assert cats.loc["normalization", "status"] == "appeared"
    assert cats.loc["fill", "time_ns_b"] == 40.0
    assert d.totals["delta_ns"] == 225_740.0 - 1_410_000.0
    # The GEMM libraries differ: by kernel they do not match, by category they do.
    k = d.kernels.set_index("kernel")
    assert k.loc[GEMM, "status"] == "disappeared"
    assert cats.loc["GEMM", "status"] == "both"


def test_diff_summary_says_when_no_kernel_matches():
    d = traces.diff(traces.read_rocprofv3_json(V3JSON, memory_copies=False),
                    traces.read_nsys_sqlite(NSYS, memory_ops=False))
    assert d.totals["matched_kernels"] == 0
    assert "compare them by category" in d.summary()


def test_diff_of_summaries_and_dispatches():
    # A kernel_stats summary (calls > 1 per row) against itself made per-dispatch-like.
    stats = traces.read(DATA / "rocprofv3_kernel_stats.csv")
    d = traces.diff(stats, stats.assign(duration_ns=stats["duration_ns"] * 1.1))
    assert d.totals["delta_pct"] == pytest.approx(10.0)
    assert d.kernels["calls_a"].sum() == 1729


def test_diff_bad_input():
    with pytest.raises(TypeError, match="DataFrames or paths"):
        traces.diff(42, traces.read(ROCPD))


def test_plot_diff(tmp_path):
    a, b = changed_trace()
    for by in ("kernel", "category"):
        path = traces.plot_diff(traces.diff(a, b), tmp_path / f"{by}.png", by=by)
        assert Path(path).read_bytes()[:4] == b"\x89PNG"


# --- breakdown per process and GPU ---------------------------------------------------------

def test_breakdown_per_process_and_device():
    df = traces.read(ROCPD)
    t = traces.breakdown(df, per=("pid", "device"))
    assert t.columns.tolist() == ["pid", "device", "category", "total_time_ns", "calls", "avg_time_ns",
                                  "pct_gpu_time", "pct_of_total"]
    assert t[["pid", "device", "category"]].values.tolist() == [
        [4101, "GPU 0", "GEMM"], [4101, "GPU 0", "elementwise"],
        [4102, "GPU 1", "GEMM"], [4102, "GPU 1", "attention"], [4102, "GPU 1", "memory copy"]]
    assert t["total_time_ns"].tolist() == [800_000.0, 20_000.0, 300_000.0, 250_000.0, 40_000.0]
    # Shares within each group add to 100; shares of all add to 100.
    assert t.groupby("pid")["pct_gpu_time"].sum().tolist() == pytest.approx([100.0, 100.0])
    assert t["pct_of_total"].sum() == pytest.approx(100.0)
    assert t.loc[0, "pct_gpu_time"] == pytest.approx(800 / 820 * 100)
    by_kernel = traces.breakdown(df, by="kernel", per="device")
    assert by_kernel.columns[:4].tolist() == ["device", "kernel_name", "short_name", "category"]
    assert by_kernel.groupby("device")["calls"].sum().to_dict() == {"GPU 0": 3, "GPU 1": 3}


def test_breakdown_default_unchanged_by_per():
    df = traces.read(ROCPD)
    plain = traces.breakdown(df)
    assert plain.columns.tolist() == ["category", "total_time_ns", "calls", "avg_time_ns", "pct_gpu_time"]
    per_all = traces.breakdown(df.assign(one="x"), per="one")
    assert per_all["total_time_ns"].tolist() == plain["total_time_ns"].tolist()
    assert per_all["pct_gpu_time"].tolist() == pytest.approx(plain["pct_gpu_time"].tolist())


def test_breakdown_per_unknown_pid_and_bad_column():
    df = traces.read(DATA / "rocprofv3_kernel_trace.csv")          # this CSV has no process id
    t = traces.breakdown(df, per="pid")
    assert len(t) == 1 and t["pct_gpu_time"].tolist() == [100.0]
    with pytest.raises(ValueError, match="per: the trace has no column 'rank'"):
        traces.breakdown(df, per="rank")


# --- CLI ------------------------------------------------------------------------------------

def test_cli_trace_diff(capsys):
    assert cli("trace", "diff", ROCPD, NSYS) == 0
    out = capsys.readouterr().out
    assert "GPU time A: 1.410 ms in 6 calls; B: 0.226 ms in 7 calls; change -1184.3 us (-84.0%)." in out
    lines = out.splitlines()
    cat = lines.index("By category, largest changes first:")
    assert lines[cat + 2].split()[:6] == ["GEMM", "both", "1.100", "0.140", "-960.000", "-87.3%"]
    assert "By kernel, largest changes first:" in out
    assert "Appeared (only in B):" in out and "Disappeared (only in A): Cijk_Ailk" in out


def test_cli_trace_diff_by_kernel_with_plot(tmp_path, capsys):
    target = tmp_path / "d.png"
    assert cli("trace", "diff", ROCPD, NSYS, "--by", "kernel", "--plot", "--plot-file", target) == 0
    out = capsys.readouterr().out
    assert out.index("By kernel") < out.index("By category")
    assert target.read_bytes()[:4] == b"\x89PNG"


def test_cli_trace_diff_bad_input(tmp_path, capsys):
    assert cli("trace", "diff", ROCPD) == 2
    assert "compares two traces" in capsys.readouterr().err
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    assert cli("trace", "diff", ROCPD, bad) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.db" in err and "Traceback" not in err


def test_cli_trace_per(capsys):
    assert cli("trace", ROCPD, "--per", "pid,device") == 0
    out = capsys.readouterr().out
    assert "GPU time per pid and device (2 groups" in out
    row = next(line for line in out.splitlines() if line.split()[:3] == ["4102", "GPU", "1"])
    assert row.split()[3:5] == ["GEMM", "1"]
    assert cli("trace", ROCPD, "--per", "rank") == 2
    assert "no column 'rank'" in capsys.readouterr().err
    # A trace without process ids: one group, printed as "-".
    assert cli("trace", DATA / "rocprofv3_kernel_trace.csv", "--per", "pid,device") == 0
    out = capsys.readouterr().out
    assert "(1 groups" in out
    assert next(line for line in out.splitlines() if "elementwise" in line).split()[:3] == ["-", "2", "elementwise"]


def test_cli_trace_reads_each_new_format(capsys):
    for path in (ROCPD, NSYS, V3JSON, DATA / "rocmprofiledata.rpd"):
        assert cli("trace", path) == 0
    out = capsys.readouterr().out
    assert out.count("GPU time ") == 4
