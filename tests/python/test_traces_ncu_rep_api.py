"""Nsight Compute .ncu-rep through NVIDIA's ncu_report module in this process: a STAND-IN for
the module that follows its documented API (load_report, ranges, actions, metric_by_name,
value(), unit()) and is fed the REAL Nsight Compute sample ncu_raw_h100.csv (H100, ncu 2025.3),
so the mapping is checked against the CSV reader on the same launches. The child-process and
``ncu --import`` paths are in test_traces_ncu_rep.py; a real .ncu-rep is made on the GPU
machine by benchmarks/make_ncu_rep_sample.sh.
"""

import sys
import types

import numpy as np
import pytest

import bwprof.traces as traces
from bwprof.traces import TraceFormatError
from bwprof.traces.formats import ncu_report

from traces_common import DATA, assert_schema


# --- Nsight Compute .ncu-rep through ncu_report (stand-in fed the real CSV sample) --------

class _Metric:
    def __init__(self, name, value, unit):
        self._name, self._value, self._unit = name, value, unit

    def name(self):
        return self._name

    def value(self):
        return self._value

    def unit(self):
        return self._unit

    def has_value(self):
        return self._value is not None


class _Action:
    NameBase_DEMANGLED = 1

    def __init__(self, name, metrics):
        self._name, self._metrics = name, metrics

    def name(self, base=0):
        return self._name

    def metric_names(self):
        return tuple(self._metrics)

    def metric_by_name(self, name):
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


def stand_in_ncu_report(csv_path):
    """A module with ncu_report's documented API whose report holds the launches of an ncu
    ``--csv --page raw`` file: metric values as numbers in the units of the units row."""
    import csv as _csv

    from bwprof.traces.units import parse_number

    lines = [line for line in csv_path.read_text().splitlines() if not line.startswith("==")]
    rows = list(_csv.reader(lines))
    header, units, data = rows[0], rows[1], rows[2:]
    actions = []
    for row in data:
        metrics = {}
        for name, unit, text in zip(header, units, row):
            if "__" not in name:
                continue
            value = parse_number(text)
            metrics[name] = _Metric(name, text if value is None else value, unit)
        actions.append(_Action(row[header.index("Kernel Name")], metrics))
    module = types.ModuleType("ncu_report")
    module.IAction = _Action
    # Two ranges, as a report of two profiled ranges would have.
    module.load_report = lambda path: _Context([_Range(actions[:2]), _Range(actions[2:])])
    return module


def test_ncu_rep_matches_the_raw_csv_reader(tmp_path):
    rep = tmp_path / "h100.ncu-rep"
    rep.write_bytes(b"\x00report")
    module = stand_in_ncu_report(DATA / "ncu_raw_h100.csv")
    df = traces.read_ncu_rep(rep, module=module)
    raw = traces.read(DATA / "ncu_raw_h100.csv")
    assert_schema(df)
    assert len(df) == 5 and (df["source_tool"] == "ncu").all()
    for col in ("kernel_name", "short_name", "duration_ns", "grid_x", "grid_y", "grid_z", "block_x",
                "block_y", "block_z", "registers", "shared_mem_bytes", "device", "stream",
                "correlation_id"):
        assert df[col].tolist() == raw[col].tolist(), col
    assert df["duration_ns"].tolist() == [43136.0, 6592.0, 20640.0, 7776.0, 37696.0]
    metric_cols = [c for c in raw.columns if "__" in c]
    assert set(metric_cols) == {c for c in df.columns if "__" in c}
    for col in metric_cols:
        a, b = df[col], raw[col]
        if b.dtype == np.float64:
            assert np.allclose(a.astype(float), b, equal_nan=True), col
        else:
            assert a.tolist() == b.tolist(), col
    assert not any(c.startswith("device__attribute_") for c in df.columns)


def test_ncu_rep_without_the_module(tmp_path, monkeypatch, no_tools_path):
    # Neither ncu_report nor the ncu command (which would be tried first) is there.
    rep = tmp_path / "k.ncu-rep"
    rep.write_bytes(b"\x00report")
    monkeypatch.setattr(ncu_report, "find_ncu_report", lambda: None)
    monkeypatch.setattr(ncu_report, "locate_ncu_report", lambda: None)
    with pytest.raises(TraceFormatError, match=r"k\.ncu-rep: reading a \.ncu-rep needs NVIDIA's ncu_report "
                                               r"module .* ncu --import k\.ncu-rep --csv --page raw"):
        traces.read(rep)


def test_ncu_rep_load_failure(tmp_path):
    rep = tmp_path / "bad.ncu-rep"
    rep.write_bytes(b"garbage")
    module = types.ModuleType("ncu_report")

    def load_report(path):
        raise RuntimeError("Failed to load report")

    module.load_report = load_report
    with pytest.raises(TraceFormatError, match=r"bad\.ncu-rep: ncu_report cannot load it \(Failed to load report\)"):
        traces.read_ncu_rep(rep, module=module)


def test_find_ncu_report_in_a_named_folder(tmp_path, monkeypatch):
    folder = tmp_path / "extras" / "python"
    folder.mkdir(parents=True)
    (folder / "ncu_report.py").write_text("MARK = 'found'\n")
    monkeypatch.setenv("BWPROF_NCU_REPORT_PATH", str(folder))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "ncu_report", raising=False)
    try:
        module = ncu_report.find_ncu_report()
        assert module is not None and module.MARK == "found"
    finally:
        sys.modules.pop("ncu_report", None)
