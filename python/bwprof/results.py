"""Run folders: results.csv and bandwidth_report.json, written row by row so an interrupted run
keeps what it measured."""
from __future__ import annotations

import csv
import datetime as _dt
import json
import math
import os
from pathlib import Path

import pandas as pd

from . import _core
from .files import atomic_write_text as _atomic_write_text

REPORT = "bandwidth_report.json"
CSV = "results.csv"


def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if hasattr(v, "item"):  # numpy scalars
        return _clean(v.item())
    return v


class RunWriter:
    """Creates ``<out_dir>/<run_id>/`` and appends each row to results.csv and the JSON report."""

    def __init__(self, out_dir: str | os.PathLike | None = None, device: dict | None = None,
                 run_id: str | None = None, columns: list[str] | None = None):
        now = _dt.datetime.now(_dt.timezone.utc)
        dev = (device or {}).get("id", "unknown").replace(":", "")
        self.run_id = run_id or f"{now:%Y%m%d-%H%M%S}-{dev}"
        base = Path(out_dir) if out_dir is not None else Path("results")
        path = base / self.run_id
        n = 1
        while path.exists():  # two runs in the same second keep separate folders
            n += 1
            path = base / f"{self.run_id}-{n}"
        self.run_id = path.name
        path.mkdir(parents=True)
        self.path = path
        self.created = now.isoformat(timespec="seconds")
        self.device = device or {}
        self.columns = list(columns or list(_core.columns()) + ["label"])
        self.rows: list[dict] = []
        with open(self.path / CSV, "w", newline="") as f:
            csv.writer(f).writerow(self.columns)
        self._write_report()

    def add(self, row: dict) -> None:
        """Append one result row to both files (the CSV line is flushed at once)."""
        clean = {c: _clean(row.get(c)) for c in self.columns}
        self.rows.append(clean)
        with open(self.path / CSV, "a", newline="") as f:
            csv.writer(f).writerow(["" if clean[c] is None else clean[c] for c in self.columns])
        self._write_report()

    def _write_report(self) -> None:
        report = {
            "run_id": self.run_id,
            "created": self.created,
            "device": self.device,
            "bwprof_version": _core.__version__,
            "schema_version": _core.SCHEMA_VERSION,
            "columns": self.columns,
            "rows": self.rows,
        }
        _atomic_write_text(self.path / REPORT, json.dumps(report, indent=1))


def save_run(df: pd.DataFrame, out_dir: str | os.PathLike | None = None, device: dict | None = None) -> Path:
    """Write ``df`` as a run folder ``<out_dir or results>/<run_id>/``; returns its path."""
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
    if device is None and len(df) and "device" in df:
        try:
            device = _core.device_info(str(df["device"].iloc[0]))
        except ValueError:
            device = {"id": str(df["device"].iloc[0])}
    cols = list(_core.columns())
    cols += [c for c in df.columns if c not in cols]
    w = RunWriter(out_dir, device, columns=cols)
    for row in df.to_dict("records"):
        w.add(row)
    return w.path


def load_run(path: str | os.PathLike) -> pd.DataFrame:
    """Read a run folder, its results.csv or its bandwidth_report.json back into a DataFrame."""
    p = Path(path)
    if p.is_dir():
        p = p / REPORT if (p / REPORT).exists() else p / CSV
    if not p.exists():
        raise FileNotFoundError(f"no bwprof run at {path}")
    if p.suffix == ".json":
        try:
            data = json.loads(p.read_text())
            return pd.DataFrame(data["rows"], columns=data.get("columns"))
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ValueError(f"{p}: not a bwprof report ({e})") from None
    try:
        return pd.read_csv(p, keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise ValueError(f"{p}: not a bwprof results.csv ({e})") from None
