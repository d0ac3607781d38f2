"""Horizontal bars with the first row on top: the one bar drawing behind the time breakdown, the
baseline comparison's change chart and the trace command's --plot."""
from __future__ import annotations

import numpy as np


def hbars(ax, values, labels=None, *, left=None, colors=None, height: float = 0.8, label_size=None, **bar_kw):
    """Draw ``values`` as horizontal bars on ``ax``, the first at the top; returns their y positions.

    ``labels`` (one per bar) become the y tick labels, ``label_size`` points when given. ``left``
    starts each bar elsewhere than at zero (a band from -t to +t); ``colors`` is one colour or one
    per bar (default: the axes' next colour). Other keywords go to ``Axes.barh``.
    """
    values = np.asarray(values, dtype=float)
    # Numeric positions, not the labels themselves: equal labels (two kernels with one short
    # name) would otherwise share one category and draw over each other.
    y = np.arange(len(values))[::-1]
    ax.barh(y, values, height=height, left=left, color=colors, **bar_kw)
    if labels is not None:
        ax.set_yticks(y)
        ax.set_yticklabels(list(labels), **({} if label_size is None else {"fontsize": label_size}))
    return y
