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
