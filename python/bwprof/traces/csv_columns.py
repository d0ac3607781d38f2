"""Typed CSV columns, parsed a chunk of rows at a time into arrays sized once (exact 64-bit
integers, floats, text as integer codes over its distinct values), and the conversions of raw
values that the table and the format readers share (numbers from text, identifiers as labels,
workgroups from work-items). csv_table.py fills them.
"""

import math

import numpy as np
import pandas as pd

from .table import _INT64_MAX, _INT64_MIN, _MISSING
from .units import parse_number


# --------------------------------------------------------------------------------------------
# Columns parsed a chunk at a time
# --------------------------------------------------------------------------------------------

class _BadValue(Exception):
    """Text where a number belongs: row (position) and column, turned into a line later."""

    def __init__(self, row, name, value, what):
        super().__init__(name)
        self.row, self.name, self.value, self.what = row, name, value, what


class _Column:
    """One column's values, appended chunk by chunk into arrays sized once."""

    def __init__(self, kind, size):
        self.kind, self.n = kind, 0
        if kind == "int":
            self.data = np.zeros(size, dtype=np.int64)
            self.mask = np.ones(size, dtype=bool)
            self.wide = None                # object values once a chunk held numbers beyond 64 bits
        elif kind == "float":
            self.data = np.full(size, np.nan)
        elif kind == "text":
            self.data = np.full(size, -1, dtype=np.int32)
            self.index = {}
        else:
            self.pieces = []

    def append(self, values, row0, name, exact):
        """Append one chunk (a pandas Series); ``exact``: the chunk holds text for numbers."""
        k = len(values)
        end = self.n + k
        if self.kind == "int":
            if exact:
                got = _to_int(values.to_numpy(dtype=object), row0, name)
            else:
                got = values.array
            if isinstance(got, np.ndarray) or self.wide is not None:     # beyond 64 bits
                if self.wide is None:
                    self.wide = _int_objects(self.data[:self.n], self.mask[:self.n])
                self.wide = np.concatenate([self.wide, got if isinstance(got, np.ndarray)
                                            else _int_objects(got._data, got._mask)])
            else:
                self.data[self.n:end] = got._data
                self.mask[self.n:end] = got._mask
        elif self.kind == "float":
            self.data[self.n:end] = _to_float(values.to_numpy(dtype=object), row0, name) if exact \
                else values.to_numpy(dtype=np.float64)
        elif self.kind == "text":
            cats = values.cat.categories
            table = np.array([self.index.setdefault(str(c), len(self.index)) for c in cats] + [-1],
                             dtype=np.int32)
            codes = values.cat.codes.to_numpy()
            self.data[self.n:end] = table[np.where(codes < 0, len(cats), codes)]
        else:
            self.pieces.append(values.to_numpy(dtype=object))
        self.n = end

    def finish(self):
        n = self.n
        if self.kind == "int":
            if self.wide is not None:
                return self.wide
            return pd.arrays.IntegerArray(self.data[:n], self.mask[:n])
        if self.kind == "float":
            return self.data[:n]
        if self.kind == "text":
            return pd.Categorical.from_codes(self.data[:n], categories=pd.Index(list(self.index), dtype=object))
        out = np.concatenate(self.pieces) if self.pieces else np.zeros(0, dtype=object)
        missing = pd.isna(out)
        if missing.any():                   # fields a short (ragged) row lacks
            out[missing] = ""
        return out


def _int_objects(data, mask):
    out = data.astype(object)
    out[mask] = None
    return out


def _to_float(strings, row0, name):
    """Text -> float64: thousands separators, "n/a", percentages as units.parse_number reads
    them; other text raises _BadValue. Each distinct text is parsed once."""
    codes, uniques = pd.factorize(pd.Series(strings, dtype=object))
    values = np.empty(len(uniques) + 1, dtype=np.float64)
    values[-1] = np.nan
    for k, text in enumerate(uniques):
        v = parse_number(text)
        if v is None:
            raise _BadValue(row0 + int(np.flatnonzero(codes == k)[0]), name, text, "a number")
        values[k] = v
    return values[np.where(codes < 0, len(uniques), codes)]


def _to_int(strings, row0, name):
    """Text -> exact integers (Int64 array); numbers beyond 64 bits or infinite are kept as
    Python numbers in an object array, for the frame builder to report as invalid rows; other
    text raises _BadValue."""
    codes, uniques = pd.factorize(pd.Series(strings, dtype=object))
    values = [None] * len(uniques)
    wide = False
    for k, text in enumerate(uniques):
        s = str(text).strip().replace(",", "")
        if s in _MISSING:
            continue
        try:
            v = int(s)
        except ValueError:
            f = parse_number(s)
            if f is None or math.isnan(f):
                raise _BadValue(row0 + int(np.flatnonzero(codes == k)[0]), name, text,
                                "an integer") from None
            v = int(round(f)) if math.isfinite(f) else f
        if not isinstance(v, int) or not _INT64_MIN <= v <= _INT64_MAX:
            wide = True
        values[k] = v
    idx = np.where(codes < 0, len(uniques), codes)
    if wide:
        return np.array(values + [None], dtype=object)[idx]
    data = np.array([0 if v is None else v for v in values] + [0], dtype=np.int64)
    mask = np.array([v is None for v in values] + [True], dtype=bool)
    return pd.arrays.IntegerArray(data[idx], mask[idx])


# --------------------------------------------------------------------------------------------
# Values the table and the readers convert
# --------------------------------------------------------------------------------------------

def _is_numeric(values):
    """An object array of numbers (an int column with values beyond 64 bits), not of text."""
    return isinstance(values, np.ndarray) and values.dtype == object and len(values) > 0 and \
        not any(isinstance(v, str) for v in values[:64])


def _take(values, rows):
    if isinstance(values, (pd.api.extensions.ExtensionArray, pd.Categorical)):
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
    codes, uniques = pd.factorize(pd.Series(
        ["" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in values],
        dtype=object))
    return _label_array(codes.astype(np.int64), list(uniques))


def _numbers_or_text(strings):
    """Text -> float64 array when every value is a number (or blank), else None."""
    codes, uniques = pd.factorize(pd.Series(strings, dtype=object))
    values = np.empty(len(uniques) + 1, dtype=np.float64)
    values[-1] = np.nan
    for k, text in enumerate(uniques):
        v = parse_number(text)
        if v is None:
            return None
        values[k] = v
    return values[np.where(codes < 0, len(uniques), codes)]


def _ceil_div(num, den):
    """Workgroups from work-items: rocprof's grid sizes count work-items, the schema blocks.
    Exact in integers for Int64 columns; NA where the work-group size is 0 or unknown."""
    if num is None or den is None:
        return None
    if isinstance(num, pd.arrays.IntegerArray) and isinstance(den, pd.arrays.IntegerArray):
        n, d = num._data, den._data
        ok = ~num._mask & ~den._mask & (d > 0)
        out = np.zeros(len(n), dtype=np.int64)
        np.floor_divide(n + d - 1, np.where(ok, d, 1), out=out, where=ok)
        return pd.arrays.IntegerArray(out, ~ok)
    num = np.asarray(num, dtype="float64")
    den = np.asarray(den, dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den > 0, np.ceil(num / den), np.nan)
    return out
