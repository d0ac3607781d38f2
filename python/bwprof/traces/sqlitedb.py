"""The layer the database readers stand on, beside table.py for the text ones: opening a
profiler database safely, pulling whole integer columns fast, and building kernel-trace frames
from arrays. Which tool wrote a database is told in detect.py.

rocprofiler-sdk (rocpd), rocmProfileData (.rpd) and Nsight Systems (``nsys export --type
sqlite``) all write SQLite. A database is opened read-only; every SQLite error (a truncated
or corrupt file, a table that is not there) becomes a TraceFormatError that names the file.

Speed: a rocpd database of a long run holds millions of dispatches. Fetching them row by row
through the sqlite3 module costs a Python object per value; instead each integer column is
fetched as one ``group_concat`` string that numpy parses in C (see ``int_columns``), and text
(kernel names, devices) is looked up once per distinct value and spread with numpy.
"""

import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import TraceFormatError
# The one frame builder (and its helpers) lives in table.py; database readers use it from here.
from .table import Note, Origin, empty_frame, factorize_text, schema_frame  # noqa: F401

SQLITE_MAGIC = b"SQLite format 3\x00"

# A NULL in an integer column comes back as this value (no column read here is negative).
_NULL = -1
# A real number (inf, 1e300, 12.5) in a timestamp column read leniently (see int_columns).
_REAL = -2


def is_sqlite(path):
    """True when ``path`` starts with the SQLite 3 header."""
    try:
        with open(path, "rb") as f:
            return f.read(16) == SQLITE_MAGIC
    except OSError:
        return False


class Database:
    """A read-only SQLite connection whose errors name the file.

    ``query``/``one`` turn sqlite3 errors into TraceFormatError; ``tables`` holds the names
    of tables and views (lower case) so that readers can check what is there first.
    """

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.exists():
            raise FileNotFoundError(f"{self.path}: no such file")
        if self.path.is_dir():
            raise TraceFormatError(self.path, None, "is a directory, not a database file")
        if not is_sqlite(self.path):
            raise TraceFormatError(self.path, None, "not an SQLite database (no SQLite header)")
        try:
            uri = self.path.resolve().as_uri() + "?mode=ro"
            self.con = sqlite3.connect(uri, uri=True)
        except sqlite3.Error as exc:
            raise TraceFormatError(self.path, None, f"cannot open the SQLite database ({exc})") from None
        rows = self.query("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view')")
        self.tables = {name.lower() for _, name in rows}
        self.views = {name.lower() for kind, name in rows if kind == "view"}

    def close(self):
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def fail(self, reason):
        return TraceFormatError(self.path, None, reason)

    def query(self, sql, params=()):
        try:
            return self.con.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self.fail(_explain(exc)) from None

    def one(self, sql, params=()):
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def has(self, *names):
        return all(n.lower() in self.tables for n in names)

    def columns(self, name):
        """Column names of a table or view (as written in the schema)."""
        return [r[1] for r in self.query(f'PRAGMA table_info("{name}")')]

    def require(self, what, *names):
        missing = [n for n in names if n.lower() not in self.tables]
        if missing:
            raise self.fail(f"{what}: table or view {', '.join(missing)} missing "
                            "(truncated export or another tool's database?)")

    def require_columns(self, name, needed, what):
        have = {c.lower() for c in self.columns(name)}
        missing = [c for c in needed if c.lower() not in have]
        if missing:
            raise self.fail(f"{what}: {name} lacks column(s) {', '.join(missing)}")


def _explain(exc):
    text = str(exc)
    if "malformed" in text or "not a database" in text or "disk I/O" in text:
        return f"truncated or corrupt SQLite database ({text})"
    return f"SQLite error: {text}"


def int_columns(db, source, exprs, key, where="", params=(), page=250_000, bounds=None,
                lenient=()):
    """Whole integer columns of ``SELECT exprs FROM source`` as int64 arrays and NULL masks.

    ``exprs`` maps result names to SQL expressions; ``key`` is a unique integer column of
    ``source`` (a primary key or rowid) to walk it in pages of ``page`` rows, ordered by key,
    so that the strings held at once stay small. Within one page every column comes from one
    query, so the aggregates see the rows in the same order and the columns stay aligned.
    With ``bounds`` (the smallest and largest key) a large table is read in two halves on two
    connections at once: SQLite runs without the interpreter lock, so two cores share it.
    A value that is not an integer (text, a real number) is a TraceFormatError, except that in
    the columns named in ``lenient`` (timestamps) a real number (inf, 1e300) comes back as
    the value _REAL, for real_values() to hand to the frame builder as an invalid row.
    Returns ({name: (values, null_mask)}, row count).
    """
    names = list(exprs)
    if bounds is not None and None not in bounds and bounds[1] - bounds[0] > 2 * page \
            and (os.cpu_count() or 1) > 1:
        lo, hi = int(bounds[0]), int(bounds[1])
        mid = (lo + hi) // 2
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = [pool.submit(_read_range, db.path, source, exprs, key, where, params, page, a, b,
                                   lenient)
                       for a, b in ((lo - 1, mid), (mid, hi))]
            halves = [f.result() for f in futures]
    else:
        halves = [_pages(db, source, exprs, key, where, params, page, None, None, lenient)]
    out, total = {}, sum(h[1] for h in halves)
    for name in names:
        got = [piece for h in halves for piece in h[0].pop(name)]   # freed column by column
        if not got:
            out[name] = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool))
        elif len(got) == 1:
            out[name] = got[0]
        else:
            out[name] = (np.concatenate([g[0] for g in got]), np.concatenate([g[1] for g in got]))
        del got
    return out, total


def _read_range(path, source, exprs, key, where, params, page, after, upto, lenient):
    with Database(path) as db:
        return _pages(db, source, exprs, key, where, params, page, after, upto, lenient)


def _pages(db, source, exprs, key, where, params, page, after, upto, lenient=()):
    """Pages of ``source`` with ``after < key <= upto`` (None: unbounded) -> ({name: [pieces]}, n)."""
    names = list(exprs)
    conds = [f"({where})"] if where else []
    if upto is not None:
        conds.append(f"{key} <= {int(upto)}")
    def expr(n):
        if n in lenient:
            return f"CASE WHEN typeof({exprs[n]}) = 'real' THEN {_REAL} ELSE {exprs[n]} END"
        return exprs[n]

    inner = "".join(f", {expr(n)} AS _c{i}" for i, n in enumerate(names))
    parts = "".join(f", group_concat(IFNULL(_c{i}, {_NULL}), ',')" for i in range(len(names)))
    pieces = {n: [] for n in names}
    last, total = after, 0
    while True:
        cond = " AND ".join(conds + ([f"{key} > {int(last)}"] if last is not None else [])) or "1"
        sql = (f"SELECT count(*), max(_k){parts} FROM (SELECT {key} AS _k{inner} FROM {source} "
               f"WHERE {cond} ORDER BY {key} LIMIT {int(page)})")
        row = db.one(sql, params)
        n = int(row[0])
        if n == 0:
            break
        for name, text in zip(names, row[2:]):
            pieces[name].append(_parse_ints(db, name, text, n))
        total += n
        last = row[1]
        if n < page:
            break
    return pieces, total


def _parse_ints(db, name, text, n):
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    if not isinstance(text, str):
        text = str(text)
    try:
        # Text that is not all integers stops the parse early (numpy warns, or raises when
        # warnings are errors): the length check below catches both.
        values = np.fromstring(text, dtype=np.int64, sep=",")
    except (ValueError, DeprecationWarning):
        values = None
    if values is None or len(values) != n:
        bad = next((v for v in text.split(",") if not _is_int(v)), "?")
        raise db.fail(f"column {name!r} holds {bad[:40]!r}, not an integer")
    mask = values == _NULL
    return values, mask


def _is_int(text):
    try:
        int(text)
        return True
    except ValueError:
        return False


def int_array(pair):
    """(values, null_mask) -> pandas Int64 array."""
    values, mask = pair
    return pd.arrays.IntegerArray(values.astype(np.int64, copy=False), mask.copy())


def real_values(got, columns):
    """{schema column: {row: "a real number"}} for the rows of lenient timestamp columns that
    held a real number, and those values masked as NULL; ``columns`` maps the names in ``got``
    to schema columns ("start" -> "start_ns")."""
    bad = {}
    for name, target in columns.items():
        if name not in got:
            continue
        values, mask = got[name]
        rows = np.flatnonzero(values == _REAL)
        if len(rows):
            mask[rows] = True
            bad[target] = {int(r): Note("a real number, not integer nanoseconds") for r in rows}
    return bad


def float_array(pair):
    values, mask = pair
    out = values.astype(np.float64)
    out[mask] = np.nan
    return out


def codes(values):
    """(uniques, inverse) of an integer array: ``uniques[inverse] == values``.

    Ids in traces span a small range (kernel symbols, agents, streams), where a lookup table
    does in one pass what np.unique does with a sort.
    """
    values = np.asarray(values, dtype=np.int64)
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.intp)
    lo, hi = int(values.min()), int(values.max())
    if hi - lo > 4 * len(values) + 1_000_000:
        uniques, inverse = np.unique(values, return_inverse=True)
        return uniques, inverse.reshape(-1)
    present = np.zeros(hi - lo + 1, dtype=bool)
    present[values - lo] = True
    uniques = np.flatnonzero(present) + lo
    slot = np.cumsum(present) - 1
    return uniques, slot[values - lo]


def spread(values, table, default=None):
    """Object array ``table[v]`` for every integer ``v`` (values not in ``table`` -> ``default``);
    each distinct value is looked up once.
    """
    uniques, inverse = codes(values)
    looked = np.empty(len(uniques), dtype=object)
    for i, v in enumerate(uniques.tolist()):
        looked[i] = table.get(v, default)
    return looked[inverse]


def labels(pair):
    """Integer ids (a (values, null_mask) pair) as text labels ("3"), None for NULL: devices
    and streams are text in the schema."""
    values, mask = pair
    uniques, inverse = codes(values)
    out = np.array([str(v) for v in uniques.tolist()], dtype=object)[inverse]
    if mask.any():
        out[mask] = None
    return out
