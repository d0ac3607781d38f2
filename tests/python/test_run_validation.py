"""Runs and baselines read from files are checked: a newer schema, another tool's CSV, text in a
number field, a negative time or rate, bad repeats, a minimum above the median are each a clear
error naming the file and the field; a run folder whose report was cut keeps its rows."""
import json
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bwprof import baseline as bl
from bwprof.results import DamagedReportWarning, load_run, save_run

from baseline_simulation import make_rows


def saved(tmp_path, df=None):
    return save_run(make_rows(3) if df is None else df, tmp_path)


def test_a_newer_schema_version_is_refused_naming_the_file(tmp_path):
    run = saved(tmp_path)
    report = run / "bandwidth_report.json"
    doc = json.loads(report.read_text())
    doc["schema_version"] = 99
    report.write_text(json.dumps(doc))
    lines = (run / "rows.jsonl").read_text().splitlines()
    meta = json.loads(lines[0])
    meta["schema_version"] = 99
    (run / "rows.jsonl").write_text("\n".join([json.dumps(meta)] + lines[1:]) + "\n")
    for target in (run, report, run / "rows.jsonl"):
        with pytest.raises(ValueError, match=r"schema version 99.*upgrade bwprof") as e:
            load_run(target)
        assert str(target) in str(e.value) or str(run) in str(e.value)
        with pytest.raises(bl.BaselineError, match="schema version 99"):
            bl.load(target)
    # a results.csv whose rows say schema 99
    df = make_rows(2)
    df["schema_version"] = 99
    df.to_csv(tmp_path / "r.csv", index=False)
    with pytest.raises(ValueError, match=r"r\.csv.*schema version 99"):
        load_run(tmp_path / "r.csv")


def test_another_tools_csv_is_refused(tmp_path):
    p = tmp_path / "other.csv"
    pd.DataFrame({"name": ["a", "b"], "elapsed": [1.0, 2.0]}).to_csv(p, index=False)
    with pytest.raises(ValueError, match=r"other\.csv: not a bwprof results file: missing column.*found: name, elapsed"):
        load_run(p)
    with pytest.raises(bl.BaselineError, match="other.csv"):
        bl.load(p)


@pytest.mark.parametrize("field, value, message", [
    ("time_median_us", "fast", "not a number"),
    ("time_min_us", "n/a?", "not a number"),
    ("bandwidth_gbs", -5.0, "negative"),
    ("time_std_us", -1.0, "negative"),
    ("repeats", -3, "negative"),
    ("repeats", 0, "not a whole number >= 1"),
    ("repeats", "many", "not a number"),
    ("repeats", 2.5, "not a whole number"),
    ("time_min_us", 1e6, "above the row's time_median_us"),
    ("time_max_us", 1.0, "below the row's time_median_us"),
    ("gflops", float("inf"), "not a finite number"),
])
def test_a_bad_field_is_named_with_its_file_and_row(tmp_path, field, value, message):
    df = make_rows(3)
    df[field] = df[field].astype(object)
    df.loc[1, field] = value
    csv = tmp_path / "results.csv"
    df.to_csv(csv, index=False)
    with pytest.raises(ValueError, match=rf"results\.csv: field {field} of row 2 .*{message}"):
        load_run(csv)
    with pytest.raises(bl.BaselineError, match=rf"results\.csv: field {field} of row 2"):
        bl.load(csv)
    # the same in a baseline file, and as a DataFrame given to compare
    base = tmp_path / "base.json"
    bl.save(make_rows(3), base)
    doc = json.loads(base.read_text())
    doc["rows"][1][field] = value if not (isinstance(value, float) and not np.isfinite(value)) else "inf"
    base.write_text(json.dumps(doc))
    with pytest.raises(bl.BaselineError, match=rf"base\.json: field {field} of row 2"):
        bl.compare(make_rows(3), base)


# Generated bad values for the numeric fields: every one refused, naming the field.
numeric_fields = st.sampled_from(["time_median_us", "time_min_us", "time_max_us", "time_std_us",
                                  "bandwidth_gbs", "gflops", "bytes_read", "repeats"])
bad_values = st.one_of(
    st.floats(max_value=-1e-6, allow_nan=False, allow_infinity=False),
    st.text(alphabet="abcxyz!?-", min_size=1, max_size=6).filter(lambda t: t.strip() not in ("", "-")),
    st.just(float("inf")), st.just(float("-inf")))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=numeric_fields, value=bad_values, row=st.integers(0, 2))
def test_generated_bad_values_are_refused(tmp_path, field, value, row):
    df = make_rows(3)
    df[field] = df[field].astype(object)
    df.loc[row, field] = value
    with pytest.raises(bl.BaselineError, match=rf"field {field} of row {row + 1}"):
        bl.compare(df, make_rows(3))


@settings(max_examples=60, deadline=None)
@given(st.floats(1.0, 1e5), st.floats(0.0, 0.5), st.floats(0.0, 2.0))
def test_consistent_rows_are_taken(median, below, above):
    df = make_rows(1)
    df["time_median_us"] = median
    df["time_min_us"] = median * (1 - below)
    df["time_max_us"] = median * (1 + above)
    assert bl.compare(df, df)["verdict"].iloc[0] == "unchanged"


def test_a_folder_whose_report_was_cut_keeps_its_rows(tmp_path):
    run = saved(tmp_path)
    report = run / "bandwidth_report.json"
    data = report.read_bytes()
    report.write_bytes(data[:len(data) // 2])
    with pytest.warns(DamagedReportWarning, match=r"bandwidth_report\.json: cannot be read.*rows\.jsonl"):
        df = load_run(run)
    assert df["kernel"].tolist() == ["kern0", "kern1", "kern2"]
    with pytest.warns(DamagedReportWarning):
        assert len(bl.load(run)) == 3
    # an older folder without rows.jsonl: results.csv gives the rows
    os.remove(run / "rows.jsonl")
    with pytest.warns(DamagedReportWarning, match="results.csv"):
        assert load_run(run)["kernel"].tolist() == ["kern0", "kern1", "kern2"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_saving_a_baseline_where_it_cannot_be_written_names_the_users_path(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(OSError) as e:
            bl.save(make_rows(2), folder / "base.json")
        assert str(folder / "base.json") in str(e.value) and ".tmp" not in str(e.value)
    finally:
        folder.chmod(0o700)


def test_a_failed_atomic_write_names_the_users_path(tmp_path, monkeypatch):
    import tempfile
    def refuse(*a, **kw):
        raise PermissionError(13, "Permission denied", os.path.join(str(tmp_path), ".base.json.x1y2.tmp"))
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(PermissionError) as e:
        bl.save(make_rows(2), tmp_path / "base.json")
    assert e.value.filename == str(tmp_path / "base.json") and ".tmp" not in str(e.value)
