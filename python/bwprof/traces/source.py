"""A profiler file's bytes, text and JSON, checked before any reader parses them: a missing file
or a folder, gzip (PyTorch's .json.gz), a UTF-8 byte order mark, empty files, and binary junk (a
NUL byte, bytes that are not UTF-8) caught with its line. csv_source.py streams CSV files with
the same block check; the JSON readers take their document from ``_read_json``.
"""

import codecs
import gzip
import json
import zlib
from pathlib import Path

from .errors import TraceFormatError

# Bytes of a file's head that format detection reads.
_HEAD_BYTES = 1 << 17
# The leading digits of every integer from -2**63 - 1024 to -2**63 (see _read_json).
_INT64_MIN_DIGITS = b"-922337203685477"


def _check_file(path):
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise TraceFormatError(path, None, "is a directory, not a profiler output file")
    return path


def _check_block(path, block, line0=0, decoder=None, final=True):
    """Binary data (a NUL byte, bytes that are not UTF-8) in ``block`` is a TraceFormatError at
    its line (``line0`` lines come before the block). A file checked a block at a time passes
    one incremental ``decoder`` with ``final=False``, then b"" with ``final=True``."""
    nul = block.find(b"\x00")
    if nul >= 0:
        raise TraceFormatError(path, line0 + block.count(b"\n", 0, nul) + 1,
                               "binary data (NUL byte); expected a CSV or JSON text file")
    decoder = decoder or codecs.getincrementaldecoder("utf-8")()
    pending = decoder.getstate()[0]
    if pending or not block.isascii():
        try:
            decoder.decode(block, final=final)
        except UnicodeDecodeError as exc:
            # The decoder's position counts the bytes it held back from the block before.
            pos = max(exc.start - len(pending), 0)
            raise TraceFormatError(path, line0 + block.count(b"\n", 0, pos) + 1,
                                   "binary data (not UTF-8 text); expected CSV or JSON") from None


def _check_bytes(path, data, complete=True):
    """Empty data, and binary data as _check_block says; ``complete`` False for the head of a
    file, which may end inside a character."""
    if not data or data.isspace():
        if complete:
            raise TraceFormatError(path, 1, "file is empty")
        return
    _check_block(path, data, final=complete)


def _read_bytes(path):
    """The file's bytes (gunzipped, UTF-8 byte order mark removed), checked by _check_bytes."""
    path = _check_file(path)
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":                 # PyTorch writes .json.gz traces
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise TraceFormatError(path, None, f"truncated or corrupt gzip data ({exc})") from None
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    _check_bytes(path, data)
    return data


def _read_text(path):
    """The file's text; binary or undecodable content is a TraceFormatError at its line."""
    return _read_bytes(path).decode("utf-8")


def _read_head(path, limit=_HEAD_BYTES):
    """The first ``limit`` bytes of the file's text (enough to detect its format), checked as
    _read_text checks the whole file; a cut last line is left out."""
    path = _check_file(path)
    with open(path, "rb") as f:
        data = f.read(limit + 1)
        if data[:2] == b"\x1f\x8b":
            f.seek(0)
            try:
                with gzip.open(f) as g:
                    data = g.read(limit + 1)
            except (OSError, EOFError, zlib.error) as exc:
                raise TraceFormatError(path, None, f"truncated or corrupt gzip data ({exc})") from None
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    complete = len(data) <= limit
    if not complete:
        cut = data.rfind(b"\n", 0, limit)
        data = data[:cut + 1] if cut >= 0 else data[:limit]
        if data.isspace():
            return data.decode("ascii")             # only blank lines so far: let the reader see
    _check_bytes(path, data, complete=complete)
    return data.decode("utf-8", errors="ignore" if not complete else "strict")


def _fast_json():
    """orjson's loads where it is installed (about twice as fast on large traces), else None."""
    try:
        import orjson
    except ImportError:
        return None
    return orjson.loads


def _read_json(path, text=None):
    """The file's JSON document; malformed JSON is a TraceFormatError at its line, JSON nested
    too deeply for the parser one that says so.

    orjson parses first where it is installed; anything it refuses (malformed text, but also what
    the standard library accepts and orjson does not: NaN and Infinity literals, lone surrogates,
    nesting deeper than 1024) is parsed again by the standard library, so the errors are the same
    with or without it. orjson reads an integer beyond 64 bits as the nearest float (the readers
    report such a timestamp as invalid either way; docs/traces.md)."""
    data = _read_bytes(path) if text is None else text
    fast = _fast_json()
    # orjson turns an integer beyond 64 bits into the nearest float, and those just below -2**63
    # round to -2**63, which fits: the readers would take it as a value. Such text goes to json.
    if fast is not None and (_INT64_MIN_DIGITS if isinstance(data, bytes) else _INT64_MIN_DIGITS.decode()) not in data:
        try:
            return fast(data)
        except (ValueError, TypeError):         # orjson.JSONDecodeError is a ValueError
            pass
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise TraceFormatError(path, exc.lineno,
                               f"malformed JSON ({exc.msg}, column {exc.colno})") from None
    except RecursionError:
        raise TraceFormatError(path, None, "JSON nested too deeply to read (thousands of levels "
                                           "of arrays or objects): not a profiler trace") from None
    except UnicodeDecodeError as exc:
        raise TraceFormatError(path, None, f"binary data (not UTF-8 text) ({exc})") from None
