"""Tests for bwprof.baseline: files, loading, matching rows, the plot and the CLI."""
import argparse
import json
import os

import numpy as np
import pandas as pd
import pytest

from bwprof import baseline as bl

from baseline_simulation import make_rows

# ---------------------------------------------------------------------------------------------
# Files

def test_save_load_round_trip(tmp_path):
    df = make_rows()
    path = bl.save(df, tmp_path / "base.json")
    doc = json.loads(path.read_text())
    assert doc["format"] == "bwprof-baseline" and doc["version"] == 1
    assert doc["created"] and doc["bwprof_version"]
    assert len(doc["rows"]) == 3
    back = bl.load(path)
    assert list(back["kernel"]) == list(df["kernel"])
    assert list(back["variant"]) == ["", "vec4", ""]
    assert back["time_median_us"].tolist() == pytest.approx(df["time_median_us"].tolist())
    assert back["shape"][1] == "M=128,N=1792,K=896"
    assert bl.compare(df, path)["verdict"].eq("unchanged").all()


def test_nan_is_saved_as_null(tmp_path):
    df = make_rows(1)
    df["max_rel_error"] = np.nan
    path = bl.save(df, tmp_path / "b.json")
    assert json.loads(path.read_text())["rows"][0]["max_rel_error"] is None


def test_atomic_write_keeps_old_file_when_dump_fails(tmp_path, monkeypatch):
    path = bl.save(make_rows(2), tmp_path / "base.json")
    before = path.read_bytes()
    real_dump = json.dump

    def crash_mid_write(obj, fh, **kw):
        fh.write('{"format": "bwprof-baseline", "rows": [')  # partial output, then the crash
        raise KeyboardInterrupt("simulated crash")

    monkeypatch.setattr(json, "dump", crash_mid_write)
    with pytest.raises(KeyboardInterrupt):
        bl.save(make_rows(3, time_us=999.0), path)
    monkeypatch.setattr(json, "dump", real_dump)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["base.json"]  # the temp file is cleaned up
    assert len(bl.load(path)) == 2


def test_atomic_write_keeps_old_file_when_replace_fails(tmp_path, monkeypatch):
    path = bl.save(make_rows(2), tmp_path / "base.json")
    before = path.read_bytes()

    def no_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_replace)
    with pytest.raises(OSError):
        bl.save(make_rows(3), path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["base.json"]


@pytest.mark.parametrize("content, message", [
    ('{"format": "bwprof-baseline", "version": 1, "rows": [{"kern', "not valid JSON"),
    ("", "empty"),
    ('{"format": "something-else", "version": 1, "rows": []}', "not a bwprof baseline"),
    ('{"format": "bwprof-baseline", "version": 99, "rows": []}', "newer"),
    ('{"format": "bwprof-baseline", "version": "one", "rows": []}', "version"),
    ('{"format": "bwprof-baseline", "version": 1}', "no 'rows'"),
    ('{"format": "bwprof-baseline", "version": 1, "rows": {"a": 1}}', "list of objects"),
    ('[1, 2, 3]', "not an object"),
    ('{"hello": "world"}', "not a bwprof baseline or bandwidth report"),
    ('{"format": "bwprof-baseline", "version": 1, "rows": [{"kernel": "x"}]}', "missing column"),
])
def test_damaged_or_foreign_file_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(bl.BaselineError) as err:
        bl.load(path)
    assert str(path) in str(err.value) and message in str(err.value)
    assert isinstance(err.value, ValueError)


def test_binary_junk_and_missing_file(tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_bytes(b"\x00\xff\xfe\x89PNG")
    with pytest.raises(bl.BaselineError, match="junk.json"):
        bl.load(junk)
    with pytest.raises(bl.BaselineError, match="no such file"):
        bl.load(tmp_path / "missing.json")
    with pytest.raises(bl.BaselineError, match="neither"):
        bl.load(tmp_path)


def test_row_without_a_time_is_refused(tmp_path):
    df = make_rows(2)
    df.loc[1, "time_median_us"] = np.nan
    with pytest.raises(bl.BaselineError, match="time_median_us"):
        bl.save(df, tmp_path / "b.json")


def write_run(folder, df, run_id="run1"):
    """A run folder as bwprof writes it: results.csv and bandwidth_report.json."""
    folder.mkdir(parents=True)
    df.to_csv(folder / "results.csv", index=False)
    report = {"run_id": run_id, "created": "2025-01-01T00:00:00+00:00", "device": "Sim GPU",
              "bwprof_version": "0.1.0", "schema_version": 1,
              "rows": json.loads(df.to_json(orient="records"))}
    (folder / "bandwidth_report.json").write_text(json.dumps(report))
    return folder


def test_load_reads_every_input_form(tmp_path):
    df = make_rows()
    run = write_run(tmp_path / "results" / "run1", df)
    csv_only = tmp_path / "csv_only"
    csv_only.mkdir()
    df.to_csv(csv_only / "results.csv", index=False)
    base = bl.save(df, tmp_path / "base.json")
    for source in (run, run / "results.csv", run / "bandwidth_report.json", base, csv_only):
        got = bl.load(source)
        assert list(got["kernel"]) == list(df["kernel"]), source
        assert list(got["variant"]) == ["", "vec4", ""], source  # empty stays empty, not "nan"
        assert bl.compare(got, df)["verdict"].eq("unchanged").all(), source


def test_an_interrupted_or_cut_run_gives_its_whole_rows(tmp_path):
    from bwprof.results import RunWriter, TruncatedRowWarning
    df = make_rows(3)
    w = RunWriter(tmp_path, {"id": "Sim GPU"}, run_id="killed", columns=list(df.columns))
    for r in df.to_dict("records"):
        w.add(r)
    # killed before the report: the folder is read from its row log
    assert not (w.path / "bandwidth_report.json").exists()
    assert bl.load(w.path)["kernel"].tolist() == ["kern0", "kern1", "kern2"]
    assert bl.compare(w.path, df)["verdict"].eq("unchanged").all()
    # a results.csv whose last row was cut: that row is left out, with a warning
    data = (w.path / "results.csv").read_bytes()
    cut = tmp_path / "cut.csv"
    cut.write_bytes(data[:len(data) - 40])
    with pytest.warns(TruncatedRowWarning, match="cut.csv: line 4"):
        assert bl.load(cut)["kernel"].tolist() == ["kern0", "kern1"]


# ---------------------------------------------------------------------------------------------
# Matching

def test_columns_and_one_sided_rows_are_listed():
    base = make_rows(3)
    new = make_rows(3)
    new.loc[2, "shape"] = "M=256,N=2688,K=896"  # a different shape: not the same measurement
    cmp = bl.compare(new, base)
    assert list(cmp.columns[:5]) == ["device", "kernel", "variant", "dtype", "shape"]
    for col in bl.OUTPUT_COLUMNS:
        assert col in cmp.columns
    assert len(cmp) == 4
    only_base = cmp[cmp["verdict"] == "only in baseline"]
    only_new = cmp[cmp["verdict"] == "only in new"]
    assert only_base["shape"].tolist() == ["M=128,N=2688,K=896"]
    assert only_new["shape"].tolist() == ["M=256,N=2688,K=896"]
    assert np.isnan(only_base["new_time_us"].iloc[0])
    assert only_base["baseline_time_us"].iloc[0] == pytest.approx(300.0)
    assert np.isnan(only_new["baseline_time_us"].iloc[0])
    assert (cmp["verdict"] == "unchanged").sum() == 2


def test_rows_match_on_variant_and_dtype():
    base = make_rows(1)
    new = make_rows(1)
    new["dtype"] = "fp32"
    assert sorted(bl.compare(new, base)["verdict"]) == ["only in baseline", "only in new"]
    new = make_rows(1)
    new["variant"] = "vec4"
    assert sorted(bl.compare(new, base)["verdict"]) == ["only in baseline", "only in new"]


def test_cold_and_hot_rows_of_one_kernel_are_kept_apart():
    base = pd.concat([make_rows(1, cache="cold"), make_rows(1, time_us=50.0, cache="hot")])
    new = pd.concat([make_rows(1, cache="cold"), make_rows(1, time_us=60.0, cache="hot")])
    cmp = bl.compare(new, base).set_index("cache")
    assert cmp.loc["cold", "verdict"] == "unchanged"
    assert cmp.loc["hot", "verdict"] == "slower"
    assert cmp.loc["hot", "change_pct"] == pytest.approx(20.0)


def test_duplicate_rows_are_an_error():
    base = make_rows(2)
    new = pd.concat([make_rows(2), make_rows(1)])
    with pytest.raises(bl.BaselineError, match="share one key"):
        bl.compare(new, base)


def test_cross_device_is_refused_unless_forced():
    base = make_rows(2, device="NVIDIA H100")
    new = make_rows(2, device="AMD MI300X", time_us=130.0)
    with pytest.raises(bl.BaselineError, match="different devices"):
        bl.compare(new, base)
    cmp = bl.compare(new, base, force=True)
    assert len(cmp) == 2
    assert set(cmp["device"]) == {"NVIDIA H100 -> AMD MI300X"}
    assert set(cmp["verdict"]) == {"slower"}


def test_runs_sharing_a_device_compare_on_it():
    base = pd.concat([make_rows(2, device="GPU A"), make_rows(2, device="GPU B")])
    new = make_rows(2, device="GPU A")
    cmp = bl.compare(new, base)
    assert (cmp[cmp["device"] == "GPU A"]["verdict"] == "unchanged").all()
    assert (cmp[cmp["device"] == "GPU B"]["verdict"] == "only in baseline").all()


# ---------------------------------------------------------------------------------------------
# Plot

def test_plot_saves_a_non_blank_png(tmp_path):
    base = make_rows(3)
    new = base.copy()
    # every timing of a row moves (a median alone below its row's minimum is refused, issue 45)
    new.loc[0, ["time_median_us", "time_min_us", "time_max_us"]] *= 1.2
    new.loc[1, ["time_median_us", "time_min_us", "time_max_us"]] *= 0.8
    cmp = bl.compare(new, base)
    out = tmp_path / "changes.png"
    fig = bl.plot_changes(cmp, out)
    assert out.stat().st_size > 1000
    assert fig.axes[0].get_xlabel().endswith("(+ = slower)") and "%" in fig.axes[0].get_xlabel()
    import matplotlib.image as mpimg
    pixels = mpimg.imread(out)
    assert pixels.std() > 0.01  # not a blank image
    red = (pixels[..., 0] > 0.7) & (pixels[..., 1] < 0.3) & (pixels[..., 2] < 0.3)
    assert red.sum() > 50  # the slower bar is drawn in red
    bl.plot_changes(cmp, tmp_path / "changes.svg")
    assert (tmp_path / "changes.svg").read_text().lstrip().startswith("<?xml")


def test_plot_with_no_matched_rows_says_so(tmp_path):
    base = make_rows(1)
    new = make_rows(1)
    new["dtype"] = "bf16"
    fig = bl.plot_changes(bl.compare(new, base), tmp_path / "none.png")
    assert "no kernels in both runs" in [t.get_text() for t in fig.axes[0].texts]


# ---------------------------------------------------------------------------------------------
# Command line

def run_cli(argv):
    parser = argparse.ArgumentParser(prog="bwprof")
    sub = parser.add_subparsers(dest="command", required=True)
    bl.register_cli(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_exit_codes(tmp_path, capsys):
    base_df = make_rows(3)
    run_a = write_run(tmp_path / "results" / "a", base_df, "a")
    slower = base_df.copy()
    slower.loc[0, ["time_median_us", "time_min_us", "time_max_us"]] *= 1.25
    run_b = write_run(tmp_path / "results" / "b", slower, "b")
    base_json = tmp_path / "base.json"

    assert run_cli(["baseline", str(run_a), "--out", str(base_json)]) == 0
    assert bl.load(base_json)["kernel"].tolist() == base_df["kernel"].tolist()

    # No regression: the same run again, given as a results.csv.
    assert run_cli(["compare", str(base_json), str(run_a / "results.csv")]) == 0
    out = capsys.readouterr().out
    assert "unchanged" in out and "summary: 3 unchanged" in out

    # A regression: exit 1, with the table, a CSV and a plot written.
    csv_out, png_out = tmp_path / "cmp.csv", tmp_path / "cmp.png"
    code = run_cli(["compare", str(base_json), str(run_b / "bandwidth_report.json"),
                    "--csv", str(csv_out), "--plot", str(png_out)])
    captured = capsys.readouterr()
    assert code == 1
    assert "slower" in captured.out and "regression" in captured.err
    assert pd.read_csv(csv_out)["verdict"].tolist()[0] == "slower"
    assert png_out.stat().st_size > 1000

    # A big min-effect makes the same change not count.
    assert run_cli(["compare", str(base_json), str(run_b), "--min-effect", "30"]) == 0
    capsys.readouterr()

    # Bad input: one line on stderr, no traceback, exit 2.
    damaged = tmp_path / "damaged.json"
    damaged.write_text('{"format": "bwprof-baseline", "vers')
    assert run_cli(["compare", str(damaged), str(run_a)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "damaged.json" in err and "Traceback" not in err
    assert run_cli(["compare", str(tmp_path / "nope.json"), str(run_a)]) == 2
    assert run_cli(["baseline", str(damaged), "--out", str(tmp_path / "x.json")]) == 2
    assert not (tmp_path / "x.json").exists()


def test_cli_cross_device_needs_force(tmp_path, capsys):
    run_a = write_run(tmp_path / "a", make_rows(2, device="GPU A"))
    run_b = write_run(tmp_path / "b", make_rows(2, device="GPU B"))
    assert run_cli(["compare", str(run_a), str(run_b)]) == 2
    assert "--force" in capsys.readouterr().err
    assert run_cli(["compare", str(run_a), str(run_b), "--force"]) == 0


def test_cli_floors_are_checked_and_given_to_compare(tmp_path, capsys):
    run_a = write_run(tmp_path / "a", make_rows(2, device="cpu", backend="cpu"))
    for opt in ("--noise-floor", "--unstable-floor", "--noise-floor-us", "--min-effect"):
        for bad in ("-1", "nan", "inf"):
            assert run_cli(["compare", str(run_a), str(run_a), opt, bad]) == 2
            assert opt in capsys.readouterr().err
    assert run_cli(["compare", str(run_a), str(run_a), "--noise-floor", "0", "--unstable-floor", "0",
                    "--noise-floor-us", "0"]) == 0
