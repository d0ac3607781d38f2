"""Rows whose duration cannot be right (issue #12) in the JSON formats (PyTorch traces,
rocprofv3 JSON), and JSON that no reader should choke on: deeply nested documents and huge
numbers are clear errors, never RecursionError/OverflowError. Hypothesis writes many traces
with bad events placed anywhere; the durations that remain are checked against the values
written.
"""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bwprof.traces as traces
from bwprof.traces import TraceFormatError
from bwprof.traces.errors import InvalidRowsError, InvalidRowsWarning

from invalid_rows import SETTINGS, expect, rows_strategy
from traces_common import DATA


# --- PyTorch trace JSON -------------------------------------------------------------------

def torch_event(kind, i, ts, dur):
    ev = {"ph": "X", "cat": "kernel", "name": f"kernel_{i}", "pid": 0, "tid": 7, "ts": ts,
          "dur": dur, "args": {"device": 0, "stream": 7, "correlation": i, "grid": [4, 1, 1],
                               "block": [128, 1, 1]}}
    if kind == "negative":
        ev["dur"] = -dur
    elif kind == "empty":
        del ev["dur"]
    elif kind == "nan":
        ev["dur"] = float("nan")
    elif kind == "inf":
        ev["dur"] = float("inf")
    elif kind == "huge":
        ev["ts"] = 10 ** 30
    elif kind == "negtime":
        ev["ts"] = -ts
    return ev


@SETTINGS
@given(kinds=rows_strategy(), durs=st.lists(st.integers(1, 10 ** 6), min_size=12, max_size=12),
       cpu_first=st.booleans())
def test_pytorch_invalid_events(tmp_path, kinds, durs, cpu_first):
    events, valid, index = [], [], []
    if cpu_first:
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": -4})
    for i, (kind, dur) in enumerate(zip(kinds, durs)):
        index.append(len(events))
        events.append(torch_event(kind, i, 1000.0 + 10 * i, dur / 4))
        if kind == "ok":
            valid.append(dur / 4 * 1000.0)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))       # NaN, Infinity as JSON allows
    expect(path, kinds, traces.read, valid, lambda i: f"traceEvents[{index[i]}]")


def test_pytorch_missing_ts_is_malformed(tmp_path):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "dur": 3}]}))
    with pytest.raises(TraceFormatError, match=r"traceEvents\[0\] \('k'\) has no numeric ts"):
        traces.read(path)


@SETTINGS
@given(base=st.one_of(st.integers(2 ** 63, 2 ** 200), st.integers(-2 ** 200, -2 ** 63 - 1),
                      st.sampled_from([float("inf"), float("-inf"), float("nan"), "soon"])))
def test_pytorch_bad_base_time(tmp_path, base):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"baseTimeNanoseconds": base, "traceEvents": [
        torch_event("ok", 0, 1.0, 2.0)]}))
    with pytest.raises(TraceFormatError, match="baseTimeNanoseconds .* is not a 64-bit integer"):
        traces.read(path)


@SETTINGS
@given(value=st.one_of(st.integers(2 ** 63, 2 ** 300), st.integers(-2 ** 300, -2 ** 63 - 1),
                       st.sampled_from([float("inf"), -float("inf")])),
       field=st.sampled_from(["ts", "dur", "grid", "registers", "correlation"]))
def test_pytorch_huge_numbers_are_clear(tmp_path, value, field):
    ev = torch_event("ok", 0, 1.0, 2.0)
    if field in ("ts", "dur"):
        ev[field] = value
    elif field == "grid":
        ev["args"]["grid"] = [value, 1, 1]
    elif field == "registers":
        ev["args"]["registers per thread"] = value
    else:
        ev["args"]["correlation"] = value
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": [torch_event("ok", 1, 0.5, 1.0), ev]}))
    with pytest.raises(InvalidRowsError, match=r"1 of 2 rows .*traceEvents\[1\]: "):
        traces.read(path)
    with pytest.warns(InvalidRowsWarning):
        df = traces.read(path, drop_invalid=True)
    assert df["kernel_name"].tolist() == ["kernel_1"] and df["duration_ns"].tolist() == [1000.0]


# --- deeply nested JSON --------------------------------------------------------------------

@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(depth=st.one_of(st.integers(1, 50), st.integers(5_000, 200_000)),
       fmt=st.sampled_from(["pytorch", "rocprofv3", "bare"]))
def test_deeply_nested_json_is_a_clear_error(tmp_path, depth, fmt):
    nest = "[" * depth + "]" * depth
    if fmt == "pytorch":
        text = ('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, '
                f'"args": {{"deep": {nest}}}}}]}}')
    elif fmt == "rocprofv3":
        text = f'{{"rocprofiler-sdk-tool": [{{"metadata": {{"pid": 1}}, "deep": {nest}}}]}}'
    else:
        text = nest
    path = tmp_path / "trace.json"
    path.write_text(text)
    try:
        df = traces.read(path)
    except TraceFormatError as exc:
        assert str(exc).startswith(str(path))
        # Shallow documents always parse; how deep a parser goes depends on the Python (3.11's json
        # stops near 1,000 levels of the interpreter's recursion, 3.12's went past 5,000 on the GPU
        # machine): deeper, either the document reads right (below) or the error says why.
        assert depth >= 5_000 and "nested too deeply" in str(exc), exc
        return
    # A bare list is read as a list of events (none of them a GPU event).
    assert len(df) == (1 if fmt == "pytorch" else 0)


# --- rocprofv3 JSON -----------------------------------------------------------------------

@SETTINGS
@given(kinds=rows_strategy(max_rows=8))
def test_rocprofv3_json_invalid_dispatches(tmp_path, kinds):
    doc = json.loads((DATA / "rocprofv3_results.json").read_text())
    proc = doc["rocprofiler-sdk-tool"][0]
    proc["buffer_records"]["memory_copy"] = []
    template = proc["buffer_records"]["kernel_dispatch"][0]
    dispatches, valid = [], []
    for i, kind in enumerate(kinds):
        rec = json.loads(json.dumps(template))
        rec["start_timestamp"] = 1_000_000 + 1000 * i
        rec["end_timestamp"] = rec["start_timestamp"] + 100 + i
        if kind == "negative":
            rec["end_timestamp"] = rec["start_timestamp"] - 7
        elif kind == "empty":
            rec["end_timestamp"] = None
        elif kind == "nan":
            rec["start_timestamp"] = float("nan")
        elif kind == "inf":
            rec["end_timestamp"] = float("inf")
        elif kind == "huge":
            rec["start_timestamp"] = 10 ** 25
        elif kind == "negtime":
            rec["start_timestamp"] = -5
        else:
            valid.append(float(100 + i))
        dispatches.append(rec)
    proc["buffer_records"]["kernel_dispatch"] = dispatches
    proc.setdefault("callback_records", {})["counter_collection"] = []
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    expect(path, kinds, traces.read, valid,
           lambda i: f"rocprofiler-sdk-tool[0].buffer_records.kernel_dispatch[{i}]")


def test_an_orjson_without_a_depth_limit_is_not_used(monkeypatch):
    # source._fast_json asks the installed orjson for 1100 nested arrays once: one that parses them
    # (no depth limit: 200,000 end the process) is not used, one that refuses them is.
    import sys
    import types

    from bwprof.traces import source

    def deep_ok(data):
        return []

    def deep_refused(data):
        raise ValueError("array and object recursion depth exceeded")

    for loads, used in ((deep_ok, False), (deep_refused, True)):
        monkeypatch.setitem(sys.modules, "orjson", types.SimpleNamespace(loads=loads))
        monkeypatch.setattr(source, "_FAST_JSON", [])
        assert (source._fast_json() is loads) == used
    monkeypatch.setitem(sys.modules, "orjson", None)  # not installed
    monkeypatch.setattr(source, "_FAST_JSON", [])
    assert source._fast_json() is None
