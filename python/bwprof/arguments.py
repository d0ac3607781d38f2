"""Arguments from Python, checked and converted before they reach the C++ core.

pybind11 turns a value it cannot convert into ``TypeError: incompatible function arguments`` with
a dump of every overload, and it accepts nothing but exact Python ints for C++ integers (so
``numpy.int64(1024)`` is refused while ``10**12`` overflows). Every public function therefore
passes its arguments through these helpers first: any integral type is taken (``operator.index``),
and a bad value is a ValueError that names the argument and the accepted range.
"""
from __future__ import annotations

import math
import numbers
import operator
import os
from pathlib import Path
from typing import Any, Iterable

import numpy as np

# The C++ side's `int` parameters (warm-up and repeat counts).
INT_MAX = 2**31 - 1
# Sane limits: beyond them a call would run for days, which is a mistake rather than a wish.
MAX_REPEATS = 10**6
MAX_WARMUP = 10**5
MAX_TIME_S = 86400.0  # one day


def show(value: Any) -> str:
    """A short repr for messages (a huge int or a long string is cut)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real error
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _real(name: str, value: Any, what: str) -> float:
    """``float(value)`` for a real number (not a bool); anything else, or a value too big for a
    float, is a ValueError naming the argument."""
    if is_bool(value) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected {what}, got {show(value)} ({type(value).__name__})")
    try:
        return float(value)
    except (OverflowError, ValueError, TypeError):
        raise ValueError(f"{name}: {show(value)} is out of range") from None


def count(name: str, value: Any, lo: int = 0, hi: int = INT_MAX) -> int:
    """An integer count in [lo, hi]: any integral type (int, numpy integers), never a bool."""
    if is_bool(value):
        raise ValueError(f"{name}: expected an integer count, got the bool {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise ValueError(f"{name}: expected an integer, got {show(value)} "
                         f"({type(value).__name__})") from None
    if not lo <= v <= hi:
        raise ValueError(f"{name}: must be between {lo} and {hi}, got {show(v)}")
    return int(v)


def seconds(name: str, value: Any, hi: float = MAX_TIME_S) -> float:
    """A time in seconds: a finite real number in [0, hi] (int, float or numpy number)."""
    v = _real(name, value, "a number of seconds")
    if not (math.isfinite(v) and 0.0 <= v <= hi):
        raise ValueError(f"{name}: must be a finite number of seconds between 0 and {hi:g}, got {show(value)}")
    return v


def number(name: str, value: Any, lo: float = 0.0, hi: float = math.inf, *, lo_open: bool = False) -> float:
    """A finite real number in [lo, hi] ((lo, hi] with ``lo_open``)."""
    v = _real(name, value, "a number")
    ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi
    if not ok:
        lo_text = f"> {lo:g}" if lo_open else f">= {lo:g}"
        hi_text = "" if math.isinf(hi) else f" and <= {hi:g}"
        raise ValueError(f"{name}: must be a finite number {lo_text}{hi_text}, got {show(value)}")
    return v


def flag(name: str, value: Any) -> bool:
    """A yes/no: a bool (also numpy's) or the integers 0 and 1."""
    if is_bool(value):
        return bool(value)
    try:
        v = operator.index(value)
    except TypeError:
        v = None
    if v in (0, 1):
        return bool(v)
    raise ValueError(f"{name}: expected True or False, got {show(value)}")


def text(name: str, value: Any, choices: Iterable[str] | None = None) -> str:
    """A string that C++ can take (UTF-8, no NUL), one of ``choices`` when given."""
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a string, got {show(value)} ({type(value).__name__})")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{name}: {show(value)} is not valid text (unpaired surrogate)") from None
    if "\x00" in value:
        raise ValueError(f"{name}: {show(value)} holds a NUL character")
    if choices is not None:
        choices = list(choices)
        if value not in choices:
            raise ValueError(f"{name}: expected one of {', '.join(choices)}, got {show(value)}")
    return value


def optional_text(name: str, value: Any) -> str | None:
    return None if value is None else text(name, value)


def texts(name: str, value: Any) -> list[str]:
    """One string or an iterable of strings."""
    if isinstance(value, str):
        return [text(name, value)]
    if isinstance(value, (bytes, bytearray)) or not isinstance(value, Iterable):
        raise ValueError(f"{name}: expected a string or a list of strings, got {show(value)}")
    return [text(name, v) for v in value]


def shape_value(name: str, value: Any) -> bool | int | str:
    """A kernel parameter: a bool, an integer (any integral type, or a float with no fraction)
    or a string (the core parses it)."""
    if is_bool(value):
        return bool(value)
    if isinstance(value, str):
        return text(name, value)
    v: Any = None
    if isinstance(value, numbers.Integral) or (hasattr(value, "__index__") and not isinstance(value, numbers.Real)):
        try:
            v = int(operator.index(value))
        except TypeError:
            pass
    if v is None and isinstance(value, numbers.Real):
        f = _real(name, value, "an integer")
        if not math.isfinite(f) or f != math.floor(f):
            raise ValueError(f"{name}: expected an integer, got {show(value)}")
        v = int(f)
    if v is not None:
        if v.bit_length() > 63:  # the core reads 64-bit integers; its own limits are checked there
            raise ValueError(f"{name}: {show(v)} is beyond the 64-bit integer range")
        return v
    raise ValueError(f"{name}: expected an int, bool or str, got {show(value)} ({type(value).__name__})")


def path(name: str, value: Any) -> Path:
    """A file system path: a str or os.PathLike naming something (not empty, no NUL)."""
    if not isinstance(value, (str, os.PathLike)):
        raise ValueError(f"{name}: expected a path (str or os.PathLike), got {show(value)} "
                         f"({type(value).__name__})")
    p = os.fspath(value)
    if not isinstance(p, str):
        raise ValueError(f"{name}: expected a text path, got {show(p)}")
    if p == "" or "\x00" in p:
        raise ValueError(f"{name}: {show(p)} is not a path")
    try:
        p.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise ValueError(f"{name}: {show(p)} is not a valid path") from None
    return Path(p)


def optional_path(name: str, value: Any) -> Path | None:
    return None if value is None else path(name, value)


def frame(name: str, value: Any):
    """A pandas DataFrame."""
    import pandas as pd

    if not isinstance(value, pd.DataFrame):
        raise ValueError(f"{name}: expected a pandas DataFrame, got {type(value).__name__}")
    return value


def mapping(name: str, value: Any, *, optional: bool = True) -> dict | None:
    """A dict (or None where allowed)."""
    if value is None and optional:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"{name}: expected a dict{' or None' if optional else ''}, got {show(value)}")
    return value
