"""The README and docs say what the code does (issue #12: a column order that was not the real one,
a DESIGN.md that is not in the repository, floors the statistics page left out)."""
import re
from pathlib import Path

import bwprof
from bwprof import baseline

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def test_readme_column_table_lists_the_schema_in_order():
    rows = [line for line in _section(README, "Output columns").splitlines() if line.startswith("| `")]
    listed = [name for line in rows for name in re.findall(r"`([a-z0-9_]+)`", line.split("|")[1])]
    assert listed == bwprof.columns() + ["label"]


def test_every_file_the_readme_names_exists():
    named = set(re.findall(r"`((?:[\w.-]+/)*[\w.-]+\.(?:md|py|sh|hpp|cpp|toml|ipynb))`", README))
    named |= set(re.findall(r"\]\(([^)#:]+)\)", README))  # markdown links to files
    missing = [n for n in sorted(named) if not (ROOT / n).exists()
               and not any((ROOT / d / n).exists() for d in ("docs", "python", "benchmarks", "kernels"))]
    assert "DESIGN.md" not in README
    assert not missing, missing


def test_baselines_doc_states_the_floors_the_code_uses():
    doc = (ROOT / "docs" / "baselines.md").read_text()
    for backend, label in (("gpu", "GPU"), ("cpu", "CPU")):
        f = baseline.BACKEND_FLOORS[backend]
        row = next(line for line in doc.splitlines() if line.startswith(f"   | {label} "))
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        assert cells[1:] == [f"{f.steady_pct:g} %", f"{f.unstable_pct:g} %", f"{f.abs_us:g} us"], row
    assert f"`--min-effect PCT` (default {baseline.DEFAULT_MIN_EFFECT_PCT:g})" in doc
    assert "lacks the baseline" not in doc and "Until the main CLI" not in doc
