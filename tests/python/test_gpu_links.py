"""Transfers, peer copies and collectives on GPUs, against their exact or float64 reference
(skipped without a GPU; the collectives also without NCCL/RCCL, the peer and multi-process cases
with fewer than two GPUs). Run with NCCL_NVLS_ENABLE=0, as every bwprof test and benchmark runs."""
import os
import socket
import subprocess
import sys

import pytest

import bwprof
from bwprof.collective import busbw_factor, collectives, library
from bwprof.distributed import Launch
from bwprof.suite import run_suite

pytestmark = pytest.mark.gpu
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
Q = dict(repeats=3, min_time_s=0.0, warmup=1)
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")


def _gpus():
    return [d.id for d in bwprof.devices() if d.kind == "gpu"]


def _nccl():
    try:
        return library()
    except ValueError as e:
        pytest.skip(f"no collective library: {e}")


@pytest.mark.parametrize("size", [1, 4095, 1 << 20, (16 << 20) + 7])
@pytest.mark.parametrize("kind, variant", [("h2d", "pinned"), ("h2d", "pageable"), ("d2h", "pinned"),
                                           ("d2h", "pageable"), ("d2d", None), ("memset", None)])
def test_transfers_are_exact_and_say_what_bounds_them(kind, variant, size):
    m = bwprof.measure(kind, variant=variant, device="gpu:0", bytes=size, **Q)
    r = m.to_dict()
    assert r["verified"], r
    assert r["max_rel_error"] == 0.0
    if kind in ("h2d", "d2h"):
        assert r["link"] and r["bytes_written"] == size and r["bytes_read"] == 0
        assert r["bound"] in ("link", "latency", "unknown")
        assert r["flops"] == 0
    else:
        assert r["link"] == ""
        assert r["bytes_written"] == size and r["bytes_read"] == (size if kind == "d2d" else 0)


def test_the_gpu_reports_its_host_link():
    info = bwprof.device("gpu:0").info
    assert info["pci_bus_id"].count(":") == 2
    assert info["host_link"].startswith(("PCIe", "NVLink-C2C"))
    if info["host_link"] != "PCIe":  # a generation and width were read
        assert info["host_link_gbs"] > 0


def test_bench_transfers_on_every_gpu(tmp_path):
    df = run_suite(device="all", kernels=["transfer"], quick=True, progress=False)
    assert sorted(set(df["device"])) == sorted(_gpus())
    assert df["verified"].astype(bool).all() and not df.attrs["errors"]
    host = df[df["kernel"].isin(["h2d", "d2h"])]
    assert set(host["variant"]) == {"pinned", "pageable"}
    paths = bwprof.plots.plot_all(df, tmp_path)
    assert tmp_path / "transfers.png" in paths


@pytest.mark.parametrize("kernel", COLLECTIVES)
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_collectives_over_this_process_gpus_match_the_reference(kernel, dtype):
    _nccl()
    n = len(_gpus())
    df = collectives([kernel], [dtype], [1000, 65540, 1 << 20], repeats=3, warmup=1, launch=Launch())
    assert df["verified"].astype(bool).all(), df[["shape", "max_rel_error"]]
    assert (df["ranks"] == n).all()
    f = busbw_factor(kernel, n)
    assert ((df["busbw_gbs"] - df["algbw_gbs"] * f).abs() < 1e-9).all()
    # Sizes rounded down to whole elements per rank, as nccl-tests does.
    unit = (4 if dtype == "fp32" else 2) * (n if kernel in ("all_gather", "reduce_scatter", "all_to_all") else 1)
    assert list(df["size_bytes"]) == [s // unit * unit for s in (1000, 65540, 1 << 20)]


def test_collective_errors_name_the_argument():
    _nccl()
    n = len(_gpus())
    with pytest.raises(ValueError, match="ranks"):
        bwprof.measure("all_reduce", device="gpu:0", ranks=n + 1, **Q)
    with pytest.raises(ValueError, match="bytes"):  # less than one FP32 element per rank
        bwprof.measure("all_gather", device="gpu:0", bytes=2, **Q)


def test_peer_copies_between_every_pair():
    if len(_gpus()) < 2:
        pytest.skip("fewer than two GPUs")
    df = bwprof.p2p(1 << 20, repeats=3)
    n = len(_gpus())
    assert len(df) == 2 * n * (n - 1)
    assert df["verified"].astype(bool).all()
    assert (df["link"] != "").all()
    m = bwprof.p2p_matrix(df, direction="bi")
    assert m.shape == (n, n)
    links = bwprof.peer_links()
    assert len(links) == n * (n - 1)


def test_a_peer_copy_needs_two_gpus():
    if len(_gpus()) >= 2:
        pytest.skip("this node has two GPUs")
    with pytest.raises(ValueError, match="two GPUs"):
        bwprof.p2p(1 << 20)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_join_one_nccl_job_and_rank_0_writes(tmp_path):
    if len(_gpus()) < 2:
        pytest.skip("fewer than two GPUs")
    _nccl()
    port, out = _free_port(), tmp_path / "runs"
    base = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                WORLD_SIZE="2", BWPROF_STORE="tcp")
    procs = [subprocess.Popen([sys.executable, "-m", "bwprof", "collectives", "--quick", "--dtypes", "fp32", "bf16",
                               "--repeats", "5", "--out", str(out), "--no-plots"],
                              env=dict(base, RANK=str(r), LOCAL_RANK=str(r)), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r in range(2)]
    for p in procs:
        o, e = p.communicate(timeout=300)
        assert p.returncode == 0, e
    runs = list(out.iterdir())
    assert len(runs) == 1
    df = bwprof.load_run(runs[0])
    assert len(df) == 5 * 2 * 4
    assert df["verified"].astype(bool).all()
    assert (df["ranks"] == 2).all() and set(df["variant"]) <= {"nccl", "rccl"}
