"""The one fixed-width table printer behind every table the CLI prints (bench results, baseline
comparisons, trace breakdowns and Amdahl estimates).

A table is described by a column spec: ``(column, header, format)`` triples, where ``format`` is
a ``str.format`` pattern ("{:.1f}") or a callable. A "{}" column holds text; every other column
holds numbers and is right-aligned so that digits line up.

A row flagged ``above_peak`` (a figure above a measured roof: the data was in a cache, or the
declared traffic is wrong) has its judged figures marked with ``!`` (bandwidth, FLOP/s, their
percentages of the peak, the bound, the grade) and the table ends with a line that says what the
mark means: the table shows the flag as the row holds it.
"""
from __future__ import annotations

import math
from typing import Callable, Iterable, Sequence, Tuple, Union

import pandas as pd

Format = Union[str, Callable[[object], str]]
ColumnSpec = Tuple[str, str, Format]
TEXT = "{}"

FLAG = "above_peak"
MARK = "!"
# The figures the roofs judge: in a row flagged above a peak they carry the mark.
JUDGED = ("bandwidth_gbs", "bandwidth_pct_peak", "bandwidth_pct_theoretical", "bandwidth_pct_attainable", "gflops",
          "compute_pct_peak", "roofline_efficiency_pct", "attainable_gflops", "pct_of_bound", "achieved_gbs",
          "items_per_s", "bound", "grade")
ABOVE_PEAK_NOTE = (f"{MARK} above a measured peak: the data was in a cache, or the declared traffic is wrong; "
                   f"the figure is no utilization")


def flagged(value) -> bool:
    """True for a row's above_peak flag: a bool (numpy's too) or its CSV text ("True", "1")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    try:
        return bool(value)
    except (TypeError, ValueError):
        return False


def format_table(df: pd.DataFrame, columns: Iterable[ColumnSpec], *, sep: str = "  ",
                 missing: str = "-", rule: bool = True, text_align: str = "left", flag: str | None = FLAG) -> str:
    """``df`` as a fixed-width text table: a header line, a line of dashes (``rule``), one line
    per row.

    Columns of the spec that ``df`` lacks are left out. Missing values (None, NaN) print as
    ``missing`` and booleans as yes/NO; a value the format refuses prints as ``str(value)``.
    Text columns are aligned by ``text_align`` ("left" or "right"), numbers to the right; the
    cells of a column are separated by ``sep`` and trailing blanks are dropped.

    Where ``df`` has the ``flag`` column (default ``above_peak``; None: none), the JUDGED cells of
    a flagged row end in ``!`` and the table's last line is :data:`ABOVE_PEAK_NOTE`.
    """
    if text_align not in ("left", "right"):
        raise ValueError(f"text_align must be 'left' or 'right', not {text_align!r}")
    cols = [(c, h, f) for c, h, f in columns if c in df.columns]
    records = df.to_dict("records")
    marks = [flag is not None and flagged(r.get(flag)) for r in records]
    body = [[_marked(_cell(r[c], f, missing), mark and c in JUDGED, missing) for c, _, f in cols]
            for r, mark in zip(records, marks)]
    heads = [h for _, h, _ in cols]
    widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(heads)]
    right = [text_align == "right" or f != TEXT for _, _, f in cols]

    def line(cells: Sequence[str]) -> str:
        return sep.join(v.rjust(w) if r else v.ljust(w) for v, w, r in zip(cells, widths, right)).rstrip()

    lines = [line(heads)]
    if rule:
        lines.append(line(["-" * w for w in widths]))
    note = [ABOVE_PEAK_NOTE] if any(marks) and any(c in JUDGED for c, _, _ in cols) else []
    return "\n".join(lines + [line(b) for b in body] + note)


def frame_columns(df: pd.DataFrame, float_format: Format) -> list:
    """A spec that prints every column of ``df`` under its own name, floats with
    ``float_format`` and everything else as text. A numeric column's header is indented by one
    blank, as pandas' to_string did when these tables were printed with it."""
    spec = []
    for c in df.columns:
        numeric = pd.api.types.is_numeric_dtype(df[c])
        fmt = float_format if pd.api.types.is_float_dtype(df[c]) else TEXT
        spec.append((c, f" {c}" if numeric else str(c), fmt))
    return spec


def _marked(text: str, mark: bool, missing: str) -> str:
    return text + MARK if mark and text != missing else text


def _cell(value, fmt: Format, missing: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return missing
    if isinstance(value, bool):
        return "yes" if value else "NO"
    try:
        return fmt(value) if callable(fmt) else fmt.format(value)
    except (ValueError, TypeError):
        return str(value)
