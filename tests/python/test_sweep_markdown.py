"""benchmarks/sweep_markdown.py: the recorded tables are the sweep's rows, counted against the targets."""
import subprocess
import sys
from pathlib import Path

import pandas as pd

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sweep_markdown.py"


def _run(path, *extra):
    return subprocess.run([sys.executable, str(SCRIPT), str(path), *extra], capture_output=True, text=True)


def test_attention_table_counts_each_kind(tmp_path):
    rows = [dict(kind="prefill", name="prefill  flash fp16 B1", us=10.0, torch_us=9.5, ratio=0.95),
            dict(kind="prefill", name="prefill flash bf16 B2", us=10.0, torch_us=5.0, ratio=0.5),
            dict(kind="decode", name="decode flash fp16 B1", us=4.0, torch_us=4.0, ratio=1.0)]
    p = tmp_path / "a.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    r = _run(p)
    assert r.returncode == 0, r.stderr
    assert "| prefill flash fp16 B1 | 10.0 | 9.5 | 0.950 | met |" in r.stdout
    assert "| prefill flash bf16 B2 | 10.0 | 5.0 | 0.500 | missed |" in r.stdout
    assert "prefill: 1 of 2 points at >= 0.9x" in r.stdout
    assert "decode: 1 of 1 points" in r.stdout
    failing = _run(p, "--only-failing").stdout
    assert "B2" in failing and "fp16 B1 |" not in failing


def test_gemm_table_and_bad_input(tmp_path):
    rows = [dict(name="fp16 M=1", tensor_us=12.6, vendor_us=10.0, torch_us=10.0, ratio=1.26, choice="gemv"),
            dict(name="fp16 M=2", tensor_us=12.5, vendor_us=10.0, torch_us=11.0, ratio=1.25, choice="wgmma")]
    p = tmp_path / "g.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    r = _run(p)
    assert r.returncode == 0, r.stderr
    assert "| 1.260 | missed | gemv |" in r.stdout and "| 1.250 | met | wgmma |" in r.stdout
    assert "1 of 2 points within 1.25x" in r.stdout
    other = tmp_path / "x.csv"
    other.write_text("a,b\n1,2\n")
    bad = _run(other)
    assert bad.returncode == 2 and "neither" in bad.stderr
    missing = _run(tmp_path / "none.csv")
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_before_columns_and_counts_from_an_earlier_run(tmp_path):
    new = pd.DataFrame([dict(kind="decode", name="decode a", us=4.0, torch_us=4.0, ratio=1.0),
                        dict(kind="decode", name="decode b", us=8.0, torch_us=6.0, ratio=0.75)])
    old = pd.DataFrame([dict(kind="decode", name="decode a", us=5.0, torch_us=4.0, ratio=0.8)])
    pn, po = tmp_path / "new.csv", tmp_path / "old.csv"
    new.to_csv(pn, index=False)
    old.to_csv(po, index=False)
    r = _run(pn, "--before", po)
    assert r.returncode == 0, r.stderr
    assert "| decode a | 5.0 | 0.800 | 4.0 | 4.0 | 1.000 | met |" in r.stdout
    assert "| decode b | - | - | 8.0 | 6.0 | 0.750 | missed |" in r.stdout
    assert "decode: 1 of 2 points at >= 0.9x" in r.stdout and "before: 0 of 1 points at >= 0.9x" in r.stdout
    gemm = tmp_path / "g.csv"
    pd.DataFrame([dict(name="decode a", tensor_us=1.0, vendor_us=1.0, torch_us=1.0, ratio=1.0, choice="x")]).to_csv(
        gemm, index=False)
    other = _run(pn, "--before", gemm)
    assert other.returncode == 2 and "not the same kind" in other.stderr
    disjoint = tmp_path / "d.csv"
    pd.DataFrame([dict(kind="decode", name="decode z", us=1.0, torch_us=1.0, ratio=1.0)]).to_csv(disjoint, index=False)
    none = _run(pn, "--before", disjoint)
    assert none.returncode == 2 and "no point" in none.stderr
