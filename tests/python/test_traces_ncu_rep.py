"""Nsight Compute reports (issue #17): NVIDIA's ncu_report module segfaulted Python 3.12 reading a
real report, so bwprof reads .ncu-rep files through ``ncu --import ... --csv --page raw`` or
through ncu_report in a CHILD process, and a crash there is a clear error, not a dead process.

No Nsight Compute here: the modules below are FAKE ncu_report modules written into a folder
named by BWPROF_NCU_REPORT_PATH (one that works, fed the REAL raw-page CSV export of the H100
sample ncu_stream_h100.ncu-rep; one whose load_report raises; ones that kill their process
with SIGSEGV in load_report or in a metric's value()), and a FAKE ``ncu`` script on PATH. The
test of the real sample skips unless ncu_report can be found (the GPU machine).
"""

import os
import signal
import sys
import textwrap

import numpy as np
import pytest

import bwprof.traces as traces
from bwprof.traces import TraceFormatError
from bwprof.traces.formats import ncu_report

from traces_common import DATA

SAMPLE = DATA / "ncu_stream_h100.ncu-rep"
SAMPLE_CSV = DATA / "ncu_stream_h100_raw.csv"

# A fake ncu_report module: the documented API over the launches of a raw-page CSV export
# (values in the units of its units row). FAKE_NCU_MODE says how it misbehaves.
FAKE_MODULE = '''
import csv, os, signal

MODE = os.environ.get("FAKE_NCU_MODE", "work")


def _die():
    os.kill(os.getpid(), signal.SIGSEGV)


class _Metric:
    def __init__(self, name, value, unit):
        self._name, self._value, self._unit = name, value, unit

    def name(self):
        return self._name

    def has_value(self):
        return self._value is not None

    def value(self):
        if MODE == "segv_value" and self._name == "gpu__time_duration.sum":
            _die()
        return self._value

    def unit(self):
        return self._unit


class IAction:
    NameBase_DEMANGLED = 1

    def __init__(self, name, metrics):
        self._name, self._metrics = name, metrics

    def name(self, base=0):
        return self._name

    def metric_names(self):
        return tuple(self._metrics)

    def metric_by_name(self, name):
        if MODE == "raise_metric":
            raise RuntimeError("metric table corrupt")
        return self._metrics.get(name)


class _Range:
    def __init__(self, actions):
        self._actions = actions

    def num_actions(self):
        return len(self._actions)

    def action_by_idx(self, i):
        return self._actions[i]


class _Context:
    def __init__(self, ranges):
        self._ranges = ranges

    def num_ranges(self):
        return len(self._ranges)

    def range_by_idx(self, i):
        return self._ranges[i]


def _number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return text if text else None


def load_report(path):
    if MODE == "raise":
        raise RuntimeError("Failed to load report")
    if MODE == "segv_load":
        _die()
    if MODE == "exit":
        os._exit(7)
    with open(os.environ["FAKE_NCU_CSV"]) as f:
        rows = [r for r in csv.reader(line for line in f if not line.startswith("=="))]
    header, units, data = rows[0], rows[1], rows[2:]
    actions = []
    for row in data:
        metrics = {n: _Metric(n, _number(t), u) for n, u, t in zip(header, units, row) if "__" in n}
        actions.append(IAction(row[header.index("Kernel Name")], metrics))
    return _Context([_Range(actions[:2]), _Range(actions[2:])])
'''


@pytest.fixture
def tools(tmp_path, monkeypatch):
    """A PATH with only a fresh folder (for a fake ncu) and python's; a folder for a fake
    ncu_report named by BWPROF_NCU_REPORT_PATH (empty until fake_module() writes it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mod_dir = tmp_path / "extras" / "python"
    mod_dir.mkdir(parents=True)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.path.dirname(sys.executable)]))
    monkeypatch.setenv("BWPROF_NCU_REPORT_PATH", str(mod_dir))
    monkeypatch.setenv("FAKE_NCU_CSV", str(SAMPLE_CSV))
    monkeypatch.delitem(sys.modules, "ncu_report", raising=False)
    return bin_dir, mod_dir


def fake_module(mod_dir, monkeypatch, mode="work"):
    (mod_dir / "ncu_report.py").write_text(FAKE_MODULE)
    monkeypatch.setenv("FAKE_NCU_MODE", mode)


def fake_ncu(bin_dir, body):
    path = bin_dir / "ncu"
    path.write_text(f"#!{sys.executable}\nimport os, signal, sys\nargs = sys.argv[1:]\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


def report(tmp_path, name="stream.ncu-rep"):
    path = tmp_path / name
    path.write_bytes(b"NVIDIA Nsight Compute report (fake bytes)\x00")
    return path


COLUMNS = ("kernel_name", "short_name", "duration_ns", "grid_x", "grid_y", "grid_z", "block_x",
           "block_y", "block_z", "registers", "shared_mem_bytes", "device", "stream", "correlation_id")


def assert_same_launches(df, csv):
    assert len(df) == len(csv) == 6
    for col in COLUMNS:
        assert df[col].tolist() == csv[col].tolist(), col
    metrics = [c for c in csv.columns if "__" in c]
    assert set(metrics) <= set(df.columns)
    for col in metrics:
        a, b = df[col], csv[col]
        if b.dtype == np.float64:
            assert np.allclose(a.astype(float), b, rtol=1e-12, equal_nan=True), col
        else:
            assert a.astype(str).tolist() == b.astype(str).tolist(), col


# --- through ncu_report in a child process ------------------------------------------------

def test_module_in_a_child_matches_the_csv_reader(tmp_path, tools, monkeypatch):
    _, mod_dir = tools
    fake_module(mod_dir, monkeypatch)
    rep = report(tmp_path)
    df = traces.read(rep)                   # auto: no ncu on PATH, the module is found
    assert_same_launches(df, traces.read(SAMPLE_CSV))
    assert (df["source_tool"] == "ncu").all()
    assert "ncu_report" not in sys.modules   # never imported into this process


def test_module_that_raises_on_load(tmp_path, tools, monkeypatch):
    _, mod_dir = tools
    fake_module(mod_dir, monkeypatch, "raise")
    with pytest.raises(TraceFormatError, match=r"stream\.ncu-rep: ncu_report cannot load it \(Failed to "
                                               r"load report\)"):
        traces.read(report(tmp_path))


def test_module_that_raises_while_reading(tmp_path, tools, monkeypatch):
    _, mod_dir = tools
    fake_module(mod_dir, monkeypatch, "raise_metric")
    with pytest.raises(TraceFormatError, match=r"ncu_report failed while reading results \(metric table "
                                               r"corrupt \(at range 0 action 0\)\)"):
        traces.read_ncu_rep(report(tmp_path), via="module")


@pytest.mark.parametrize("mode, where", [("segv_load", "load_report"),
                                         ("segv_value", "range 0 action 0 metric gpu__time_duration.sum value")])
def test_module_that_segfaults_is_an_error_and_this_process_lives(tmp_path, tools, monkeypatch, mode, where):
    _, mod_dir = tools
    fake_module(mod_dir, monkeypatch, mode)
    rep = report(tmp_path)
    with pytest.raises(TraceFormatError) as info:
        traces.read(rep)
    message = str(info.value)
    assert message.startswith(f"{rep}: NVIDIA's ncu_report module crashed (killed by SIGSEGV at {where})")
    assert "this process is fine" in message
    assert f"ncu --import {rep.name} --csv --page raw --print-units base > stream.csv" in message
    assert "via='cli'" in message
    # Still here, and the next read works.
    monkeypatch.setenv("FAKE_NCU_MODE", "work")
    assert len(traces.read(rep)) == 6


def test_module_child_that_exits(tmp_path, tools, monkeypatch):
    _, mod_dir = tools
    fake_module(mod_dir, monkeypatch, "exit")
    with pytest.raises(TraceFormatError, match=r"the ncu_report child failed \(exit 7 at load_report\)"):
        traces.read_ncu_rep(report(tmp_path), via="module")


def test_no_module_and_no_ncu(tmp_path, tools):
    with pytest.raises(TraceFormatError, match=r"stream\.ncu-rep: reading a \.ncu-rep needs NVIDIA's "
                                               r"ncu_report module .* or the ncu command on PATH; or export "
                                               r"CSV: ncu --import stream\.ncu-rep --csv --page raw"):
        traces.read(report(tmp_path))
    with pytest.raises(TraceFormatError, match="via='cli' needs Nsight Compute's ncu on PATH"):
        traces.read_ncu_rep(report(tmp_path), via="cli")


def test_bad_via_and_timeout(tmp_path):
    with pytest.raises(ValueError, match="via must be one of auto, cli, module, not 'gpu'"):
        traces.read_ncu_rep(report(tmp_path), via="gpu")
    for bad in (0, -1, "10", float("nan"), True):
        with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
            traces.read_ncu_rep(report(tmp_path), timeout=bad)


# --- through the ncu command line -----------------------------------------------------------

CLI_OK = f"""
assert args[:2] == ["--import", args[1]] and args[2:] == ["--csv", "--page", "raw", "--print-units", "base"], args
assert args[1].endswith(".ncu-rep")
sys.stdout.write(open({str(SAMPLE_CSV)!r}).read())
"""


def test_cli_export_read_by_the_csv_reader(tmp_path, tools, monkeypatch):
    bin_dir, mod_dir = tools
    fake_ncu(bin_dir, CLI_OK)
    fake_module(mod_dir, monkeypatch, "segv_load")      # auto prefers ncu: the module is not used
    df = traces.read(report(tmp_path))
    assert_same_launches(df, traces.read(SAMPLE_CSV))
    assert len(traces.read_ncu_rep(report(tmp_path), via="cli")) == 6


def test_cli_failure_falls_back_to_the_module(tmp_path, tools, monkeypatch):
    bin_dir, mod_dir = tools
    fake_ncu(bin_dir, 'sys.stderr.write("==ERROR== Failed to open report\\n"); sys.exit(1)\n')
    fake_module(mod_dir, monkeypatch)
    assert len(traces.read(report(tmp_path))) == 6
    with pytest.raises(TraceFormatError, match=r"ncu --import failed \(exit 1\): ==ERROR== Failed to open"):
        traces.read_ncu_rep(report(tmp_path), via="cli")


def test_cli_and_module_both_fail(tmp_path, tools, monkeypatch):
    bin_dir, mod_dir = tools
    fake_ncu(bin_dir, "os.kill(os.getpid(), signal.SIGSEGV)\n")
    fake_module(mod_dir, monkeypatch, "segv_load")
    with pytest.raises(TraceFormatError, match=r"ncu --import failed \(killed by SIGSEGV\).*; and through "
                                               r"ncu_report: NVIDIA's ncu_report module crashed"):
        traces.read(report(tmp_path))


def test_cli_failure_without_a_module(tmp_path, tools):
    bin_dir, _ = tools
    fake_ncu(bin_dir, 'sys.stderr.write("bad report\\n"); sys.exit(3)\n')
    with pytest.raises(TraceFormatError, match=r"needs NVIDIA's ncu_report module .*ncu --import failed "
                                               r"\(exit 3\): bad report; or export CSV"):
        traces.read(report(tmp_path))


def test_cli_export_with_invalid_durations_follows_drop_invalid(tmp_path, tools):
    bin_dir, _ = tools
    text = SAMPLE_CSV.read_text()
    lines = text.splitlines()
    header_at = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    import csv as _csv
    header = next(_csv.reader([lines[header_at]]))
    col = header.index("gpu__time_duration.sum")
    row = next(_csv.reader([lines[header_at + 3]]))
    row[col] = "-1"
    lines[header_at + 3] = ",".join(f'"{v}"' for v in row)
    bad = tmp_path / "bad_raw.csv"
    bad.write_text("\n".join(lines) + "\n")
    fake_ncu(bin_dir, f"sys.stdout.write(open({str(bad)!r}).read())\n")
    with pytest.raises(TraceFormatError, match="1 of 6 rows have an invalid duration"):
        traces.read(report(tmp_path))
    with pytest.warns(traces.errors.InvalidRowsWarning):
        assert len(traces.read(report(tmp_path), drop_invalid=True)) == 5


# --- the real sample (GPU machine) ------------------------------------------------------------

@pytest.mark.skipif(ncu_report.locate_ncu_report() is None,
                    reason="NVIDIA's ncu_report module is not installed here")
def test_real_sample_through_the_module_matches_its_csv_export():
    """The module's launches are the CSV export's. Two things differ by what each path gives, seen
    on the H100 with Nsight Compute 2025.3.1: the module names kernels fully demangled ("void
    bwprof::<unnamed>::bwprof_stream<float, (int)0>(...)") where the CSV prints "void
    unnamed>::bwprof_stream<float, 0>(...)", and 14 percent-of-peak metrics (and
    launch__waves_per_multiprocessor) differ; so `via="auto"` reads through ncu's CSV export, which
    agrees with the CSV reader on every column."""
    df = traces.read_ncu_rep(SAMPLE, via="module")
    csv = traces.read(SAMPLE_CSV)
    assert len(df) == len(csv) == 6
    for col in COLUMNS:
        if col != "kernel_name":
            assert df[col].tolist() == csv[col].tolist(), col
    assert all("bwprof_stream<float" in name for name in df["kernel_name"])
    assert set(c for c in csv.columns if "__" in c) <= set(df.columns)


@pytest.mark.skipif(ncu_report.shutil.which("ncu") is None, reason="ncu is not on PATH here")
def test_real_sample_through_the_cli_matches_its_csv_export():
    df = traces.read_ncu_rep(SAMPLE, via="cli")
    assert_same_launches(df, traces.read(SAMPLE_CSV))


def test_signal_names():
    assert ncu_report._signal_text(-signal.SIGSEGV) == "killed by SIGSEGV"
    assert ncu_report._signal_text(-200) == "killed by signal 200"
