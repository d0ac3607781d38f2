"""mk/attn_verify.sh: the attention kernels' check on the GPU machine from a carried module and test
binary. Its steps need a GPU; checked here: it refuses, with a message that says what to do, to start
without what it needs (no log folder, no module, a module for another Python), before touching the tree."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "mk", "attn_verify.sh")


def run(carry, out=None):
    env = {k: v for k, v in os.environ.items() if k != "OUT"}
    env["PYTHON"] = sys.executable
    if out is not None:
        env["OUT"] = str(out)
    return subprocess.run(["bash", SCRIPT, str(carry)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)


def test_attn_verify_wants_a_log_folder(tmp_path):
    r = run(tmp_path)
    assert r.returncode == 2 and "set OUT" in r.stderr


def test_attn_verify_wants_the_module_and_the_test_binary(tmp_path):
    r = run(tmp_path, tmp_path / "out")
    assert r.returncode == 2 and "no _core*.so.gz" in r.stderr and "module_for.sh" in r.stderr
    (tmp_path / "_core.cpython-312-x86_64-linux-gnu.so.gz").write_bytes(b"")
    r = run(tmp_path, tmp_path / "out")
    assert r.returncode == 2 and "no tests.gz" in r.stderr


def test_attn_verify_names_a_module_for_another_python(tmp_path):
    other = "_core.cpython-399-x86_64-linux-gnu.so.gz"
    (tmp_path / other).write_bytes(b"")
    (tmp_path / "tests.gz").write_bytes(b"")
    before = sorted(os.listdir(os.path.join(ROOT, "python", "bwprof")))
    r = run(tmp_path, tmp_path / "out")
    assert r.returncode == 2 and other in r.stderr and "for " + sys.executable in r.stderr
    assert sorted(os.listdir(os.path.join(ROOT, "python", "bwprof"))) == before  # nothing unpacked


def test_attn_verify_takes_xz_too(tmp_path):
    other = "_core.cpython-399-x86_64-linux-gnu.so.xz"
    (tmp_path / other).write_bytes(b"")
    r = run(tmp_path, tmp_path / "out")
    assert r.returncode == 2 and "no tests.gz or tests.xz" in r.stderr  # the module was found
    (tmp_path / "tests.xz").write_bytes(b"")
    r = run(tmp_path, tmp_path / "out")
    assert r.returncode == 2 and other in r.stderr and "for " + sys.executable in r.stderr


CARRY_SCRIPT = os.path.join(ROOT, "mk", "attn_carry.sh")


def test_attn_carry_wants_a_build_and_the_gpu_machines_python(tmp_path):
    """mk/attn_carry.sh (which makes the folder on the CPU machine) refuses to start without a build folder's
    test binary, or without the Python it builds the module for, and writes nothing then."""
    carry = tmp_path / "carry"
    r = subprocess.run(["bash", CARRY_SCRIPT, str(tmp_path / "nobuild"), str(carry)], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "make build first" in r.stderr
    build = tmp_path / "build"
    build.mkdir()
    (build / "bwprof_tests").write_text("#!/bin/sh\n")
    (build / "bwprof_tests").chmod(0o755)
    env = dict(os.environ, PY="no-such-python3.99")
    r = subprocess.run(["bash", CARRY_SCRIPT, str(build), str(carry)], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "no no-such-python3.99" in r.stderr
    assert not carry.exists()
