"""Kernel choices are parameters, never hidden environment variables: no kernel or core source reads
the environment but cpp/src/core/environment.cpp, and every variable bwprof reads (there and in the
Python package) is listed in docs/environment.md, which lists no other."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
READER = ROOT / "cpp" / "src" / "core" / "environment.cpp"
# What reads an environment variable in C or C++ source.
READS = re.compile(r"\b(?:secure_)?getenv\s*\(|\benviron\b|\bGetEnvironmentVariable")


def _sources():
    for folder in ("kernels", "cpp", "python/src"):
        for p in sorted((ROOT / folder).rglob("*")):
            if p.suffix in (".cpp", ".hpp", ".hip", ".h", ".cu", ".cuh") and p.is_file():
                yield p


def test_no_kernel_or_core_source_reads_the_environment_but_the_one_file():
    sources = list(_sources())
    assert READER in sources and len(sources) > 100
    readers = [str(p.relative_to(ROOT)) for p in sources if p != READER and READS.search(p.read_text())]
    assert readers == [], f"these read the environment; go through bwprof/environment.hpp: {readers}"


def test_the_scan_sees_a_read(tmp_path):
    # The pattern catches the ways C++ reads a variable (so that the test above can fail).
    for line in ('const char* v = std::getenv("BWPROF_X");', "if (getenv (name))", "extern char** environ;",
                 "secure_getenv(\"X\")"):
        assert READS.search(line), line
    assert not READS.search('BWPROF_INVALID("x")')


def _read_in_environment_cpp():
    return set(re.findall(r'"(BWPROF_[A-Z0-9_]+)"', READER.read_text()))


def _read_in_python():
    names = set()
    for p in (ROOT / "python" / "bwprof").rglob("*.py"):
        text = p.read_text()
        names |= set(re.findall(r'(?:environ|env)(?:\.get\(|\[)\s*"(BWPROF_[A-Z0-9_]+)"', text))
        names |= set(re.findall(r'env\[\s*"(BWPROF_[A-Z0-9_]+)"\s*\]\s*=', text))
    return names


def test_every_variable_read_is_in_docs_environment_md_and_no_other():
    doc = (ROOT / "docs" / "environment.md").read_text()
    listed = set(re.findall(r"^\| `(BWPROF_[A-Z0-9_]+)`", doc, re.M))
    read = _read_in_environment_cpp() | _read_in_python()
    assert "BWPROF_MEMORY_LIMIT" in read and "BWPROF_RENDEZVOUS_DIR" in read
    assert read - listed == set(), f"read but not in docs/environment.md: {sorted(read - listed)}"
    assert listed - read == set(), f"in docs/environment.md but read nowhere: {sorted(listed - read)}"
