"""The noise model behind a verdict: each row's relative standard error of the median time
(spread capped against slow outliers, estimated from the range or assumed when missing), whether
its own timings show interference, and the noise floors of each backend. The package docstring
(bwprof.baseline) states the model in full; docs/baselines.md has the measurements behind it."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

DEFAULT_K = 3.0
DEFAULT_MIN_EFFECT_PCT = 2.0
ASSUMED_CV = 0.05


@dataclass(frozen=True)
class Floors:
    """A backend's noise floors: the run-to-run noise of a row whose own timings are steady
    (``steady_pct``) and of one whose timings show interference (``unstable_pct``), and the
    absolute timing noise (``abs_us``: clock resolution and launch jitter)."""

    steady_pct: float
    unstable_pct: float
    abs_us: float


# GPU: device events resolve about 0.5 us; two runs of one kernel differ by about 1 % (H100).
# CPU: a steady clock (ns), but a time-shared machine. On the 2-core test machine, rows that were
# steady in both of two identical runs differed by 1 % typically and up to 20-45 % (a whole run
# slower for a while); rows whose own timings show interference (CV > 10 % or max > 2x median,
# the core's `unstable`) differed by up to 2x. docs/baselines.md has the trial.
BACKEND_FLOORS = {"gpu": Floors(1.0, 1.0, 0.5), "cpu": Floors(5.0, 20.0, 0.05)}
DEFAULT_NOISE_FLOOR_PCT = BACKEND_FLOORS["gpu"].steady_pct
DEFAULT_NOISE_FLOOR_US = BACKEND_FLOORS["gpu"].abs_us


def backend_kind(df: pd.DataFrame) -> np.ndarray:
    """"cpu" or "gpu" per row: the ``backend`` column, else the ``device`` id; unknown rows are
    taken for GPU rows (the tighter relative floor)."""
    def col(name):
        return df[name].fillna("").astype(str).str.lower().to_numpy() if name in df else np.full(len(df), "")
    backend, device = col("backend"), col("device")
    cpu = (backend == "cpu") | ((backend == "") & (device == "cpu"))
    return np.where(cpu, "cpu", "gpu")


def unstable(df: pd.DataFrame) -> np.ndarray:
    """Whether each row's own timings show interference: the core's ``unstable`` flag, or the
    same rule (CV > 10 % or max > 2x median) from the statistics a row carries."""
    n = len(df)

    def num(name):
        return pd.to_numeric(df[name], errors="coerce").to_numpy(dtype=float) if name in df else np.full(n, np.nan)
    flag = df["unstable"].map(lambda v: str(v).strip().lower() in ("true", "1", "yes")).to_numpy(dtype=bool) \
        if "unstable" in df else np.zeros(n, dtype=bool)
    m, tmax, cv = num("time_median_us"), num("time_max_us"), num("time_cv")
    with np.errstate(invalid="ignore", divide="ignore"):
        cv = np.where(np.isnan(cv), num("time_std_us") / num("time_mean_us"), cv)
        return flag | (cv > 0.10) | ((m > 0) & (tmax > 2.0 * m))
# The standard deviation is trusted up to this multiple of the spread seen below the median.
_SPREAD_CAP = 3.0
# Large-sample standard error of the median = sqrt(pi/2) * std / sqrt(n) for normal data.
_MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2.0)

# Two-sided 95 % Student t quantiles; the ratio to 1.96 widens a spread estimated from few repeats.
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021,
         60: 2.000, 120: 1.980}
# Expected range of n standard normal samples (d2), to estimate a spread from min and max.
_D2 = {2: 1.128, 3: 1.693, 4: 2.059, 5: 2.326, 6: 2.534, 8: 2.847, 10: 3.078, 15: 3.472,
       20: 3.735, 25: 3.931, 30: 4.086, 50: 4.498, 100: 5.015, 200: 5.492, 500: 6.073,
       1000: 6.483}


def _interp_table(table: dict, x: np.ndarray, beyond: float) -> np.ndarray:
    keys = np.array(sorted(table), dtype=float)
    vals = np.array([table[k] for k in sorted(table)], dtype=float)
    out = np.interp(x, keys, vals)
    return np.where(x > keys[-1], beyond, out)


# A move is decided (slower or faster, not undecided) only if the runs' sampling noise alone is
# DECIDING_K standard errors from it: a two-sided chance of 6e-7 for near-normal timings of one
# distribution (k = 3 leaves 0.3 %), and still under 3e-4 for a flat (uniform) one, whose median
# varies 1.4x more than the normal formula says (docs/baselines.md, "Undecided").
DECIDING_K = 5.0
# t(Phi(DECIDING_K), dof) / DECIDING_K: the same tail chance when the spread is estimated from
# few repeats (from scipy.stats.t.ppf; pooled dof = n_base + n_new - 2).
_T_TAIL = {2: 264.1, 4: 11.37, 6: 4.404, 8: 2.85, 10: 2.233, 14: 1.723, 18: 1.506, 24: 1.347,
           30: 1.264, 40: 1.188, 60: 1.119, 100: 1.069, 200: 1.033, 400: 1.016, 1000: 1.007}


def deciding_widen(dof: np.ndarray) -> np.ndarray:
    """The factor DECIDING_K's test widens by for a spread estimated with ``dof`` degrees of freedom."""
    known = np.isfinite(dof)  # repeats not recorded: no spread was estimated, nothing to widen
    d = np.where(known, np.maximum(dof, 2.0), 2.0)
    return np.where(known, _interp_table(_T_TAIL, d, beyond=1.0), 1.0)


def _median_rel_se(df: pd.DataFrame, widen_few: bool = True) -> np.ndarray:
    """Relative standard error of each row's median time (see the bwprof.baseline docstring);
    ``widen_few=False`` leaves out the widening for few repeats (the caller widens itself)."""
    m = df["time_median_us"].to_numpy(dtype=float)
    nan = np.full(len(df), np.nan)
    n = df["repeats"].to_numpy(dtype=float) if "repeats" in df else nan
    std = df["time_std_us"].to_numpy(dtype=float) if "time_std_us" in df else nan
    tmin = df["time_min_us"].to_numpy(dtype=float) if "time_min_us" in df else nan
    tmax = df["time_max_us"].to_numpy(dtype=float) if "time_max_us" in df else nan

    n_ok = np.isfinite(n) & (n >= 2)
    n_eff = np.where(n_ok, n, 1.0)
    spread = np.where(np.isfinite(std) & (std >= 0) & n_ok, std, np.nan)
    # A few slow outliers (a GPU timing's usual flaw) inflate the standard deviation but hardly
    # move the median, so cap the spread at a multiple of a robust one taken from the fast side.
    d2 = _interp_table(_D2, n_eff, beyond=_D2[max(_D2)])
    lower = 2.0 * (m - tmin) / d2
    capped = np.isfinite(spread) & np.isfinite(lower) & (lower > 0)
    spread = np.where(capped, np.minimum(spread, _SPREAD_CAP * np.where(capped, lower, 0.0)),
                      spread)
    rng = tmax - tmin
    from_range = np.isnan(spread) & n_ok & np.isfinite(rng) & (rng > 0)
    spread = np.where(from_range, rng / np.where(from_range, d2, 1.0), spread)
    # Nothing known about the spread: assume a typical GPU per-repeat CV.
    spread = np.where(np.isnan(spread), ASSUMED_CV * m, spread)

    t = _interp_table(_T975, np.maximum(n_eff - 1.0, 1.0), beyond=1.96)
    # One repeat (or none recorded): no sample spread to distrust; the assumed CV stands alone.
    widen = np.where(n_ok & widen_few, t / 1.96, 1.0)
    return _MEDIAN_SE_FACTOR * spread / np.sqrt(n_eff) * widen / m
