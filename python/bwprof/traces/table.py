"""The layer every trace reader stands on: a profiler file's text (gzip, encodings, binary junk
caught with its line), CSV tables found after tool preambles and read with line numbers, JSON,
and the builder of frames in the kernel-trace schema. Malformed input becomes a
TraceFormatError naming the file and the line."""

import csv
import gzip
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import TraceFormatError
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


# --------------------------------------------------------------------------------------------
# Reading text, CSV and JSON with line numbers
# --------------------------------------------------------------------------------------------

def _read_text(path):
    """The file's text; binary or undecodable content is a TraceFormatError at its line."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise TraceFormatError(path, None, "is a directory, not a profiler output file")
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":                 # PyTorch writes .json.gz traces
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise TraceFormatError(path, None, f"truncated or corrupt gzip data ({exc})") from None
    if not data.strip():
        raise TraceFormatError(path, 1, "file is empty")
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise TraceFormatError(path, line, "binary data (NUL byte); expected a CSV or JSON text file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TraceFormatError(path, line, "binary data (not UTF-8 text); expected CSV or JSON") from None
    return text


def _is_preamble(line):
    """Lines that tools print before (or between) CSV rows: ncu's ==PROF==, nsys's progress."""
    s = line.strip()
    return (not s or s.startswith("==") or s.startswith("Generating ") or s.startswith("Processing [")
            or s.startswith("** ") or s.startswith("NOTICE:") or s.startswith("WARNING:"))


def _lines(text):
    # Only real line breaks: kernel names never hold them, but may hold other odd characters.
    return re.split(r"\r?\n", text)


def _split(line):
    try:
        return next(csv.reader([line]))
    except (csv.Error, StopIteration):
        return []


class _Table:
    """A CSV table: header, rows and the line number where each row starts."""

    def __init__(self, path, header, header_line, rows, lines):
        self.path = path
        self.header = header
        self.header_line = header_line
        self.rows = rows
        self.lines = lines
        self.index = {}
        for i, name in enumerate(header):
            self.index.setdefault(name.strip().lower(), i)

    def has(self, *names):
        return any(n.lower() in self.index for n in names)

    def col(self, *names):
        """Raw strings of the first of ``names`` present (case-insensitive), else None."""
        for n in names:
            i = self.index.get(n.lower())
            if i is not None:
                return [r[i] if i < len(r) else "" for r in self.rows]
        return None

    def numbers(self, *names):
        """Floats of the first of ``names`` present, NaN for blanks, None if absent."""
        raw = self.col(*names)
        if raw is None:
            return None
        out = np.empty(len(raw), dtype="float64")
        for k, text in enumerate(raw):
            v = parse_number(text)
            if v is None:
                raise TraceFormatError(self.path, self.lines[k],
                                       f"column {names[0]!r}: {text!r} is not a number")
            out[k] = v
        return out

    def ints(self, *names):
        """Like numbers(), but exact for 64-bit integers such as nanosecond timestamps."""
        raw = self.col(*names)
        if raw is None:
            return None
        out = []
        for k, text in enumerate(raw):
            s = str(text).strip().replace(",", "")
            if s == "" or s.lower() in ("n/a", "nan"):
                out.append(pd.NA)
                continue
            try:
                out.append(int(s))
            except ValueError:
                v = parse_number(s)
                if v is None or math.isnan(v):
                    raise TraceFormatError(self.path, self.lines[k],
                                           f"column {names[0]!r}: {text!r} is not an integer") from None
                out.append(int(round(v)))
        return pd.array(out, dtype="Int64")


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


def _read_csv(path, required, text=None, ragged=False, what="this format"):
    """Parse ``path`` as CSV whose header holds every group in ``required``.

    ``required`` is a list of alternatives per needed column, e.g. [("Kernel_Name",), ...].
    Rows with the wrong number of fields are errors unless ``ragged`` (ncu details pages).
    """
    text = _read_text(path) if text is None else text
    lines = _lines(text)

    def ok(fields):
        low = {f.lower() for f in fields}
        return all(any(a.lower() in low for a in alts) for alts in required)

    h = _find_header(path, lines, ok)
    if h is None:
        first = next(i for i, line in enumerate(lines) if not _is_preamble(line))
        have = [f.strip() for f in _split(lines[first])]
        missing = [alts[0] for alts in required
                   if not any(a.lower() in {x.lower() for x in have} for a in alts)]
        raise TraceFormatError(path, first + 1,
                               f"not {what}: missing column(s) {', '.join(missing)}; "
                               f"header has {', '.join(have[:12]) or 'nothing'}")
    header = [f.strip() for f in _split(lines[h])]
    reader = csv.reader(_LineFeeder(lines, h + 1), strict=True)
    rows, row_lines = [], []
    try:
        while True:
            line_no = h + 2 + reader.line_num     # 1-based line where the next record starts
            try:
                fields = next(reader)
            except StopIteration:
                break
            if not fields or all(not f.strip() for f in fields):
                continue
            if len(fields) == 1 and _is_preamble(fields[0]):
                continue
            if len(fields) != len(header):
                if not ragged:
                    raise TraceFormatError(
                        path, line_no,
                        f"{len(fields)} fields where the header (line {h + 1}) has {len(header)}"
                        f" (truncated file or wrong columns?)")
                fields = (fields + [""] * len(header))[:len(header)]
            rows.append(fields)
            row_lines.append(line_no)
    except csv.Error as exc:
        raise TraceFormatError(path, h + 1 + reader.line_num, f"malformed CSV ({exc})") from None
    return _Table(str(path), header, h + 1, rows, row_lines)


class _LineFeeder:
    """Feeds csv.reader the lines after the header so reader.line_num counts file lines."""

    def __init__(self, lines, start):
        self._it = iter(lines[start:])

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it) + "\n"


def _read_json(path, text=None):
    """The file's JSON document; malformed JSON is a TraceFormatError at its line."""
    text = _read_text(path) if text is None else text
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceFormatError(path, exc.lineno,
                               f"malformed JSON ({exc.msg}, column {exc.colno})") from None


# --------------------------------------------------------------------------------------------
# Building schema frames
# --------------------------------------------------------------------------------------------

def _frame(columns, n, tool, extras=None):
    """A DataFrame in the schema from a dict of column -> values (missing ones are NA)."""
    data = {}
    for name, dtype in SCHEMA.items():
        values = columns.get(name)
        if values is None:
            values = [pd.NA] * n if dtype != "float64" else np.full(n, np.nan)
        if dtype == "Int64":
            data[name] = _to_int64(values)
        elif dtype == "float64":
            data[name] = pd.array(values, dtype="Float64").astype("float64") \
                if not isinstance(values, np.ndarray) else values.astype("float64")
        else:
            data[name] = pd.Series(list(values), dtype="object")
    df = pd.DataFrame(data)
    if columns.get("short_name") is None:
        df["short_name"] = [short_kernel_name(k) for k in df["kernel_name"]]
    df["source_tool"] = tool
    if columns.get("calls") is None:
        df["calls"] = pd.array([1] * n, dtype="Int64")
    if columns.get("duration_ns") is None:
        df["duration_ns"] = (df["end_ns"] - df["start_ns"]).astype("Float64").astype("float64")
    for name in ("short_name", "source_tool"):
        df[name] = pd.Series(list(df[name]), dtype="object")
    extra = {name: values for name, values in (extras or {}).items() if name not in df.columns}
    if extra:
        # One concat instead of many inserts: an ncu raw page brings ~100 metric columns.
        df = pd.concat([df, pd.DataFrame(extra, index=df.index)], axis=1)
    return df


def _to_int64(values):
    if isinstance(values, pd.arrays.IntegerArray):
        return values
    arr = np.asarray(values, dtype="object")
    out = []
    for v in arr:
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            out.append(pd.NA)
        else:
            out.append(int(round(float(v))))
    return pd.array(out, dtype="Int64")


def _ceil_div(num, den):
    """Workgroups from work-items: rocprof's grid sizes count work-items, the schema blocks."""
    if num is None or den is None:
        return None
    num = np.asarray(num, dtype="float64")
    den = np.asarray(den, dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den > 0, np.ceil(num / den), np.nan)
    return out


def _text(values):
    """Identifiers (agent, stream) as strings: "2", "Agent 4", "GPU 3" stay recognisable."""
    if values is None:
        return None
    out = []
    for v in values:
        s = str(v).strip()
        if s.endswith(".0") and s[:-2].isdigit():
            s = s[:-2]
        out.append(s if s else None)
    return out


def _numeric_extras(table, skip):
    """Every column not in ``skip`` as a float column (counters); non-numeric ones as text."""
    skip = {s.lower() for s in skip}
    extras = {}
    for name in table.header:
        if not name or name.lower() in skip:
            continue
        raw = table.col(name)
        values = [parse_number(x) for x in raw]
        if all(v is not None for v in values):
            extras[name] = np.array(values, dtype="float64")
        else:
            extras[name] = raw
    return extras
