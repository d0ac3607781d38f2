"""The trace and profile subcommands, and the profiler runner with fake tools on PATH."""

import argparse
import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from bwprof.traces import profilers
from bwprof.traces.cli import register_cli

from traces_common import DATA


def cli(*argv):
    """Test-only harness: what the main bwprof CLI does with register_cli()."""
    parser = argparse.ArgumentParser(prog="bwprof")
    register_cli(parser.add_subparsers(dest="command_name", required=True))
    args = parser.parse_args([str(a) for a in argv])
    return args.func(args)


# --- trace --------------------------------------------------------------------------------

def test_trace_by_category(capsys):
    assert cli("trace", DATA / "rocprofv3_kernel_stats.csv") == 0
    out = capsys.readouterr().out
    assert "GPU time 141.090 ms in 1729 kernel calls" in out
    lines = out.splitlines()
    assert lines[2].split()[:2] == ["GEMM", "650"]


def test_trace_by_kernel_with_amdahl_and_findings(capsys):
    rc = cli("trace", DATA / "rocprofv3_counters_extended.csv", "--by", "kernel", "--amdahl",
             "--findings")
    out = capsys.readouterr().out
    assert rc == 0
    assert "bwprof_attention_fp16" in out and "speedup_if_free" in out
    assert "bank conflicts" in out


def test_trace_several_files(capsys):
    assert cli("trace", DATA / "rocprofv3_kernel_trace.csv", DATA / "pytorch_trace.json") == 0
    assert "in 12 kernel calls" in capsys.readouterr().out


def test_trace_plot(tmp_path, capsys):
    target = tmp_path / "b.png"
    assert cli("trace", DATA / "nsys_cuda_gpu_kern_sum.csv", "--plot", "--plot-file", target) == 0
    assert target.read_bytes()[:4] == b"\x89PNG"


def test_trace_bad_input_exit_2_one_line(tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert cli("trace", empty) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "empty.csv, line 1: file is empty" in err
    assert "Traceback" not in err
    assert cli("trace", tmp_path / "missing.csv") == 2
    assert "missing.csv" in capsys.readouterr().err


@pytest.mark.parametrize("top", ["0", "-3", "two"])
def test_trace_top_must_be_a_positive_number(capsys, top):
    with pytest.raises(SystemExit) as info:
        cli("trace", DATA / "rocprofv3_kernel_stats.csv", "--top", top)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --top:" in err and "Empty DataFrame" not in err
    assert ("must be at least 1" in err) if top != "two" else ("'two' is not a whole number" in err)


def test_trace_top_one(capsys):
    assert cli("trace", DATA / "rocprofv3_kernel_stats.csv", "--top", "1") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("GPU time 141.090 ms") and out[2].split()[0] == "GEMM" and len(out) == 3


def negative_trace(tmp_path):
    import csv

    lines = TRACE_TEXT.splitlines()
    fields = next(csv.reader([lines[2]]))
    fields[9], fields[10] = fields[10], fields[9]   # end before start: a negative duration
    lines[2] = ",".join(f'"{f}"' for f in fields)
    path = tmp_path / "kernel_trace.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


TRACE_TEXT = (DATA / "rocprofv3_kernel_trace.csv").read_text()


def test_trace_invalid_rows_are_an_error_or_dropped(tmp_path, capsys):
    path = negative_trace(tmp_path)
    assert cli("trace", path) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: 1 of 8 rows have an invalid duration or timestamp (line 3: negative duration" in err
    assert "--drop-invalid" in err
    assert cli("trace", path, "--drop-invalid") == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(f"bwprof: warning: {path}: left out 1 of 8 rows")
    assert "in 7 kernel calls" in captured.out
    assert cli("trace", "diff", path, DATA / "rocprofv3_kernel_trace.csv") == 2
    assert "invalid duration" in capsys.readouterr().err
    assert cli("trace", "diff", path, DATA / "rocprofv3_kernel_trace.csv", "--drop-invalid") == 0
    captured = capsys.readouterr()
    assert "left out 1 of 8 rows" in captured.err and "GPU time A:" in captured.out


def test_trace_without_durations_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "counters.csv"
    path.write_text('"ID","Kernel Name","dram__bytes_read.sum"\n"0","k","100"\n"1","k","200"\n')
    assert cli("trace", path) == 2
    err = capsys.readouterr().err
    assert "no row has a duration" in err and "Traceback" not in err


# --- fake profilers -----------------------------------------------------------------------

TRACE = (DATA / "rocprofv3_kernel_trace.csv").read_text()
NCU = (DATA / "ncu_raw_h100.csv").read_text()
NSYS = (DATA / "nsys_cuda_gpu_kern_sum.csv").read_text()


def fake_tool(bin_dir, name, body):
    """A small Python script named like the tool, first on PATH."""
    path = bin_dir / name
    path.write_text(f"#!{sys.executable}\nimport os, subprocess, sys\nargs = sys.argv[1:]\n"
                    + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


ROCPROFV3_OK = f"""
    out = args[args.index("-d") + 1]
    os.makedirs(os.path.join(out, "host", "42"), exist_ok=True)
    open(os.path.join(out, "host", "42", "bwprof_kernel_trace.csv"), "w").write({TRACE!r})
    cmd = args[args.index("--") + 1:]
    sys.exit(subprocess.call(cmd))
"""

ROCPROFV3_REFUSES = """
    if "--pmc" in args:
        sys.stderr.write("rocprofv3: error: Counter SQ_WAIT_INST_LDS not found on agent gfx1151\\n")
        sys.exit(1)
""" + ROCPROFV3_OK

NCU_OK = f"""
    log = args[args.index("--log-file") + 1]
    open(log, "w").write({NCU!r})
    cmd = args[args.index("--log-file") + 2:]
    if cmd[0] == "--metrics":
        cmd = cmd[2:]
    sys.exit(subprocess.call(cmd))
"""

NCU_REFUSES = """
    log = args[args.index("--log-file") + 1]
    open(log, "w").write("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access "
                         "NVIDIA GPU Performance Counters on the target device 0.\\n")
    sys.exit(1)
"""

NSYS_OK = f"""
    if args[0] == "profile":
        cmd = args[args.index("-o") + 2:]
        open(args[args.index("-o") + 1] + ".nsys-rep", "w").write("binary report")
        sys.exit(subprocess.call(cmd))
    out = args[args.index("--output") + 1]
    open(out + "_cuda_gpu_kern_sum.csv", "w").write({NSYS!r})
"""


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    """PATH = a fresh folder of fake tools + the folder holding python, nothing else."""
    d = tmp_path / "bin"
    d.mkdir()
    monkeypatch.setenv("PATH", f"{d}{os.pathsep}{Path(sys.executable).parent}")
    monkeypatch.chdir(tmp_path)
    return d


APP = [sys.executable, "-c", "import sys; print('app ran'); sys.exit(3)"]


def test_rocprofv3_success_into_timestamped_folder(bin_dir, tmp_path, capsys):
    fake_tool(bin_dir, "rocprofv3", ROCPROFV3_OK)
    rc = cli("profile", "--tool", "rocprofv3", "--", *APP)
    out = capsys.readouterr().out
    assert rc == 3                                   # the command's own exit code
    assert "app ran" in out and "GPU time 0.093 ms in 8 kernel calls" in out
    runs = list((tmp_path / "bwprof_profiles").iterdir())
    assert len(runs) == 1 and runs[0].name.endswith("_rocprofv3")
    assert (runs[0] / "rocprofv3.stderr.txt").exists()


def test_missing_tool_runs_timing_only(bin_dir, tmp_path, capsys):
    rc = cli("profile", "--tool", "ncu", "--", *APP)
    captured = capsys.readouterr()
    assert rc == 3
    assert "app ran" in captured.out
    assert "ncu was not found on PATH, so the command runs without a profiler (timing only)." \
        in captured.err
    assert not (tmp_path / "bwprof_profiles").exists()


def test_rocprofv3_counters_refused_falls_back_to_trace(bin_dir, tmp_path, capsys):
    fake_tool(bin_dir, "rocprofv3", ROCPROFV3_REFUSES)
    run = profilers.run_profile("rocprofv3", APP, counters="extended", echo=False)
    assert run.counters_refused and not run.timing_only
    assert any("refused hardware counters" in m and "kernel trace only" in m for m in run.messages)
    assert run.returncode == 3
    assert len(run.trace) == 8


def test_ncu_success_reads_raw_page(bin_dir, tmp_path):
    fake_tool(bin_dir, "ncu", NCU_OK)
    run = profilers.run_profile("ncu", APP, out_dir=tmp_path / "mine", echo=False)
    assert run.out_dir == tmp_path / "mine"
    assert run.trace["duration_ns"].tolist() == [43136.0, 6592.0, 20640.0, 7776.0, 37696.0]


def test_ncu_refused_without_nsys_is_timing_only(bin_dir, capsys):
    fake_tool(bin_dir, "ncu", NCU_REFUSES)
    rc = cli("profile", "--tool", "ncu", "--", *APP)
    err = capsys.readouterr().err
    assert rc == 3
    assert "ncu was refused hardware counters (ERR_NVGPUCTRPERM)" in err
    assert "timing only" in err


def test_ncu_refused_falls_back_to_nsys(bin_dir):
    fake_tool(bin_dir, "ncu", NCU_REFUSES)
    fake_tool(bin_dir, "nsys", NSYS_OK)
    run = profilers.run_profile("ncu", APP, echo=False)
    assert run.counters_refused and run.returncode == 3
    assert run.trace["calls"].tolist() == [10, 20, 40]
    assert any("nsys kernel trace" in m for m in run.messages)


def test_profile_without_command_is_bad_input(capsys):
    assert cli("profile", "--tool", "nsys") == 2
    assert "needs a command" in capsys.readouterr().err


def test_build_commands():
    argv, follow = profilers.build_command("rocprofv3", ["./app", "-x"], "out", "basic")
    assert argv[:5] == ["rocprofv3", "--kernel-trace", "--stats", "--output-format", "csv"]
    assert argv[argv.index("--pmc") + 1:argv.index("--")] == profilers.ROCPROF_COUNTERS["basic"]
    assert argv[-3:] == ["--", "./app", "-x"] and follow is None
    argv, _ = profilers.build_command("ncu", ["./app"], "out", "occupancy")
    assert "--clock-control" in argv and argv[argv.index("--clock-control") + 1] == "none"
    assert "sm__warps_active.avg.pct_of_peak_sustained_active" in argv[argv.index("--metrics") + 1]
    argv, follow = profilers.build_command("nsys", ["./app"], "out")
    assert argv[:2] == ["nsys", "profile"] and "cuda_gpu_kern_sum" in follow
    with pytest.raises(ValueError, match="unknown counter set"):
        profilers.build_command("rocprofv3", ["./app"], "out", "fancy set!")
