"""The noise model behind a verdict: each row's relative standard error of the median time
(spread capped against slow outliers, estimated from the range or assumed when missing) and the
default noise floors. The package docstring (bwprof.baseline) states the model in full."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

DEFAULT_K = 3.0
DEFAULT_MIN_EFFECT_PCT = 2.0
DEFAULT_NOISE_FLOOR_PCT = 1.0
DEFAULT_NOISE_FLOOR_US = 0.5
ASSUMED_CV = 0.05
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


def _median_rel_se(df: pd.DataFrame) -> np.ndarray:
    """Relative standard error of each row's median time (see the bwprof.baseline docstring)."""
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
    widen = np.where(n_ok, t / 1.96, 1.0)
    return _MEDIAN_SE_FACTOR * spread / np.sqrt(n_eff) * widen / m
