"""docs/BENCHMARKS.md is generated from docs/results/ (benchmarks/benchmarks_md.py), and the result
files' writer and reader keep one current figure per thing measured."""
import csv
import sys
from pathlib import Path

import pytest

import bwprof

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import benchmarks_md  # noqa: E402
import result_files as rf  # noqa: E402


def _cpu_row(n=4096, **extra):
    m = bwprof.measure("stream_copy", dtype="fp32", device="cpu", repeats=3, warmup=1, min_time_s=0.0, n=n)
    return rf.row(m.to_dict(), **extra)


def test_the_committed_doc_is_the_generators_output():
    assert (ROOT / "docs" / "BENCHMARKS.md").read_text(encoding="utf-8") == benchmarks_md.render(), \
        "docs/BENCHMARKS.md is stale: PYTHONPATH=python python3 benchmarks/benchmarks_md.py"


def test_every_committed_result_file_is_valid_and_one_per_suite_and_machine():
    files = sorted((ROOT / "docs" / "results").glob("*.csv"))
    assert files
    rows = rf.current()  # raises on a second file of a suite, a bad column, a tie
    assert {r["suite"] for r in rows} == {rf.parse_name(f)[0] for f in files}, "a file none of whose rows is current"


def test_write_then_read_keeps_the_row_and_adds_where_and_when(tmp_path):
    row = _cpu_row(peer="numpy copy", peer_time_us=12.5, label="copy 4096")
    path = rf.write("stream_check", [row], source="test", commit="abc1234", folder=tmp_path)
    assert path.name == f"stream_check_{rf.machine_name(row['device_name'])}_abc1234.csv"
    (back,) = rf.read(path)
    assert back["kernel"] == "stream_copy" and back["shape"] == "n=4096" and back["source"] == "test"
    assert float(back["time_median_us"]) == pytest.approx(row["time_median_us"], rel=1e-12)
    assert float(back["peer_time_us"]) == 12.5 and back["commit"] == "abc1234"
    assert back["date"][:4].isdigit() and len(back["date"]) == 16  # YYYY-MM-DD HH:MM
    header = next(csv.reader(open(path)))
    assert set(header) <= set(rf.allowed_columns())


def test_a_new_run_of_a_suite_replaces_its_file(tmp_path):
    rf.write("s", [_cpu_row()], source="t", commit="aaaaaaa", machine="m1", folder=tmp_path)
    rf.write("s", [_cpu_row()], source="t", commit="bbbbbbb", machine="m2", folder=tmp_path)
    rf.write("s", [_cpu_row()], source="t", commit="ccccccc", machine="m1", folder=tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.csv")) == ["s_m1_ccccccc.csv", "s_m2_bbbbbbb.csv"]


def test_the_later_date_wins_across_suites_and_a_tie_is_an_error(tmp_path):
    old = _cpu_row()
    new = dict(old, time_median_us=old["time_median_us"] * 2)
    other = _cpu_row(n=8192)
    rf.write("full", [old, other], source="t", commit="aaaaaaa", machine="m", date="2026-11-20", folder=tmp_path)
    rf.write("part", [new], source="t", commit="bbbbbbb", machine="m", date="2026-11-21 10:00", folder=tmp_path)
    cur = rf.current(tmp_path)
    assert [(r["shape"], r["suite"]) for r in cur] == [("n=4096", "part"), ("n=8192", "full")]
    rf.write("part", [new], source="t", commit="bbbbbbb", machine="m", date="2026-11-20", folder=tmp_path)
    with pytest.raises(ValueError, match="twice"):
        rf.current(tmp_path)


def test_bad_rows_and_names_are_errors_naming_what(tmp_path):
    row = _cpu_row()
    with pytest.raises(ValueError, match="unknown column"):
        rf.write("s", [dict(row, speed=1.0)], source="t", commit="aaaaaaa", folder=tmp_path)
    with pytest.raises(ValueError, match="shape missing"):
        rf.write("s", [dict(row, shape="")], source="t", commit="aaaaaaa", folder=tmp_path)
    with pytest.raises(ValueError, match="no figure"):
        rf.write("s", [{k: v for k, v in row.items() if k not in rf.FIGURES}], source="t", commit="aaaaaaa",
                 folder=tmp_path)
    with pytest.raises(ValueError, match="peer"):
        rf.write("s", [dict(row, peer_time_us=3.0)], source="t", commit="aaaaaaa", folder=tmp_path)
    with pytest.raises(ValueError, match="suite"):
        rf.write("Bad Suite", [row], source="t", commit="aaaaaaa", folder=tmp_path)
    with pytest.raises(ValueError, match="commit"):
        rf.write("s", [row], source="t", commit="not-hex", folder=tmp_path)
    (tmp_path / "loose.csv").write_text("date\n")
    with pytest.raises(ValueError, match="named <suite>_<machine>_<commit>"):
        rf.current(tmp_path)
    (tmp_path / "loose.csv").unlink()
    rf.write("s", [row], source="t", commit="aaaaaaa", machine="m", folder=tmp_path)
    (tmp_path / "s_m_bbbbbbb.csv").write_text((tmp_path / "s_m_aaaaaaa.csv").read_text())
    with pytest.raises(ValueError, match="two result files"):
        rf.current(tmp_path)


def test_machine_names():
    assert rf.machine_name("NVIDIA H100 80GB HBM3") == "h100"
    assert rf.machine_name("NVIDIA H200", count=2) == "h200-x2"
    assert rf.machine_name("AMD Instinct MI300X") == "mi300x"


def test_the_doc_has_one_table_per_family_and_machine_with_its_figures(tmp_path):
    a = _cpu_row(peer="numpy copy", peer_time_us=1.0)
    b = dict(_cpu_row(n=8192), family="stream")
    rf.write("one", [a], source="run one", commit="aaaaaaa", machine="m", date="2026-11-20", folder=tmp_path)
    rf.write("two", [b], source="run two", commit="bbbbbbb", machine="m", date="2026-11-21", folder=tmp_path)
    doc = benchmarks_md.render(tmp_path)
    assert doc.count("### stream on ") == 1
    assert "- `one`: 2026-11-20, commit `aaaaaaa`; run one." in doc
    line = next(x for x in doc.splitlines() if "`n=4096`" in x)
    assert f"| {benchmarks_md._num(float(a['time_median_us']))} |" in line
    assert f"{1.0 / a['time_median_us']:.2f}x" in line and "| numpy copy |" in line and "`aaaaaaa`" in line
    assert benchmarks_md.main(["--folder", str(tmp_path), "--out", str(tmp_path / "B.md")]) == 0
    assert benchmarks_md.main(["--folder", str(tmp_path), "--out", str(tmp_path / "B.md"), "--check"]) == 0
    (tmp_path / "B.md").write_text("edited by hand\n")
    assert benchmarks_md.main(["--folder", str(tmp_path), "--out", str(tmp_path / "B.md"), "--check"]) == 1


def test_a_run_folder_becomes_a_result_file(tmp_path):
    df = bwprof.run_suite(kernels=["stream"], dtypes=["fp32"], device="cpu", quick=True)
    folder = bwprof.save_run(df, tmp_path / "runs")
    assert rf.main([str(folder), "--source", "bwprof bench --quick", "--commit", "abc1234",
                    "--folder", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("bench_*_abc1234.csv")
    assert len(rf.read(path)) == len(df)


def test_files_made_elsewhere_are_added_in_place_of_the_suites_earlier_file(tmp_path):
    here, there = tmp_path / "docs", tmp_path / "gpu"
    rf.write("s", [_cpu_row()], source="t", commit="aaaaaaa", machine="m", folder=here)
    rf.write("s", [_cpu_row()], source="t", commit="bbbbbbb", machine="m", folder=there)
    rf.write("t", [_cpu_row()], source="t", commit="bbbbbbb", machine="m", folder=there)
    assert rf.main(["add", str(there), "--folder", str(here)]) == 0
    assert sorted(p.name for p in here.glob("*.csv")) == ["s_m_bbbbbbb.csv", "t_m_bbbbbbb.csv"]
    (there / "bad_m_ccccccc.csv").write_text("date,commit\n2026-12-01,ccccccc\n")
    with pytest.raises(ValueError):
        rf.add([there], here)
    assert sorted(p.name for p in here.glob("*.csv")) == ["s_m_bbbbbbb.csv", "t_m_bbbbbbb.csv"]
