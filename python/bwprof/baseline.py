"""Baselines and regression checks: save a run, compare a new run with it, gate CI on the verdict.

A baseline is a versioned JSON file (``{"format": "bwprof-baseline", "version": 1, ...}``) that
holds the result rows of one run. :func:`compare` matches a new run's rows with the baseline's and
decides, per kernel, whether the median time got faster, slower or stayed the same.

How the verdict is decided
--------------------------
Each row carries the median time ``m`` of ``n`` repeats and their standard deviation ``s``.

* Within-run uncertainty of the median: ``se = 1.2533 * s / sqrt(n)`` (the large-sample standard
  error of the median of near-normal data), widened by ``t(0.975, n-1) / 1.96`` so that a spread
  estimated from few repeats is trusted less. Without ``time_std_us`` the spread is estimated from
  ``time_max_us - time_min_us`` (divided by the expected range of ``n`` normal samples); without
  either, a per-repeat CV of ``ASSUMED_CV`` (5 %) is assumed.
* Slow outliers (a GPU timing's usual flaw: a preempted or throttled repeat) inflate ``s`` but
  barely move the median, so ``s`` is capped at 3x a robust spread from the fast side,
  ``2 (m - time_min_us) / d2(n)`` (d2 = expected range of n normal samples). The factor 3 leaves
  room for the right skew of real timings (an exponential tail at n = 20 gives about 2.9x).
* Run-to-run noise: on a GPU two runs of the same code differ by more than the spread within one
  run (clocks, temperature, placement). Each run gets a relative noise floor ``f``
  (``noise_floor_pct``, default 1 %).
* Timer resolution: device events resolve about 0.5 us (CUDA's documentation of
  cudaEventElapsedTime), so each run also gets an absolute floor ``a`` (``noise_floor_us``,
  default 0.5 us). It matters for kernels of a few microseconds: on the H100 two back-to-back runs
  of a 7 us kernel pair differed by 1 us (14 %) while each run's own spread was far smaller.
* The relative change ``c = m_new / m_base - 1`` has the combined relative uncertainty
  ``u = sqrt((se_b/m_b)^2 + (se_n/m_n)^2 + 2 f^2 + (a/m_b)^2 + (a/m_n)^2)``.
* The change needed to count is ``threshold = max(min_effect, k * u)``; ``c > threshold`` is
  "slower", ``c < -threshold`` is "faster", anything else "unchanged". ``k`` defaults to
  ``DEFAULT_K`` (3.0), chosen with the Monte-Carlo test in tests/python/test_baseline.py so that
  repeated identical runs are flagged (either way) in at most 1 % of trials; docs/baselines.md has
  the measured rates.

Rows are matched on device, kernel, variant, dtype and shape, and also on ``cache`` (cold/hot)
when both sides have that column, because a cold and a hot measurement of one kernel are different
quantities and a run may hold both. Rows on one side only are listed ("only in baseline" / "only
in new"). Two runs with no device in common are refused unless forced, which then matches
ignoring the device.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Union

import numpy as np
import pandas as pd

from .files import atomic_write_json as _atomic_write_json
from .tables import TEXT as _TEXT, format_table as _table

FORMAT = "bwprof-baseline"
VERSION = 1

KEY_COLUMNS = ("device", "kernel", "variant", "dtype", "shape")
# Extra key used when both sides have it; see the module docstring.
OPTIONAL_KEY_COLUMNS = ("cache",)
REQUIRED_COLUMNS = KEY_COLUMNS + ("time_median_us",)
_STRING_COLUMNS = ("kernel", "variant", "dtype", "shape", "device", "backend", "cache", "grade",
                   "bottleneck")

DEFAULT_K = 3.0
DEFAULT_MIN_EFFECT_PCT = 2.0
DEFAULT_NOISE_FLOOR_PCT = 1.0
DEFAULT_NOISE_FLOOR_US = 0.5
ASSUMED_CV = 0.05
# The standard deviation is trusted up to this multiple of the spread seen below the median.
_SPREAD_CAP = 3.0
# Large-sample standard error of the median = sqrt(pi/2) * std / sqrt(n) for normal data.
_MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2.0)

VERDICTS = ("slower", "faster", "unchanged", "only in baseline", "only in new")

OUTPUT_COLUMNS = ["device", "kernel", "variant", "dtype", "shape", "baseline_time_us",
                  "new_time_us", "change_pct", "threshold_pct", "verdict"]

PathLike = Union[str, "os.PathLike[str]"]


class BaselineError(ValueError):
    """A baseline or results file that cannot be used, or a comparison that is refused."""


# --------------------------------------------------------------------------------------------
# Saving and loading

def _json_value(value: Any) -> Any:
    """Turn a pandas/numpy cell into a plain JSON value (NaN -> null)."""
    if value is None:
        return None
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, (str, int)):
        return value
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


def _bwprof_version() -> str:
    try:
        from bwprof import __version__
        return str(__version__)
    except Exception:  # the package is importable without its version in odd installs
        return "unknown"


def save(df: pd.DataFrame, path: PathLike) -> Path:
    """Save a results DataFrame (or anything :func:`load` reads) as a baseline JSON file.

    The write is atomic: an existing baseline at ``path`` is replaced only by a complete file.
    Returns the path written.
    """
    if not isinstance(df, pd.DataFrame):
        df = load(df)
    df = _normalize(df, source="the DataFrame to save")
    path = Path(path)
    if path.is_dir():
        raise BaselineError(f"{path}: is a folder; give the baseline's file name")
    rows = [{str(k): _json_value(v) for k, v in rec.items()} for rec in df.to_dict("records")]
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "bwprof_version": _bwprof_version(),
        "rows": rows,
    }
    _atomic_write_json(path, doc, indent=1, allow_nan=False)
    return path


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise BaselineError(f"{path}: not a text file (is it damaged?)") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not text.strip():
        raise BaselineError(f"{path}: file is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}: not valid JSON (damaged or truncated?): {exc}") from None


def _rows_frame(rows: Any, path: Path) -> pd.DataFrame:
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise BaselineError(f"{path}: 'rows' must be a list of objects")
    if not rows:
        raise BaselineError(f"{path}: holds no result rows")
    return pd.DataFrame(rows)


def _from_json(path: Path) -> pd.DataFrame:
    doc = _read_json(path)
    if not isinstance(doc, dict):
        raise BaselineError(f"{path}: not a bwprof baseline or report (top level is not an object)")
    if "format" in doc:
        if doc.get("format") != FORMAT:
            raise BaselineError(f"{path}: not a bwprof baseline (format is {doc.get('format')!r}, "
                                f"expected {FORMAT!r})")
        version = doc.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise BaselineError(f"{path}: baseline has no valid version (got {version!r})")
        if version > VERSION:
            raise BaselineError(f"{path}: baseline version {version} is newer than this bwprof "
                                f"reads (up to {VERSION}); upgrade bwprof")
        if "rows" not in doc:
            raise BaselineError(f"{path}: baseline has no 'rows'")
        return _rows_frame(doc["rows"], path)
    if "rows" in doc and "schema_version" in doc:  # a run's bandwidth_report.json
        return _rows_frame(doc["rows"], path)
    raise BaselineError(f"{path}: not a bwprof baseline or bandwidth report "
                        f"(no 'format' or 'schema_version' key)")


def _from_csv(path: Path) -> pd.DataFrame:
    try:
        # Key columns stay strings ("128" is a shape, not a number).
        df = pd.read_csv(path, dtype={c: str for c in _STRING_COLUMNS})
    except pd.errors.EmptyDataError:
        raise BaselineError(f"{path}: file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise BaselineError(f"{path}: not a readable CSV table: {exc}") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if df.empty:
        raise BaselineError(f"{path}: holds no result rows")
    return df


def load(path: PathLike) -> pd.DataFrame:
    """Read result rows from a baseline JSON, a run folder, a results.csv or a bandwidth_report.json.

    Raises BaselineError, naming the file, if it is missing, damaged, foreign or too new.
    """
    path = Path(path)
    if path.is_dir():
        report, csv = path / "bandwidth_report.json", path / "results.csv"
        if report.is_file():
            path = report
        elif csv.is_file():
            path = csv
        else:
            raise BaselineError(f"{path}: folder has neither bandwidth_report.json nor results.csv")
    elif not path.exists():
        raise BaselineError(f"{path}: no such file or folder")
    if path.suffix.lower() == ".csv":
        df = _from_csv(path)
    else:
        df = _from_json(path)
    return _normalize(df, source=str(path))


def _normalize(df: pd.DataFrame, source: str) -> pd.DataFrame:
    """Check the columns compare needs and give them one type (strings for keys, floats for times)."""
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise BaselineError(f"{source}: not a bwprof results table: missing column(s) "
                            f"{', '.join(missing)}")
    df = df.copy()
    for col in KEY_COLUMNS + OPTIONAL_KEY_COLUMNS:
        if col in df.columns:
            # variant may be empty; CSV and JSON give that back as NaN/None.
            df[col] = df[col].map(lambda v: "" if v is None or (isinstance(v, float) and
                                                                 math.isnan(v)) else str(v))
    for col in ("time_median_us", "time_min_us", "time_max_us", "time_std_us", "repeats"):
        if col in df.columns:
            df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    bad = ~(np.isfinite(df["time_median_us"].to_numpy()) & (df["time_median_us"].to_numpy() > 0))
    if bad.any():
        first = df.loc[bad].iloc[0]
        raise BaselineError(f"{source}: {int(bad.sum())} row(s) without a valid positive "
                            f"time_median_us, first: {_describe(first)}")
    return df.reset_index(drop=True)


def _describe(row: pd.Series) -> str:
    parts = [str(row.get(c, "")) for c in ("kernel", "variant", "dtype", "shape", "device")]
    return " ".join(p for p in parts if p)


# --------------------------------------------------------------------------------------------
# Statistics

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
    """Relative standard error of each row's median time (see the module docstring)."""
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


def _verdicts(change: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    return np.where(change > threshold, "slower",
                    np.where(change < -threshold, "faster", "unchanged"))


# --------------------------------------------------------------------------------------------
# Comparing

def _as_frame(obj: Any, what: str) -> pd.DataFrame:
    if isinstance(obj, pd.DataFrame):
        return _normalize(obj, source=what)
    if isinstance(obj, (str, os.PathLike)):
        return load(obj)
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
            noise_floor_pct: float = DEFAULT_NOISE_FLOOR_PCT,
            k: float = DEFAULT_K, noise_floor_us: float = DEFAULT_NOISE_FLOOR_US) -> pd.DataFrame:
    """Compare a new run with a baseline; one row per kernel with the change and a verdict.

    ``df`` and ``baseline`` are results DataFrames or paths that :func:`load` reads. Runs from
    different devices are refused (BaselineError) unless ``force=True``, which matches ignoring
    the device ("different devices" = no device in common). Rows present on one side only are kept with verdict "only in baseline"/"only in
    new". ``threshold_pct`` is the change that row needed to count (see the module docstring).
    """
    if not (min_effect_pct >= 0 and noise_floor_pct >= 0 and noise_floor_us >= 0 and k > 0):
        raise ValueError("min_effect_pct, noise_floor_pct and noise_floor_us must be >= 0 and k > 0")
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

    base = base.assign(_rel_se=_median_rel_se(base))
    new = new.assign(_rel_se=_median_rel_se(new))
    cols = match_keys + ["time_median_us", "_rel_se"] + (["device"] if cross_device else [])
    merged = base[cols].merge(new[cols], on=match_keys, how="outer",
                              suffixes=("_b", "_n"), indicator=True, sort=False)

    if cross_device:
        db = merged["device_b"].fillna("").astype(str)
        dn = merged["device_n"].fillna("").astype(str)
        merged["device"] = np.where((db == dn) | (dn == ""), db,
                                    np.where(db == "", dn, db + " -> " + dn))

    tb = merged["time_median_us_b"].to_numpy(dtype=float)
    tn = merged["time_median_us_n"].to_numpy(dtype=float)
    floor = noise_floor_pct / 100.0
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.sqrt(merged["_rel_se_b"].to_numpy(dtype=float) ** 2
                    + merged["_rel_se_n"].to_numpy(dtype=float) ** 2 + 2.0 * floor ** 2
                    + (noise_floor_us / tb) ** 2 + (noise_floor_us / tn) ** 2)
    change = tn / tb - 1.0
    threshold = np.maximum(min_effect_pct / 100.0, k * u)
    verdict = _verdicts(change, threshold).astype(object)
    side = merged["_merge"].astype(str).to_numpy()
    verdict[side == "left_only"] = "only in baseline"
    verdict[side == "right_only"] = "only in new"

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
    return out.drop(columns="_o").reset_index(drop=True)


def has_regression(cmp: pd.DataFrame) -> bool:
    """True when any matched kernel got slower."""
    return bool((cmp["verdict"] == "slower").any())


# --------------------------------------------------------------------------------------------
# Plot

_VERDICT_COLOURS = {"slower": "#d62728", "faster": "#2ca02c", "unchanged": "#7f7f7f"}


def plot_changes(cmp: pd.DataFrame, path: PathLike | None = None):
    """Horizontal bars of each matched kernel's change in median time, coloured by verdict.

    The grey band around each bar is the change that row needed to count. Saves to ``path``
    (format from the suffix, e.g. .png or .svg) when given; returns the matplotlib Figure.
    """
    from matplotlib.patches import Patch

    from .plots.bars import hbars
    from .plots.figure import _figure

    rows = cmp[cmp["verdict"].isin(list(_VERDICT_COLOURS))].reset_index(drop=True)
    height = max(2.5, 0.35 * len(rows) + 1.5)
    fig = _figure(11, height)
    ax = fig.add_subplot(1, 1, 1)
    if rows.empty:
        ax.text(0.5, 0.5, "no kernels in both runs", ha="center", va="center",
                transform=ax.transAxes)
    else:
        thr = rows["threshold_pct"].to_numpy(dtype=float)
        change = rows["change_pct"].to_numpy(dtype=float)
        colours = [_VERDICT_COLOURS[v] for v in rows["verdict"]]
        label_cols = ["kernel", "variant", "dtype", "shape"]
        if "cache" in rows.columns and rows["cache"].nunique() > 1:
            label_cols.append("cache")
        labels = [" ".join(str(r[c]) for c in label_cols if str(r[c])) for _, r in rows.iterrows()]
        y = hbars(ax, 2 * thr, left=-thr, height=0.8, colors="#dddddd", zorder=1)
        hbars(ax, change, labels, height=0.5, colors=colours, label_size=8, zorder=2)
        # A zero-length bar is invisible; a dot shows where each change lies.
        ax.scatter(change, y, s=12, c=colours, zorder=3)
        ax.axvline(0.0, color="black", linewidth=0.8, zorder=3)
    ax.set_xlabel("change in median kernel time vs baseline (%)  (+ = slower)")
    devices = sorted(set(rows["device"])) if not rows.empty else []
    where = f" on {devices[0]}" if len(devices) == 1 else ""
    ax.set_title(f"Median kernel time vs baseline{where}")
    handles = [Patch(color=c, label=v) for v, c in _VERDICT_COLOURS.items()]
    handles.append(Patch(color="#dddddd", label="change needed to count (±threshold %)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
              frameon=False)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


# --------------------------------------------------------------------------------------------
# Command line

# Times to the nanosecond, changes with their sign: the columns a reviewer reads first.
_CMP_FORMATS = {"baseline_time_us": "{:.3f}", "new_time_us": "{:.3f}", "change_pct": "{:+.2f}",
                "threshold_pct": "{:.2f}"}


def _format_table(cmp: pd.DataFrame) -> str:
    if cmp.empty:
        return "(no rows)"
    spec = [(c, str(c), _CMP_FORMATS.get(c, _TEXT)) for c in cmp.columns]
    return _table(cmp, spec, sep=" ", missing="", rule=False, text_align="right")


def _summary(cmp: pd.DataFrame) -> str:
    counts = cmp["verdict"].value_counts()
    parts = [f"{int(counts[v])} {v}" for v in VERDICTS if v in counts]
    return "summary: " + ", ".join(parts)


def _fail(prog: str, exc: BaseException) -> int:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    print(f"{prog}: error: {msg}", file=sys.stderr)
    return 2


def _cmd_compare(args: argparse.Namespace) -> int:
    try:
        if args.min_effect < 0 or args.noise_floor < 0 or args.noise_floor_us < 0:
            raise BaselineError("--min-effect, --noise-floor and --noise-floor-us must be >= 0")
        base = load(args.baseline)
        new = load(args.new)
        cmp = compare(new, base, force=args.force, min_effect_pct=args.min_effect,
                      noise_floor_pct=args.noise_floor, noise_floor_us=args.noise_floor_us)
        print(_format_table(cmp))
        print(_summary(cmp))
        if args.csv:
            cmp.to_csv(args.csv, index=False)
        if args.plot:
            plot_changes(cmp, args.plot)
    except (BaselineError, OSError, ValueError) as exc:
        return _fail("bwprof compare", exc)
    if has_regression(cmp):
        print("regression: at least one kernel is slower than the baseline", file=sys.stderr)
        return 1
    return 0


def _cmd_baseline(args: argparse.Namespace) -> int:
    try:
        df = load(args.run)
        out = save(df, args.out)
    except (BaselineError, OSError, ValueError) as exc:
        return _fail("bwprof baseline", exc)
    print(f"saved {len(df)} rows from {args.run} as baseline {out}")
    return 0


def register_cli(subparsers: "argparse._SubParsersAction") -> None:
    """Add the ``compare`` and ``baseline`` subcommands; each sets ``func=handler(args) -> int``."""
    p = subparsers.add_parser(
        "compare", help="compare a run with a baseline; exit 1 on a regression",
        description="Compare NEW with BASELINE kernel by kernel. Each may be a baseline JSON, a "
                    "run folder, a results.csv or a bandwidth_report.json. Exit code: 0 no "
                    "regression, 1 a kernel got slower, 2 bad input.")
    p.add_argument("baseline", metavar="BASELINE")
    p.add_argument("new", metavar="NEW")
    p.add_argument("--force", action="store_true",
                   help="compare runs from different devices (match ignoring the device)")
    p.add_argument("--min-effect", type=float, default=DEFAULT_MIN_EFFECT_PCT, metavar="PCT",
                   help="smallest change that can count, in %% (default %(default)s)")
    p.add_argument("--noise-floor", type=float, default=DEFAULT_NOISE_FLOOR_PCT, metavar="PCT",
                   help="run-to-run noise of each run, in %% (default %(default)s)")
    p.add_argument("--noise-floor-us", type=float, default=DEFAULT_NOISE_FLOOR_US, metavar="US",
                   help="absolute timing noise of each run, in us (default %(default)s)")
    p.add_argument("--plot", metavar="PATH", help="save a bar chart of the changes (.png/.svg)")
    p.add_argument("--csv", metavar="PATH", help="save the comparison table as CSV")
    p.set_defaults(func=_cmd_compare)

    b = subparsers.add_parser(
        "baseline", help="save a run as a baseline JSON",
        description="Save RUN_OR_CSV (a run folder, results.csv, bandwidth_report.json or "
                    "baseline) as a versioned baseline JSON file, written atomically.")
    b.add_argument("run", metavar="RUN_OR_CSV")
    b.add_argument("--out", required=True, metavar="PATH", help="baseline file to write")
    b.set_defaults(func=_cmd_baseline)


def main(argv: Iterable[str] | None = None) -> int:
    """Stand-alone entry point: ``python3 -m bwprof.baseline compare|baseline ...``."""
    parser = argparse.ArgumentParser(prog="bwprof")
    sub = parser.add_subparsers(dest="command", required=True)
    register_cli(sub)
    args = parser.parse_args(list(argv) if argv is not None else None)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
