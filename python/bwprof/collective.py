"""Collectives over the GPUs of a node or the ranks of a job, with nccl-tests' bandwidths.

``collectives()`` measures all-reduce, all-gather, reduce-scatter, all-to-all and broadcast through
NCCL (RCCL on AMD), the library found at run time. In one process it spans every GPU the process
sees (``ranks=``: fewer); started by torchrun, mpirun or srun (one process per GPU) it joins the
job through the launcher's rendezvous (:mod:`bwprof.distributed`), every rank measures its part,
and rank 0 gathers the rows and is the only one that writes a run folder.

Each row is a bwprof result row (``bandwidth_gbs`` is nccl-tests' bus bandwidth, judged against the
slowest link between the GPUs) plus ``size_bytes``, ``ranks``, ``algbw_gbs`` and ``busbw_gbs``:
algbw = size / time, busbw = algbw x 2(n-1)/n (all-reduce), (n-1)/n (all-gather, reduce-scatter,
all-to-all) or 1 (broadcast), as nccl-tests defines them, so the figures compare with that tool's.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time

import pandas as pd

from . import _core
from . import arguments as _args
from . import distributed as _dist
from .api import measure

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
DTYPES = ("fp32", "fp16", "bf16")
# 1 KB to 1 GB, a factor of 4 apart (nccl-tests' -b 1K -e 1G -f 4 gives the same points).
SIZES = tuple(1024 * 4 ** i for i in range(11))
QUICK_SIZES = (1024, 64 * 1024, 4 * 1024 * 1024, 64 * 1024 * 1024)
EXTRA_COLUMNS = ["size_bytes", "ranks", "algbw_gbs", "busbw_gbs", "library", "launcher"]
ALIASES = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
           "alltoall": "all_to_all", "bcast": "broadcast"}


def busbw_factor(collective: str, ranks: int) -> float:
    """nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md in nccl-tests)."""
    n = float(ranks)
    if collective == "all_reduce":
        return 2.0 * (n - 1) / n
    if collective in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    if collective == "broadcast":
        return 1.0
    raise ValueError(f"collectives: unknown collective {collective!r} (known: {', '.join(COLLECTIVES)})")


def _nccl_dirs() -> list[str]:
    """Folders of the NCCL that pip wheels put beside PyTorch (nvidia-nccl-cu12/cu13, torch/lib)."""
    out = []
    try:
        import nvidia  # namespace package of NVIDIA's wheels
        for base in getattr(nvidia, "__path__", []):
            for sub in ("nccl/lib", "cu13/lib", "cu12/lib"):
                d = os.path.join(base, sub)
                if os.path.isdir(d):
                    out.append(d)
    except ImportError:
        pass
    for p in sys.path:
        d = os.path.join(p, "torch", "lib")
        if p and os.path.isdir(d):
            out.append(d)
    return out


def _register_nccl_dirs() -> None:
    for d in _nccl_dirs():
        _core.collective_search_dir(d)


# Registered at import, so that collectives measured by name (bench --kernels all_reduce,
# bwprof.measure) find the NCCL that PyTorch's wheels installed too.
_register_nccl_dirs()


def library() -> str:
    """The collective library as loaded ("NCCL 2.23.5 (/path/libnccl.so.2)"); ValueError naming the
    library when it cannot be loaded (it also looks where PyTorch's wheels put it)."""
    _register_nccl_dirs()
    return _core.collective_library()


def _kernel_names(names) -> list[str]:
    names = list(COLLECTIVES) if names is None else _args.texts("collectives", names)
    out = []
    for n in names:
        k = ALIASES.get(n.lower().replace("-", "_"), n.lower().replace("-", "_"))
        if k not in COLLECTIVES:
            raise ValueError(f"collectives: unknown collective {n!r} (known: {', '.join(COLLECTIVES)})")
        out.append(k)
    return out


def _sizes(sizes) -> list[int]:
    if isinstance(sizes, (int, str)) or not hasattr(sizes, "__iter__"):
        sizes = [sizes]
    out = []
    for s in sizes:
        out.append(_args.count("sizes", parse_size(s) if isinstance(s, str) else s, 1, 1 << 40))
    if not out:
        raise ValueError("sizes: expected at least one size")
    return out


def parse_size(text: str) -> int:
    """'4K', '64KB', '1M', '1G', '4096' -> bytes (K = 1024)."""
    t = str(text).strip().upper().removesuffix("B").removesuffix("I")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    num = t[:-1] if mult > 1 else t
    try:
        value = int(num)
    except ValueError:
        raise ValueError(f"sizes: cannot read {text!r} as a size (e.g. 4096, 64K, 1M, 1G)") from None
    return value * mult


def _with_bandwidths(row: dict, launcher: str, lib: str) -> dict:
    params = dict(kv.split("=", 1) for kv in str(row["shape"]).split(",") if "=" in kv)
    size, ranks = int(params.get("bytes", 0)), int(params.get("ranks", 1))
    t = row["time_median_us"]
    algbw = size / (t * 1e-6) / 1e9 if t and t > 0 else math.nan
    row.update(size_bytes=size, ranks=ranks, algbw_gbs=algbw, busbw_gbs=algbw * busbw_factor(row["kernel"], ranks),
               library=lib, launcher=launcher)
    return row


class _Progress:
    def __init__(self, total: int, enabled: bool):
        self.total, self.done, self.enabled = total, 0, enabled

    def step(self, text: str) -> None:
        self.done += 1
        if self.enabled:
            sys.stderr.write(f"[{self.done}/{self.total}] {text}\n")
            sys.stderr.flush()


def collectives(collectives=None, dtypes=DTYPES, sizes=SIZES, *, device: str = "auto", ranks: int = 0,
                warmup: int = 5, repeats: int = 20, cache: str = "hot", verify: bool = True,
                out_dir=None, progress: bool = False, launch: _dist.Launch | None = None,
                timeout_s: float = _dist.DEFAULT_TIMEOUT_S) -> pd.DataFrame:
    """Measure each collective in each dtype at each size; one row per measurement.

    One process: over ``ranks`` GPUs of this process (0: all of them), ``device`` the GPU whose
    events time the group. Under torchrun/mpirun/srun (``launch`` from the environment when None):
    one rank per process on GPU ``local_rank``, ``repeats`` timed runs on every rank (the same
    count everywhere, so the ranks stay in step), each row the slowest rank's timings. ``cache``
    defaults to "hot" (collectives are bound by links, not by what the L2 holds). ``out_dir``: the
    run folder is written there by rank 0 alone. Returns the rows (on ranks other than 0, their
    own rank's)."""
    kernels = _kernel_names(collectives)
    dtypes = _args.texts("dtypes", dtypes)
    for dt in dtypes:
        if dt not in DTYPES:
            raise ValueError(f"dtypes: unknown dtype {dt!r} (known: {', '.join(DTYPES)})")
    sizes = _sizes(sizes)
    device = _args.text("device", device)
    ranks = _args.count("ranks", ranks, 0, 1 << 20)
    warmup = _args.count("warmup", warmup, 0, _args.MAX_WARMUP)
    repeats = _args.count("repeats", repeats, 1, _args.MAX_REPEATS)
    cache = _args.text("cache", cache, ("cold", "hot"))
    verify, progress = _args.flag("verify", verify), _args.flag("progress", progress)
    launch = _dist.launch_from_env() if launch is None else launch
    if not isinstance(launch, _dist.Launch):
        raise ValueError(f"launch: expected a bwprof.distributed.Launch or None, got {_args.show(launch)}")
    jobs = [(k, dt, s) for k in kernels for dt in dtypes for s in sizes]
    if launch.distributed:
        if device == "auto":  # this rank's GPU only: opening every GPU would put a context on each
            device = f"gpu:{launch.local_rank}" if _core.GPU_BUILD else "cpu"
        return _run_job(jobs, launch, device, warmup, repeats, cache, verify, out_dir, progress, timeout_s)
    info = _core.device_info(device)
    if info["kind"] != "gpu":
        raise ValueError(f"device: collectives run on GPUs; {info['id']} is the CPU (a test of the multi-process "
                         "bootstrap on the CPU runs under a launcher: see docs/multi-gpu.md)")
    lib = library()
    bar = _Progress(len(jobs), progress)
    writer = _writer(out_dir, info)
    rows = []
    try:
        for k, dt, size in jobs:
            m = measure(k, dtype=dt, device=device, cache=cache, warmup=warmup, repeats=repeats,
                        max_repeats=max(repeats, 1000), verify=verify, bytes=size, ranks=ranks)
            row = _with_bandwidths(m.to_dict(), "none", lib)
            rows.append(row)
            if writer is not None:
                writer.add(row)
            bar.step(f"{k} {dt} {size} B: busbw {row['busbw_gbs']:.1f} GB/s")
    finally:
        if writer is not None:
            writer.close()
    df = _frame(rows)
    if writer is not None:
        df.attrs["run_folder"] = str(writer.path)
    return df


def _frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(_core.columns()) + EXTRA_COLUMNS)


def _writer(out_dir, info):
    if out_dir is None:
        return None
    from .results import RunWriter
    return RunWriter(out_dir, info, columns=list(_core.columns()) + EXTRA_COLUMNS)


def _run_job(jobs, launch, device, warmup, repeats, cache, verify, out_dir, progress, timeout_s) -> pd.DataFrame:
    """One rank of a job: join (rank 0 makes the id and shares it), measure every job in the same
    order, send each row to rank 0, which keeps the slowest rank's timings and writes the folder."""
    store = _dist.rendezvous(launch, timeout_s=timeout_s)
    info = _core.device_info(device)
    stub = info["kind"] != "gpu"
    if stub:
        comm = _StoreCommunicator(store, launch, timeout_s)
        lib = "store (bwprof's rendezvous: a test of the bootstrap, not a collective library)"
    else:
        lib = library()
        job_id = _dist.share(store, launch, "job_id", _core.collective_job_id, timeout_s)
        _core.collective_join_job(job_id, launch.world_size, launch.rank, device)
    writer = _writer(out_dir, info) if launch.is_root else None
    bar = _Progress(len(jobs), progress and launch.is_root)
    mine, merged = [], []
    try:
        for i, (k, dt, size) in enumerate(jobs):
            if stub:
                row = comm.measure(k, dt, size, warmup, repeats, verify)
            else:
                row = measure(k, dtype=dt, device=device, cache=cache, warmup=warmup, repeats=repeats,
                              max_repeats=repeats, min_time_s=0.0, max_time_s=86400.0, verify=verify,
                              bytes=size).to_dict()
            row = _with_bandwidths(row, launch.launcher, lib)
            mine.append(row)
            got = _dist.gather(store, launch, f"row/{i}", json.dumps(row, default=str).encode(), timeout_s)
            if got is None:
                continue
            row = _merge([json.loads(g) for g in got])
            merged.append(row)
            if writer is not None:
                writer.add(row)
            bar.step(f"{k} {dt} {size} B over {launch.world_size} ranks: busbw {row['busbw_gbs']:.1f} GB/s")
        _dist.barrier(store, launch, "done", timeout_s)
        _dist.finish(store, launch, timeout_s)
    finally:
        if writer is not None:
            writer.close()
        if not stub:
            _core.collective_leave_job()
    df = _frame(merged if launch.is_root else mine)
    if writer is not None:
        df.attrs["run_folder"] = str(writer.path)
    return df


def _merge(rows: list[dict]) -> dict:
    """One row for a collective from every rank's: the slowest rank's timings (a collective ends
    when its last rank does), verified only if every rank's output was."""
    slow = max(rows, key=lambda r: r.get("time_median_us") or 0.0)
    out = dict(slow)
    out["verified"] = all(bool(r.get("verified")) for r in rows)
    out["max_rel_error"] = max(float(r.get("max_rel_error") or 0.0) for r in rows)
    out["device"] = f"{len(rows)} ranks"
    return out


class _StoreCommunicator:
    """A stand-in communicator for the CPU: the collectives computed over the rendezvous store, so
    that the multi-process path (launcher variables, rendezvous, rows gathered to rank 0, one run
    folder) is tested on a machine without GPUs. It measures bwprof's store, nothing else."""

    def __init__(self, store, launch, timeout_s):
        self.store, self.launch, self.timeout_s, self.seq = store, launch, timeout_s, 0

    def _exchange(self, payload: bytes) -> list[bytes]:
        self.seq += 1
        key = f"{_dist.KEY_PREFIX}stub/{self.seq}"
        self.store.set(f"{key}/{self.launch.rank}", payload)
        return [self.store.get(f"{key}/{r}", self.timeout_s) for r in range(self.launch.world_size)]

    def run(self, kernel: str, x):
        import numpy as np
        n, r = self.launch.world_size, self.launch.rank
        parts = [np.frombuffer(b, dtype=x.dtype) for b in self._exchange(x.tobytes())]
        if kernel == "all_reduce":
            return np.sum(parts, axis=0, dtype=np.float64).astype(x.dtype)
        if kernel == "broadcast":
            return parts[0].copy()
        if kernel == "all_gather":
            return np.concatenate(parts)
        chunk = len(x) // n
        if kernel == "reduce_scatter":
            return np.sum([p[r * chunk:(r + 1) * chunk] for p in parts], axis=0, dtype=np.float64).astype(x.dtype)
        return np.concatenate([p[r * chunk:(r + 1) * chunk] for p in parts])  # all_to_all

    def measure(self, kernel, dtype, size, warmup, repeats, verify) -> dict:
        import numpy as np
        n, r = self.launch.world_size, self.launch.rank
        np_dtype = {"fp32": np.float32, "fp16": np.float16}.get(dtype)
        if np_dtype is None:
            raise ValueError(f"dtypes: the CPU stand-in communicator has no {dtype}")
        es = np.dtype(np_dtype).itemsize
        unit = es * (n if kernel in ("all_gather", "reduce_scatter", "all_to_all") else 1)
        size = size // unit * unit
        count_in = size // es // (n if kernel == "all_gather" else 1)
        rng = np.random.default_rng(1000 + r)
        x = (rng.integers(-16, 17, count_in) / 8.0).astype(np_dtype)
        for _ in range(warmup):
            self.run(kernel, x)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            y = self.run(kernel, x)
            times.append((time.perf_counter() - t0) * 1e6)
        ok, err = True, 0.0
        if verify:
            everyone = [(np.random.default_rng(1000 + k).integers(-16, 17, count_in) / 8.0) for k in range(n)]
            chunk = count_in // n
            gold = {"all_reduce": lambda: np.sum(everyone, axis=0), "broadcast": lambda: everyone[0],
                    "all_gather": lambda: np.concatenate(everyone),
                    "reduce_scatter": lambda: np.sum([e[r * chunk:(r + 1) * chunk] for e in everyone], axis=0),
                    "all_to_all": lambda: np.concatenate([e[r * chunk:(r + 1) * chunk] for e in everyone])}[kernel]()
            scale = float(np.max(np.abs(gold))) or 1.0
            err = float(np.max(np.abs(y.astype(np.float64) - gold))) / scale
            ok = err <= (4e-3 if dtype == "fp16" else 1e-6)
        stats = _core.summarize(times)
        bus = size * busbw_factor(kernel, n)
        row = {c: None for c in _core.columns()}
        row.update(kernel=kernel, family="collective", variant="store", dtype=dtype, shape=f"bytes={size},ranks={n}",
                   bytes_source="declared", flops_source="declared", stream_hold="", host_waited=False,
                   device="cpu", device_name="CPU (stand-in communicator)", backend="cpu", cache="hot",
                   time_median_us=stats["median"], time_min_us=stats["min"], time_max_us=stats["max"],
                   time_mean_us=stats["mean"], time_std_us=stats["stddev"], time_cv=stats["cv"],
                   repeats=stats["count"], warmup=warmup, unstable=stats["unstable"], bytes_read=0.0,
                   bytes_written=float(bus), flops=0.0, bandwidth_gbs=bus / (stats["median"] * 1e-6) / 1e9,
                   link="rendezvous store", bound="unknown", access_pattern="coalesced", above_peak=False,
                   bottleneck="a test of bwprof's multi-process bootstrap over its rendezvous store; not a "
                              "measurement of a collective library", verified=ok, max_rel_error=err,
                   tolerance=4e-3 if dtype == "fp16" else 1e-6, schema_version=_core.SCHEMA_VERSION)
        return row


__all__ = ["COLLECTIVES", "DTYPES", "QUICK_SIZES", "SIZES", "busbw_factor", "collectives", "library", "parse_size"]
