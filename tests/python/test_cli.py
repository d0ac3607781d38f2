import json
import json
import os
import subprocess
import sys

import pandas as pd

import bwprof


def run_cli(args, cwd, **kw):
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.path.join(root, "python")
    return subprocess.run([sys.executable, "-m", "bwprof", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, **kw)


def test_bench_quick_writes_table_csv_and_json(tmp_path):
    r = run_cli(["bench", "--device", "cpu", "--quick", "--kernels", "stream", "gemm", "--out", str(tmp_path)],
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "stream_triad" in r.stdout and "GB/s" in r.stdout
    assert "/" in r.stderr or "[" in r.stderr  # progress on stderr
    runs = list(tmp_path.iterdir())
    assert len(runs) == 1
    run = runs[0]
    df = pd.read_csv(run / "results.csv")
    assert set(df["family"]) == {"stream", "gemm"}
    expected = [c for c in bwprof.default_suite() if c.kernel.startswith("stream") or c.kernel in ("gemm", "gemv", "qkv_projection")]
    assert len(df) == sum(len(c.dtypes) for c in expected)  # one CPU row per configuration and dtype
    report = json.loads((run / "bandwidth_report.json").read_text())
    assert report["schema_version"] == bwprof.SCHEMA_VERSION
    assert report["bwprof_version"] == bwprof.__version__
    assert report["device"]["id"] == "cpu"
    assert len(report["rows"]) == len(df)
    assert report["rows"][0]["kernel"] == df["kernel"][0]
    assert f"run folder: {run}" in r.stdout


def test_bench_rejects_a_bad_device_in_one_line(tmp_path):
    r = run_cli(["bench", "--device", "gpu:9", "--quick", "--out", str(tmp_path)], cwd=tmp_path)
    assert r.returncode == 2
    assert "device" in r.stderr and "Traceback" not in r.stderr


def test_devices_and_kernels_commands(tmp_path):
    r = run_cli(["devices"], cwd=tmp_path)
    assert r.returncode == 0 and "cpu" in r.stdout
    r = run_cli(["kernels"], cwd=tmp_path)
    assert r.returncode == 0 and "q4_0_matmul" in r.stdout


def test_kernels_choices_lists_every_kernel_choice_with_its_values(tmp_path):
    # The table docs/kernels.md keeps: every parameter left out of the shape at its default, in any
    # build (the descriptors declare the GPU variants' choices in a CPU build too).
    r = run_cli(["kernels", "--choices"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith("| ") and "`" in ln]
    names = {(ln.split("|")[1].strip(), ln.split("|")[2].strip().strip("`")) for ln in rows}
    assert {("gemm", "engine"), ("gemm", "tile"), ("gemm", "splits"), ("attention", "engine"),
            ("attention", "splits")} <= names
    tile = next(ln for ln in rows if "| gemm | `tile` |" in ln)
    assert "128x256" in tile and "| auto | tensor |" in tile


def test_peaks_command_reports_measured_bandwidth(tmp_path):
    r = run_cli(["peaks", "--device", "cpu", "--json"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)
    assert p["bandwidth_gbs"] > 0 and p["bandwidth_source"].startswith("measured:stream_")
    assert set(p["bandwidth_by_kernel"]) == {f"stream_{k}" for k in ("copy", "scale", "add", "triad", "dot", "read")}
    assert p["bandwidth_gbs"] == max(p["bandwidth_by_kernel"].values())


def test_peaks_are_cached_until_refreshed():
    first = bwprof.peaks("cpu")
    assert bwprof.peaks("cpu") == first  # the cache: the very same figures
    again = bwprof.peaks("cpu", refresh=True)  # measured anew: the same sources, new figures
    assert again["bandwidth_source"].startswith("measured:") and again["bandwidth_gbs"] > 0
    assert again["bandwidth_by_kernel"] != first["bandwidth_by_kernel"]
    assert bwprof.peaks("cpu") == again


def test_save_and_load_run_round_trip(tmp_path):
    df = bwprof.run_suite(device="cpu", kernels=["layernorm"], quick=True, progress=False)
    path = bwprof.save_run(df, tmp_path)
    back = bwprof.load_run(path)
    assert list(back["kernel"]) == list(df["kernel"])
    assert back["bandwidth_gbs"].tolist() == df["bandwidth_gbs"].tolist()
    back_csv = bwprof.load_run(path / "results.csv")
    assert back_csv["time_median_us"].tolist() == df["time_median_us"].tolist()


def test_interrupted_run_keeps_measured_rows(tmp_path):
    from bwprof.results import RunWriter
    w = RunWriter(tmp_path, {"id": "cpu"})
    m = bwprof.measure("stream_copy", device="cpu", n=4096, repeats=1, min_time_s=0).to_dict()
    w.add(m)
    # Nothing else happens (as if the process died): the CSV and the row log already hold the
    # row (the JSON report is written when the run ends), and load_run reads it from the log.
    assert len(pd.read_csv(w.path / "results.csv")) == 1
    assert len((w.path / "rows.jsonl").read_text().splitlines()) == 2  # the run's description, the row
    assert not (w.path / "bandwidth_report.json").exists()
    back = bwprof.load_run(w.path)
    assert len(back) == 1 and back["kernel"][0] == "stream_copy" and back["time_median_us"][0] == m["time_median_us"]


# The command runs inside this probe, which then reports on its last stdout line whether anything
# imported matplotlib (importing it costs about a second before the command can start).
_MPL_PROBE = """
import runpy, sys
sys.argv = ["bwprof"] + sys.argv[1:]
code = 0
try:
    runpy.run_module("bwprof", run_name="__main__", alter_sys=True)
except SystemExit as e:
    code = e.code
print("matplotlib imported:", "matplotlib" in sys.modules)
sys.exit(code)
"""


def _mpl_loaded(args, cwd):
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.path.join(root, "python")
    r = subprocess.run([sys.executable, "-c", _MPL_PROBE, *args], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=300)
    last = r.stdout.rstrip().splitlines()[-1]
    assert last.startswith("matplotlib imported: "), r.stdout + r.stderr
    return r.returncode, last.endswith("True")


def _tiny_run(path, time_us):
    pd.DataFrame({"device": ["cpu"], "kernel": ["stream_copy"], "variant": ["ref"], "dtype": ["fp32"],
                  "shape": ["n=1024"], "time_median_us": [time_us]}).to_csv(path, index=False)
    return str(path)


def test_commands_that_draw_nothing_do_not_import_matplotlib(tmp_path, repo_root):
    traces = os.path.join(repo_root, "tests", "data", "traces")
    base, slower = _tiny_run(tmp_path / "a.csv", 10.0), _tiny_run(tmp_path / "b.csv", 20.0)
    quiet = [
        (["devices"], 0),
        (["kernels"], 0),
        (["peaks", "--device", "cpu", "--json"], 0),
        (["trace", os.path.join(traces, "rocprofv3_counters_extended.csv"), "--by", "kernel", "--amdahl",
          "--findings"], 0),
        (["trace", "diff", os.path.join(traces, "rocpd_two_processes.db"),
          os.path.join(traces, "nsys_export.sqlite"), "--by", "kernel"], 0),
        (["trace", os.path.join(traces, "rocpd_two_processes.db"), "--per", "pid,device"], 0),
        (["compare", base, slower], 1),
        (["baseline", base, "--out", str(tmp_path / "base.json")], 0),
        (["occupancy", "--arch", "sm_90", "--threads", "256", "--regs", "64"], 0),
    ]
    for args, rc in quiet:
        assert _mpl_loaded(args, tmp_path) == (rc, False), args
    # The probe sees it when a command does draw.
    assert _mpl_loaded(["compare", base, slower, "--plot", str(tmp_path / "c.png")], tmp_path) == (1, True)
    assert _mpl_loaded(["trace", os.path.join(traces, "nsys_cuda_gpu_kern_sum.csv"), "--plot", "--plot-file",
                        str(tmp_path / "t.png")], tmp_path) == (0, True)
    assert (tmp_path / "c.png").stat().st_size > 1000 and (tmp_path / "t.png").stat().st_size > 1000


def test_bench_no_plots_draws_nothing(tmp_path):
    r = run_cli(["bench", "--device", "cpu", "--quick", "--kernels", "layernorm", "--no-plots", "--no-progress",
                 "--out", str(tmp_path)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run = next(tmp_path.iterdir())
    # the rows, the report and the device's size curve (for a later `plot`), no chart
    assert sorted(p.name for p in run.iterdir()) == ["bandwidth_report.json", "results.csv", "rows.jsonl",
                                                     "size_curve.json"]
    assert "plot:" not in r.stdout and "layernorm" in r.stdout


def test_bench_device_all_saves_each_size_curve(tmp_path):
    # Issue 45: --device all (the CPU alone on a machine without a GPU) saved no size curve.
    import bwprof
    r = run_cli(["bench", "--device", "all", "--quick", "--kernels", "layernorm", "--no-plots", "--no-progress",
                 "--out", str(tmp_path)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run = next(tmp_path.iterdir())
    devices = bwprof.suite.all_devices()
    names = {p.name for p in run.iterdir()}
    assert "size_curve.json" in names and "size curve: not saved" not in r.stdout
    assert {f"size_curve_{d.replace(':', '')}.json" for d in devices[1:]} <= names
    curve = json.loads((run / "size_curve.json").read_text())
    assert isinstance(curve, dict) and curve.get("lines")


def test_bench_with_bad_arguments_creates_nothing(tmp_path):
    for args in (["--kernels", "nope"], ["--kernels", "layernorm", "nope"], ["--device", "gpu:9"]):
        r = run_cli(["bench", "--device", "cpu", "--quick", "--out", str(tmp_path / "runs"), *args], cwd=tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "runs").exists()


def test_bench_target_spread_runs_to_it_and_lists_the_rows_that_missed_it(tmp_path):
    # Issue 45: noise-based stopping from the command line. No CPU copy of microseconds is as steady
    # as 1e-9: every row runs to its budget, says so in its columns, and the summary lists them.
    r = run_cli(["bench", "--device", "cpu", "--quick", "--kernels", "stream_copy", "--target-spread", "1e-9",
                 "--no-plots", "--no-progress", "--out", str(tmp_path)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr  # a missed target is said, not an error
    df = pd.read_csv(next(tmp_path.iterdir()) / "results.csv")
    assert len(df) and (df["target_rel_spread"] == 1e-9).all() and (~df["spread_target_met"]).all()
    assert f"WARNING: {len(df)} of {len(df)} row(s) stayed above --target-spread 1e-09" in r.stdout
    assert "SpreadTargetWarning" not in r.stderr  # the summary says it, once
    # Without a target the columns say none.
    r = run_cli(["bench", "--device", "cpu", "--quick", "--kernels", "stream_copy", "--no-plots", "--no-progress",
                 "--out", str(tmp_path / "plain")], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(next((tmp_path / "plain").iterdir()) / "results.csv")
    assert df["target_rel_spread"].isna().all() and df["spread_target_met"].all()
    assert "--target-spread" not in r.stdout


def test_bench_target_spread_out_of_range_is_one_line_naming_it(tmp_path):
    for bad in ("nan", "-0.1", "0", "1.5", "inf"):
        r = run_cli(["bench", "--device", "cpu", "--quick", "--target-spread", bad, "--out", str(tmp_path / "runs")],
                    cwd=tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.strip().splitlines() == [r.stderr.strip()]
        assert "--target-spread: expected a fraction in (0, 1]" in r.stderr and "leave it out" in r.stderr, r.stderr
        assert not (tmp_path / "runs").exists()
    r = run_cli(["bench", "--device", "cpu", "--quick", "--target-spread", "two", "--out", str(tmp_path / "runs")],
                cwd=tmp_path)
    assert r.returncode == 2 and "--target-spread" in r.stderr and not (tmp_path / "runs").exists()


def _bench_until_rows(tmp_path, rows):
    """A full-size CPU bench, stopped by the caller once `rows` rows are measured."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                     "python")
    import signal

    def default_sigint():  # a background job of a non-interactive shell (make test &) ignores SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    p = subprocess.Popen([sys.executable, "-m", "bwprof", "bench", "--device", "cpu", "--kernels", "stream",
                          "layernorm", "--no-plots", "--out", str(tmp_path)], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    done = 0
    while done < rows:  # the progress bar prints one line per measured row when stderr is a pipe
        line = p.stderr.readline()
        assert line, "bench ended early"
        done += line.startswith("[")
    return p


def test_sigterm_and_ctrl_c_keep_every_row_and_write_the_report(tmp_path):
    import signal
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        out = tmp_path / sig.name
        out.mkdir()
        p = _bench_until_rows(out, 2)
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == code, stderr
        assert "measured rows are kept" in stderr and "Traceback" not in stderr
        run = next(out.iterdir())
        report = json.loads((run / "bandwidth_report.json").read_text())
        csv_rows = pd.read_csv(run / "results.csv")
        assert len(report["rows"]) == len(csv_rows) >= 2
        assert [r["kernel"] for r in report["rows"]] == csv_rows["kernel"].tolist()
        assert bwprof.load_run(run)["kernel"].tolist() == csv_rows["kernel"].tolist()
