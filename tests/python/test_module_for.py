"""mk/module_for.sh: bwprof._core for another CPython, built from this machine's build folder (the
GPU machine's Python gets a module without a build of its own there). Checked here with this very
Python: the script's module, built into a scratch folder, imports and measures on the CPU."""
import glob
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BWPROF_BUILD_DIR", "build"))


@pytest.mark.skipif(not os.path.exists(os.path.join(BUILD, "build.ninja")) or shutil.which("ninja") is None,
                    reason="needs the Ninja build folder that `make build` makes")
def test_module_for_builds_an_importable_module(tmp_path):
    out = tmp_path / "module"
    own = glob.glob(os.path.join(ROOT, "python", "bwprof", "_core*.so"))
    before = {f: os.stat(f).st_mtime_ns for f in own}
    r = subprocess.run(["bash", os.path.join(ROOT, "mk", "module_for.sh"), BUILD, str(out)], cwd=ROOT,
                       env={**os.environ, "PY": sys.executable}, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    made = r.stdout.strip().splitlines()[-1]
    assert os.path.dirname(made) == str(out) and os.path.exists(made), r.stdout
    # the build folder's own module is left as it was (the script writes only into its folder: the
    # link's strip step once hit the local module)
    assert {f: os.stat(f).st_mtime_ns for f in own} == before
    pkg = tmp_path / "pkg"
    shutil.copytree(os.path.join(ROOT, "python", "bwprof"), pkg / "bwprof",
                    ignore=shutil.ignore_patterns("_core*.so", "__pycache__"))
    shutil.copy(made, pkg / "bwprof")
    code = ("import bwprof; m = bwprof.measure('stream_triad', device='cpu', n=4096, repeats=1); "
            "assert m.verified; print(bwprof.__file__)")
    r = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": str(pkg)},
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().startswith(str(pkg)), r.stdout


def test_module_for_says_what_is_missing(tmp_path):
    (tmp_path / "build.ninja").write_text("")
    r = subprocess.run(["bash", os.path.join(ROOT, "mk", "module_for.sh"), str(tmp_path), str(tmp_path / "o")],
                       cwd=ROOT, env={**os.environ, "PY": sys.executable}, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "module_for:" in r.stderr or "ninja" in r.stderr, r.stderr
