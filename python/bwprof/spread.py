"""Noise-based stopping: the ``target_rel_spread=`` of ``measure``, ``profile``, ``sweep`` and
``run_suite`` (``bench --target-spread``), and the warning when the time budget ran out first.

The relative spread is the row's ``time_cv`` (sample standard deviation / mean of the timed runs,
nvbench's "noise"); with a target, the core adds repeats past ``repeats``/``min_time_s`` until it
is at most the target (from 5 samples), within ``max_repeats``, ``max_time_s`` and
``max_total_s``. The row records ``target_rel_spread`` and ``spread_target_met``.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import warnings
from typing import Any, Iterator

from . import arguments as _args


class SpreadTargetWarning(UserWarning):
    """A row's relative spread (``time_cv``) stayed above ``target_rel_spread``: the time budget
    (``max_repeats``, ``max_time_s``, ``max_total_s``) ran out first. The row says
    ``spread_target_met`` False; its figures are as noisy as its ``time_cv`` says."""


def target(name: str, value: Any, off: str = "None: no target") -> float:
    """``target_rel_spread`` checked: None (no target; 0.0 for the core) or a finite fraction in
    (0, 1] (0.02 is 2 %). Anything else is a ValueError naming ``name``; ``off`` says how to ask
    for no target where ``name`` is taken."""
    if value is None:
        return 0.0
    what = f"a fraction in (0, 1], e.g. 0.02 for 2 % ({off})"
    v = _args._real(name, value, what)  # a bool, a string, anything not a real number: named
    if not (math.isfinite(v) and 0.0 < v <= 1.0):
        raise ValueError(f"{name}: expected {what}, got {_args.show(value)}")
    return v


# The rows that missed their target while a gatherer is open (a suite or a sweep warns once).
_gathered: contextvars.ContextVar[list | None] = contextvars.ContextVar("bwprof_spread_missed", default=None)


def _row(m: Any) -> dict:
    return m if isinstance(m, dict) else m.to_dict()


def _missed(row: dict) -> bool:
    return not bool(row.get("spread_target_met", True))


def _one(row: dict) -> str:
    shape = f" {row['shape']}" if row.get("shape") else ""
    cv = 100 * float(row.get("time_cv", math.nan))
    return f"{row.get('kernel')} {row.get('dtype', '')}{shape} (time_cv {cv:.1f} % after {row.get('repeats')} repeats)"


def check(m: Any, who: str, stacklevel: int = 3) -> None:
    """One SpreadTargetWarning when the row ``m`` (a Measurement or its record) missed its target;
    inside :func:`gathered`, the row is kept for the one warning at its end instead."""
    row = _row(m)
    if not _missed(row):
        return
    rows = _gathered.get()
    if rows is not None:
        rows.append(row)
        return
    t = float(row["target_rel_spread"])
    warnings.warn(f"{who}: {_one(row)}: its relative spread stayed above target_rel_spread={t:g} ({100 * t:g} %) "
                  f"until the time budget ran out (max_repeats, max_time_s, max_total_s); the row says "
                  f"spread_target_met False. Allow more (max_time_s=, max_repeats=) or set a looser target",
                  SpreadTargetWarning, stacklevel=stacklevel)


@contextlib.contextmanager
def gathered(who: str, stacklevel: int = 3) -> Iterator[None]:
    """Inside, rows that miss their target are kept, and one SpreadTargetWarning at the end names
    them (a suite or a sweep of many rows warns once). Nested, the outermost one warns."""
    if _gathered.get() is not None:
        yield
        return
    token = _gathered.set([])
    try:
        yield
        rows = _gathered.get()
    finally:
        _gathered.reset(token)
    if rows:
        t = float(rows[0]["target_rel_spread"])
        named = "; ".join(_one(r) for r in rows[:5]) + ("; ..." if len(rows) > 5 else "")
        warnings.warn(f"{who}: {len(rows)} row(s) stayed above target_rel_spread={t:g} ({100 * t:g} %) until the "
                      f"time budget ran out (their rows say spread_target_met False): {named}. Allow more time "
                      f"or set a looser target", SpreadTargetWarning, stacklevel=stacklevel)
