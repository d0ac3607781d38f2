"""bwprof's occupancy calculator against the CUDA runtime's own occupancy API on a real GPU.

tests/gpu/occupancy_check.cu asks cudaOccupancyMaxActiveBlocksPerMultiprocessor about ~19 kernels
(real register counts 12..207, some with static shared memory) x 32 block sizes x up to 23
dynamic shared-memory sizes; every answer must equal bwprof.occupancy(<the device's sm_XY>, ...).

How to run it on a machine with an NVIDIA GPU and the CUDA toolkit (nvcc on PATH or in
/usr/local/cuda/bin):

    make build
    python3 -m pytest -q tests/python/test_occupancy_gpu.py      # needs a GPU build of bwprof:
                                                                 # conftest skips `gpu` tests otherwise
    PYTHONPATH=python python3 tests/python/test_occupancy_gpu.py # runs with any build; exit 1 on a mismatch

Only nvcc and the CUDA runtime are needed; no bwprof GPU backend.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "tests", "gpu", "occupancy_check.cu")


def find_nvcc():
    return shutil.which("nvcc") or next(
        (p for p in ("/usr/local/cuda/bin/nvcc",) if os.access(p, os.X_OK)), None)


def has_nvidia_gpu():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    r = subprocess.run([smi, "-L"], capture_output=True, text=True)
    return r.returncode == 0 and "GPU" in r.stdout


def run_check(workdir):
    """Compile and run the checker; returns (device properties dict, [(threads, regs, smem, blocks)])."""
    nvcc = find_nvcc()
    exe = os.path.join(workdir, "occupancy_check")
    errors = []
    for arch in ("-arch=native", "-arch=sm_90"):
        r = subprocess.run([nvcc, "-O2", arch, "-o", exe, SOURCE], capture_output=True, text=True)
        if r.returncode == 0:
            break
        errors.append(r.stderr)
    else:
        raise RuntimeError("nvcc failed:\n" + "\n".join(errors))
    r = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"occupancy_check failed ({r.returncode}): {r.stderr}")
    props, rows = {}, []
    for line in r.stdout.splitlines():
        if line.startswith("# kernel,"):
            continue
        if line.startswith("# "):
            key, _, value = line[2:].partition(",")
            props[key] = value
        elif line and line[0].isdigit():
            rows.append(tuple(int(x) for x in line.split(",")))
    return props, rows


def compare(props, rows):
    """Every disagreement between the runtime and bwprof, as readable lines (empty: all agree)."""
    import bwprof
    from bwprof.occupancy import occupancy_archs

    major, minor = props["compute_capability"].split(".")
    arch = f"sm_{major}{minor}"
    problems = []
    if arch not in occupancy_archs():
        return [f"{arch} ({props['device']}) is not in bwprof's table"]

    # The device's own figures against the table.
    small = bwprof.occupancy(arch, 32, 16, 0)
    if small.max_warps != int(props["maxThreadsPerMultiProcessor"]) // 32:
        problems.append(f"max warps {small.max_warps} != {props['maxThreadsPerMultiProcessor']} / 32")
    if small.limits["block_slots"] != int(props["maxBlocksPerMultiProcessor"]):
        problems.append(f"block slots {small.limits['block_slots']} != {props['maxBlocksPerMultiProcessor']}")
    optin, reserved = int(props["sharedMemPerBlockOptin"]), int(props["reservedSharedMemPerBlock"])
    biggest = bwprof.occupancy(arch, 32, 16, optin)
    if biggest.shared_mem_allocated_per_block != optin + reserved:
        problems.append(f"largest block allocates {biggest.shared_mem_allocated_per_block}, "
                        f"expected {optin} + {reserved}")
    if biggest.shared_mem_carveout != int(props["sharedMemPerMultiprocessor"]):
        problems.append(f"largest carve-out {biggest.shared_mem_carveout} != {props['sharedMemPerMultiprocessor']}")

    for threads, regs, smem, blocks in rows:
        ours = bwprof.occupancy(arch, threads, regs, smem).active_blocks
        expected = 0 if blocks < 0 else blocks  # an API error means the block cannot launch
        if ours != expected:
            problems.append(f"threads={threads} regs={regs} smem={smem}: runtime {blocks}, bwprof {ours}")
    return problems


needs_cuda = pytest.mark.skipif(not (find_nvcc() and has_nvidia_gpu()),
                                reason="needs nvcc and an NVIDIA GPU")


@pytest.mark.gpu
@needs_cuda
def test_calculator_matches_the_cuda_occupancy_api(tmp_path):
    props, rows = run_check(str(tmp_path))
    assert len(rows) > 1000
    problems = compare(props, rows)
    assert not problems, f"{len(problems)} of {len(rows)} disagree on {props['device']}:\n" + "\n".join(problems[:40])


def main():
    if not find_nvcc():
        print("nvcc not found (PATH or /usr/local/cuda/bin)", file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.join(ROOT, "python"))
    with tempfile.TemporaryDirectory() as d:
        try:
            props, rows = run_check(d)
        except RuntimeError as e:
            print(e, file=sys.stderr)
            return 2
    problems = compare(props, rows)
    regs = sorted({r[1] for r in rows})
    print(f"{props['device']} (cc {props['compute_capability']}): {len(rows)} configurations, "
          f"register counts {regs}")
    for p in problems[:100]:
        print("MISMATCH " + p)
    print(f"{len(problems)} disagreement(s) in {len(rows)} configurations and the device's figures")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
