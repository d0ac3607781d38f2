"""The README and docs say what the code does (issue #12: a column order that was not the real one,
a DESIGN.md that is not in the repository, floors the statistics page left out; issue #44: a short
README, the column reference and the kernels' parameters checked against the code, no dead links)."""
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


DOCS = sorted((ROOT / "docs").rglob("*.md"))
TREE = ("docs/", "benchmarks/", "python/", "kernels/", "cpp/", "tests/", "examples/", "notebooks/", "cmake/", ".ci/")


def test_schema_doc_lists_the_schema_in_order():
    doc = (ROOT / "docs" / "schema.md").read_text()
    rows = [line for line in doc.splitlines() if line.startswith("| `")]
    listed = [name for line in rows for name in re.findall(r"`([a-z0-9_]+)`", line.split("|")[1])]
    assert listed == bwprof.columns() + ["label"]


def test_kernels_doc_holds_every_kernel_its_parameters_and_this_builds_variants():
    from bwprof import kernel_docs

    assert kernel_docs.check() == [], "run: PYTHONPATH=python python3 -m bwprof.kernel_docs"
    doc = (ROOT / "docs" / "kernels.md").read_text()
    sections = dict(re.findall(r"^## `(\w+)`\n(.*?)(?=^## |\Z)", doc, re.S | re.M))
    for k in bwprof._core.kernels():
        listed = set(re.findall(r"^- (.*)$", sections[k["name"]].split("Variants:")[1], re.M))
        named = {v for line in listed for v in re.findall(r"`(\w+)`", line.split(":")[0])}
        missing = [v["name"] for v in k["variants"] if v["name"] not in named]
        assert not missing, f"{k['name']}: variants {missing} of this build are not described in docs/kernels.md"


def test_readme_is_short_and_its_lines_are_lines():
    lines = README.splitlines()
    assert len(lines) < 150, len(lines)
    long = [i + 1 for i, line in enumerate(lines) if len(line) > 120]
    assert not long, f"README.md lines over 120 characters: {long}"


def test_every_file_the_readme_names_exists():
    named = set(re.findall(r"`((?:[\w.-]+/)*[\w.-]+\.(?:md|py|sh|hpp|cpp|toml|ipynb))`", README))
    named |= set(re.findall(r"\]\(([^)#:]+)\)", README))  # markdown links to files
    missing = [n for n in sorted(named) if not (ROOT / n).exists()
               and not any((ROOT / d / n).exists() for d in ("docs", "python", "benchmarks", "kernels"))]
    assert "DESIGN.md" not in README
    assert not missing, missing


def test_every_link_and_tree_path_in_the_docs_exists():
    missing = []
    for doc in [ROOT / "README.md"] + DOCS:
        text = doc.read_text()
        for link in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", text):
            if not (doc.parent / link).exists():
                missing.append(f"{doc.relative_to(ROOT)}: link {link}")
        for path in set(re.findall(r"`((?:%s)[\w./*-]*)`" % "|".join(re.escape(t) for t in TREE), text)):
            if not (list(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()):
                missing.append(f"{doc.relative_to(ROOT)}: {path}")
    assert not missing, missing


def test_docs_index_lists_every_doc_once():
    index = (ROOT / "docs" / "README.md").read_text()
    linked = re.findall(r"^- \[[^]]+\]\(([^)]+)\)", index, re.M)
    assert len(linked) == len(set(linked))
    top = {p.relative_to(ROOT / "docs").as_posix() for p in DOCS if p.parent == ROOT / "docs" and p.name != "README.md"}
    assert top <= set(linked), sorted(top - set(linked))


def test_baselines_doc_states_the_floors_the_code_uses():
    doc = (ROOT / "docs" / "baselines.md").read_text()
    for backend, label in (("gpu", "GPU"), ("cpu", "CPU")):
        f = baseline.BACKEND_FLOORS[backend]
        row = next(line for line in doc.splitlines() if line.startswith(f"   | {label} "))
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        assert cells[1:] == [f"{f.steady_pct:g} %", f"{f.unstable_pct:g} %", f"{f.abs_us:g} us"], row
    assert f"`--min-effect PCT` (default {baseline.DEFAULT_MIN_EFFECT_PCT:g})" in doc
    assert "lacks the baseline" not in doc and "Until the main CLI" not in doc
