import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
# Tests that start `python -m bwprof` in a child process find the package the same way when pytest
# is run directly (the Makefile exports it too).
if os.path.join(ROOT, "python") not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.join(ROOT, "python"),
                                                          os.environ.get("PYTHONPATH")) if p)
# The writers of the trace samples (tests/data/traces/sample_writers), which trace tests import.
sys.path.insert(0, os.path.join(ROOT, "tests", "data", "traces"))
os.environ.setdefault("MPLBACKEND", "Agg")


def _has_gpu() -> bool:
    try:
        import bwprof
        return any(d.kind == "gpu" for d in bwprof.devices())
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="no GPU on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def repo_root():
    return ROOT


@pytest.fixture
def no_tools_path(tmp_path, monkeypatch):
    """PATH holds only a fresh folder (for fake tools) and the folder of python."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.path.dirname(sys.executable)]))
    return bin_dir
