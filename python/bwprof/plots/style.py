"""How bwprof's charts look: colours per dtype, markers per family, the artist ids tests and
users look charts up by, and the number formats on them."""
from __future__ import annotations

import textwrap

import numpy as np

DTYPE_COLORS = {"fp32": "#1f5fa8", "fp16": "#e07b00", "bf16": "#2a9d4b", "int8": "#8e44ad"}
_EXTRA_COLORS = ["#c0392b", "#16a085", "#7f8c8d", "#d35400"]
FAMILY_MARKERS = {"stream": "o", "gemm": "s", "attention": "^", "kv_cache": "v", "q4_0": "D",
                  "layernorm": "P", "bias_act": "X"}
_EXTRA_MARKERS = ["*", "h", "p", "<", ">", "d", "H", "8"]
# Categorical colours for time breakdowns (colour-blind friendly, then the tab20 tail).
_CATEGORY_COLORS = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb",
                    "#ee8866", "#44bb99", "#99ddff", "#dddd77", "#ffaabb", "#77aadd", "#eedd88"]
POINT_LABEL_GID = "bwprof-point-label"
POINTS_GID = "bwprof-kernels"      # the kernels' scatter collections on a roofline
ROOF_GID = "bwprof-roof"           # roof lines (their label says dtype, kind, source)
SWEEP_GID = "bwprof-sweep"         # the measured intensity-sweep curve
RIDGE_LABEL_GID = "bwprof-ridge-label"
LEVEL_GID = "bwprof-cache-roof"    # the cache levels' roofs (L2, L1/shared) on a roofline
LEVEL_COLORS = {"l2": "#555555", "l1": "#999999"}


def _color(dtype: str) -> str:
    if dtype not in DTYPE_COLORS:
        DTYPE_COLORS[dtype] = _EXTRA_COLORS[(len(DTYPE_COLORS) - 4) % len(_EXTRA_COLORS)]
    return DTYPE_COLORS[dtype]


def _marker(family: str) -> str:
    if family not in FAMILY_MARKERS:
        FAMILY_MARKERS[family] = _EXTRA_MARKERS[(len(FAMILY_MARKERS) - 7) % len(_EXTRA_MARKERS)]
    return FAMILY_MARKERS[family]


def _fmt_rate(v: float, unit: str) -> str:
    """46.4 GB/s, 1.2 TB/s, 990 TFLOP/s: three significant digits with an SI prefix."""
    if v is None or not np.isfinite(v):
        return "-"
    base = {"GB/s": ("GB/s", "TB/s"), "GFLOP/s": ("GFLOP/s", "TFLOP/s")}[unit]
    if v >= 1000:
        return f"{v / 1000:.3g} {base[1]}"
    return f"{v:.3g} {base[0]}"


def _wrap(text: str, width: int = 16) -> str:
    return "\n".join(textwrap.wrap(str(text), width=width, break_long_words=False)) or str(text)
