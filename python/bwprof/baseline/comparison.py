"""Comparing a new run with a baseline: rows matched on their key, the change in median time,
the threshold it must pass and the verdict, regressions first."""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from .errors import BaselineError
from .files import KEY_COLUMNS, OPTIONAL_KEY_COLUMNS, _normalize, load
from .. import arguments as _args
from .statistics import (BACKEND_FLOORS, DECIDING_K, DEFAULT_K, DEFAULT_MIN_EFFECT_PCT, _median_rel_se, backend_kind,
                         deciding_widen, unstable)

VERDICTS = ("slower", "faster", "undecided", "unchanged", "only in baseline", "only in new")

OUTPUT_COLUMNS = ["device", "kernel", "variant", "dtype", "shape", "baseline_time_us",
                  "new_time_us", "change_pct", "threshold_pct", "verdict"]


def _direction(change: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """+1 slower, -1 faster, 0 within the threshold (NaN: 0).

    Symmetric in the ratio: new/base > 1 + t is slower, base/new > 1 + t faster, so swapping
    the two runs swaps the verdicts (with thresholds of tens of percent, as on a shared CPU,
    "-t" would make a slowdown much easier to flag than the same speed-up)."""
    with np.errstate(invalid="ignore"):
        return np.where(change > threshold, 1, np.where(change < -threshold / (1.0 + threshold), -1, 0))


# A move beyond the threshold is decided only if it is larger, by this factor (log scale), than
# every noise-like move of the pair in the other direction: noise moves rows both ways, a change
# one way. 1.0 left two rows of identical recorded CPU runs decided (tests/data/baselines).
ENVELOPE_MARGIN = 1.25
# Fewer repeats than this on either side cannot show the run's noise (2 repeats of a bimodal
# timing may both land on its slow mode): such a move past the threshold is undecided.
MIN_DECIDING_REPEATS = 5


def _decided(move: np.ndarray, direction: np.ndarray, min_direction: np.ndarray,
             busy: bool) -> np.ndarray:
    """Which moves beyond the threshold the runs' own noise separates (see docs/baselines.md,
    "Undecided"): the fastest repeats moved the same way, no row that looks like noise moved as
    far the other way and, on a busy pair, no row moved notably the other way."""
    ok = np.isfinite(move)
    # The fastest repeats must agree (unknown minimum: no objection).
    agrees = (min_direction == direction) | (min_direction == 2)
    # Noise evidence: rows within their threshold, or past it with fastest repeats that did not
    # follow; a row that moved past its threshold with its fastest repeats is a change, not noise.
    noise = ok & ((direction == 0) | ~agrees)
    slow_env = np.max(move[noise & (move > 0)], initial=0.0)     # the largest slowdown of noise
    fast_env = np.max(-move[noise & (move < 0)], initial=0.0)    # the largest speed-up of noise
    notable = np.log1p(NOTABLE_MOVE)
    n_slow = int((ok & (move > notable)).sum())
    n_fast = int((ok & (move < -notable)).sum())
    opposite_env = np.where(direction > 0, fast_env, slow_env)
    opposite_n = np.where(direction > 0, n_fast, n_slow)
    with np.errstate(invalid="ignore"):
        beyond = np.abs(move) > ENVELOPE_MARGIN * opposite_env
    return (direction != 0) & agrees & beyond & ~(busy & (opposite_n >= 2))


def _as_frame(obj: Any, what: str) -> pd.DataFrame:
    if isinstance(obj, pd.DataFrame):
        return _normalize(obj, source=what)
    if isinstance(obj, (str, os.PathLike)):
        try:
            return load(obj)
        except ValueError as e:  # say which side the file was given for
            raise BaselineError(f"{what}: {e}") from None
    raise TypeError(f"{what}: expected a DataFrame or a path, got {type(obj).__name__}")


def _check_unique(df: pd.DataFrame, keys: list, what: str) -> None:
    dup = df.duplicated(subset=keys, keep=False)
    if dup.any():
        first = df.loc[dup].iloc[0]
        label = ", ".join(f"{k}={first[k]!r}" for k in keys)
        raise BaselineError(f"{what}: {int(dup.sum())} rows share one key ({label}); "
                            f"each kernel/variant/dtype/shape must appear once per side")


def compare(df: Any, baseline: Any, *, force: bool = False,
            min_effect_pct: float = DEFAULT_MIN_EFFECT_PCT,
            noise_floor_pct: float | None = None,
            k: float = DEFAULT_K, noise_floor_us: float | None = None,
            unstable_floor_pct: float | None = None) -> pd.DataFrame:
    """Compare a new run with a baseline; one row per kernel with the change and a verdict.

    ``df`` and ``baseline`` are results DataFrames or paths that :func:`load` reads. Runs from
    different devices are refused (BaselineError) unless ``force=True``, which matches ignoring
    the device ("different devices" = no device in common). Rows present on one side only are
    kept with verdict "only in baseline"/"only in new". ``threshold_pct`` is the change that row
    needed to count (see the bwprof.baseline docstring).

    The noise floors default to each row's backend (``BACKEND_FLOORS``): ``noise_floor_pct`` is
    the run-to-run noise of a row whose timings are steady in both runs, ``unstable_floor_pct``
    that of a row whose timings show interference in either run (at least the steady floor),
    ``noise_floor_us`` the absolute timing noise. A number given applies to every backend.
    """
    force = _args.flag("force", force)
    min_effect_pct = _args.number("min_effect_pct", min_effect_pct, 0.0, 1e6)
    k = _args.number("k", k, 0.0, 1e3, lo_open=True)
    if noise_floor_pct is not None:
        noise_floor_pct = _args.number("noise_floor_pct", noise_floor_pct, 0.0, 1e6)
    if unstable_floor_pct is not None:
        unstable_floor_pct = _args.number("unstable_floor_pct", unstable_floor_pct, 0.0, 1e6)
    if noise_floor_us is not None:
        noise_floor_us = _args.number("noise_floor_us", noise_floor_us, 0.0, 1e9)
    new = _as_frame(df, "new run")
    base = _as_frame(baseline, "baseline")

    keys = list(KEY_COLUMNS)
    for col in OPTIONAL_KEY_COLUMNS:
        if col in new.columns and col in base.columns:
            keys.append(col)

    base_devices, new_devices = set(base["device"]), set(new["device"])
    # Runs that share a device compare on it (other devices' rows are one-sided); runs with no
    # device in common would compare different hardware, which needs force.
    cross_device = base_devices.isdisjoint(new_devices)
    if cross_device and not force:
        raise BaselineError(
            f"refusing to compare runs from different devices (baseline: "
            f"{', '.join(sorted(base_devices))}; new: {', '.join(sorted(new_devices))}); "
            f"pass force=True (--force) to match ignoring the device")
    match_keys = [c for c in keys if c != "device"] if cross_device else keys

    ignored = " (device ignored under force)" if cross_device else ""
    _check_unique(base, match_keys, "baseline" + ignored)
    _check_unique(new, match_keys, "new run" + ignored)

    floors = ("_rel_se", "_se_raw", "_steady", "_unstable_floor", "_abs", "_noisy", "_min", "_repeats")
    base = base.assign(**_noise(base, noise_floor_pct, unstable_floor_pct, noise_floor_us))
    new = new.assign(**_noise(new, noise_floor_pct, unstable_floor_pct, noise_floor_us))
    cols = match_keys + ["time_median_us", *floors] + (["device"] if cross_device else [])
    merged = base[cols].merge(new[cols], on=match_keys, how="outer",
                              suffixes=("_b", "_n"), indicator=True, sort=False)

    if cross_device:
        db = merged["device_b"].fillna("").astype(str)
        dn = merged["device_n"].fillna("").astype(str)
        merged["device"] = np.where((db == dn) | (dn == ""), db,
                                    np.where(db == "", dn, db + " -> " + dn))

    def side(name: str, s: str) -> np.ndarray:
        return merged[f"{name}_{s}"].to_numpy(dtype=float)

    tb, tn = side("time_median_us", "b"), side("time_median_us", "n")
    # A row whose timings show interference in either run was measured while the machine was not
    # steady: both runs' figures for it get the interference floor.
    noisy = (side("_noisy", "b") > 0) | (side("_noisy", "n") > 0)
    fb = np.where(noisy, side("_unstable_floor", "b"), side("_steady", "b"))
    fn = np.where(noisy, side("_unstable_floor", "n"), side("_steady", "n"))
    with np.errstate(divide="ignore", invalid="ignore"):
        rest = fb ** 2 + fn ** 2 + (side("_abs", "b") / tb) ** 2 + (side("_abs", "n") / tn) ** 2
        u = np.sqrt(side("_rel_se", "b") ** 2 + side("_rel_se", "n") ** 2 + rest)
        # The sampling noise alone, for deciding: were the two runs alike, each one's spread would
        # estimate the same noise, so the larger applies to both (a run whose few repeats happened
        # to land close together does not make the other run's spread smaller).
        u_sampling = np.sqrt(2.0) * np.fmax(side("_se_raw", "b"), side("_se_raw", "n")) \
            * deciding_widen(side("_repeats", "b") + side("_repeats", "n") - 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        change = tn / tb - 1.0
        min_change = side("_min", "n") / side("_min", "b") - 1.0
        move = np.log(tn / tb)
    threshold = np.maximum(min_effect_pct / 100.0, k * u)
    which = merged["_merge"].astype(str).to_numpy()
    both = which == "both"
    move = np.where(both, move, np.nan)
    direction = _direction(change, threshold)
    sampled = _direction(change, np.maximum(threshold, DECIDING_K * u_sampling))
    # The fastest repeats' direction against the same threshold; 2 where a minimum is unknown.
    min_direction = np.where(np.isfinite(min_change), _direction(min_change, threshold), 2)
    with np.errstate(invalid="ignore"):
        moved = np.abs(move) > np.log1p(NOTABLE_MOVE)
    n_both, n_moved = int(both.sum()), int(moved[both].sum())
    busy = n_moved >= max(2, BUSY_SHARE * n_both)
    # Repeats unknown (a table without the column): no objection, as for the minimum.
    few = np.zeros(len(move), dtype=bool)
    for r in (side("_repeats", "b"), side("_repeats", "n")):
        with np.errstate(invalid="ignore"):
            few |= np.isfinite(r) & (r < MIN_DECIDING_REPEATS)
    decided = _decided(move, direction, min_direction, busy) & ~few & (sampled == direction)
    verdict = np.where(direction == 0, "unchanged",
                       np.where(~decided, "undecided",
                                np.where(direction > 0, "slower", "faster"))).astype(object)
    verdict[which == "left_only"] = "only in baseline"
    verdict[which == "right_only"] = "only in new"

    out = pd.DataFrame({c: merged[c].to_numpy() for c in ("device",) + KEY_COLUMNS[1:]})
    for extra in keys[len(KEY_COLUMNS):]:
        out[extra] = merged[extra].to_numpy()
    out["baseline_time_us"] = tb
    out["new_time_us"] = tn
    out["change_pct"] = change * 100.0
    out["threshold_pct"] = threshold * 100.0
    out["verdict"] = verdict
    # Regressions first, then improvements, then the rest; stable within each group.
    order = {"slower": 0, "faster": 1, "undecided": 2, "only in baseline": 3, "only in new": 4, "unchanged": 5}
    out = out.assign(_o=out["verdict"].map(order)).sort_values("_o", kind="stable")
    out = out.drop(columns="_o").reset_index(drop=True)
    # The noise the runs themselves show, for the reader of the verdicts (the CLI prints it).
    out.attrs["noise"] = {"rows": n_both,
                          "unstable_baseline": int((side("_noisy", "b") > 0)[both].sum()),
                          "unstable_new": int((side("_noisy", "n") > 0)[both].sum()),
                          "moved": n_moved, "busy": bool(busy)}
    return out


# Rows of one code that move this much between two runs: on the 2-core CPU machine 3-16 % of the
# rows when it was quiet, 28-35 % when other work kept its cores busy (tests/data/baselines).
NOTABLE_MOVE = 0.30
BUSY_SHARE = 0.20


def noise_note(cmp: pd.DataFrame) -> str | None:
    """One or two lines on the noise the compared runs show (None when unknown)."""
    n = cmp.attrs.get("noise")
    if not n or not n["rows"]:
        return None
    text = (f"noise: rows whose timings show interference (CV > 10 % or max > 2x median): baseline "
            f"{n['unstable_baseline']} of {n['rows']}, new {n['unstable_new']} of {n['rows']}; rows that moved "
            f"by more than {100 * NOTABLE_MOVE:.0f} %: {n['moved']} of {n['rows']}")
    if n["moved"] >= max(2, BUSY_SHARE * n["rows"]):
        text += ("\nwarning: unless the code changed that much, a run was measured on a busy machine and "
                 "changes of that size are noise there; compare runs from a quiet machine")
    undecided = int((cmp["verdict"] == "undecided").sum())
    if undecided:
        text += (f"\nundecided: {undecided} row(s) moved past their threshold, but the runs' own noise cannot "
                 f"separate the move (rows moved as far the other way, or their fastest repeats did not "
                 f"move); re-run both on a quiet machine or with more repeats")
    return text


def _noise(df: pd.DataFrame, steady_pct, unstable_pct, abs_us) -> dict:
    """Each row's share of the noise model: the relative standard error of its median, its
    backend's floors (or the ones given) and whether its own timings show interference."""
    kind = backend_kind(df)
    fl = {b: BACKEND_FLOORS[b] for b in set(kind)}
    steady = np.array([fl[b].steady_pct if steady_pct is None else steady_pct for b in kind], dtype=float)
    shaky = np.array([fl[b].unstable_pct if unstable_pct is None else unstable_pct for b in kind], dtype=float)
    a = np.array([fl[b].abs_us if abs_us is None else abs_us for b in kind], dtype=float)
    return {"_rel_se": _median_rel_se(df), "_se_raw": _median_rel_se(df, widen_few=False), "_steady": steady / 100.0,
            "_unstable_floor": np.maximum(shaky, steady) / 100.0, "_abs": a,
            "_noisy": unstable(df).astype(float),
            "_min": df["time_min_us"].to_numpy(dtype=float) if "time_min_us" in df else np.full(len(df), np.nan),
            "_repeats": df["repeats"].to_numpy(dtype=float) if "repeats" in df else np.full(len(df), np.nan)}


def has_regression(cmp: pd.DataFrame) -> bool:
    """True when any matched kernel got slower (an "undecided" row is not a regression)."""
    return bool((cmp["verdict"] == "slower").any())


def has_undecided(cmp: pd.DataFrame) -> bool:
    """True when a row moved past its threshold by a change the runs' noise cannot separate."""
    return bool((cmp["verdict"] == "undecided").any())


# The exit codes of ``bwprof compare``: 2 is bad input (argparse's own code for a usage error).
EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_UNDECIDED = 0, 1, 2, 3


def exit_code(cmp: pd.DataFrame) -> int:
    """The CLI's verdict as an exit code: 1 a kernel got slower, else 3 when a row is undecided,
    else 0."""
    if has_regression(cmp):
        return EXIT_REGRESSION
    return EXIT_UNDECIDED if has_undecided(cmp) else EXIT_OK
