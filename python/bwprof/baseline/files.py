"""Baseline files: save a run as a versioned JSON file (atomically), and read rows back from a
baseline, a run folder, a results.csv, rows.jsonl or a bandwidth_report.json into one checked frame."""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
from pathlib import Path
from typing import Any, Union

import numpy as np
import pandas as pd

from .. import arguments as _args
from ..files import atomic_write_json as _atomic_write_json, is_stream, spooled
from .errors import BaselineError

FORMAT = "bwprof-baseline"
VERSION = 1

KEY_COLUMNS = ("device", "kernel", "variant", "dtype", "shape")
# Extra key used when both sides have it; see the bwprof.baseline docstring.
OPTIONAL_KEY_COLUMNS = ("cache", "timing")
REQUIRED_COLUMNS = KEY_COLUMNS + ("time_median_us",)
_STRING_COLUMNS = ("kernel", "variant", "dtype", "shape", "device", "backend", "cache", "timing", "grade",
                   "bottleneck")

PathLike = Union[str, "os.PathLike[str]"]


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
    path = _args.path("path", path)
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
    # An OSError (no permission, disk full) names ``path``, never the temporary file beside it.
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
        if exc.msg == "Extra data" and text.lstrip().startswith('{"format": "bwprof-rows"'):
            return {"_rows_log": True}  # a row log (rows.jsonl) under another name
        raise BaselineError(f"{path}: not valid JSON (damaged or truncated?): {exc}") from None


def _rows_frame(rows: Any, path: Path) -> pd.DataFrame:
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise BaselineError(f"{path}: 'rows' must be a list of objects")
    if not rows:
        raise BaselineError(f"{path}: holds no result rows")
    return pd.DataFrame(rows)


def _from_json(path: Path) -> pd.DataFrame:
    doc = _read_json(path)
    if doc == {"_rows_log": True}:
        return _from_run(path)
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
        from ..results import _schema_version
        try:
            _schema_version(doc["schema_version"], str(path))
        except ValueError as e:
            raise BaselineError(str(e)) from None
        return _rows_frame(doc["rows"], path)
    raise BaselineError(f"{path}: not a bwprof baseline or bandwidth report "
                        f"(no 'format' or 'schema_version' key)")


def _from_csv(path: Path) -> pd.DataFrame:
    from ..results import read_results_csv

    try:
        # Key columns stay strings ("128" is a shape, not a number); a last row cut short when a
        # run stopped is left out, with a warning.
        df = read_results_csv(path, dtype={c: str for c in _STRING_COLUMNS})
    except ValueError as exc:
        raise BaselineError(str(exc)) from None
    if df.empty:
        raise BaselineError(f"{path}: holds no result rows")
    return df


def _from_run(path: Path) -> pd.DataFrame:
    """A run folder with a row log (or the log itself): the report when it holds every row, else
    the rows the log kept (an interrupted run)."""
    from ..results import load_run

    try:
        df = load_run(path)
    except (ValueError, FileNotFoundError) as exc:
        raise BaselineError(str(exc)) from None
    if df.empty:
        raise BaselineError(f"{path}: holds no result rows")
    return df


def _starts_like_json(path: Path) -> bool:
    """Whether the file's first non-blank byte opens a JSON object or array (a baseline, report or
    row log), for a file whose name does not say."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return True  # _from_json says why it cannot be read
    return head[:1] in (b"{", b"[") or not head


def load(path: PathLike) -> pd.DataFrame:
    """Read result rows from a baseline JSON, a run folder, a results.csv, rows.jsonl or a
    bandwidth_report.json.

    Raises BaselineError, naming the file, if it is missing, damaged, foreign or too new.
    """
    path = _args.path("path", path)
    if is_stream(path):  # a pipe or FIFO: read once, as a stream; errors name the path given
        with spooled(path) as copy:
            try:
                return load(copy)
            except BaselineError as e:
                raise BaselineError(str(e).replace(str(copy), str(path))) from None
    if path.is_dir():
        report, csv = path / "bandwidth_report.json", path / "results.csv"
        if (path / "rows.jsonl").is_file():
            df = _from_run(path)
        elif report.is_file():
            df = _from_json(report)
        elif csv.is_file():
            df = _from_csv(csv)
        else:
            raise BaselineError(f"{path}: folder has neither bandwidth_report.json nor results.csv")
    elif not path.exists():
        raise BaselineError(f"{path}: no such file or folder")
    elif path.suffix.lower() == ".csv":
        df = _from_csv(path)
    elif path.suffix.lower() == ".jsonl":
        df = _from_run(path)
    elif path.suffix.lower() == ".json" or _starts_like_json(path):
        df = _from_json(path)
    else:  # no telling suffix (a pipe: /dev/fd/63): CSV unless it starts like JSON
        df = _from_csv(path)
    return _normalize(df, source=str(path))


def _normalize(df: pd.DataFrame, source: str) -> pd.DataFrame:
    """Check the columns compare needs and give them one type (strings for keys, floats for times)."""
    from ..results import check_results

    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise BaselineError(f"{source}: not a bwprof results table: missing column(s) "
                            f"{', '.join(missing)}")
    try:  # a schema this bwprof reads, numbers in number fields, no negative time, min <= median
        check_results(df, source)
    except ValueError as e:
        raise BaselineError(str(e)) from None
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
