"""The layer every trace reader stands on: the kernel-trace schema, the drop_invalid option, and
the ONE builder of frames in that schema (``schema_frame``), which is also where every row's
duration and timestamps are checked. A file's bytes, text and JSON come from source.py; CSV
tables are read by csv_table.py (its bytes and lines in csv_source.py, its typed columns in
csv_columns.py); databases by sqlitedb.py.

Malformed input becomes a TraceFormatError naming the file and the line. Rows whose duration
cannot be right (negative, empty, infinite) or whose timestamps do not fit 64-bit nanoseconds
are an InvalidRowsError naming the first offenders, or, when the caller asked for it with
``drop_invalid=True``, left out with one InvalidRowsWarning per table that says how many.

Short names are made once per distinct kernel name; a categorical kernel_name (csv_table.py)
is never expanded to one Python string per row before that.
"""

import contextvars
import functools
import math
import warnings

import numpy as np
import pandas as pd

from .errors import InvalidRowsError, InvalidRowsWarning
from .names import short_kernel_name

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

# Spellings of "no value" in profiler CSVs (units.parse_number reads the same as NaN).
_MISSING = ["", "n/a", "N/A", "na", "NA", "nan", "NaN", "-", "--", "(null)", "None"]
_INT64_MAX = 2 ** 63 - 1
_INT64_MIN = -2 ** 63


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
    if isinstance(values, list) and values:
        # A JSON reader's column: Python ints that all fit 64 bits become one int64 array in C
        # (numpy infers int64 only then); None, floats, text and larger ints go the long way.
        try:
            arr = np.array(values)
        except (ValueError, TypeError, OverflowError):
            arr = None
        if arr is not None and arr.dtype == np.int64 and arr.ndim == 1:
            return pd.arrays.IntegerArray(arr, np.zeros(len(arr), dtype=bool))
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
    try:                                # Python ints and None (JSON): exact, in C
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return pd.array(arr, dtype="Int64")
    except (TypeError, ValueError, OverflowError):
        pass                            # text, fractions, values beyond 64 bits: one by one
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
    # Nanosecond clocks (boot or epoch time) are never negative.
    early = {}
    for name in ("start_ns", "end_ns"):
        if name in df.columns and n:
            values = df[name]
            if isinstance(values.dtype, pd.Int64Dtype):
                early[name] = (values.array._data < 0) & ~values.array._mask
    negative_time = np.zeros(n, dtype=bool)
    for mask in early.values():
        negative_time |= mask
    invalid = out_of_range | empty | negative | infinite | negative_calls | negative_time

    def reason(i):
        for name, rows in bad.items():
            if i in rows:
                value = rows[i]
                if isinstance(value, Note):
                    return f"{name} holds {value}"
                if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                    return f"{name} {_show(value)} is beyond 64-bit integers"
                return f"{name} {_show(value)} is not an integer"
        for name, mask in early.items():
            if mask[i]:
                return f"negative timestamp ({name} {int(df[name].iloc[i])})"
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
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{what}: expected a kernel-trace DataFrame (from bwprof.traces.read), got "
                        f"{type(df).__name__} {df!r:.60}")
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
