"""Profiler values and units -> numbers in base units (bytes, ns, per-second rates, Hz).

Nsight Compute auto-scales its units unless run with ``--print-units base`` ("1.23 Kbyte",
"12.5 usecond", "1.59 cycle/nsecond") and prints thousands separators and "n/a"; every value a
reader keeps goes through here so that a column never mixes scales.
"""

import math
import re

# SI prefixes as Nsight Compute prints them; binary ones in case a tool writes KiB-style units.
_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "Ki": 1024.0, "Mi": 1024.0 ** 2, "Gi": 1024.0 ** 3, "Ti": 1024.0 ** 4}

# Time in a numerator is normalised to nanoseconds (the trace schema's unit) ...
_TIME_NS = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6,
            "second": 1e9, "s": 1e9, "sec": 1e9}
# ... and in a denominator to "per second", so that rates read as byte/second, inst/second.
_PER_SECOND = {"nsecond": 1e9, "ns": 1e9, "usecond": 1e6, "us": 1e6, "msecond": 1e3, "ms": 1e3,
               "second": 1.0, "s": 1.0, "sec": 1.0}

# Countable base units that Nsight Compute prefixes (Kbyte, Ginst, Mhz, ...).
_BASES = ("byte", "hz", "inst", "cycle", "warp", "sector", "request", "thread", "block",
          "wavefront", "transaction", "B")
_UNIT_RE = re.compile(r"^(Ki|Mi|Gi|Ti|K|k|M|G|T|P)?(" + "|".join(_BASES) + r")$", re.IGNORECASE)

_NUMBER_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_MISSING = {"", "n/a", "N/A", "na", "NA", "nan", "NaN", "-", "--", "(null)", "None"}


def _scale_term(term):
    """Scale factor and base spelling of one unit term ("Kbyte" -> 1e3, "byte")."""
    if term in _TIME_NS:
        return _TIME_NS[term], "ns"
    m = _UNIT_RE.match(term)
    if m is None:
        return 1.0, term
    prefix, base = m.group(1) or "", m.group(2)
    factor = _PREFIX.get(prefix, _PREFIX.get(prefix.upper(), 1.0))
    return factor, "byte" if base == "B" else base.lower()


def unit_scale(unit):
    """Factor and base unit that turn a value in ``unit`` into base units.

    "Kbyte" -> (1e3, "byte"); "usecond" -> (1e3, "ns"); "Gbyte/second" -> (1e9, "byte/second");
    "cycle/nsecond" -> (1e9, "cycle/second"); unknown units -> (1.0, unit).
    """
    unit = (unit or "").strip()
    if not unit:
        return 1.0, ""
    if unit == "%":
        return 1.0, "%"
    if "/" in unit:
        num, den = (part.strip() for part in unit.split("/", 1))
        f_num, b_num = _scale_term(num)
        if den in _PER_SECOND:
            return f_num * _PER_SECOND[den], f"{b_num}/second"
        f_den, b_den = _scale_term(den)
        return f_num / f_den, f"{b_num}/{b_den}"
    return _scale_term(unit)


def parse_number(text):
    """A profiler's number as float: thousands separators removed, "n/a"/"" -> NaN.

    Returns None when the text is not a number at all (a name such as "PolicySpread").
    """
    if text is None:
        return math.nan
    if isinstance(text, (int, float)):
        return float(text)
    s = str(text).strip()
    if s in _MISSING:
        return math.nan
    s = s.replace(",", "").replace("_", "")
    if s.endswith("%"):
        s = s[:-1].strip()
    if _NUMBER_RE.match(s):
        return float(s)
    if s.lower() in ("inf", "+inf", "-inf"):
        return float(s)
    return None


def to_base(text, unit):
    """Value text in ``unit`` -> (float in base units or None if not numeric, base unit)."""
    factor, base = unit_scale(unit)
    value = parse_number(text)
    if value is None:
        return None, base
    return value * factor, base
