"""The one atomic writer: a crash, a full disk or Ctrl-C leaves either the old file or the
complete new one, never half of it. Run reports (bandwidth_report.json, written when a run ends)
and baselines both write through it. Also the checks that an output folder or file can be
written, so that a command fails with one clear line before it measures or draws anything."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any, Callable, Iterator, Union

PathLike = Union[str, "os.PathLike[str]"]


def atomic_write(path: PathLike, write: Callable[[IO[str]], Any]) -> Path:
    """Let ``write(fh)`` fill a temporary file beside ``path``, then swap it in; returns ``path``.

    The temporary file sits in the target's folder (one file system, so os.replace is atomic) and
    is flushed and fsync'ed before the swap; any failure removes it and leaves the target alone.
    """
    path = Path(path)
    folder = path.parent
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as e:  # say the file the caller asked for, not the temporary one beside it
        raise OSError(e.errno, e.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp_name, 0o644)  # mkstemp makes 0600; reports and baselines are meant to be shared
        os.replace(tmp_name, path)
    except BaseException as e:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        if isinstance(e, OSError) and e.filename == tmp_name:
            raise OSError(e.errno, e.strerror, str(path)) from None
        raise
    _fsync_folder(folder)
    return path


def atomic_write_text(path: PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write(path, lambda fh: fh.write(text))


def atomic_write_json(path: PathLike, obj: Any, **dump_kw) -> Path:
    """``json.dump(obj, fh, **dump_kw)`` and a final newline, written atomically.

    The JSON is streamed into the temporary file rather than built as one string first, so an
    error half-way through (a value JSON cannot hold) still leaves the old file in place.
    """
    def write(fh: IO[str]) -> None:
        json.dump(obj, fh, **dump_kw)
        fh.write("\n")

    return atomic_write(path, write)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable; not possible on every platform, so best effort."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def ensure_folder(name: str, folder: PathLike) -> Path:
    """Create ``folder`` (and its parents) if needed; a place that cannot be a folder (a file is
    there or on the way, no permission) is a ValueError naming the argument ``name``."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ValueError(f"{name}: {folder} is a file, not a folder") from None
    except NotADirectoryError:
        raise ValueError(f"{name}: {folder} cannot be a folder: a part of that path is a file") from None
    except OSError as e:
        raise ValueError(f"{name}: cannot create the folder {folder}: {e.strerror or e}") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{name}: cannot write in {folder}: permission denied")
    return folder


def check_output_file(name: str, path: PathLike) -> Path:
    """``path`` can be written as a file: it is not a folder, and its folder exists or can be made
    and is writable. Otherwise a ValueError naming the argument ``name``."""
    path = Path(path)
    if str(path) in ("", "."):
        raise ValueError(f"{name}: expected a file name, got {str(path)!r}")
    if path.is_dir():
        raise ValueError(f"{name}: {path} is a folder; give a file name")
    ensure_folder(name, path.parent)
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{name}: cannot write {path}: permission denied")
    return path


def is_stream(path: PathLike) -> bool:
    """Whether ``path`` is a pipe, FIFO, socket or character device: data that can be read once,
    as it comes, and has no size (``bwprof trace <(zcat trace.csv.gz)``)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


@contextlib.contextmanager
def spooled(path: PathLike) -> Iterator[Path]:
    """``path`` as a file the readers may open as often as they need: a pipe or FIFO is read once,
    as a stream, into a temporary file of the same name (removed afterwards); anything else is
    given as it is. Waiting for a FIFO's writer, or for its data, stops on Ctrl-C."""
    path = Path(path)
    if not is_stream(path):
        yield path
        return
    folder = tempfile.mkdtemp(prefix="bwprof-stream-")
    try:
        copy = Path(folder) / (path.name or "stream")
        _copy_stream(path, copy)
        yield copy
    finally:  # errors ignored: a helper left waiting on a silent writer may still hold the copy
        shutil.rmtree(folder, ignore_errors=True)


def _copy_stream(path: Path, copy: Path) -> None:
    """Copy a pipe or FIFO into ``copy``. The blocking open and reads run in a helper thread while
    the caller waits in short steps: a Ctrl-C that lands just before a blocking system call would
    otherwise be acted on only when the writer comes, and a FIFO nobody writes would hang."""
    failure: list = []

    def work() -> None:
        try:
            with open(path, "rb") as src, open(copy, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        except BaseException as e:  # noqa: BLE001 - raised again in the caller's thread
            failure.append(e)

    helper = threading.Thread(target=work, name="bwprof-stream", daemon=True)
    helper.start()
    try:
        while helper.is_alive():
            helper.join(0.2)
    except KeyboardInterrupt:
        # Release the helper's open() (retried: it may not have begun to wait yet); a writer that
        # is connected but silent keeps the daemon helper until it closes, which harms nothing.
        end = time.monotonic() + 1.0
        while helper.is_alive() and time.monotonic() < end:
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            helper.join(0.02)
        raise
    if failure:
        raise failure[0]
