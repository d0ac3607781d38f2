"""CSV tables of profiler outputs, found after tool preambles and parsed by pandas' C parser, with
the line of every row kept for messages.

A reader names the columns it uses and their types (``kinds``: "text", "int", "float"); those
are parsed typed in one pass, a chunk of rows at a time, into arrays sized once: exact 64-bit
integers for timestamps and ids, floats, and for text integer codes over the distinct values
(so that a kernel name is one Python string per distinct name, not per row). The file is
streamed, never held whole, unless an error needs its lines. A value the typed pass cannot hold
(text where a number belongs, inf, an integer beyond 64 bits) sends the file through a slower
exact pass that names the line of bad text and keeps out-of-range numbers for the frame builder
(table.schema_frame) to report as invalid rows.

A row whose field count differs from the header's (extra or missing fields) is an invalid row:
an InvalidRowsError naming its line, or left out and counted (InvalidRowsWarning) under
``drop_invalid``; never read with its columns shifted. Quotes that do not pair up (an
unterminated quoted field, which would swallow the rows after it) are a TraceFormatError at
the row where the open quote starts. ``ragged`` tables (ncu details pages) skip this check. A
last row with fewer fields (a file cut mid-row) is a TraceFormatError of its own.
"""

import csv
import io
import math
import warnings

import numpy as np
import pandas as pd

from .csv_columns import (_BadValue, _Column, _is_numeric, _label_array, _numbers_or_text, _take,
                          _to_float, _to_int)
from .csv_source import (_HEADER_SCAN_LINES, _PREAMBLE_LINE, _Source, _body_offset, _find_header,
                         _head_lines, _is_preamble, _split)
from .errors import InvalidRowsError, InvalidRowsWarning, TraceFormatError
from .table import _DROP_INVALID, _MISSING, Origin

# Rows parsed at once.
_CHUNK_ROWS = 250_000
# Bytes counted at once by the field-count pass.
_CHUNK_BYTES = 1 << 24
# Floats exactly as written: pandas before 3.0 parses them with a fast parser that can miss the
# last digit; 3.0 round-trips by default and deprecates the option (as in results.py).
_ROUND_TRIP = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------

class _Table:
    """A CSV table: its header, the columns a reader asked for, and the line where each row
    starts (found only when an error or a dropped row needs it)."""

    def __init__(self, source, header, header_line, columns, n, line_map=None, first_line=None):
        self.path = str(source.path)
        self.header = header
        self.header_line = header_line          # 1-based
        self.columns = columns                  # header position -> finished column
        self.n = n
        self.index = {}
        for i, name in enumerate(header):
            self.index.setdefault(name.strip().lower(), i)
        self._source = source
        self._line_map = line_map               # file line of each parsed line, when filtered
        self._first_line = first_line           # line of the first row when each line is a row
        self._row_lines = None
        self._parent = None
        self._rows = None
        self.converted = {}

    # --- where rows are -------------------------------------------------------------------

    def lines_of(self, rows):
        """1-based file lines where the given rows (positions) start."""
        rows = np.asarray(rows, dtype=np.int64)
        if self._parent is not None:
            return self._parent.lines_of(self._rows[rows])
        if self._first_line is not None:
            return [int(self._first_line + r) for r in rows]
        if self._row_lines is None:
            self._row_lines = self._record_lines()
        return [int(self._row_lines[r]) if 0 <= r < len(self._row_lines) else None for r in rows]

    def _record_lines(self):
        """The line of every row, by a pass of the csv module with the rules the parse used
        (blank lines and tool messages skipped)."""
        data = self._source.read_all()
        body = _body_offset(data, self.header_line)
        reader = csv.reader(io.StringIO(data[body:].decode("utf-8", errors="replace"), newline=""))
        out = []
        while len(out) < self.n:
            start = reader.line_num + 1
            try:
                fields = next(reader)
            except (StopIteration, csv.Error):
                break
            if not fields or all(not f.strip() for f in fields):
                continue
            if len(fields) == 1 and _is_preamble(fields[0]):
                continue
            out.append(self.header_line + start)
        return np.array(out + [-1] * (self.n - len(out)), dtype=np.int64)

    def origin(self):
        return Origin(self.path, "line {}", self.lines_of)

    def take(self, rows):
        """The table of the given rows (positions), keeping their lines."""
        rows = np.asarray(rows, dtype=np.int64)
        sub = _Table.__new__(_Table)
        sub.__dict__.update(self.__dict__)
        sub.columns = {j: _take(v, rows) for j, v in self.columns.items()}
        sub.n = len(rows)
        sub._parent = self
        sub._rows = rows
        sub.converted = {k: _take(v, rows) for k, v in self.converted.items()}
        return sub

    def fail(self, bad):
        """The TraceFormatError of a _BadValue, at its line."""
        line = self.lines_of([bad.row])[0]
        return TraceFormatError(self.path, line, f"column {bad.name!r}: {bad.value!r} is not {bad.what}")

    # --- columns --------------------------------------------------------------------------

    def has(self, *names):
        return any(n.lower() in self.index for n in names)

    def _pos(self, names):
        for n in names:
            i = self.index.get(n.lower())
            if i is not None:
                return i
        return None

    def _column(self, names):
        i = self._pos(names)
        if i is None:
            return None, None
        if i not in self.columns:
            raise KeyError(f"{self.header[i]!r} was not among the columns the reader asked for")
        return i, self.columns[i]

    def col(self, *names):
        """Raw strings of the first of ``names`` present (case-insensitive; "" for a blank),
        else None."""
        i, values = self._column(names)
        if i is None:
            return None
        if isinstance(values, pd.Categorical):
            cats = np.array([str(c) for c in values.categories] + [""], dtype=object)
            return cats[np.where(values.codes < 0, len(values.categories), values.codes)]
        if isinstance(values, np.ndarray) and values.dtype == object and not _is_numeric(values):
            return values
        out = np.asarray(values, dtype=object)
        return np.array(["" if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))
                         else str(v) for v in out], dtype=object)

    def categorical(self, *names):
        """(codes, uniques) of a text column: -1 for a blank; each distinct value once."""
        i, values = self._column(names)
        if i is None:
            return None
        if isinstance(values, pd.Categorical):
            return values.codes.astype(np.int64), [str(c) for c in values.categories]
        codes, uniques = pd.factorize(pd.Series(self.col(*names), dtype=object))
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
        i, values = self._column(names)
        if i is None:
            return None
        key = ("f", i)
        if key not in self.converted:
            if isinstance(values, np.ndarray) and values.dtype == np.float64:
                out = values
            elif isinstance(values, pd.arrays.IntegerArray):
                out = values.to_numpy(dtype=np.float64, na_value=np.nan)
            else:
                try:
                    out = _to_float(self.col(*names), 0, self.header[i])
                except _BadValue as bad:
                    raise self.fail(bad) from None
            self.converted[key] = out
        return self.converted[key]

    def ints(self, *names):
        """Like numbers(), but exact for 64-bit integers such as nanosecond timestamps: an Int64
        array, or an object array holding the values that do not fit (inf, beyond 64 bits),
        which the frame builder reports as invalid rows."""
        i, values = self._column(names)
        if i is None:
            return None
        key = ("i", i)
        if key not in self.converted:
            if isinstance(values, pd.arrays.IntegerArray) or _is_numeric(values):
                out = values
            else:
                try:
                    out = _to_int(self.col(*names), 0, self.header[i])
                except _BadValue as bad:
                    raise self.fail(bad) from None
            self.converted[key] = out
        return self.converted[key]


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


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------

def _kinds_of(header, kinds):
    """Per header position: "int", "float", "text" (a categorical), "object" (raw text), or None
    (parsed for its field count only)."""
    if kinds is None:
        return ["object"] * len(header)
    low = {k.lower(): v for k, v in kinds.items()}
    return [low.get(name.lower()) for name in header]


def _field_misfits(source, body, width, first_line):
    """Records after the header (which starts at byte ``body``, on line ``first_line``) whose
    field count is not ``width``: [(start line, end line, fields)], blank lines and tool
    messages aside; and the start line of a record whose quote is never closed (else None).

    One vectorised pass over the bytes in blocks: a comma or a line break separates only where
    the quotes before it pair up (a doubled quote inside a field toggles twice)."""
    out = []
    parity, commas, newlines = 0, 0, 0      # quotes mod 2; separators of the open record
    start_line, head = first_line, b""      # the open record's line and first bytes
    with source.open() as f:
        skipped = 0
        while skipped < body:
            got = f.read(min(_CHUNK_BYTES, body - skipped))
            if not got:
                break
            skipped += len(got)
        while True:
            block = f.read(_CHUNK_BYTES)
            if not block:
                break
            a = np.frombuffer(block, dtype=np.uint8)
            q = np.flatnonzero(a == 34)
            c = np.flatnonzero(a == 44)
            n = np.flatnonzero(a == 10)
            seps = c[((parity + np.searchsorted(q, c)) & 1) == 0]
            ends = n[((parity + np.searchsorted(q, n)) & 1) == 0]
            if len(ends):
                k = np.searchsorted(seps, ends)
                fields = np.diff(np.concatenate(([0], k))) + 1
                fields[0] += commas
                nl_before = np.searchsorted(n, ends)            # line breaks before each end
                starts = np.concatenate(([start_line], first_line + newlines + nl_before[:-1] + 1))
                for j in np.flatnonzero(fields != width):
                    lo = 0 if j == 0 else int(ends[j - 1]) + 1
                    text = (head if j == 0 else b"") + block[lo:int(ends[j])]
                    if fields[j] == 1 and _is_preamble(text[:4096].decode("utf-8", errors="replace")):
                        continue                                # a blank line or a tool message
                    out.append((int(starts[j]), int(first_line + newlines + nl_before[j]), int(fields[j])))
                start_line = int(first_line + newlines + nl_before[-1] + 1)
                commas = len(seps) - int(k[-1])
                head = block[int(ends[-1]) + 1:][:4096]
            else:
                commas += len(seps)
                head = (head + block)[:4096]
            newlines += len(n)
            parity = (parity + len(q)) & 1
    return out, (start_line if parity else None)


def _read_csv(path, required, text=None, ragged=False, what="this format", kinds=None):
    """Parse ``path`` (or ``text``, its content) as CSV whose header holds every group in
    ``required`` (alternatives per needed column, e.g. [("Kernel_Name",), ...]).

    ``kinds`` ({column name: "text" | "int" | "float"}, case-insensitive) names the columns
    a reader uses; without it every column is read as text. See the module docstring.
    """
    source = _Source(path, text)
    head, tail, newlines, preamble = source.scan()
    lines, starts = _head_lines(head, _HEADER_SCAN_LINES + 1)

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
    column_kinds = _kinds_of(header, kinds)
    # Lines after the header: every row is one of them unless rows hold quoted line breaks.
    physical = newlines - h - (1 if tail.endswith(b"\n") else 0)
    size = max(physical, 1)
    line_map, parse_source, skip = None, source, h + 1
    misfit_lines = set()
    if not ragged:
        misfit_lines = _misfit_rows(source, path, header, h, head)
    if misfit_lines or (preamble and _PREAMBLE_LINE.search(source.read_all(),
                                                           max(_body_offset(source.data, h + 1) - 1, 0))):
        # Tool messages between rows (ncu's "==PROF== Disconnected"), or rows left out that did
        # not fit the header: parse the rows without them, remembering each kept line's place.
        data = source.read_all()
        body = _body_offset(data, h + 1)
        kept, kept_lines = [], []
        for k, line in enumerate(data[body:].split(b"\n")):
            if h + 2 + k in misfit_lines:
                continue
            if not _is_preamble(line.decode("utf-8", errors="replace")):
                kept.append(line)
                kept_lines.append(h + 2 + k)
        line_map = np.array(kept_lines, dtype=np.int64)
        parse_source = _Source(path, b"\n".join(kept).decode("utf-8", errors="replace"))
        skip = 0
    table = _parse(source, parse_source, skip, header, h, column_kinds, ragged, size, line_map)
    if line_map is None and table.n == physical:
        table._first_line = h + 2           # row i is on line h + 2 + i
    if not ragged:
        _check_last_row(table, tail, header, h, newlines, line_map)
    return table


def _misfit_rows(source, path, header, h, head):
    """The lines of rows that do not fit the header, when drop_invalid leaves them out (with an
    InvalidRowsWarning); otherwise they are an InvalidRowsError. An unclosed quote is an error."""
    body = _body_offset(head, h + 1) if head.count(b"\n") > h else None
    if body is None:
        return set()
    with source.open() as f:
        if f.read(3) == b"\xef\xbb\xbf":
            body += 3                   # scan() dropped the byte-order mark; the bytes have it
    misfits, open_quote = _field_misfits(source, body, len(header), h + 2)
    if open_quote is not None:
        raise TraceFormatError(path, open_quote, "a quoted field opened on this line is never closed; "
                               "the rows after it would be read as part of it (damaged file?)")
    # A last row with fewer fields is a file cut mid-row: _check_last_row says so.
    last = misfits[-1] if misfits else None
    if last is not None and last[2] < len(header) and _is_last_record(source, last[1]):
        misfits = misfits[:-1]
    if not misfits:
        return set()
    count = len(misfits)
    listing = "; ".join(f"line {s}: {nf} fields" for s, _, nf in misfits[:5])
    more = f"; and {count - 5} more" if count > 5 else ""
    what = f"do not fit the header (line {h + 1}, {len(header)} fields)"
    if _DROP_INVALID.get():
        warnings.warn(InvalidRowsWarning(f"{path}: left out {count} rows that {what} ({listing}{more})"),
                      stacklevel=4)
        return {line for s, e, _ in misfits for line in range(s, e + 1)}
    raise InvalidRowsError(path, f"{count} rows {what} ({listing}{more}); their columns cannot be told "
                           f"apart. Fix the file, or pass drop_invalid=True (trace --drop-invalid) to leave "
                           f"such rows out", rows=[f"line {s}" for s, _, _ in misfits[:5]], count=count)


def _is_last_record(source, end_line):
    """Whether nothing but blank lines follows line ``end_line``."""
    data = source.read_all()
    pos = _body_offset(data, end_line)
    return not data[pos:].strip()


def _parse(source, parse_source, skip, header, h, kinds, ragged, size, line_map):
    names = [f"c{j}" for j in range(len(header))]
    used = [j for j, k in enumerate(kinds) if k is not None]
    numeric = [j for j in used if kinds[j] in ("int", "float")]

    def dtypes(exact):
        out = {}
        for j, kind in enumerate(kinds):
            if kind == "int":
                out[names[j]] = object if exact else "Int64"
            elif kind == "float":
                out[names[j]] = object if exact else np.float64
            elif kind == "text":
                out[names[j]] = "category"
            else:                           # raw text, or only counted: few distinct values
                out[names[j]] = object if kind == "object" else "category"
        return out

    opts = dict(header=None, names=names, skiprows=skip, keep_default_na=False,
                skip_blank_lines=True, engine="c", chunksize=_CHUNK_ROWS, **_ROUND_TRIP)
    if ragged:
        opts["usecols"] = list(range(len(header)))

    def run(exact):
        columns = {j: _Column(kinds[j], size) for j in used}
        na = {} if exact else {names[j]: _MISSING for j in numeric}
        row0 = 0
        with parse_source.open() as stream:
            for chunk in pd.read_csv(stream, dtype=dtypes(exact), na_values=na, **opts):
                for j in used:
                    columns[j].append(chunk[names[j]], row0, header[j], exact)
                row0 += len(chunk)
        return {j: c.finish() for j, c in columns.items()}, row0

    table = _Table(source, header, h + 1, {}, 0, line_map)
    try:
        try:
            with warnings.catch_warnings():     # pandas warns before it raises on inf in Int64
                warnings.simplefilter("ignore", RuntimeWarning)
                columns, n = run(exact=False)
        except pd.errors.EmptyDataError:
            columns, n = {j: _Column(kinds[j], 0).finish() for j in used}, 0
        except pd.errors.ParserError as exc:
            raise _explain_csv_error(source, header, h, line_map, exc) from None
        except (ValueError, TypeError, OverflowError):
            # A value the typed pass cannot hold: the exact pass says which, on which line.
            columns, n = run(exact=True)
    except pd.errors.ParserError as exc:
        raise _explain_csv_error(source, header, h, line_map, exc) from None
    except _BadValue as bad:
        table.n = bad.row + 1
        raise table.fail(bad) from None
    table.columns, table.n = columns, n
    return table


def _explain_csv_error(source, header, h, line_map, exc):
    """The C parser's structural error as a TraceFormatError at its line, found by a pass of
    the csv module (field counts, unterminated quotes) over the rows."""
    data = source.read_all() if line_map is None else None
    if data is None:
        return TraceFormatError(source.path, None, f"malformed CSV ({str(exc).strip()})")
    body = _body_offset(data, h + 1)
    reader = csv.reader(io.StringIO(data[body:].decode("utf-8", errors="replace"), newline=""),
                        strict=True)
    try:
        while True:
            start = h + 2 + reader.line_num
            try:
                fields = next(reader)
            except StopIteration:
                break
            if not fields or all(not f.strip() for f in fields):
                continue
            if len(fields) > len(header):
                return TraceFormatError(
                    source.path, start,
                    f"{len(fields)} fields where the header (line {h + 1}) has {len(header)}"
                    f" (truncated file or wrong columns?)")
    except csv.Error as e:
        return TraceFormatError(source.path, h + 1 + reader.line_num, f"malformed CSV ({e})")
    return TraceFormatError(source.path, None, f"malformed CSV ({str(exc).strip()})")


def _check_last_row(table, tail, header, h, newlines, line_map):
    """A file cut mid-row leaves a last row with fewer fields: an error at its line."""
    end = len(tail)
    while end > 0 and tail[end - 1:end] in (b"\n", b"\r", b" ", b"\t"):
        end -= 1
    if end <= 0 or table.n == 0:
        return
    start = tail.rfind(b"\n", 0, end) + 1
    fields = _split(tail[start:end].decode("utf-8", errors="replace"))
    if fields and len(fields) < len(header) and not (len(fields) == 1 and not fields[0].strip()):
        # Its line: the lines after it in the tail are blank.
        line = newlines + 1 - tail.count(b"\n", start)
        if line <= h + 1:
            return
        raise TraceFormatError(table.path, line,
                               f"{len(fields)} fields where the header (line {h + 1}) has "
                               f"{len(header)} (truncated file or wrong columns?)")
