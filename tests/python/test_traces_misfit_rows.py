"""CSV rows that do not fit their header (issue 45): never read with shifted columns. Each is an
invalid row named by its line, or left out and counted under drop_invalid; quotes that never
close are an error at the row where they open; a JSON duration of true is not 1 us."""
import json
import warnings

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bwprof.traces as traces
from bwprof.traces import TraceFormatError
from bwprof.traces.errors import InvalidRowsError, InvalidRowsWarning

HEADER = ('"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id",'
          '"Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp",'
          '"Private_Segment_Size","Group_Segment_Size","Workgroup_Size_X","Workgroup_Size_Y",'
          '"Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"')
WIDTH = 19
# Kernel names as rocprofv3 writes them: quoted, with commas and doubled quotes inside.
NAMES = ['"void k<float, int>(float*, int)"', '"gemm ""tn"", 128x128"', '"plain"', '"a,b,c,d"']


def row(i, name, dur, fields=WIDTH):
    start = 1_000_000 + 100_000 * i
    values = ['"KERNEL_DISPATCH"', "2", "1", "1", "7", str(i + 1), "3", name, str(i + 10), str(start),
              str(start + dur), "0", "0", "256", "1", "1", "1024", "1", "1"]
    if fields > WIDTH:
        values += [str(9 + j) for j in range(fields - WIDTH)]
    return ",".join(values[:fields])


rows = st.lists(st.tuples(st.sampled_from(NAMES), st.integers(1, 10 ** 6),
                          st.sampled_from([WIDTH] * 6 + [WIDTH + 1, WIDTH + 3, WIDTH - 1, WIDTH - 3, 8])),
                min_size=1, max_size=30)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows)
def test_rows_that_do_not_fit_are_named_or_dropped_never_shifted(tmp_path, spec):
    lines = [HEADER] + [row(i, name, dur, fields) for i, (name, dur, fields) in enumerate(spec)]
    path = tmp_path / "gen_kernel_trace.csv"
    path.write_text("\n".join(lines) + "\n")
    good = [(i, dur) for i, (_, dur, fields) in enumerate(spec) if fields == WIDTH]
    misfit = [i + 2 for i, (_, _, fields) in enumerate(spec) if fields != WIDTH]
    last_short = spec[-1][2] < WIDTH
    if last_short:  # a last row with fewer fields: a file cut mid-row, an error of its own
        with pytest.raises(TraceFormatError, match=rf"line {len(spec) + 1}: .*fields where the header"):
            traces.read(path, drop_invalid=True)
        return
    if misfit:
        with pytest.raises(InvalidRowsError, match=rf"{len(misfit)} rows do not fit the header") as e:
            traces.read(path)
        assert e.value.rows == [f"line {n}" for n in misfit[:5]] and e.value.count == len(misfit)
        with pytest.warns(InvalidRowsWarning, match=rf"left out {len(misfit)} rows that do not fit"):
            df = traces.read(path, drop_invalid=True)
    else:
        df = traces.read(path)
    assert df["duration_ns"].tolist() == [float(d) for _, d in good]
    assert df["correlation_id"].tolist() == [i + 10 for i, _ in good]


@pytest.mark.parametrize("where", [0, 3, 7])
def test_an_unclosed_quote_is_an_error_at_its_row(tmp_path, where):
    lines = [HEADER] + [row(i, NAMES[0], 11_667) for i in range(8)]
    lines[where + 1] = lines[where + 1].replace('int)"', "int)")
    path = tmp_path / "q_kernel_trace.csv"
    path.write_text("\n".join(lines) + "\n")
    for drop in (False, True):
        with pytest.raises(TraceFormatError, match=rf"line {where + 2}: a quoted field opened on this line is never closed"):
            traces.read(path, drop_invalid=drop)


def test_three_extra_fields_on_the_first_row_do_not_shift_the_others(tmp_path):
    # The example: 8 rows, one with three extra fields; read before as 512 ns in all.
    lines = [HEADER, row(0, NAMES[0], 11_667, WIDTH + 3)] + [row(i, NAMES[0], 11_667) for i in range(1, 8)]
    path = tmp_path / "x_kernel_trace.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidRowsError, match=r"line 2: 22 fields"):
        traces.read(path)
    with pytest.warns(InvalidRowsWarning):
        df = traces.read(path, drop_invalid=True)
    assert df["duration_ns"].sum() == 7 * 11_667


@pytest.mark.parametrize("value", [True, False])
def test_a_json_boolean_duration_is_invalid(tmp_path, value):
    events = [{"ph": "X", "cat": "kernel", "name": "k1", "pid": 1, "tid": 7, "ts": 10.0, "dur": value, "args": {}},
              {"ph": "X", "cat": "kernel", "name": "k2", "pid": 1, "tid": 7, "ts": 20.0, "dur": 3.0, "args": {}}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    with pytest.raises(InvalidRowsError, match=rf"traceEvents\[0\]: duration_ns holds dur {str(value).lower()}, a JSON boolean"):
        traces.read(path)
    with pytest.warns(InvalidRowsWarning):
        assert traces.read(path, drop_invalid=True)["duration_ns"].tolist() == [3000.0]
    events[0]["dur"], events[0]["ts"] = 1.0, value
    path.write_text(json.dumps({"traceEvents": events}))
    with pytest.raises(TraceFormatError, match="has no numeric ts"):
        traces.read(path)
