"""The layer every trace reader stands on: a profiler file's bytes (gzip, encodings, binary junk
caught with its line), CSV tables found after tool preambles and parsed by pandas' C parser
with line numbers kept for errors, JSON, and the ONE builder of frames in the kernel-trace
schema (``schema_frame``), which is also where every row's duration and timestamps are checked.

Malformed input becomes a TraceFormatError naming the file and the line. Rows whose duration
cannot be right (negative, empty, infinite) or whose timestamps do not fit 64-bit nanoseconds
are an InvalidRowsError naming the first offenders, or, when the caller asked for it with
``drop_invalid=True``, left out with one InvalidRowsWarning per table that says how many.

Speed: a kernel trace of two million dispatches is read in one pass of the C parser, with the
columns a reader uses given their types up front (exact 64-bit integers for timestamps, floats,
categoricals for names and ids, so that text such as a kernel name becomes one Python string
per distinct value, not per row); short names are made once per distinct kernel name.
"""

import contextvars
import csv
import functools
import gzip
import io
import json
import math
import re
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import InvalidRowsError, InvalidRowsWarning, TraceFormatError
from .names import short_kernel_name
from .units import parse_number

# Column order and dtypes of the kernel-trace schema (docs/traces.md describes each).
SCHEMA = {
    "kernel_name": "object",
    "short_name": "object",
    "start_ns": "Int64",
    "end_ns": "Int64",
    "duration_ns": "float64",
    "calls": "Int64",
    "grid_x": "Int64", "grid_y": "Int64", "grid_z": "Int64",
    "block_x": "Int64", "block_y": "Int64", "block_z": "Int64",
    "registers": "Int64",
    "shared_mem_bytes": "Int64",
    "device": "object",
    "stream": "object",
    "correlation_id": "Int64",
    "source_tool": "object",
    "pid": "Int64",
}
SCHEMA_COLUMNS = list(SCHEMA)

# How far into a file to look for the header line: the ncu and nsys preambles are short.
_HEADER_SCAN_LINES = 200
_HEAD_BYTES = 1 << 17
# Spellings of "no value" in profiler CSVs (units.parse_number reads the same as NaN).
_MISSING = ["", "n/a", "N/A", "na", "NA", "nan", "NaN", "-", "--", "(null)", "None"]
_INT64_MAX = 2 ** 63 - 1
_INT64_MIN = -2 ** 63
# Rows of a fallback (slow, exact) CSV pass held at once.
_CHUNK_ROWS = 200_000


# --------------------------------------------------------------------------------------------
# The drop_invalid option: given to read() and every reader, seen by the one frame builder
# --------------------------------------------------------------------------------------------

_DROP_INVALID = contextvars.ContextVar("bwprof_traces_drop_invalid", default=False)


def drop_invalid_flag(value, name="drop_invalid"):
    """``value`` as a bool; anything but True/False (or 0/1) is a TypeError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer)) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"{name} must be True or False, not {value!r}")


def reader(fn):
    """Give a reader the ``drop_invalid`` keyword (default: the caller's setting, else False).

    Rows with invalid durations or timestamps are an InvalidRowsError, or with
    ``drop_invalid=True`` left out with an InvalidRowsWarning. Readers that call other readers
    (read, read_dir, read_ncu) pass the setting on without naming it.
    """
    @functools.wraps(fn)
    def wrapped(*args, drop_invalid=None, **kwargs):
        if drop_invalid is None:
            return fn(*args, **kwargs)
        token = _DROP_INVALID.set(drop_invalid_flag(drop_invalid))
        try:
            return fn(*args, **kwargs)
        finally:
            _DROP_INVALID.reset(token)
    return wrapped


# --------------------------------------------------------------------------------------------
# Reading bytes and text
# --------------------------------------------------------------------------------------------

def _check_file(path):
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise TraceFormatError(path, None, "is a directory, not a profiler output file")
    return path


def _check_bytes(path, data, complete=True):
    """Empty, binary (NUL) and non-UTF-8 data are TraceFormatErrors at their line."""
    if not data or data.isspace():
        if complete:
            raise TraceFormatError(path, 1, "file is empty")
        return
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise TraceFormatError(path, line, "binary data (NUL byte); expected a CSV or JSON text file")
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            if complete or exc.start < len(data) - 4:     # a head may end inside a character
                line = data.count(b"\n", 0, exc.start) + 1
                raise TraceFormatError(path, line,
                                       "binary data (not UTF-8 text); expected CSV or JSON") from None


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


def _is_preamble(line):
    """Lines that tools print before (or between) CSV rows: ncu's ==PROF==, nsys's progress."""
    s = line.strip()
    return (not s or s.startswith("==") or s.startswith("Generating ") or s.startswith("Processing [")
            or s.startswith("** ") or s.startswith("NOTICE:") or s.startswith("WARNING:"))


_PREAMBLE_RE = re.compile(rb"(?m)^[ \t]*(?:==|Generating |Processing \[|\*\* |NOTICE:|WARNING:)")


def _lines(text):
    # Only real line breaks: kernel names never hold them, but may hold other odd characters.
    return re.split(r"\r?\n", text)


def _split(line):
    try:
        return next(csv.reader([line]))
    except (csv.Error, StopIteration):
        return []


# --------------------------------------------------------------------------------------------
# CSV tables
# --------------------------------------------------------------------------------------------

def _find_header(path, lines, is_header):
    """Index of the first line whose fields satisfy ``is_header``, skipping tool preambles."""
    first_content = None
    for i, line in enumerate(lines[:_HEADER_SCAN_LINES]):
        if _is_preamble(line):
            continue
        if first_content is None:
            first_content = i
        if is_header([f.strip() for f in _split(line)]):
            return i
    if first_content is None:
        raise TraceFormatError(path, 1, "no CSV header found (only tool messages or blank lines)")
    return None


def _head_lines(data, count):
    """The first ``count`` lines of ``data`` (bytes) as text, and where each next line starts."""
    lines, starts, pos = [], [], 0
    while len(lines) < count and pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        lines.append(data[pos:end].rstrip(b"\r").decode("utf-8", errors="replace"))
        pos = end + 1
        starts.append(pos)
    return lines, starts


class _Table:
    """A CSV table: its header, the columns a reader asked for (parsed by pandas), and the
    line where each row starts (found only when an error or a dropped row needs it)."""

    def __init__(self, path, header, header_line, frame, data, body, line_map=None):
        self.path = str(path)
        self.header = header
        self.header_line = header_line          # 1-based
        self.frame = frame                      # columns named by header position
        self.n = len(frame)
        self.index = {}
        for i, name in enumerate(header):
            self.index.setdefault(name.strip().lower(), i)
        self._data = data                       # the bytes the rows were parsed from
        self._body = body                       # where the first row starts in them
        self._line_map = line_map               # file line of each line of _data, when filtered
        self._row_lines = None
        self._rows = None                       # positions into a parent table (take())
        self.converted = {}

    # --- where rows are -------------------------------------------------------------------

    def lines_of(self, rows):
        """1-based file lines where the given rows (positions) start."""
        rows = np.asarray(rows, dtype=np.int64)
        if self._rows is not None:
            return self._parent.lines_of(self._rows[rows])
        if self._row_lines is None:
            self._row_lines = self._record_lines()
        return [int(self._row_lines[r]) if 0 <= r < len(self._row_lines) else None for r in rows]

    def _record_lines(self):
        """Line of every row: arithmetic when each line after the header is one row, else a
        pass of the csv module with the rules the parse used (blank lines skipped)."""
        data, body = self._data, self._body
        newlines = data.count(b"\n", body)
        tail = len(data) > body and not data.endswith(b"\n")
        physical = newlines + (1 if tail else 0)
        first = data.count(b"\n", 0, body) + 1
        if physical == self.n and self._line_map is None:
            return np.arange(first, first + self.n, dtype=np.int64)
        text = data[body:].decode("utf-8", errors="replace")
        reader = csv.reader(io.StringIO(text, newline=""))
        out = []
        while len(out) < self.n:
            start = reader.line_num + 1
            try:
                fields = next(reader)
            except (StopIteration, csv.Error):
                break
            if not fields or all(not f.strip() for f in fields):
                continue
            out.append(first + start - 1)
        out += [-1] * (self.n - len(out))
        lines = np.array(out, dtype=np.int64)
        if self._line_map is not None:
            ok = lines > 0
            lines[ok] = self._line_map[lines[ok] - 1]
        return lines

    def origin(self):
        return Origin(self.path, "line {}", self.lines_of)

    def take(self, rows):
        """The table of the given rows (positions), keeping their lines."""
        rows = np.asarray(rows, dtype=np.int64)
        sub = _Table.__new__(_Table)
        sub.__dict__.update(self.__dict__)
        sub.frame = self.frame.iloc[rows].reset_index(drop=True)
        sub.n = len(rows)
        sub._parent = self
        sub._rows = rows
        sub.converted = {k: _take(v, rows) for k, v in self.converted.items()}
        return sub

    # --- columns --------------------------------------------------------------------------

    def has(self, *names):
        return any(n.lower() in self.index for n in names)

    def _pos(self, names):
        for n in names:
            i = self.index.get(n.lower())
            if i is not None:
                return i
        return None

    def _series(self, i):
        return self.frame[f"c{i}"]

    def col(self, *names):
        """Raw strings of the first of ``names`` present (case-insensitive; "" for a blank),
        else None."""
        i = self._pos(names)
        if i is None:
            return None
        s = self._series(i)
        if isinstance(s.dtype, pd.CategoricalDtype):
            cats = np.array([str(c) for c in s.cat.categories] + [""], dtype=object)
            return cats[s.cat.codes.to_numpy()]
        if s.dtype == object:
            out = s.to_numpy(dtype=object)
            missing = pd.isna(out)
            if missing.any():                   # fields a short (ragged) row lacks
                out = out.copy()
                out[missing] = ""
            return out
        out = s.astype(object).to_numpy()
        return np.array(["" if pd.isna(v) else str(v) for v in out], dtype=object)

    def categorical(self, *names):
        """(codes, uniques) of a text column: -1 for a blank; each distinct value once."""
        i = self._pos(names)
        if i is None:
            return None
        s = self._series(i)
        if isinstance(s.dtype, pd.CategoricalDtype):
            return s.cat.codes.to_numpy(dtype=np.int64), [str(c) for c in s.cat.categories]
        codes, uniques = pd.factorize(pd.Series(s.to_numpy(dtype=object), dtype=object))
        return codes.astype(np.int64), [str(u) for u in uniques]

    def labels(self, *names):
        """Identifiers (agent, stream) as text: "2", "Agent 4", "GPU 3" stay recognisable;
        "2.0" -> "2", blank -> None. Each distinct value is handled once."""
        got = self.categorical(*names)
        if got is None:
            return None
        codes, uniques = got
        return _label_array(codes, uniques)

    def numbers(self, *names):
        """Floats of the first of ``names`` present, NaN for blanks, None if absent."""
        i = self._pos(names)
        if i is None:
            return None
        key = ("f", i)
        if key not in self.converted:
            s = self._series(i)
            if s.dtype == np.float64:
                self.converted[key] = s.to_numpy()
            elif pd.api.types.is_integer_dtype(s.dtype):
                self.converted[key] = s.astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)
            else:
                self.converted[key] = _to_float(self.col(*names), self, self.header[i])
        return self.converted[key]

    def ints(self, *names):
        """Like numbers(), but exact for 64-bit integers such as nanosecond timestamps: an Int64
        array, or an object array holding the values that do not fit (inf, beyond 64 bits),
        which the frame builder reports as invalid rows."""
        i = self._pos(names)
        if i is None:
            return None
        key = ("i", i)
        if key not in self.converted:
            s = self._series(i)
            if isinstance(s.dtype, pd.Int64Dtype):
                self.converted[key] = s.array
            else:
                self.converted[key] = _to_int(self.col(*names), self, self.header[i])
        return self.converted[key]


def _take(values, rows):
    if isinstance(values, pd.api.extensions.ExtensionArray):
        return values.take(rows)
    return np.asarray(values)[rows]


def _label(text):
    s = str(text).strip()
    if s.endswith(".0") and s[:-2].isdigit():
        s = s[:-2]
    return s or None


def _label_array(codes, uniques):
    table = np.array([_label(u) for u in uniques] + [None], dtype=object)
    return table[np.where(codes < 0, len(uniques), codes)]


def _text(values):
    """Identifiers (agent, stream) as strings: "2", "Agent 4", "GPU 3" stay recognisable."""
    if values is None:
        return None
    codes, uniques = pd.factorize(pd.Series(list(values), dtype=object).map(
        lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)))
    return _label_array(codes.astype(np.int64), list(uniques))


def _bad_text(table, name, rows, values, what):
    rows = np.asarray(rows)
    line = table.lines_of(rows[:1])[0]
    return TraceFormatError(table.path, line, f"column {name!r}: {values[rows[0]]!r} is not {what}")


def _to_float(strings, table, name):
    """Text -> float64: thousands separators, "n/a", percentages as units.parse_number reads
    them; anything else is a TraceFormatError at its line. Each distinct text parsed once."""
    strings = np.asarray(strings, dtype=object)
    codes, uniques = pd.factorize(pd.Series(strings, dtype=object))
    values = np.empty(len(uniques), dtype=np.float64)
    bad = []
    for k, text in enumerate(uniques):
        v = parse_number(text)
        if v is None:
            bad.append(k)
            v = math.nan
        values[k] = v
    if bad:
        rows = np.flatnonzero(np.isin(codes, bad))
        raise _bad_text(table, name, rows, strings, "a number")
    return values[codes] if len(strings) else np.zeros(0)


def _to_int(strings, table, name):
    """Text -> exact integers (Int64 array); values beyond 64 bits or infinite are kept as
    Python numbers in an object array for the builder to report; text that is not a number is
    a TraceFormatError at its line."""
    strings = np.asarray(strings, dtype=object)
    codes, uniques = pd.factorize(pd.Series(strings, dtype=object))
    values = [None] * len(uniques)
    wide = False
    bad = []
    for k, text in enumerate(uniques):
        s = str(text).strip().replace(",", "")
        if s in _MISSING:
            continue
        try:
            v = int(s)
        except ValueError:
            f = parse_number(s)
            if f is None or math.isnan(f):
                bad.append(k)
                continue
            v = int(round(f)) if math.isfinite(f) else f
        if not isinstance(v, int) or not _INT64_MIN <= v <= _INT64_MAX:
            wide = True
        values[k] = v
    if bad:
        rows = np.flatnonzero(np.isin(codes, bad))
        raise _bad_text(table, name, rows, strings, "an integer")
    if wide:
        return np.array(values + [None], dtype=object)[np.where(codes < 0, len(uniques), codes)]
    data = np.array([0 if v is None else v for v in values] + [0], dtype=np.int64)
    mask = np.array([v is None for v in values] + [True], dtype=bool)
    idx = np.where(codes < 0, len(uniques), codes)
    return pd.arrays.IntegerArray(data[idx], mask[idx])


def _numbers_or_text(strings):
    """Text -> float64 array when every value is a number (or blank), else None."""
    strings = np.asarray(strings, dtype=object)
    codes, uniques = pd.factorize(pd.Series(strings, dtype=object))
    values = np.empty(len(uniques) + 1, dtype=np.float64)
    values[-1] = np.nan
    for k, text in enumerate(uniques):
        v = parse_number(text)
        if v is None:
            return None
        values[k] = v
    return values[np.where(codes < 0, len(uniques), codes)]


def _numeric_extras(table, skip):
    """Every column not in ``skip`` as a float column (counters); non-numeric ones as text."""
    skip = {s.lower() for s in skip}
    extras = {}
    for j, name in enumerate(table.header):
        if not name or name.lower() in skip or table.index.get(name.lower()) != j:
            continue
        raw = table.col(name)
        numbers = _numbers_or_text(raw)
        extras[name] = numbers if numbers is not None else raw
    return extras


def _ceil_div(num, den):
    """Workgroups from work-items: rocprof's grid sizes count work-items, the schema blocks."""
    if num is None or den is None:
        return None
    num = np.asarray(num, dtype="float64")
    den = np.asarray(den, dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den > 0, np.ceil(num / den), np.nan)
    return out


def _read_csv(path, required, text=None, ragged=False, what="this format", kinds=None):
    """Parse ``path`` as CSV whose header holds every group in ``required``.

    ``required`` is a list of alternatives per needed column, e.g. [("Kernel_Name",), ...].
    ``kinds`` ({column name: "text" | "int" | "float"}, case-insensitive) names the columns a
    reader uses and their types: they are parsed typed in one C pass, the other columns as
    categoricals; without ``kinds`` every column is read as text. Rows with more fields than
    the header are errors unless ``ragged`` (ncu details pages), and so is a last row with
    fewer (a file cut mid-row).
    """
    data = _read_bytes(path) if text is None else text.encode("utf-8")
    head, starts = _head_lines(data, _HEADER_SCAN_LINES + 1)

    def ok(fields):
        low = {f.lower() for f in fields}
        return all(any(a.lower() in low for a in alts) for alts in required)

    h = _find_header(path, head, ok)
    if h is None:
        first = next(i for i, line in enumerate(head) if not _is_preamble(line))
        have = [f.strip() for f in _split(head[first])]
        missing = [alts[0] for alts in required
                   if not any(a.lower() in {x.lower() for x in have} for a in alts)]
        raise TraceFormatError(path, first + 1,
                               f"not {what}: missing column(s) {', '.join(missing)}; "
                               f"header has {', '.join(have[:12]) or 'nothing'}")
    header = [f.strip() for f in _split(head[h])]
    body = starts[h] if h < len(starts) else len(data)
    line_map = None
    if _PREAMBLE_RE.search(data, body):
        # Tool messages between rows (ncu's "==PROF== Disconnected"): parse the rows without
        # them, remembering each kept line's place in the file.
        kept, lines = [], []
        for k, line in enumerate(data[body:].split(b"\n")):
            if not _is_preamble(line.decode("utf-8", errors="replace")):
                kept.append(line)
                lines.append(data.count(b"\n", 0, body) + k + 1)
        line_map = np.array(lines, dtype=np.int64)
        data, body = b"\n".join(kept), 0
    frame = _parse(path, data, body, header, h, kinds, ragged, line_map)
    table = _Table(path, header, h + 1, frame, data, body, line_map)
    if not ragged:
        _check_last_row(table, data, body, header, h, line_map)
    return table


def _dtypes(header, kinds):
    """pandas dtype per column position, and the positions parsed as numbers."""
    kinds = {k.lower(): v for k, v in (kinds or {}).items()}
    dtype, numeric = {}, []
    for j, name in enumerate(header):
        kind = kinds.get(name.lower()) if kinds else None
        if kinds is None:
            dtype[f"c{j}"] = object
        elif kind == "int":
            dtype[f"c{j}"] = "Int64"
            numeric.append(j)
        elif kind == "float":
            dtype[f"c{j}"] = np.float64
            numeric.append(j)
        else:
            dtype[f"c{j}"] = "category"
    return dtype, numeric


def _parse(path, data, body, header, h, kinds, ragged, line_map):
    names = [f"c{j}" for j in range(len(header))]
    dtype, numeric = _dtypes(header, kinds)
    opts = dict(header=None, names=names, skiprows=data.count(b"\n", 0, body) if body else 0,
                keep_default_na=False, na_values={f"c{j}": _MISSING for j in numeric},
                skip_blank_lines=True, engine="c", low_memory=False)
    if ragged:
        opts["usecols"] = list(range(len(header)))
    if not data[body:].strip():
        return pd.DataFrame({n: pd.Series([], dtype=object) for n in names})
    try:
        return pd.read_csv(io.BytesIO(data), dtype=dtype, **opts)
    except pd.errors.ParserError as exc:
        raise _explain_csv_error(path, data, body, header, h, line_map, exc) from None
    except (ValueError, TypeError, OverflowError):
        pass
    # A value the typed pass cannot hold (text, inf, an integer beyond 64 bits): parse the
    # numeric columns as text, a chunk at a time, and let the exact converters say which
    # value on which line, or keep the out-of-range ones for the builder to report.
    text_types = {k: (object if k in {f"c{j}" for j in numeric} else v) for k, v in dtype.items()}
    opts["na_values"] = {}
    chunks = pd.read_csv(io.BytesIO(data), dtype=text_types, chunksize=_CHUNK_ROWS, **opts)
    try:
        parts = list(chunks)
    except pd.errors.ParserError as exc:
        raise _explain_csv_error(path, data, body, header, h, line_map, exc) from None
    if not parts:
        return pd.DataFrame({n: pd.Series([], dtype=object) for n in names})
    out = {}
    for name in names:
        pieces = [p[name] for p in parts]
        if isinstance(pieces[0].dtype, pd.CategoricalDtype):
            out[name] = pd.Series(pd.api.types.union_categoricals([p.array for p in pieces]))
        else:
            out[name] = pd.Series(np.concatenate([p.to_numpy(dtype=object) for p in pieces]),
                                  dtype=object)
    return pd.DataFrame(out)


def _explain_csv_error(path, data, body, header, h, line_map, exc):
    """The C parser's structural error as a TraceFormatError at its line, found by a pass of
    the csv module (field counts, unterminated quotes) over the rows."""
    text = data[body:].decode("utf-8", errors="replace")
    first = data.count(b"\n", 0, body) + 1
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)

    def file_line(k):
        return int(line_map[k - 1]) if line_map is not None and 0 < k <= len(line_map) else k

    try:
        while True:
            start = first + reader.line_num
            try:
                fields = next(reader)
            except StopIteration:
                break
            if not fields or all(not f.strip() for f in fields):
                continue
            if len(fields) > len(header):
                return TraceFormatError(
                    path, file_line(start),
                    f"{len(fields)} fields where the header (line {h + 1}) has {len(header)}"
                    f" (truncated file or wrong columns?)")
    except csv.Error as e:
        return TraceFormatError(path, file_line(first + reader.line_num - 1), f"malformed CSV ({e})")
    return TraceFormatError(path, None, f"malformed CSV ({str(exc).strip()})")


def _check_last_row(table, data, body, header, h, line_map):
    """A file cut mid-row leaves a last row with fewer fields: an error at its line."""
    end = len(data)
    while end > body and data[end - 1:end] in (b"\n", b"\r", b" ", b"\t"):
        end -= 1
    if end <= body:
        return
    start = data.rfind(b"\n", body, end) + 1 or body
    fields = _split(data[start:end].decode("utf-8", errors="replace"))
    if fields and len(fields) < len(header) and not (len(fields) == 1 and not fields[0].strip()):
        line = data.count(b"\n", 0, start) + 1
        if line_map is not None:
            line = int(line_map[line - 1])
        raise TraceFormatError(table.path, line,
                               f"{len(fields)} fields where the header (line {h + 1}) has "
                               f"{len(header)} (truncated file or wrong columns?)")


def _read_json(path, text=None):
    """The file's JSON document; malformed JSON is a TraceFormatError at its line, JSON nested
    too deeply for the parser one that says so."""
    data = _read_bytes(path) if text is None else text
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
# Building schema frames, and checking every row's duration and timestamps
# --------------------------------------------------------------------------------------------

class Origin:
    """Where a frame's rows came from, for messages: the file and how to name row ``i``
    (``fmt`` with the value ``locate`` gives: a line, a row id, an event index)."""

    def __init__(self, path, fmt="row {}", locate=None):
        self.path = str(path)
        self.fmt = fmt
        self.locate = locate

    def describe(self, rows):
        rows = np.asarray(rows, dtype=np.int64)
        where = self.locate(rows) if self.locate is not None else rows.tolist()
        return [self.fmt.format(w) for w in where]


def _as_int64(values, name=None, bad=None):
    """``values`` as an Int64 array. Values that do not fit 64 bits (inf, beyond +-2^63,
    text) become NA and are recorded in ``bad`` ({column: {row: value}}) when given."""
    if isinstance(values, pd.arrays.IntegerArray):
        return values
    if isinstance(values, pd.Series):
        values = values.array
    if isinstance(values, pd.api.extensions.ExtensionArray) and pd.api.types.is_integer_dtype(values.dtype):
        return pd.array(values, dtype="Int64")
    arr = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
    if arr.dtype.kind in "iu":
        if arr.dtype.kind == "u" and len(arr) and arr.max() > _INT64_MAX:
            arr = arr.astype(object)
        else:
            return pd.arrays.IntegerArray(arr.astype(np.int64), np.zeros(len(arr), dtype=bool))
    if arr.dtype.kind in "fb":
        arr = arr.astype(np.float64)
        with np.errstate(invalid="ignore"):
            fits = np.isfinite(arr) & (np.abs(arr) < 2.0 ** 63)
        wrong = np.flatnonzero(~np.isnan(arr) & ~fits)
        if len(wrong) and bad is not None:
            bad.setdefault(name, {}).update({int(i): float(arr[i]) for i in wrong})
        return pd.arrays.IntegerArray(np.round(np.where(fits, arr, 0.0)).astype(np.int64), ~fits)
    data = np.zeros(len(arr), dtype=np.int64)
    mask = np.zeros(len(arr), dtype=bool)
    for i, v in enumerate(arr):
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            mask[i] = True
            continue
        try:
            if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                iv = int(v)
            else:
                iv = int(round(float(v)))
        except (TypeError, ValueError, OverflowError):
            iv = None
        if iv is None or not _INT64_MIN <= iv <= _INT64_MAX:
            mask[i] = True
            if bad is not None:
                bad.setdefault(name, {})[i] = v
            continue
        data[i] = iv
    return pd.arrays.IntegerArray(data, mask)


def _as_float(values):
    """float64 array; Python integers too large for a float become inf (reported as such)."""
    try:
        return np.asarray(values, dtype=np.float64)
    except OverflowError:
        out = []
        for v in values:
            try:
                out.append(float(v) if v is not None else math.nan)
            except OverflowError:
                out.append(math.inf if v > 0 else -math.inf)
        return np.array(out, dtype=np.float64)
    except (TypeError, ValueError):
        return pd.array(values, dtype="Float64").to_numpy(dtype=np.float64, na_value=np.nan)


def factorize_text(values):
    """Integer codes and uniques for an object array of strings (None allowed)."""
    if isinstance(values, pd.Categorical):
        return values.codes.astype(np.int64), [str(c) for c in values.categories]
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
    return codes, list(uniques)


def _text_column(values):
    """Object array of text (None for missing) from a list, array or categorical."""
    if isinstance(values, pd.Categorical):
        cats = np.array([str(c) for c in values.categories] + [None], dtype=object)
        codes = values.codes
        return cats[np.where(codes < 0, len(values.categories), codes)]
    return np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) or values.dtype != object \
        else values


def schema_frame(columns, n, tool, extras=None, origin=None, bad=None, int_extras=()):
    """A kernel-trace DataFrame from the columns a reader found, with every row checked.

    ``columns`` holds schema columns as arrays or lists: Int64 ones as IntegerArray or anything
    _as_int64 turns into one (values that do not fit are invalid rows), ``duration_ns`` as
    floats, text as object arrays or a pandas Categorical. ``short_name`` is computed once per
    distinct kernel name. Missing schema columns are NA; ``calls`` defaults to 1 and
    ``duration_ns`` to end - start (exact in integers). ``extras`` follow the schema columns,
    used as they are, except those named in ``int_extras``, which become Int64 as the schema's
    integer columns do. ``origin`` (an Origin) names rows in messages; ``bad`` holds values a
    reader already found out of range ({column: {row: value}}).

    Rows with an empty (where the format gives durations), negative or infinite duration, a
    negative call count or an out-of-range value are an InvalidRowsError, or left out with an
    InvalidRowsWarning under drop_invalid=True (see reader()).
    """
    bad = {} if bad is None else bad
    data = {}
    for name, dtype in SCHEMA.items():
        values = columns.get(name)
        if values is None:
            if dtype == "Int64":
                values = pd.arrays.IntegerArray(np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool))
            elif dtype == "float64":
                values = np.full(n, np.nan)
            else:
                values = np.full(n, None, dtype=object)
        elif dtype == "Int64":
            values = _as_int64(values, name, bad)
        elif dtype == "float64":
            values = _as_float(values)
        else:
            values = _text_column(values)
        data[name] = values
    kernel = columns.get("kernel_name")
    if columns.get("short_name") is None:
        codes, uniques = factorize_text(kernel if isinstance(kernel, pd.Categorical) else data["kernel_name"])
        shorts = np.array([short_kernel_name(u) for u in uniques] + [""], dtype=object)
        data["short_name"] = shorts[codes]
    if columns.get("calls") is None:
        data["calls"] = pd.arrays.IntegerArray(np.ones(n, dtype=np.int64), np.zeros(n, dtype=bool))
    if columns.get("duration_ns") is None:
        start, end = data["start_ns"], data["end_ns"]
        exact = ~(start.isna() | end.isna())
        duration = np.full(n, np.nan)
        # Exact in integers first: ns timestamps exceed a float's 53 bits. A difference beyond
        # 64 bits is made in Python integers.
        s = start.to_numpy(dtype=np.int64, na_value=0)
        e = end.to_numpy(dtype=np.int64, na_value=0)
        with np.errstate(over="ignore"):
            diff = e - s
        wrapped = exact & (np.abs(e.astype(np.float64) - s.astype(np.float64)) >= 2.0 ** 62)
        duration[exact] = diff[exact].astype(np.float64)
        for i in np.flatnonzero(wrapped):
            duration[i] = float(int(e[i]) - int(s[i]))
        data["duration_ns"] = duration
    data["source_tool"] = np.full(n, tool, dtype=object)
    for name, values in (extras or {}).items():
        if name not in data:
            data[name] = _as_int64(values, name, bad) if name in int_extras else values
    for name, values in data.items():
        # Text stays object dtype (as in every reader); pandas would convert it to its
        # string dtype, a copy of every value.
        if isinstance(values, np.ndarray) and values.dtype == object:
            data[name] = pd.Series(values, dtype=object, copy=False)
    df = pd.DataFrame(data, copy=False)
    expect = columns.get("duration_ns") is not None or (
        columns.get("start_ns") is not None and columns.get("end_ns") is not None)
    return check_rows(df, origin or Origin(tool), bad=bad, expect_duration=expect)


def empty_frame(tool, extras=()):
    """A schema frame with no rows (a trace that recorded no GPU work)."""
    return schema_frame({}, 0, tool, {name: [] for name in extras})


# --- the check ----------------------------------------------------------------------------

_SHOW = 5


def _problems(df, bad, expect_duration):
    """(invalid mask, function giving row i's reason) for a frame in the schema."""
    n = len(df)
    duration = pd.to_numeric(df["duration_ns"], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan) \
        if n else np.zeros(0)
    calls = pd.to_numeric(df["calls"], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan) \
        if "calls" in df.columns and n else np.zeros(n)
    out_of_range = np.zeros(n, dtype=bool)
    for rows in bad.values():
        if rows:
            out_of_range[np.fromiter(rows.keys(), dtype=np.int64, count=len(rows))] = True
    empty = np.isnan(duration) if expect_duration else np.zeros(n, dtype=bool)
    with np.errstate(invalid="ignore"):
        negative = duration < 0
        infinite = np.isposinf(duration)
        negative_calls = calls < 0
    invalid = out_of_range | empty | negative | infinite | negative_calls

    def reason(i):
        for name, rows in bad.items():
            if i in rows:
                value = rows[i]
                if isinstance(value, Note):
                    return f"{name} holds {value}"
                if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                    return f"{name} {_show(value)} is beyond 64-bit integers"
                return f"{name} {_show(value)} is not an integer"
        if negative[i]:
            return f"negative duration ({duration[i]:g} ns)"
        if infinite[i]:
            return "infinite duration"
        if empty[i]:
            return "no duration (empty or missing)"
        return f"negative call count ({calls[i]:g})"

    return invalid, reason


class Note(str):
    """A reader's description of a bad value, shown as it is ("a real number, not integer ns")."""


def _show(value):
    if isinstance(value, Note):
        return str(value)
    text = repr(value)
    return text if len(text) <= 30 else text[:27] + "..."


def check_rows(df, origin, bad=None, expect_duration=True, drop_invalid=None,
               hint="Fix the file, or pass drop_invalid=True (trace --drop-invalid) to leave such "
                    "rows out"):
    """``df`` without its invalid rows (see schema_frame), or an InvalidRowsError naming
    them. ``drop_invalid`` None follows the reader's setting."""
    bad = bad or {}
    invalid, reason = _problems(df, bad, expect_duration)
    if not invalid.any():
        return df
    rows = np.flatnonzero(invalid)
    count = len(rows)
    shown = rows[:_SHOW]
    labels = origin.describe(shown)
    listing = "; ".join(f"{w}: {reason(int(i))}" for w, i in zip(labels, shown))
    more = f"; and {count - len(shown)} more" if count > len(shown) else ""
    drop = _DROP_INVALID.get() if drop_invalid is None else drop_invalid
    if drop:
        warnings.warn(InvalidRowsWarning(
            f"{origin.path}: left out {count} of {len(df)} rows with an invalid duration or "
            f"timestamp ({listing}{more})"), stacklevel=3)
        return df.loc[~invalid].reset_index(drop=True)
    raise InvalidRowsError(
        origin.path,
        f"{count} of {len(df)} rows have an invalid duration or timestamp ({listing}{more}); "
        f"a time breakdown with them would be wrong. {hint}",
        rows=labels, count=count)


def check_frame(df, drop_invalid=False, what="trace"):
    """Check the durations of a kernel-trace DataFrame before adding them up (breakdown,
    amdahl, diff): rows with a negative, empty or infinite duration or a negative call count
    are a ValueError naming their index labels, or left out with a warning when
    ``drop_invalid``. A frame without any duration is a ValueError of its own."""
    drop = drop_invalid_flag(drop_invalid)
    missing = [c for c in ("duration_ns", "kernel_name") if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: not a kernel-trace DataFrame (no {', '.join(missing)} column)")
    if "calls" not in df.columns:
        df = df.assign(calls=1)
    duration = pd.to_numeric(df["duration_ns"], errors="coerce")
    if len(df) and duration.isna().all():
        raise ValueError(f"{what}: no row has a duration (duration_ns is empty in all {len(df)} "
                         "rows: a counters-only profile?), so there is no GPU time to add up")
    index = df.index
    origin = Origin(f"the {what} DataFrame", "row {}", lambda rows: [index[r] for r in rows])
    try:
        return check_rows(df, origin, expect_duration=True, drop_invalid=drop,
                          hint="Pass drop_invalid=True to leave such rows out")
    except InvalidRowsError as exc:
        raise ValueError(str(exc)) from None
