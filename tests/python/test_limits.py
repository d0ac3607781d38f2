"""The core's limits seen from Python (issue #12): every parameter in its range, every family's
memory checked before anything is allocated, one launch's work bounded, Ctrl-C heard between
launches. Shapes up to 2^45 elements for every family on the CPU give a row or a clear error, never
a kill: the test lowers what counts as available (BWPROF_MEMORY_LIMIT) so that whatever it draws
stays within a few hundred MB."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bwprof
from bwprof import _core

TINY = dict(warmup=0, repeats=1, max_repeats=1, min_time_s=0.0, max_time_s=0.0)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = {k["name"]: k for k in _core.kernels()}
GPU = any(d.kind == "gpu" for d in bwprof.devices())


def test_numpy_integers_are_shapes_and_a_value_out_of_range_names_everything():
    d = bwprof.measure("stream_copy", device="cpu", n=np.int64(1024), **TINY).to_dict()
    assert d["shape"] == "n=1024" and d["verified"]
    with pytest.raises(ValueError, match=r"^n: 1000000000000 is out of range for kernel 'stream_copy' "
                                         r"\(n must be between 1 and 68719476736\)$"):
        bwprof.measure("stream_copy", device="cpu", n=10**12, **TINY)
    with pytest.raises(ValueError, match=r"^fmas: 36028797018963968 is out of range for kernel 'intensity_sweep' "
                                         r"\(fmas must be between 1 and 1048576\)$"):
        bwprof.measure("intensity_sweep", device="cpu", fmas=2**55, **TINY)


def test_every_integer_parameter_lists_its_range():
    for k in KERNELS.values():
        for p in k["params"]:
            if p["kind"] != "int":
                assert "min" not in p
                continue
            assert 0 <= p["min"] <= p["max"] <= 2**36, (k["name"], p)
            if p["default"] == "auto":  # a kernel choice: the dispatch's own unless set
                assert p["allows_auto"], (k["name"], p)
            elif p["default"]:
                assert p["min"] <= int(p["default"]) <= p["max"], (k["name"], p)


def test_one_launch_of_hours_is_refused_before_it_starts():
    # The example: fmas far beyond what a launch does in a minute (at 32 GFLOP/s a thread).
    t0 = time.monotonic()
    with pytest.raises(ValueError, match=r"^shape: kernel 'intensity_sweep' fp32 n=16777216,fmas=1048576 would take "
                                         r"at least [0-9.]+ s per launch on cpu, more than the bound of 60 s "
                                         r"\(BWPROF_MAX_LAUNCH_S raises it\)$"):
        bwprof.measure("intensity_sweep", device="cpu", fmas=2**20, **TINY)
    assert time.monotonic() - t0 < 30  # refused, not run (a launch would take minutes)


def test_the_launch_bound_is_an_environment_setting(monkeypatch):
    monkeypatch.setenv("BWPROF_MAX_LAUNCH_S", "1e-9")
    with pytest.raises(ValueError, match="more than the bound of 1e-09 s"):
        bwprof.measure("stream_copy", device="cpu", n=4096, **TINY)
    monkeypatch.setenv("BWPROF_MAX_LAUNCH_S", "never")
    with pytest.raises(ValueError, match="BWPROF_MAX_LAUNCH_S=never: expected a positive number"):
        bwprof.measure("stream_copy", device="cpu", n=4096, **TINY)


def test_arrays_that_fit_one_by_one_but_not_together_are_a_memory_error(monkeypatch):
    bwprof.peaks("cpu")  # before the limit: the peaks' own arrays take 100 MB
    monkeypatch.setenv("BWPROF_MEMORY_LIMIT", "100e6")
    # stream_add's three arrays of 32 MiB: one fits in 100 MB, three do not.
    with pytest.raises(MemoryError, match=r"^out of host memory: kernel 'stream_add' fp32 n=8388608 needs 0.101 GB "
                                          r"of host memory, 0.1 GB available$"):
        bwprof.measure("stream_add", device="cpu", n=8388608, **TINY)
    assert bwprof.measure("stream_add", device="cpu", n=8388608 // 3, **TINY).to_dict()["verified"]
    monkeypatch.setenv("BWPROF_MEMORY_LIMIT", "plenty")
    with pytest.raises(ValueError, match="BWPROF_MEMORY_LIMIT=plenty: expected a positive number"):
        bwprof.measure("stream_add", device="cpu", n=1024, **TINY)
    for bad in ("nan", "-1", "0", "1e9x", " 5"):  # no undefined, negative or partly read limit either
        monkeypatch.setenv("BWPROF_MEMORY_LIMIT", bad)
        with pytest.raises(ValueError, match=f"BWPROF_MEMORY_LIMIT={bad}: expected a positive number"):
            bwprof.measure("stream_add", device="cpu", n=1024, **TINY)


# ---- any shape, every family, on the CPU ---------------------------------------------------------

sizes = st.one_of(st.integers(1, 64), st.integers(1, 2**12), st.integers(1, 2**45),
                  st.sampled_from([2**k for k in range(10, 46)]), st.sampled_from([0, -1, 2**24 + 1, 2**36 + 1]))


def _shape_strategy(kernel):
    """Every integer parameter drawn from any size up to 2^45 (and some just outside the ranges);
    the others at their defaults."""
    ints = [p["name"] for p in KERNELS[kernel]["params"] if p["kind"] == "int"]
    return st.fixed_dictionaries({n: sizes for n in ints})


@pytest.fixture
def small_machine(monkeypatch):
    bwprof.peaks("cpu")  # measured before the limits bite
    monkeypatch.setenv("BWPROF_MEMORY_LIMIT", str(256 << 20))
    monkeypatch.setenv("BWPROF_MAX_LAUNCH_S", "0.05")


ON_CPU = sorted(k for k, d in KERNELS.items() if any(v["backend"] == "cpu" for v in d["variants"]))


@pytest.mark.parametrize("kernel", ON_CPU)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_shape_of_every_family_is_a_row_or_a_clear_error(kernel, data, small_machine):
    shape = data.draw(_shape_strategy(kernel))
    names = list(shape) + ["shape"]
    cpu = next(v for v in KERNELS[kernel]["variants"] if v["backend"] == "cpu")
    for dtype in cpu["dtypes"]:
        try:
            d = bwprof.measure(kernel, device="cpu", dtype=dtype, **TINY, **shape).to_dict()
        except MemoryError as e:
            assert str(e).startswith("out of host memory: kernel '" + kernel + "'"), e
            assert " needs " in str(e) and " available" in str(e), e
        except ValueError as e:
            assert any(str(e).startswith(n + ":") or f" {n}" in str(e) or f"{n}=" in str(e) for n in names), e
        else:
            assert d["verified"], d
            for name, value in shape.items():  # a parameter that runs is the value drawn (or derived from it)
                if name not in ("kv_heads", "seq_kv"):
                    assert f"{name}={value}" in d["shape"].split(","), (name, value, d["shape"])


# ---- Ctrl-C ----------------------------------------------------------------------------------------

def _interrupt_during_measure(device: str):
    """Runs a measurement of days (a million repeats, a day's minimum time) in a child, sends it
    SIGINT a second into the timed runs, and returns (exit status, seconds from SIGINT to exit,
    stderr)."""
    code = textwrap.dedent(f"""
        import sys, bwprof
        bwprof.measure("stream_copy", device="{device}", n=1 << 16, repeats=1)  # peaks and warm-up
        print("go", flush=True)
        bwprof.measure("stream_copy", device="{device}", n=1 << 20, repeats=10**6, max_repeats=10**6,
                       min_time_s=86400, max_time_s=86400, max_total_s=float("inf"))  # days, on purpose
        print("finished", flush=True)
    """)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # A job started in the background of a shell ignores SIGINT, and its children inherit that:
    # the child gets Python's default handling back, as an interactive run has.
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.default_int_handler))
    try:
        assert child.stdout.readline().strip() == "go", child.stderr.read()
        time.sleep(1.0)
        t0 = time.monotonic()
        child.send_signal(signal.SIGINT)
        rc = child.wait(timeout=60)
        elapsed = time.monotonic() - t0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return rc, elapsed, child.stdout.read(), child.stderr.read()


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.skipif(not GPU, reason="no GPU"))])
def test_ctrl_c_stops_a_long_measurement(device):
    rc, elapsed, out, err = _interrupt_during_measure(device)
    assert "finished" not in out
    assert rc != 0 and "KeyboardInterrupt" in err, err[-2000:]
    # Heard between launches: within a few seconds (a generous bound, not a timing test; without
    # the check the child would measure for a day).
    assert elapsed < 10, elapsed


@pytest.mark.parametrize("threads,want", [("3", "3"), ("0", "BWPROF_CPU_THREADS=0: expected an integer from 1 to 4096"),
                                          ("many", "BWPROF_CPU_THREADS=many: expected an integer from 1 to 4096"),
                                          ("4 ", "BWPROF_CPU_THREADS=4 : expected an integer from 1 to 4096")])
def test_the_cpu_thread_count_is_read_whole_or_refused(threads, want):
    # A process of its own: the count is read once per process. atoi took "many" and "0" for the machine's count.
    code = "import bwprof; print(bwprof.device('cpu').info['compute_units'])"
    env = dict(os.environ, BWPROF_CPU_THREADS=threads, PYTHONPATH=os.path.join(ROOT, "python"))
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    if want.isdigit():
        assert p.returncode == 0 and p.stdout.strip() == want, p.stderr
    else:
        assert p.returncode != 0 and want in p.stderr and "ValueError" in p.stderr, p.stderr
