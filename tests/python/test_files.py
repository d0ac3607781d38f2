"""The one atomic writer (bwprof.files): the old file or the complete new one, nothing between."""
import json
import os

import pytest

from bwprof import files


def test_text_and_json_are_written_whole(tmp_path):
    p = files.atomic_write_text(tmp_path / "a.txt", "héllo\n")
    assert p.read_bytes() == "héllo\n".encode("utf-8")
    q = files.atomic_write_json(tmp_path / "b.json", {"x": [1, 2]}, indent=1)
    assert q.read_text() == '{\n "x": [\n  1,\n  2\n ]\n}\n'
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.json"]  # no temporary file left behind
    assert (q.stat().st_mode & 0o777) == 0o644                   # shared, unlike mkstemp's 0600


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")

    def half_then_crash(fh):
        fh.write("new but only ha")
        raise KeyboardInterrupt("simulated crash")

    with pytest.raises(KeyboardInterrupt):
        files.atomic_write(target, half_then_crash)
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["report.json"]
    with pytest.raises(ValueError):  # NaN refused half-way through the dump: still the old file
        files.atomic_write_json(target, {"a": 1, "b": float("nan")}, allow_nan=False)
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["report.json"]


def test_the_run_report_goes_through_it(tmp_path, monkeypatch):
    from bwprof import results

    seen = []
    real = files.atomic_write_text
    monkeypatch.setattr(results, "_atomic_write_text", lambda p, t: seen.append(p.name) or real(p, t))
    w = results.RunWriter(tmp_path, {"id": "cpu"}, columns=["kernel", "time_median_us"])
    w.add({"kernel": "k", "time_median_us": 1.5})
    assert seen == []  # rows go to the append-only log; the report is written once, at the end
    w.close()
    assert seen == ["bandwidth_report.json"]
    assert json.loads((w.path / "bandwidth_report.json").read_text())["rows"] == [
        {"kernel": "k", "time_median_us": 1.5}]
    assert sorted(os.listdir(w.path)) == ["bandwidth_report.json", "results.csv", "rows.jsonl"]
