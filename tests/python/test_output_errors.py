"""plot, bench, baseline and compare on foreign or empty inputs and unusable output places
(issue #12): one clear line on stderr and exit 2 (1: nothing to draw), never a traceback."""
import contextlib
import csv
import io
import os

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bwprof
from bwprof.cli import main

SCHEMA = bwprof.columns() + ["label"]


def run(argv):
    """main(argv) in this process: (exit code, stdout, stderr); any exception fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:  # argparse's own usage errors
            code = e.code
    return code, out.getvalue(), err.getvalue()


def one_clear_line(err: str, *needles: str) -> bool:
    lines = err.strip().splitlines()
    return len(lines) == 1 and "Traceback" not in err and all(n in lines[0] for n in needles)


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    df = bwprof.run_suite(device="cpu", kernels=["stream_copy", "layernorm"], quick=True, progress=False)
    return bwprof.save_run(df, tmp_path_factory.mktemp("runs"))


# ---- plot on tables from anywhere ---------------------------------------------------------------

cell = st.one_of(st.none(), st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True),
                 st.text(max_size=8), st.sampled_from(["fp32", "fp16", "stream_copy", "gemm", "True", "cpu", "1e3"]))
header = st.one_of(
    # another tool's table: any names, a few of them bwprof's
    st.lists(st.one_of(st.sampled_from(SCHEMA + ["category", "time_us", "Name", "Duration"]),
                       st.text(min_size=1, max_size=8)), min_size=1, max_size=10, unique=True),
    # a bwprof table with any of its other columns (and any values in them: text in number columns)
    st.lists(st.sampled_from(SCHEMA), max_size=12, unique=True).map(
        lambda cols: ["kernel", "dtype", "time_median_us"] + [c for c in cols if c not in
                                                              ("kernel", "dtype", "time_median_us")]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cols=header, data=st.data())
def test_plot_on_any_csv_is_charts_or_one_clear_line(tmp_path_factory, cols, data):
    folder = tmp_path_factory.mktemp("anycsv")
    rows = data.draw(st.lists(st.lists(cell, min_size=len(cols), max_size=len(cols)), max_size=4))
    path = folder / "other_tool.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        w.writerows(rows)
    code, out, err = run(["plot", str(path), "--out", str(folder / "charts")])
    assert code in (0, 1, 2), err
    if code == 2:
        assert one_clear_line(err, "other_tool.csv"), err
    if code == 1:
        assert one_clear_line(err, "nothing to plot"), err
    if code == 0:
        assert out.strip() and all(os.path.exists(p) for p in out.split())
    if not {"kernel", "dtype"} <= set(cols):
        assert code == 2 and "missing column" in err


def test_plot_names_the_file_and_the_missing_columns(tmp_path):
    p = tmp_path / "foreign.csv"
    p.write_text("Name,Duration\nk,12\n")
    code, _, err = run(["plot", str(p)])
    assert code == 2 and one_clear_line(err, "foreign.csv", "missing column", "kernel", "dtype")
    (tmp_path / "empty.csv").write_text("")
    code, _, err = run(["plot", str(tmp_path / "empty.csv")])
    assert code == 2 and one_clear_line(err, "empty.csv")
    (tmp_path / "header.csv").write_text(",".join(SCHEMA) + "\n")
    code, _, err = run(["plot", str(tmp_path / "header.csv")])
    assert code == 1 and one_clear_line(err, "header.csv", "no result rows")


def test_plot_out_naming_a_file_or_a_path_through_a_file(tmp_path, run_folder):
    (tmp_path / "afile").write_text("x")
    for out in (tmp_path / "afile", tmp_path / "afile" / "charts"):
        code, _, err = run(["plot", str(run_folder), "--out", str(out)])
        assert code == 2 and one_clear_line(err, "--out", str(out)), err
    assert (tmp_path / "afile").read_text() == "x"


# ---- bench, baseline and compare outputs ---------------------------------------------------------

def test_bench_out_naming_a_file_creates_nothing(tmp_path):
    (tmp_path / "afile").write_text("x")
    for out in (tmp_path / "afile", tmp_path / "afile" / "runs"):
        code, _, err = run(["bench", "--device", "cpu", "--quick", "--kernels", "stream_copy", "--out", str(out),
                            "--no-progress", "--no-plots"])
        assert code == 2 and one_clear_line(err, "--out"), err
    assert sorted(os.listdir(tmp_path)) == ["afile"]


def test_baseline_out_that_cannot_be_a_file(tmp_path, run_folder):
    (tmp_path / "afile").write_text("x")
    for out, needle in ((tmp_path, "is a folder"), (tmp_path / "afile" / "b.json", "--out")):
        code, _, err = run(["baseline", str(run_folder), "--out", str(out)])
        assert code == 2 and one_clear_line(err, needle), err
    code, _, err = run(["baseline", str(run_folder), "--out", str(tmp_path / "new" / "dir" / "b.json")])
    assert code == 0 and (tmp_path / "new" / "dir" / "b.json").exists()  # missing folders are made


def test_compare_outputs_are_checked_before_comparing(tmp_path, run_folder):
    (tmp_path / "afile").write_text("x")
    for opt in ("--csv", "--plot"):
        for target in (tmp_path, tmp_path / "afile" / "out.x"):
            code, out, err = run(["compare", str(run_folder), str(run_folder), opt, str(target)])
            assert code == 2 and one_clear_line(err, opt), err
            assert out == ""  # refused before any table was printed


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_place_is_one_clear_line(tmp_path, run_folder):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        code, _, err = run(["plot", str(run_folder), "--out", str(locked)])
        assert code == 2 and one_clear_line(err, "permission denied")
        code, _, err = run(["baseline", str(run_folder), "--out", str(locked / "b.json")])
        assert code == 2 and one_clear_line(err, "permission denied")
    finally:
        locked.chmod(0o755)


def test_library_plots_name_a_path_that_cannot_be_written(tmp_path, run_folder):
    from bwprof import plots
    df = bwprof.load_run(run_folder)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ValueError, match="out_dir"):
        plots.plot_all(df, tmp_path / "afile")
    with pytest.raises(ValueError, match="path"):
        plots.fp32_vs_fp16(df, tmp_path / "afile" / "chart")
    with pytest.raises(ValueError, match="plot_all: not a bwprof results table: missing column"):
        plots.plot_all(pd.DataFrame({"a": [1]}), tmp_path / "charts")
