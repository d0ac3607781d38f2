"""The one atomic writer: a crash, a full disk or Ctrl-C leaves either the old file or the
complete new one, never half of it. Run folders (bandwidth_report.json, rewritten after every
row) and baselines both write through it."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, Union

PathLike = Union[str, "os.PathLike[str]"]


def atomic_write(path: PathLike, write: Callable[[IO[str]], Any]) -> Path:
    """Let ``write(fh)`` fill a temporary file beside ``path``, then swap it in; returns ``path``.

    The temporary file sits in the target's folder (one file system, so os.replace is atomic) and
    is flushed and fsync'ed before the swap; any failure removes it and leaves the target alone.
    """
    path = Path(path)
    folder = path.parent
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp_name, 0o644)  # mkstemp makes 0600; reports and baselines are meant to be shared
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
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
