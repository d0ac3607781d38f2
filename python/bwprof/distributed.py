"""One process per GPU, started by the launcher the user already has (torchrun, mpirun, srun).

:func:`launch_from_env` reads the rank, the world size and the local rank from the launcher's
environment variables; :func:`rendezvous` opens the store every rank reaches (PyTorch's TCPStore
under torchrun when torch is there, else a small TCP store of bwprof's own at MASTER_ADDR:MASTER_PORT,
or a file store in a folder every rank sees), over which rank 0 shares the collective library's
job id and the ranks send their rows to rank 0, the only one that writes a run folder.
The measurements themselves go through NCCL/RCCL (:mod:`bwprof.collective`); nothing here moves
the data that is measured.
"""
from __future__ import annotations

import os
import socket
import socketserver
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from . import arguments as _args
from .files import atomic_write

KEY_PREFIX = "bwprof/"
DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Launch:
    """Where this process sits in its job: ``rank`` of ``world_size``, ``local_rank`` on its node."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    launcher: str = "none"  # "torchrun", "mpirun", "srun", or "none" (a single process)
    run_key: str = ""       # what tells this job's rendezvous from an earlier one's (job and step ids)

    @property
    def is_root(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def _int_var(env, name: str, lo: int = 0) -> int:
    raw = env.get(name)
    try:
        value = int(str(raw).strip())
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected an integer in the launcher's environment, got {raw!r}") from None
    if value < lo:
        raise ValueError(f"{name}: must be at least {lo}, got {value}")
    return value


def launch_from_env(environ=None) -> Launch:
    """The launcher's view of this process.

    torchrun (and anything speaking its protocol): RANK, WORLD_SIZE, LOCAL_RANK; Open MPI's mpirun:
    OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK; MPICH and Intel MPI: PMI_RANK, PMI_SIZE,
    MPI_LOCALRANKID; srun: SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID (an sbatch script
    outside srun is one process). None of them: one process, rank 0 of 1."""
    env = os.environ if environ is None else environ
    if "RANK" in env and "WORLD_SIZE" in env:
        names = ("RANK", "WORLD_SIZE", "LOCAL_RANK")
        launcher = "torchrun"
        key = env.get("TORCHELASTIC_RUN_ID", "")
    elif "OMPI_COMM_WORLD_RANK" in env:
        names = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK")
        launcher = "mpirun"
        key = env.get("OMPI_MCA_ess_base_jobid", "")
    elif "PMI_RANK" in env and "PMI_SIZE" in env:
        names = ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID")
        launcher = "mpirun"
        key = env.get("PMI_JOBID", "") or env.get("PMIX_NAMESPACE", "")
    elif "SLURM_PROCID" in env and "SLURM_STEP_NUM_TASKS" in env:
        names = ("SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID")
        launcher = "srun"
        key = f"{env.get('SLURM_JOB_ID', '')}.{env.get('SLURM_STEP_ID', '')}"
    else:
        return Launch()
    rank = _int_var(env, names[0])
    world = _int_var(env, names[1], 1)
    local = _int_var(env, names[2]) if names[2] in env else 0
    if rank >= world:
        raise ValueError(f"{names[0]}: rank {rank} is not below the world size {world} ({names[1]})")
    return Launch(rank, world, local, launcher, env.get("BWPROF_RUN_ID", "") or key)


# ---- stores -----------------------------------------------------------------------------------

class Store:
    """A key-value store every rank of the job reaches: set once, get waits until it is set."""

    def set(self, key: str, value: bytes) -> None:
        raise NotImplementedError

    def get(self, key: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> bytes:
        raise NotImplementedError

    def close(self) -> None:
        pass


class _Handler(socketserver.BaseRequestHandler):
    """One client connection: requests of (op, key, value), each answered at once."""

    def handle(self):
        data = self.server.data  # type: ignore[attr-defined]
        lock = self.server.lock  # type: ignore[attr-defined]
        while True:
            head = _recv_exact(self.request, 9)
            if head is None:
                return
            op, klen, vlen = head[:1], *struct.unpack("!II", head[1:])
            key = _recv_exact(self.request, klen)
            value = _recv_exact(self.request, vlen) if vlen else b""
            if key is None or value is None:
                return
            if op == b"S":
                with lock:
                    data[key] = value
                self.request.sendall(b"\x01" + struct.pack("!I", 0))
            else:
                with lock:
                    found = data.get(key)
                if found is None:
                    self.request.sendall(b"\x00" + struct.pack("!I", 0))
                else:
                    self.request.sendall(b"\x01" + struct.pack("!I", len(found)) + found)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def _recv_exact(sock, n: int):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


class TcpStore(Store):
    """bwprof's own small TCP store: rank 0 serves it at ``host:port``, every rank (rank 0 too)
    is a client. For launchers without PyTorch (mpirun, srun with MASTER_ADDR/MASTER_PORT set)."""

    def __init__(self, host: str, port: int, is_server: bool, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.host, self.port = host, port
        self._server = None
        if is_server:
            try:
                self._server = _Server(("", port), _Handler)
            except OSError as e:
                raise ValueError(f"MASTER_PORT: rank 0 cannot listen on port {port}: {e.strerror or e}") from None
            self._server.data, self._server.lock = {}, threading.Lock()
            threading.Thread(target=self._server.serve_forever, name="bwprof-store", daemon=True).start()
        self._sock = self._connect(timeout_s)
        self._lock = threading.Lock()

    def _connect(self, timeout_s: float):
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                s = socket.create_connection((self.host, self.port), timeout=10)
                s.settimeout(None)
                return s
            except OSError as e:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"rendezvous: rank 0's store at {self.host}:{self.port} did not answer in "
                                       f"{timeout_s:.0f} s ({e.strerror or e})") from None
                time.sleep(0.1)

    def _request(self, op: bytes, key: str, value: bytes = b""):
        k = key.encode()
        with self._lock:
            self._sock.sendall(op + struct.pack("!II", len(k), len(value)) + k + value)
            head = _recv_exact(self._sock, 5)
            if head is None:
                raise ConnectionError(f"rendezvous: the store at {self.host}:{self.port} closed the connection")
            (n,) = struct.unpack("!I", head[1:])
            body = _recv_exact(self._sock, n) if n else b""
        return head[:1] == b"\x01", body

    def set(self, key: str, value: bytes) -> None:
        self._request(b"S", key, bytes(value))

    def get(self, key: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> bytes:
        deadline = time.monotonic() + timeout_s
        while True:
            found, body = self._request(b"G", key)
            if found:
                return body
            if time.monotonic() > deadline:
                raise TimeoutError(f"rendezvous: {key!r} was not set within {timeout_s:.0f} s (is every rank running?)")
            time.sleep(0.02)

    def close(self) -> None:
        try:
            self._sock.close()
        finally:
            if self._server is not None:
                self._server.shutdown()
                self._server.server_close()


class TorchStore(Store):
    """PyTorch's TCPStore at MASTER_ADDR:MASTER_PORT: under torchrun, the one its agent already runs
    (TORCHELASTIC_USE_AGENT_STORE), else one rank 0 starts."""

    def __init__(self, host: str, port: int, launch: Launch, agent_store: bool, timeout_s: float):
        import datetime

        from torch.distributed import TCPStore
        self._store = TCPStore(host, port, launch.world_size, is_master=launch.is_root and not agent_store,
                               timeout=datetime.timedelta(seconds=timeout_s), wait_for_workers=False)

    def set(self, key: str, value: bytes) -> None:
        self._store.set(key, bytes(value))

    def get(self, key: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> bytes:
        import datetime
        self._store.set_timeout(datetime.timedelta(seconds=timeout_s))
        return bytes(self._store.get(key))


class FileStore(Store):
    """Files in a folder every rank sees (a shared file system): for mpirun or srun without a port."""

    def __init__(self, folder):
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ValueError(f"BWPROF_RENDEZVOUS_DIR: cannot create {self.folder}: {e.strerror or e}") from None

    def _path(self, key: str) -> Path:
        return self.folder / key.replace("/", "__")

    def set(self, key: str, value: bytes) -> None:
        data = bytes(value).hex()
        atomic_write(self._path(key), lambda fh: fh.write(data))

    def get(self, key: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> bytes:
        path, deadline = self._path(key), time.monotonic() + timeout_s
        while True:
            try:
                return bytes.fromhex(path.read_text())
            except FileNotFoundError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"rendezvous: {path} did not appear within {timeout_s:.0f} s (is every rank running?)")
            time.sleep(0.05)


def rendezvous(launch: Launch, environ=None, timeout_s: float = DEFAULT_TIMEOUT_S) -> Store:
    """The store of this job. BWPROF_RENDEZVOUS_DIR (a shared folder) wins; else MASTER_ADDR and
    MASTER_PORT: PyTorch's TCPStore under torchrun when torch imports, else bwprof's own TCP store
    (rank 0 listens on MASTER_PORT). ValueError saying what to set when neither is there."""
    env = os.environ if environ is None else environ
    timeout_s = _args.seconds("timeout_s", timeout_s)
    folder = env.get("BWPROF_RENDEZVOUS_DIR")
    if folder:
        return FileStore(Path(folder) / (launch.run_key or "run"))
    host, port = env.get("MASTER_ADDR"), env.get("MASTER_PORT")
    if not host or not port:
        raise ValueError(f"rendezvous: {launch.launcher} started {launch.world_size} processes but neither "
                         "MASTER_ADDR/MASTER_PORT (rank 0's host and a free port) nor BWPROF_RENDEZVOUS_DIR "
                         "(a folder every rank sees) is set")
    port_n = _int_var(env, "MASTER_PORT", 1)
    agent = str(env.get("TORCHELASTIC_USE_AGENT_STORE", "")).lower() == "true"
    if launch.launcher == "torchrun" and env.get("BWPROF_STORE", "") != "tcp":
        try:
            import torch.distributed  # noqa: F401
        except ImportError:
            if agent:
                raise ValueError("rendezvous: torchrun's store needs torch.distributed, which does not import") from None
        else:
            return TorchStore(host, port_n, launch, agent, timeout_s)
    if agent:  # torchrun's agent holds MASTER_PORT: ours goes beside it
        port_n += 1
    return TcpStore(host, port_n, launch.is_root, timeout_s)


def share(store: Store, launch: Launch, key: str, make, timeout_s: float = DEFAULT_TIMEOUT_S) -> bytes:
    """Rank 0 computes ``make()`` and publishes it under ``key``; every rank returns it."""
    full = KEY_PREFIX + key
    if launch.is_root:
        value = bytes(make())
        store.set(full, value)
        return value
    return store.get(full, timeout_s)


def gather(store: Store, launch: Launch, key: str, value: bytes, timeout_s: float = DEFAULT_TIMEOUT_S):
    """Every rank sends ``value``; rank 0 gets the list in rank order, the others None."""
    store.set(f"{KEY_PREFIX}{key}/{launch.rank}", bytes(value))
    if not launch.is_root:
        return None
    return [store.get(f"{KEY_PREFIX}{key}/{r}", timeout_s) for r in range(launch.world_size)]


def barrier(store: Store, launch: Launch, key: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """Returns on every rank once every rank has reached it."""
    store.set(f"{KEY_PREFIX}{key}/{launch.rank}", b"1")
    for r in range(launch.world_size):
        store.get(f"{KEY_PREFIX}{key}/{r}", timeout_s)


def finish(store: Store, launch: Launch, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """The end of a job's use of the store: every rank says it is done with it, and rank 0 (whose
    process may serve the store) waits for all of them before closing it."""
    if launch.is_root:
        for r in range(1, launch.world_size):
            store.get(f"{KEY_PREFIX}bye/{r}", timeout_s)
    else:
        store.set(f"{KEY_PREFIX}bye/{launch.rank}", b"1")
    store.close()


__all__ = ["FileStore", "Launch", "Store", "TcpStore", "TorchStore", "barrier", "finish", "gather", "launch_from_env",
           "rendezvous", "share"]
