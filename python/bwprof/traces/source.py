"""A profiler file's bytes, text and JSON, checked before any reader parses them: a missing file
or a folder, gzip (PyTorch's .json.gz), a UTF-8 byte order mark, empty files, and binary junk (a
NUL byte, bytes that are not UTF-8) caught with its line. csv_source.py streams CSV files with
the same block check; the JSON readers take their document from ``_read_json``.
"""

import codecs
import contextlib
import gc
import gzip
import json
import re
import secrets
import threading
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


_GC_LOCK = threading.Lock()
_GC_PAUSES = [0, False]                 # readers inside paused_gc(), and whether gc was on


@contextlib.contextmanager
def paused_gc():
    """Python's cyclic garbage collector off while a reader builds its objects.

    Parsing a large trace makes millions of containers (dicts, lists), and the collector runs
    every few hundred of them, walking all that were made so far: two thirds of the time of a
    300,000-event PyTorch trace's parse. A JSON document holds no reference cycles, so the
    collector has nothing to find there; what else a reader makes is collected once the
    collector is back on, when the last reader inside this block leaves it (threads may nest).
    A caller who had it off finds it off.
    """
    with _GC_LOCK:
        if _GC_PAUSES[0] == 0:
            _GC_PAUSES[1] = gc.isenabled()
            gc.disable()
        _GC_PAUSES[0] += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_PAUSES[0] -= 1
            if _GC_PAUSES[0] == 0 and _GC_PAUSES[1]:
                gc.enable()


_FAST_JSON = []  # [loads or None], once probed


def _fast_json():
    """orjson's loads where it is installed (about twice as fast on large traces) and refuses nesting
    deeper than 1024, else None. Releases before that limit (up to 3.9.0; 3.9.15 has it) parse any
    depth on the C stack: 200,000 nested arrays end the interpreter with a segmentation fault
    (orjson 3.8.3, seen), where the standard library raises RecursionError. So the installed orjson
    is asked once for 1100 nested arrays, and used only if it refuses them."""
    if not _FAST_JSON:
        try:
            import orjson
        except ImportError:
            _FAST_JSON.append(None)
        else:
            try:
                orjson.loads(b"[" * 1100 + b"]" * 1100)
                _FAST_JSON.append(None)  # no depth limit: deep input could crash the process
            except ValueError:
                _FAST_JSON.append(orjson.loads)
    return _FAST_JSON[0]


def _read_json(path, text=None):
    """The file's JSON document; malformed JSON is a TraceFormatError at its line, JSON nested
    too deeply for the parser one that says so.

    orjson parses first where it is installed; anything it refuses (malformed text, but also what
    the standard library accepts and orjson does not: NaN and Infinity literals, lone surrogates,
    nesting deeper than 1024) is parsed again by the standard library, so the errors are the same
    with or without it. orjson reads an integer beyond 64 bits as the nearest float (the readers
    report such a timestamp as invalid either way; docs/traces.md)."""
    data = _read_bytes(path) if text is None else text
    with paused_gc():
        return _parse_json(path, data)


def _parse_json(path, data):
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


# --------------------------------------------------------------------------------------------
# One large array of a JSON document parsed a piece at a time
# --------------------------------------------------------------------------------------------

# Bytes of the array parsed at a time: the objects of one piece stay in the processor's caches
# while the reader picks from them and frees the rest (about half the time of one parse of a
# 67 MB trace, and a quarter of its memory).
_PIECE_BYTES = 1 << 16
# How often a piece that does not parse is joined to the next one before giving up.
_JOINS = 8
# Between two objects of the array ("}, {" with any whitespace).
_BETWEEN = re.compile(rb"\}\s*,\s*\{")


def _strict_json():
    """The parser _read_json tries first, with the errors that mean "not this way"."""
    fast = _fast_json()
    if fast is not None:
        return fast, (ValueError, TypeError)
    return json.loads, (ValueError, RecursionError)


def _json_array_pieces(data, key, take):
    """Parse the array that is the value of the top-level ``key`` of the JSON object in
    ``data`` (bytes) a piece at a time: ``take(elements, first)`` is given each piece's
    elements (a list) and the position of its first element in the array. Returns the
    document without the array, or None where the document does not split so (the caller
    then parses it whole; ``take`` may have been given some pieces).

    The pieces are cut where one object of the array ends and the next begins ("}, {"), and
    each is parsed as the content of an array at the array's own depth. This gives what one
    parse of the whole document gives, or None:
    - a piece is taken only when it is the content of one array. The first starts where the
      array's content does, so each one taken ends where an element ends, and the next
      starts at an element (a cut inside a string or a deeper array makes a piece that is
      not one, and it is joined to the next); none reaches past the array's "]";
    - the array's "]" is one of the last ones in the file (_array_ends): one where the
      document parses with the array replaced by a random string, which then comes back as
      the value of the key (the last of duplicate keys, as in one parse); the last piece
      ends there. The pieces and the "," between them make up the array, and with it in
      place of the string the document is valid JSON and parses into the same values;
    - every piece, and the rest of the document, are parsed by the parser that would parse the
      whole (orjson where installed), and anything it refuses sends the whole document to
      _read_json, which gives the error or the other parser's values as before. A document
      holding the digits that send orjson's parse to json (see _parse_json) goes there too.
    """
    loads, refused = _strict_json()
    if loads is not json.loads and _INT64_MIN_DIGITS in data:
        return None
    found = re.search(rb'"' + re.escape(key.encode()) + rb'"\s*:\s*\[', data)
    if found is None:
        return None
    start = found.end() - 1                     # the array's "["
    ends = _array_ends(data, key, start, loads, refused)
    end, doc = next(ends, (None, None))
    pos, count = start + 1, 0
    while end is not None:
        piece = _piece(data, pos, end, loads, refused) if pos <= end else None
        if piece is None:                       # the array ends before this "]"
            end, doc = next(ends, (None, None))
            continue
        elements, cut = piece
        take(elements, count)
        count += len(elements)
        del elements
        if cut is None:
            del doc[key]
            return doc
        pos = cut.end() - 1                     # the next object's "{"
    return None


def _array_ends(data, key, start, loads, refused):
    """``(position, document)`` for each "]" after ``start``, last first, where the document
    parses with the bytes from ``start`` to there replaced by a random string that comes back
    as the value of ``key``. The tries parse no more than a quarter of the file in all (or
    64 KiB, for a small one)."""
    marker = f"bwprof-{secrets.token_hex(16)}"
    marker_json = json.dumps(marker).encode()
    end, budget = len(data), max(len(data) // 4, 1 << 16)
    while True:
        end = data.rfind(b"]", start + 1, end)
        budget -= start + len(data) - end
        if end < 0 or budget < 0:
            return
        try:
            doc = loads(b"".join((memoryview(data)[:start], marker_json, memoryview(data)[end + 1:])))
        except refused:
            continue
        if isinstance(doc, dict) and doc.get(key) == marker:
            yield end, doc


def _piece(data, pos, end, loads, refused):
    """``(elements, cut)`` of the piece of the array's content from ``pos``: about
    _PIECE_BYTES up to a "}, {" (``cut``, its match) or the rest up to ``end`` (``cut`` None);
    None where no such piece, joined up to _JOINS times, is the content of one array."""
    look = pos + _PIECE_BYTES
    for _ in range(_JOINS + 1):
        cut = _BETWEEN.search(data, look, end) if look < end else None
        stop = cut.start() + 1 if cut else end
        try:
            # [[piece]]: the elements at their depth in the document ({key: [...]}); one inner
            # array only if the piece is the content of one array (a piece that closed the
            # inner array early would leave the outer one more elements, or none).
            outer = loads(b"".join((b"[[", memoryview(data)[pos:stop], b"]]")))
        except refused:
            outer = None
        if outer is not None and len(outer) == 1:
            return outer[0], cut
        if cut is None:
            return None
        look = cut.end()
    return None
