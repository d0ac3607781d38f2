"""Transfers, peer copies and collectives on the CPU machine: the families are listed, asking for
them without a GPU is a clear error, a row bound by its link is judged against it, the launcher
bootstrap works with two processes (the CPU's stand-in communicator over the same rendezvous, rank
0 the only writer), and the charts draw. GPU cases: tests/python/test_gpu_links.py."""
import json
import os
import socket
import subprocess
import sys
import threading

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import bwprof
from bwprof import _core, distributed as dist, roofline
from bwprof.collective import busbw_factor, collectives, parse_size
from bwprof.suite import all_configs, default_suite, run_suite, select

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRANSFERS = ("h2d", "d2h", "d2d", "memset")
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")


def _kernels():
    return {k["name"]: k for k in _core.kernels()}


def test_the_families_are_listed_with_their_variants_and_suites():
    ks = _kernels()
    for name in TRANSFERS + ("p2p_copy",) + COLLECTIVES:
        assert name in ks, name
        assert all(v["backend"] == "gpu" for v in ks[name]["variants"]), name
    assert {k: ks[k]["family"] for k in TRANSFERS} == dict.fromkeys(TRANSFERS, "transfer")
    assert all(ks[c]["family"] == "collective" for c in COLLECTIVES)
    assert ks["all_reduce"]["dtypes"] == ["fp32", "fp16", "bf16"]
    if _core.GPU_BUILD:
        assert [v["name"] for v in ks["h2d"]["variants"]] == ["pinned", "pageable"]
        assert [v["name"] for v in ks["all_reduce"]["variants"]] in (["nccl"], ["rccl"])
    else:
        assert ks["h2d"]["variants"] == []
    # Host copies from 4 KB to 1 GB, pinned and pageable, in the default suite; peer copies and
    # collectives only when asked for.
    sizes = sorted(c["params"]["bytes"] for c in ks["h2d"]["suite"])
    assert sizes[0] == 4096 and sizes[-1] == 1 << 30
    assert all(c["variants"] == ["pinned", "pageable"] for c in ks["d2h"]["suite"])
    assert ks["h2d"]["default_suite"] and not ks["p2p_copy"]["default_suite"]
    assert not any(ks[c]["default_suite"] for c in COLLECTIVES)
    coll_sizes = sorted(c["params"]["bytes"] for c in ks["broadcast"]["suite"])
    assert coll_sizes[0] == 1024 and coll_sizes[-1] == 1 << 30


def test_the_default_suite_leaves_out_peer_copies_and_collectives_but_names_reach_them():
    kernels = {c.kernel for c in default_suite()}
    assert set(TRANSFERS) <= kernels
    assert not kernels & set(COLLECTIVES + ("p2p_copy",))
    every = all_configs()
    assert {c.kernel for c in select(every, ["all_reduce"])} == {"all_reduce"}
    assert {c.kernel for c in select(every, ["allreduce"])} == {"all_reduce"}  # underscores optional
    assert {c.kernel for c in select(every, ["collective"])} == set(COLLECTIVES)
    assert select(every, None) == default_suite()
    with pytest.raises(ValueError, match="unknown kernel or family"):
        select(every, ["allreduc"])


@pytest.mark.parametrize("kernel", TRANSFERS + ("p2p_copy",) + COLLECTIVES)
def test_asking_for_them_on_the_cpu_is_a_clear_error(kernel):
    with pytest.raises(ValueError) as e:
        bwprof.measure(kernel, device="cpu", repeats=1)
    text = str(e.value)
    assert kernel in text and ("gpu" in text or "GPU" in text), text


def test_a_suite_run_on_the_cpu_skips_them_once_per_kernel():
    df = run_suite(device="cpu", kernels=["transfer"], quick=True, progress=False)
    assert len(df) == 0 and df.attrs["errors"] == []
    skipped = df.attrs["skipped"]
    assert [s.split(" ")[0] for s in skipped] == list(TRANSFERS)
    assert all("no cpu implementation" in s for s in skipped)


def test_one_process_collectives_need_a_gpu_and_the_library_is_named_when_missing():
    with pytest.raises(ValueError, match="collectives run on GPUs"):
        collectives(["all_reduce"], ["fp32"], [4096], device="cpu", launch=dist.Launch())
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), BWPROF_NCCL_LIBRARY="/nowhere/libnccl.so.2")
    code = "import bwprof.collective as c\ntry:\n    c.library()\nexcept ValueError as e:\n    print(e)\n"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "/nowhere/libnccl.so.2" in out.stdout or "no GPU support" in out.stdout, out.stdout


@pytest.mark.parametrize("bad, match", [
    (dict(collectives=["allreduce2"]), "unknown collective"),
    (dict(dtypes=["int8"]), "unknown dtype"),
    (dict(sizes=[0]), "sizes"),
    (dict(sizes=["12Q"]), "sizes"),
    (dict(repeats=0), "repeats"),
    (dict(launch="rank0"), "launch"),
])
def test_collectives_reject_bad_arguments_naming_them(bad, match):
    kw = dict(collectives=["all_reduce"], dtypes=["fp32"], sizes=[4096], device="cpu", launch=dist.Launch())
    kw.update(bad)
    with pytest.raises(ValueError, match=match):
        collectives(**kw)


def test_sizes_and_bus_bandwidth_factors():
    assert [parse_size(s) for s in ("4096", "4K", "64KB", "1M", "1MiB", "1G")] == \
        [4096, 4096, 65536, 1 << 20, 1 << 20, 1 << 30]
    assert busbw_factor("all_reduce", 8) == pytest.approx(1.75)
    assert busbw_factor("all_gather", 2) == pytest.approx(0.5)
    assert busbw_factor("reduce_scatter", 4) == pytest.approx(0.75)
    assert busbw_factor("all_to_all", 8) == pytest.approx(0.875)
    assert busbw_factor("broadcast", 8) == 1.0
    with pytest.raises(ValueError):
        busbw_factor("gemm", 2)


def test_a_link_row_is_judged_against_its_link_also_when_re_judged():
    j = _core.judge({"bytes": [1e9, 4096.0], "time_us": [20000.0, 8.0], "bandwidth_roof_gbs": [63.0, 63.0],
                     "bandwidth_theoretical_gbs": [63.0, 63.0], "link": ["PCIe 5.0 x16", "PCIe 5.0 x16"]})
    assert j["bound"] == ["link", "latency"]
    assert j["bandwidth_pct_peak"][0] == pytest.approx(100 * 50 / 63)
    assert "PCIe 5.0 x16" in j["bottleneck"][0] and "link-bound" in j["bottleneck"][0]
    # classify() keeps a transfer on its link even against a device's memory ceilings.
    row = {c: None for c in _core.columns()}
    row.update(kernel="h2d", family="transfer", variant="pinned", dtype="fp32", shape="bytes=1000000000",
               time_median_us=20000.0, bytes_read=0.0, bytes_written=1e9, flops=0.0, bandwidth_gbs=50.0,
               peak_bandwidth_gbs=63.0, theoretical_bandwidth_gbs=63.0, link="PCIe 5.0 x16", cache="cold",
               access_pattern="coalesced", peak_bandwidth_source="theoretical:pcie", peak_compute_source="",
               peak_gflops=0.0)
    df = pd.DataFrame([row])
    assert roofline.classify(df)["bound"].tolist() == ["link"]
    ceilings = roofline.ceilings({"bandwidth_gbs": 3000.0, "bandwidth_theoretical_gbs": 3350.0,
                                         "gflops": 5e4, "bandwidth_source": "measured:stream_triad",
                                         "compute_source": "measured:fma_chain_fp32"}, ["fp32"])
    judged = roofline.classify(df, ceilings)
    assert judged["bound"].tolist() == ["link"]


def test_the_link_column_sits_in_the_schema():
    cols = list(_core.columns())
    assert cols.index("link") == cols.index("theoretical_bandwidth_gbs") + 1


# ---- the launcher's environment -----------------------------------------------------------------

@pytest.mark.parametrize("env, want", [
    ({}, dist.Launch()),
    ({"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "TORCHELASTIC_RUN_ID": "abc"},
     dist.Launch(3, 8, 1, "torchrun", "abc")),
    ({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "1"},
     dist.Launch(1, 2, 1, "mpirun", "")),
    ({"PMI_RANK": "2", "PMI_SIZE": "4", "MPI_LOCALRANKID": "0"}, dist.Launch(2, 4, 0, "mpirun", "")),
    ({"SLURM_PROCID": "5", "SLURM_STEP_NUM_TASKS": "16", "SLURM_LOCALID": "1", "SLURM_JOB_ID": "77",
      "SLURM_STEP_ID": "0"}, dist.Launch(5, 16, 1, "srun", "77.0")),
    # An sbatch script outside srun is one process, whatever SLURM_NTASKS says.
    ({"SLURM_PROCID": "0", "SLURM_NTASKS": "16"}, dist.Launch()),
    ({"RANK": "0", "WORLD_SIZE": "2", "BWPROF_RUN_ID": "mine"}, dist.Launch(0, 2, 0, "torchrun", "mine")),
])
def test_launch_from_the_launchers_variables(env, want):
    assert dist.launch_from_env(env) == want


@pytest.mark.parametrize("env, match", [
    ({"RANK": "x", "WORLD_SIZE": "2"}, "RANK"),
    ({"RANK": "2", "WORLD_SIZE": "2"}, "RANK"),
    ({"RANK": "0", "WORLD_SIZE": "0"}, "WORLD_SIZE"),
    ({"OMPI_COMM_WORLD_RANK": "-1", "OMPI_COMM_WORLD_SIZE": "2"}, "OMPI_COMM_WORLD_RANK"),
])
def test_bad_launcher_variables_are_named(env, match):
    with pytest.raises(ValueError, match=match):
        dist.launch_from_env(env)


def test_rendezvous_says_what_to_set_when_nothing_is_there():
    with pytest.raises(ValueError, match="MASTER_ADDR"):
        dist.rendezvous(dist.Launch(1, 2, 1, "mpirun"), environ={})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@settings(max_examples=15, deadline=None)
@given(st.dictionaries(st.text("abcdefgh/_", min_size=1, max_size=12), st.binary(max_size=300), min_size=1, max_size=6))
def test_the_tcp_store_returns_what_was_set(items):
    port = _free_port()
    server = dist.TcpStore("127.0.0.1", port, True, timeout_s=10)
    client = dist.TcpStore("127.0.0.1", port, False, timeout_s=10)
    try:
        for k, v in items.items():
            server.set(k, v)
        for k, v in items.items():
            assert client.get(k, 5) == v
    finally:
        client.close()
        server.close()


@pytest.mark.parametrize("kind", ["tcp", "file"])
def test_share_gather_and_barrier_across_ranks(kind, tmp_path):
    world, port = 3, _free_port()
    results, errors = {}, []

    def rank(r):
        try:
            launch = dist.Launch(r, world, r, "mpirun", "t")
            env = {"BWPROF_RENDEZVOUS_DIR": str(tmp_path)} if kind == "file" else \
                {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
            store = dist.rendezvous(launch, environ=env, timeout_s=30)
            got = dist.share(store, launch, "id", lambda: b"\x00\x01job-id", 30)
            rows = dist.gather(store, launch, "rows", f"row of {r}".encode(), 30)
            dist.barrier(store, launch, "end", 30)
            results[r] = (got, rows)
            if r != 0:
                store.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert all(results[r][0] == b"\x00\x01job-id" for r in range(world))
    assert results[0][1] == [f"row of {r}".encode() for r in range(world)]
    assert results[1][1] is None and results[2][1] is None


def _two_ranks(tmp_path, env_of, args):
    base = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), BWPROF_STORE="tcp")
    procs = [subprocess.Popen([sys.executable, "-m", "bwprof", "collectives", *args], env={**base, **env_of(r)},
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(2)]
    outs = [p.communicate(timeout=240) for p in procs]
    return [(p.returncode, o, e) for p, (o, e) in zip(procs, outs)]


@pytest.mark.parametrize("launcher", ["torchrun", "mpirun-file"])
def test_two_processes_bootstrap_and_only_rank_0_writes(tmp_path, launcher):
    port = _free_port()
    out = tmp_path / "runs"

    def env_of(r):
        if launcher == "torchrun":
            return {"RANK": str(r), "WORLD_SIZE": "2", "LOCAL_RANK": str(r), "MASTER_ADDR": "127.0.0.1",
                    "MASTER_PORT": str(port)}
        return {"OMPI_COMM_WORLD_RANK": str(r), "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": str(r),
                "BWPROF_RENDEZVOUS_DIR": str(tmp_path / "rdv"), "BWPROF_RUN_ID": "test"}

    got = _two_ranks(tmp_path, env_of, ["--device", "cpu", "--dtypes", "fp32", "fp16", "--sizes", "4K", "96K",
                                        "--repeats", "3", "--warmup", "1", "--out", str(out), "--no-plots"])
    for rc, o, e in got:
        assert rc == 0, e
    runs = list(out.iterdir())
    assert len(runs) == 1, runs  # rank 0 alone wrote a run folder
    df = bwprof.load_run(runs[0])
    assert len(df) == 5 * 2 * 2
    assert set(df["kernel"]) == set(COLLECTIVES)
    assert df["verified"].astype(bool).all()
    assert (df["ranks"] == 2).all() and (df["device"] == "2 ranks").all()
    assert (df["variant"] == "store").all()
    # algbw and busbw as nccl-tests defines them.
    f = df["kernel"].map(lambda k: busbw_factor(k, 2))
    assert (df["busbw_gbs"] - df["algbw_gbs"] * f).abs().max() < 1e-9
    assert (df["algbw_gbs"] - df["size_bytes"] / (df["time_median_us"] * 1e-6) / 1e9).abs().max() < 1e-6
    assert "all_gather" in got[0][1] and got[1][1] == ""  # rank 0 prints the table, rank 1 nothing
    report = json.loads((runs[0] / "bandwidth_report.json").read_text())
    assert "busbw_gbs" in report["columns"]


def test_bench_device_all_measures_every_device_with_a_device_column(tmp_path):
    df = run_suite(device="all", kernels=["fill"], dtypes=["fp32"], quick=True, progress=False)
    want = [d.id for d in bwprof.devices() if d.kind == "gpu"] or ["cpu"]
    assert sorted(set(df["device"])) == sorted(want)
    assert df["verified"].astype(bool).all()


# ---- charts -------------------------------------------------------------------------------------

def _row(**kw):
    row = {c: None for c in _core.columns()}
    row.update(kw)
    return row


def test_the_link_charts_draw_and_skip_what_is_not_there(tmp_path):
    from bwprof import plots
    coll = pd.DataFrame([_row(kernel=k, family="collective", dtype=dt, shape=f"bytes={s},ranks=2",
                              bandwidth_gbs=s / 1e7, device="gpu:0", device_name="H200", size_bytes=s, ranks=2,
                              busbw_gbs=s / 1e7)
                         for k in ("all_reduce", "broadcast") for dt in ("fp32", "bf16") for s in (1024, 1 << 20)])
    fig = plots.collective_busbw(coll, tmp_path / "busbw")
    assert (tmp_path / "busbw.png").exists() and len(fig.axes) == 2
    p2p = pd.DataFrame([_row(kernel="p2p_copy", family="p2p", src=f"gpu:{a}", dst=f"gpu:{b}", direction=d,
                             bandwidth_gbs=300.0 + a, link="NVLink x18", device_name="H200")
                        for d in ("uni", "bi") for a in range(3) for b in range(3) if a != b])
    plots.p2p_heatmap(p2p, tmp_path / "p2p", direction="bi")
    assert (tmp_path / "p2p.svg").exists()
    m = bwprof.p2p_matrix(p2p)
    assert list(m.index) == ["gpu:0", "gpu:1", "gpu:2"] and pd.isna(m.loc["gpu:1", "gpu:1"])
    assert m.loc["gpu:2", "gpu:0"] == 302.0
    tr = pd.DataFrame([_row(kernel=k, family="transfer", variant=v, dtype="fp32", shape=f"bytes={s}",
                            bandwidth_gbs=s / 2e7, theoretical_bandwidth_gbs=63.0, link="PCIe 5.0 x16",
                            device_name="H100")
                       for k in ("h2d", "d2h") for v in ("pinned", "pageable") for s in (4096, 1 << 30)])
    plots.transfer_sizes(tr, tmp_path / "transfers")
    assert (tmp_path / "transfers.png").exists()
    two = pd.DataFrame([_row(kernel="fill", dtype="fp32", device=d, bandwidth_gbs=b) for d, b in
                        (("gpu:0", 3000.0), ("gpu:1", 2900.0))])
    plots.device_comparison(two, tmp_path / "devices")
    assert (tmp_path / "devices.png").exists()
    for draw, df in ((plots.collective_busbw, tr), (plots.transfer_sizes, coll), (plots.p2p_heatmap, coll),
                     (plots.device_comparison, tr.assign(device="gpu:0")),
                     (plots.device_comparison, two.drop(columns=["bandwidth_gbs"])),
                     (plots.device_comparison, two.assign(bandwidth_gbs=float("nan")))):
        with pytest.raises(plots.NoData):
            draw(df)
