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
from .statistics import BACKEND_FLOORS, DEFAULT_K, DEFAULT_MIN_EFFECT_PCT, _median_rel_se, backend_kind, unstable

VERDICTS = ("slower", "faster", "unchanged", "only in baseline", "only in new")

OUTPUT_COLUMNS = ["device", "kernel", "variant", "dtype", "shape", "baseline_time_us",
                  "new_time_us", "change_pct", "threshold_pct", "verdict"]


def _verdicts(change: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    # Symmetric in the ratio: new/base > 1 + t is slower, base/new > 1 + t faster, so swapping
    # the two runs swaps the verdicts (with thresholds of tens of percent, as on a shared CPU,
    # "-t" would make a slowdown much easier to flag than the same speed-up).
    return np.where(change > threshold, "slower",
                    np.where(change < -threshold / (1.0 + threshold), "faster", "unchanged"))


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

    floors = ("_rel_se", "_steady", "_unstable_floor", "_abs", "_noisy")
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
        u = np.sqrt(side("_rel_se", "b") ** 2 + side("_rel_se", "n") ** 2 + fb ** 2 + fn ** 2
                    + (side("_abs", "b") / tb) ** 2 + (side("_abs", "n") / tn) ** 2)
    change = tn / tb - 1.0
    threshold = np.maximum(min_effect_pct / 100.0, k * u)
    verdict = _verdicts(change, threshold).astype(object)
    which = merged["_merge"].astype(str).to_numpy()
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
    order = {"slower": 0, "faster": 1, "only in baseline": 2, "only in new": 3, "unchanged": 4}
    out = out.assign(_o=out["verdict"].map(order)).sort_values("_o", kind="stable")
    out = out.drop(columns="_o").reset_index(drop=True)
    # The noise the runs themselves show, for the reader of the verdicts (the CLI prints it).
    both = which == "both"
    with np.errstate(divide="ignore", invalid="ignore"):
        moved = np.abs(np.log(tn / tb)) > np.log(1.0 + NOTABLE_MOVE)
    out.attrs["noise"] = {"rows": int(both.sum()),
                          "unstable_baseline": int((side("_noisy", "b") > 0)[both].sum()),
                          "unstable_new": int((side("_noisy", "n") > 0)[both].sum()),
                          "moved": int(moved[both].sum())}
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
    return text


def _noise(df: pd.DataFrame, steady_pct, unstable_pct, abs_us) -> dict:
    """Each row's share of the noise model: the relative standard error of its median, its
    backend's floors (or the ones given) and whether its own timings show interference."""
    kind = backend_kind(df)
    fl = {b: BACKEND_FLOORS[b] for b in set(kind)}
    steady = np.array([fl[b].steady_pct if steady_pct is None else steady_pct for b in kind], dtype=float)
    shaky = np.array([fl[b].unstable_pct if unstable_pct is None else unstable_pct for b in kind], dtype=float)
    a = np.array([fl[b].abs_us if abs_us is None else abs_us for b in kind], dtype=float)
    return {"_rel_se": _median_rel_se(df), "_steady": steady / 100.0,
            "_unstable_floor": np.maximum(shaky, steady) / 100.0, "_abs": a,
            "_noisy": unstable(df).astype(float)}


def has_regression(cmp: pd.DataFrame) -> bool:
    """True when any matched kernel got slower."""
    return bool((cmp["verdict"] == "slower").any())
