"""The one fixed-width table printer behind every table the CLI prints (bench results, baseline
comparisons, trace breakdowns and Amdahl estimates).

A table is described by a column spec: ``(column, header, format)`` triples, where ``format`` is
a ``str.format`` pattern ("{:.1f}") or a callable. A "{}" column holds text; every other column
holds numbers and is right-aligned so that digits line up.
"""
from __future__ import annotations

import math
from typing import Callable, Iterable, Sequence, Tuple, Union

import pandas as pd

Format = Union[str, Callable[[object], str]]
ColumnSpec = Tuple[str, str, Format]
TEXT = "{}"


def format_table(df: pd.DataFrame, columns: Iterable[ColumnSpec], *, sep: str = "  ",
                 missing: str = "-", rule: bool = True, text_align: str = "left") -> str:
    """``df`` as a fixed-width text table: a header line, a line of dashes (``rule``), one line
    per row.

    Columns of the spec that ``df`` lacks are left out. Missing values (None, NaN) print as
    ``missing`` and booleans as yes/NO; a value the format refuses prints as ``str(value)``.
    Text columns are aligned by ``text_align`` ("left" or "right"), numbers to the right; the
    cells of a column are separated by ``sep`` and trailing blanks are dropped.
    """
    if text_align not in ("left", "right"):
        raise ValueError(f"text_align must be 'left' or 'right', not {text_align!r}")
    cols = [(c, h, f) for c, h, f in columns if c in df.columns]
    body = [[_cell(r[c], f, missing) for c, _, f in cols] for r in df.to_dict("records")]
    heads = [h for _, h, _ in cols]
    widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(heads)]
    right = [text_align == "right" or f != TEXT for _, _, f in cols]

    def line(cells: Sequence[str]) -> str:
        return sep.join(v.rjust(w) if r else v.ljust(w) for v, w, r in zip(cells, widths, right)).rstrip()

    lines = [line(heads)]
    if rule:
        lines.append(line(["-" * w for w in widths]))
    return "\n".join(lines + [line(b) for b in body])


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


def _cell(value, fmt: Format, missing: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return missing
    if isinstance(value, bool):
        return "yes" if value else "NO"
    try:
        return fmt(value) if callable(fmt) else fmt.format(value)
    except (ValueError, TypeError):
        return str(value)
