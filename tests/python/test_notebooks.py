"""Every notebook runs top to bottom on the CPU (as CI does), from a temporary copy so the
committed outputs stay as they are."""
import glob
import os
import shutil

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (make test installs it)")
nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (make test installs it)")
pytest.importorskip("ipykernel", reason="ipykernel is not installed (make test installs it)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))
CELL_TIMEOUT_S = 120


def test_the_seven_notebooks_are_there():
    assert [os.path.basename(p) for p in NOTEBOOKS] == [
        "01_quickstart.ipynb", "02_fp32_vs_fp16.ipynb", "03_roofline.ipynb", "04_trace_breakdown.ipynb",
        "05_profile_your_code.ipynb", "06_model.ipynb", "07_model_step.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_runs(path, tmp_path, monkeypatch):
    copy = tmp_path / os.path.basename(path)
    shutil.copy(path, copy)
    nb = nbformat.read(str(copy), as_version=4)
    monkeypatch.setenv("PYTHONPATH", os.path.join(ROOT, "python"))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the notebook picks the inline backend itself
    # cwd is notebooks/, as in Jupyter, so the notebooks find tests/data and the package
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.dirname(path)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    if "quickstart" not in path:  # the others each show at least one chart
        assert images, f"{os.path.basename(path)} drew no chart"
    # the rich displays: a Measurement and a model report as HTML tables, the suite's progress bar
    html = " ".join(str(o.get("data", {}).get("text/html", "")) for c in nb.cells if c.cell_type == "code"
                    for o in c.get("outputs", []))
    for name, marks in RICH.items():
        if name in path:
            for mark in marks:
                assert mark in html, f"{os.path.basename(path)} shows no {mark}"


RICH = {"quickstart": ("bwprof-measurement", "bwprof-progress"), "06_model": ("bwprof-model",)}
