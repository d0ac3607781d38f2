"""A GPU this build has no code for: listed by devices(), refused by its first use with one clear
BwprofError (issue 46). The choice is the core's gpu_code_missing(), driven here with fake devices;
on a GPU, the build's own architectures are checked to cover it."""
import subprocess
import sys
from pathlib import Path

import pytest

import bwprof
from bwprof import _core

DEFAULT = ["80-real", "90a-real", "100-real", "120-real"]  # the default build's general code


@pytest.mark.parametrize("arch, name", [
    ("sm_80", "NVIDIA A100-SXM4-80GB"), ("sm_86", "NVIDIA A10"), ("sm_86", "NVIDIA GeForce RTX 3090"),
    ("sm_89", "NVIDIA L4"), ("sm_89", "NVIDIA GeForce RTX 4090"), ("sm_90", "NVIDIA H200"),
    ("sm_100", "NVIDIA B200"), ("sm_103", "NVIDIA B300"), ("sm_120", "NVIDIA GeForce RTX 5090"),
    ("sm_121", "NVIDIA GB10"),
])
def test_the_default_build_covers_ampere_to_blackwell(arch, name):
    assert _core.gpu_code_missing(f"gpu:0 ({name})", arch, DEFAULT) == ""


@pytest.mark.parametrize("arch, built, command", [
    ("sm_86", ["90a-real", "90-virtual"], "CUDAARCHS=86 pip install --no-build-isolation ."),
    ("sm_90", ["80-real", "86-real"], "CUDAARCHS=90a pip install --no-build-isolation ."),
    ("sm_110", DEFAULT, "CUDAARCHS=110 pip install --no-build-isolation ."),
    ("sm_75", DEFAULT, "CUDAARCHS=75 pip install --no-build-isolation ."),
    ("gfx1030", ["gfx90a", "gfx942"], "pip install --no-build-isolation . -C cmake.define.BWPROF_HIP_TARGETS=gfx1030"),
])
def test_a_fake_gpu_without_code_gets_its_arch_the_build_and_the_command(arch, built, command):
    msg = _core.gpu_code_missing("gpu:0 (a fake GPU)", arch, built)
    assert msg.startswith(f"gpu:0 (a fake GPU) is {arch}, and this bwprof module has no GPU code for it"), msg
    assert msg.endswith(command), msg
    for b in built:
        shown = b if b.startswith("gfx") else ("compute_" if b.endswith("virtual") else "sm_") + b.split("-")[0]
        assert shown in msg, (shown, msg)


def test_the_build_says_what_it_was_built_for():
    archs = _core.gpu_architectures()
    if not bwprof.GPU_BUILD:
        assert archs == []
        return
    assert archs, "a GPU build names its architectures"
    for a in archs:  # CMake's CUDA spelling, or an AMD target
        assert a.startswith("gfx") or a.endswith(("-real", "-virtual")), a


def test_the_cpu_never_needs_gpu_code():
    assert _core.require_device("cpu")["kind"] == "cpu"
    with pytest.raises(ValueError, match="device: unknown or absent device 'gpu:7'"):
        _core.require_device("gpu:7")


def test_a_cuda_build_s_architectures_are_those_its_cmake_chose(tmp_path):
    # cmake/cuda_architectures.cmake's groups, run by CMake's script mode: the general files once per
    # major version (the lowest minor), Hopper-only files for sm_90a, and its first entry without it.
    script = tmp_path / "groups.cmake"
    root = Path(__file__).resolve().parents[2]
    script.write_text(
        f'include("{root}/cmake/cuda_architectures.cmake")\n'
        'foreach(list IN ITEMS "80-real,89-real,90a-real,100-real,120-real" "86-real,80-real" '
        '"89-real,120-virtual" "100-real,103-real,90-virtual")\n'
        '  string(REPLACE "," ";" archs "${list}")\n'
        '  bwprof_cuda_arch_groups("${archs}" g h)\n'
        '  message(STATUS "[${archs}] [${g}] [${h}]")\n'
        'endforeach()\n')
    r = subprocess.run(["cmake", "-P", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = [line.removeprefix("-- ") for line in r.stdout.splitlines()]
    assert lines == [
        "[80-real;89-real;90a-real;100-real;120-real] [80-real;90a-real;100-real;120-real] [90a-real]",
        "[86-real;80-real] [80-real] [86-real]",
        "[89-real;120-virtual] [89-real;120-virtual] [89-real]",
        "[100-real;103-real;90-virtual] [100-real;90-virtual] [100-real]",
    ], r.stdout


@pytest.mark.gpu
def test_this_gpu_has_code_and_its_first_use_works():
    for d in bwprof.devices():
        if d.kind == "gpu":
            assert _core.gpu_code_missing(d.id, d.arch, _core.gpu_architectures()) == "", d
            assert _core.require_device(d.id)["arch"] == d.arch
    assert bwprof.measure("stream_copy", device="gpu", n=1 << 20, repeats=3).verified


def test_a_module_without_code_for_the_gpu_still_imports_and_lists_it():
    # What a user on an uncovered GPU runs first: the import and devices() never fail for it.
    r = subprocess.run([sys.executable, "-c", "import bwprof; print(len(bwprof.devices()))"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and int(r.stdout) >= 1, r.stderr
