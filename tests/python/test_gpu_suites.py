"""benchmarks/gpu_suites.py: the GPU machine's named suites (make gpu-check, make gpu-bench SUITE=...).

The suites run on a GPU; here their table is checked against the tree (every script and test file
they name exists) and the runner is driven with small stand-in steps."""
import importlib.util
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]


def load():
    spec = importlib.util.spec_from_file_location("gpu_suites", ROOT / "benchmarks" / "gpu_suites.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gpu_suites"] = mod  # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    return mod


gs = load()


def test_every_path_a_suite_names_exists():
    named = []
    for suite in gs.SUITES.values():
        for step in suite.steps:
            for arg in step.argv:
                if arg.startswith("{tree}/"):
                    named.append(arg[len("{tree}/"):])
    assert named, "no suite names a script"
    missing = [p for p in named if not (ROOT / p).exists()]
    assert not missing, f"suites name files that do not exist: {missing}"


def test_the_issue_s_suites_are_there():
    want = {"check", "attention", "gemm", "memory_bound", "compute", "peaks", "size_graph", "model", "profile"}
    assert want <= set(gs.SUITES)
    names = [s.name for suite in gs.SUITES.values() for s in suite.steps]
    assert len(names) == len(set(names)), "two steps share a log name"
    check = [s.name for s in gs.SUITES["check"].steps]
    assert check == ["ctest", "pytest", "memcheck_cpp", "memcheck_py"]


def test_list_and_unknown_suite(capsys):
    assert gs.main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in gs.SUITES)
    with pytest.raises(SystemExit) as e:
        gs.main(["gemmm"])
    assert e.value.code == 2
    assert "unknown suite 'gemmm'" in capsys.readouterr().err


def test_dry_run_prints_each_command_with_its_folders(tmp_path, capsys):
    out = tmp_path / "o"
    assert gs.main(["gemm", "--dry-run", "--out", str(out), "--build", str(tmp_path / "b"), "--", "--quick"]) == 0
    text = capsys.readouterr().out
    assert f"benchmarks/gemm_sweep.py --repeats 12 --no-candidates --csv {out}/gemm_sweep.csv --quick" in text
    assert not out.exists()  # a dry run writes nothing
    assert gs.main(["check", "--dry-run", "--build", str(tmp_path / "b")]) == 0
    text = capsys.readouterr().out
    assert f"ctest --test-dir {tmp_path / 'b'}" in text
    assert f"{tmp_path / 'b'}/bwprof_tests --gtest_filter=" in text


def test_only_runs_the_steps_named(capsys):
    assert gs.main(["check", "--dry-run", "--only", "pytest,memcheck_py"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["pytest", "memcheck_py"]
    with pytest.raises(SystemExit):
        gs.main(["check", "--only", "pytest,nope"])
    assert "the 'check' suite's steps are ctest, pytest, memcheck_cpp, memcheck_py" in capsys.readouterr().err


def test_bad_arguments_are_named(tmp_path, capsys):
    with pytest.raises(SystemExit):
        gs.main(["check", "--", "--quick"])
    assert "takes no script arguments" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        gs.main(["peaks", "--before", str(tmp_path)])
    assert "no rows to compare" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        gs.main(["gemm", "--before", str(tmp_path)])
    assert "is not a bwprof checkout" in capsys.readouterr().err


def runner(tmp_path):
    return gs.Runner(out=tmp_path, build=tmp_path, python=sys.executable)


def test_a_step_logs_its_output_and_status(tmp_path, capsys):
    r = runner(tmp_path)
    ok = gs.Step("hello", ("{py}", "-c", "import sys; print('out', sys.argv[1:])", "{out}"), 30)
    assert r.run(ok, ROOT, ["x"]) == 0
    log = (tmp_path / "hello.log").read_text()
    assert f"out ['{tmp_path}', 'x']" in log
    assert "hello: exit 0" in capsys.readouterr().out
    bad = gs.Step("bad", ("{py}", "-c", "raise SystemExit(3)"), 30)
    slow = gs.Step("slow", ("{py}", "-c", "import time; time.sleep(30)"), 1)
    absent = gs.Step("absent", ("no-such-program",), 30, needs="no-such-program")
    assert r.run(bad, ROOT, []) == 3
    assert r.run(slow, ROOT, []) == 124
    assert "(stopped after 1 s)" in (tmp_path / "slow.log").read_text()
    assert r.run(absent, ROOT, []) == 0
    assert "absent: skipped (no-such-program is not on PATH)" in capsys.readouterr().out
    assert r.failed == ["bad", "slow"]


def test_before_and_after_are_compared_row_by_row(tmp_path, capsys):
    r = runner(tmp_path)
    step = gs.Step("sweep", (), 30, csv=True, time_col="us")
    rows = {"_before1": [10.0, 100.0], "_before2": [10.1, 100.5], "_after1": [10.0, 101.0], "_after2": [10.2, 110.0]}
    for tag, us in rows.items():
        pd.DataFrame({"name": ["a", "b"], "us": us}).to_csv(tmp_path / f"sweep{tag}.csv", index=False)
    gs.compare(r, step)
    out = capsys.readouterr().out
    assert "compare sweep pass 1: exit 0" in out
    assert "compare sweep pass 2: exit 1" in out  # b moved by 9.5 %
    assert r.failed == ["compare sweep pass 2"]
