"""Run folders: results.csv, rows.jsonl and bandwidth_report.json.

While a run measures, each row is appended to ``rows.jsonl`` (one JSON object a line, after a first
line that describes the run) and to ``results.csv``, each write flushed and fsync'ed: adding a row
costs the same at row 10 and at row 10,000, and a run killed at any point keeps every row it
measured. ``bandwidth_report.json`` (the whole run as one JSON document) is written once, when the
run ends or is interrupted. :func:`load_run` reads a folder whose report is missing or stale (the
process was killed) from ``rows.jsonl``, and drops a last line that was being written when the run
stopped, with a warning that names the file and the line.
"""
from __future__ import annotations

import csv
import datetime as _dt
import io
import itertools
import json
import math
import os
import shlex
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from . import _core
from . import arguments as _args
from .files import atomic_write_text as _atomic_write_text, ensure_folder as _ensure_folder, is_stream, spooled

REPORT = "bandwidth_report.json"
CSV = "results.csv"
ROWS = "rows.jsonl"
ROWS_FORMAT = "bwprof-rows"


class TruncatedRowWarning(UserWarning):
    """A run's last row was cut short (the run stopped while writing it) and was left out."""


class DamagedReportWarning(UserWarning):
    """A run folder's bandwidth_report.json cannot be read; its rows came from rows.jsonl or
    results.csv instead."""


def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):  # numpy scalars
        try:
            return _clean(v.item())
        except (TypeError, ValueError):
            return str(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    try:
        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        pass
    return str(v)


def _append(path: Path, data: str) -> None:
    """Append ``data`` and make it durable before returning (one row must never be lost)."""
    with open(path, "a", encoding="utf-8", newline="") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _new_run_folder(base: Path, name: str) -> Path:
    """Create ``base/name`` (or ``name-2``, ``name-3``, ... when taken) atomically: ``mkdir`` either
    creates the folder or fails, so runs starting in the same second never share one."""
    _ensure_folder("out_dir", base)
    for n in itertools.count(1):
        path = base / (name if n == 1 else f"{name}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
        except OSError as e:
            raise ValueError(f"out_dir: cannot create a run folder in {base}: {e.strerror or e}") from None
    raise AssertionError("unreachable")


def command_line() -> str:
    """The command that started this process, as a shell would take it (``python3 -m bwprof ...``
    for the CLI), for a run folder to say how it was made."""
    argv = list(sys.argv)
    if argv and Path(argv[0]).name == "__main__.py" and Path(argv[0]).parent.name == "bwprof":
        argv = ["-m", "bwprof"] + argv[1:]
    exe = Path(sys.executable).name if sys.executable else "python3"
    return shlex.join([exe] + argv)


class RunWriter:
    """Creates ``<out_dir>/<run_id>/`` and appends each row to rows.jsonl and results.csv; writes
    bandwidth_report.json on :meth:`close` (also when used as a context manager that is left by an
    exception, e.g. Ctrl-C). ``command`` (default: this process's :func:`command_line`) is recorded
    with the run."""

    def __init__(self, out_dir: str | os.PathLike | None = None, device: dict | None = None,
                 run_id: str | None = None, columns: list[str] | None = None, command: str | None = None):
        base = _args.optional_path("out_dir", out_dir) or Path("results")
        device = _args.mapping("device", device) or {}
        now = _dt.datetime.now(_dt.timezone.utc)
        if run_id is None:
            dev = str(device.get("id", "unknown")).replace(":", "").replace(os.sep, "_")
            run_id = f"{now:%Y%m%d-%H%M%S}-{dev}"
        run_id = _args.text("run_id", run_id)
        if run_id in ("", ".", "..") or "/" in run_id or os.sep in run_id:
            raise ValueError(f"run_id: {run_id!r} is not a folder name")
        self.columns = [_args.text("columns", str(c)) for c in (columns or list(_core.columns()) + ["label"])]
        self.path = _new_run_folder(base, run_id)
        self.run_id = self.path.name
        self.created = now.isoformat(timespec="seconds")
        self.device = device
        self.command = command_line() if command is None else _args.text("command", command)
        self.rows: list[dict] = []
        self.closed = False
        head = io.StringIO()
        csv.writer(head).writerow(self.columns)
        _append(self.path / CSV, head.getvalue())
        _append(self.path / ROWS, json.dumps(self._meta(), default=str) + "\n")

    def _meta(self) -> dict:
        return {"format": ROWS_FORMAT, "version": 1, "run_id": self.run_id, "created": self.created,
                "device": self.device, "bwprof_version": _core.__version__,
                "schema_version": _core.SCHEMA_VERSION, "command": self.command, "columns": self.columns}

    def add(self, row: dict) -> None:
        """Append one result row to rows.jsonl, then to results.csv; both are on disk on return."""
        if self.closed:
            raise ValueError(f"{self.path}: the run is closed; no more rows can be added")
        if not isinstance(row, dict):
            raise ValueError(f"row: expected a dict, got {type(row).__name__}")
        clean = {c: _clean(row.get(c)) for c in self.columns}
        _append(self.path / ROWS, json.dumps(clean, allow_nan=False) + "\n")
        line = io.StringIO()
        csv.writer(line).writerow(["" if clean[c] is None else clean[c] for c in self.columns])
        _append(self.path / CSV, line.getvalue())
        self.rows.append(clean)

    def close(self) -> Path:
        """Write bandwidth_report.json (the whole run) once; returns its path."""
        report = {
            "run_id": self.run_id,
            "created": self.created,
            "device": self.device,
            "bwprof_version": _core.__version__,
            "schema_version": _core.SCHEMA_VERSION,
            "command": self.command,
            "columns": self.columns,
            "rows": self.rows,
        }
        _atomic_write_text(self.path / REPORT, json.dumps(report, indent=1, default=str))
        self.closed = True
        return self.path / REPORT

    def __enter__(self) -> "RunWriter":
        return self

    def __exit__(self, *exc) -> None:
        if not self.closed:
            self.close()


def save_run(df: pd.DataFrame, out_dir: str | os.PathLike | None = None, device: dict | None = None) -> Path:
    """Write ``df`` as a run folder ``<out_dir or results>/<run_id>/``; returns its path."""
    df = _args.frame("df", df)
    out_dir = _args.optional_path("out_dir", out_dir)
    device = _args.mapping("device", device)
    if device is None and len(df) and "device" in df:
        try:
            device = _core.device_info(_args.text("device", str(df["device"].iloc[0])))
        except ValueError:
            device = {"id": str(df["device"].iloc[0])}
    cols = list(_core.columns())
    cols += [str(c) for c in df.columns if c not in cols]
    with RunWriter(out_dir, device, columns=cols) as w:
        for row in df.to_dict("records"):
            w.add({str(k): v for k, v in row.items()})
    return w.path


# ---- reading ------------------------------------------------------------------------------------

def _complete_lines(p: Path) -> tuple[str, int]:
    """The file's text up to its last newline, and the number of that last complete line; a tail
    without a newline (a line cut short) is dropped with a TruncatedRowWarning."""
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ValueError(f"{p}: cannot read: {e.strerror or e}") from None
    end = data.rfind(b"\n") + 1
    complete, tail = data[:end], data[end:]
    try:
        text = complete.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{p}: not a bwprof run file (not UTF-8 text: {e.reason} at byte {e.start})") from None
    lines = text.count("\n")
    if tail:
        warnings.warn(f"{p}: line {lines + 1} is cut short (the run stopped while writing it); "
                      f"left out", TruncatedRowWarning, stacklevel=3)
    return text, lines


def _read_rows_log(p: Path) -> tuple[dict, list[dict]]:
    """rows.jsonl: its description line and every complete row."""
    text, _ = _complete_lines(p)
    lines = text.splitlines()
    if not lines:
        raise ValueError(f"{p}: cut before its first line was complete; no rows to read")
    try:
        meta = json.loads(lines[0])
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: line 1 is not JSON ({e.msg})") from None
    if not isinstance(meta, dict) or meta.get("format") != ROWS_FORMAT or not isinstance(meta.get("columns"), list):
        raise ValueError(f"{p}: not a bwprof rows file (line 1 does not describe a run)")
    rows = []
    for i, line in enumerate(lines[1:], start=2):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{p}: line {i} is not a JSON row ({e.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{p}: line {i} is not a JSON object")
        rows.append(row)
    return meta, rows


def _read_report(p: Path) -> tuple[dict, list]:
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{p}: not a bwprof report ({e})") from None
    except OSError as e:
        raise ValueError(f"{p}: cannot read: {e.strerror or e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list) or \
            not all(isinstance(r, dict) for r in data["rows"]):
        raise ValueError(f"{p}: not a bwprof report (no list of rows)")
    cols = data.get("columns")
    return {"columns": cols if isinstance(cols, list) else None, "schema_version": data.get("schema_version")}, data["rows"]


def _frame(meta: dict, rows: list) -> pd.DataFrame:
    cols = meta.get("columns")
    if cols:
        cols = [str(c) for c in cols]
        cols += [c for c in dict.fromkeys(k for r in rows for k in r) if c not in cols]
    return pd.DataFrame(rows, columns=cols)


# Figures must read back exactly as written: pandas' default float parser can miss the last digit
# (180.71008493742556 came back as 180.7100849374256 on the GPU machine's pandas, and
# 18015.039333374356 as 18015.03933337436 under its pandas 3.0.6), so the round-trip parser is asked for
# wherever pandas still takes the option (3.1 deprecates it with a warning, which is silenced).
_ROUND_TRIP = {"float_precision": "round_trip"}


def read_results_csv(p: Path, **read_csv_kw) -> pd.DataFrame:
    """results.csv; a last record cut short is left out (with a warning), any other malformed
    record is a ValueError naming the line. ``read_csv_kw`` go to pandas.read_csv."""
    text, _ = _complete_lines(p)
    lines = [line + "\n" for line in text.split("\n")[:-1]]
    reader = csv.reader(iter(lines), strict=True)
    records, ends = [], []  # each record and the line it ends on (a quoted field may hold newlines)
    try:
        for rec in reader:
            records.append(rec)
            ends.append(reader.line_num)
    except csv.Error as e:
        if reader.line_num < len(lines) or "end of data" not in str(e):
            raise ValueError(f"{p}: line {reader.line_num}: not a bwprof results.csv ({e})") from None
        # The file ends inside a quoted field: that record was being written when the run stopped.
        warnings.warn(f"{p}: line {(ends[-1] if ends else 0) + 1} is cut short (the run stopped while "
                      f"writing it); left out", TruncatedRowWarning, stacklevel=3)
    if not records or not any(records[0]):
        raise ValueError(f"{p}: empty or cut before its header was complete; not a bwprof results.csv")
    width = len(records[0])
    for i, rec in enumerate(records[1:], start=1):
        if len(rec) != width:
            raise ValueError(f"{p}: line {ends[i]} has {len(rec)} fields, the header has {width}; "
                             f"not a bwprof results.csv")
    text = "".join(lines[:ends[-1]])
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*float_precision.*")
            return pd.read_csv(io.StringIO(text), **{"keep_default_na": False, "na_values": [""],
                                                        **_ROUND_TRIP, **read_csv_kw})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as e:
        raise ValueError(f"{p}: not a bwprof results.csv ({e})") from None


def load_run(path: str | os.PathLike) -> pd.DataFrame:
    """Read a run folder, its results.csv, rows.jsonl or bandwidth_report.json into a DataFrame.

    A folder whose report is missing or does not hold every row (the run was killed) is read
    from rows.jsonl. A row cut short by the end of the run is left out with a
    :class:`TruncatedRowWarning`; anything else malformed is a ValueError naming the file.
    """
    p = _args.path("path", path)
    if p.is_dir():
        return _load_folder(p)
    if not p.exists():
        raise FileNotFoundError(f"no bwprof run at {path}")
    if is_stream(p):  # a pipe or FIFO: read once, as it comes (Ctrl-C stops the wait)
        with spooled(p) as copy:
            try:
                return _load_file(copy)
            except ValueError as e:
                raise ValueError(str(e).replace(str(copy), str(p))) from None
    return _load_file(p)


def _sniff(p: Path) -> str:
    """".json", ".jsonl" or ".csv" from a file's suffix, else from its first bytes (a pipe)."""
    if p.suffix in (".json", ".jsonl", ".csv"):
        return p.suffix
    try:
        with open(p, "rb") as f:
            head = f.read(256).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return ".csv"
    if head.startswith(b'{"format": "' + ROWS_FORMAT.encode()):
        return ".jsonl"
    return ".json" if head[:1] == b"{" else ".csv"


def _load_file(p: Path) -> pd.DataFrame:
    kind = _sniff(p)
    if kind == ".json":
        meta, rows = _read_report(p)
        return check_results(_frame(meta, rows), str(p), meta.get("schema_version"))
    if kind == ".jsonl":
        meta, rows = _read_rows_log(p)
        return check_results(_frame(meta, rows), str(p), meta.get("schema_version"))
    return check_results(read_results_csv(p), str(p))


def _load_folder(p: Path) -> pd.DataFrame:
    report, rows_log, results = p / REPORT, p / ROWS, p / CSV

    def damaged(e: ValueError, instead: Path) -> None:
        warnings.warn(f"{report}: cannot be read ({e}); the rows come from {instead.name}",
                      DamagedReportWarning, stacklevel=3)

    if rows_log.exists():
        meta, rows = _read_rows_log(rows_log)
        if report.exists():
            try:
                rmeta, rrows = _read_report(report)
            except ValueError as e:  # cut in half, say: the row log holds every row
                rrows = None
                damaged(e, rows_log)
            if rrows is not None and len(rrows) == len(rows):
                return check_results(_frame(rmeta, rrows), str(report),
                                     rmeta.get("schema_version", meta.get("schema_version")))
        return check_results(_frame(meta, rows), str(rows_log), meta.get("schema_version"))
    if report.exists():  # a folder written before rows.jsonl existed
        try:
            meta, rows = _read_report(report)
            return check_results(_frame(meta, rows), str(report), meta.get("schema_version"))
        except ValueError as e:
            if not results.exists():
                raise
            damaged(e, results)
    if results.exists():
        return check_results(read_results_csv(results), str(results))
    raise FileNotFoundError(f"no bwprof run at {p} (no {REPORT}, {ROWS} or {CSV})")


# ---- the results schema, for tables read from files ----------------------------------------------

REQUIRED_COLUMNS = ("kernel", "dtype")
MEASURED_COLUMNS = ("time_median_us", "bandwidth_gbs", "gflops")
_TYPES: dict | None = None


def schema_types() -> dict:
    """Each schema column's kind: "text", "number" or "flag" (from the core's own record)."""
    global _TYPES
    if _TYPES is None:
        row = _core.judge_row("stream_copy", "", _core.device_info("cpu"), "fp32", {"n": 1024}, 1.0, {}, "cold")
        kinds = {str: "text", bool: "flag", int: "number", float: "number"}
        _TYPES = {k: kinds.get(type(v), "text") for k, v in row.items()}
        _TYPES["label"] = "text"
    return _TYPES


def results_table(df: pd.DataFrame, source: str = "the table") -> pd.DataFrame:
    """``df`` checked as a bwprof results table (the columns every chart and table needs) with
    its schema columns given one type each: numbers (text that is not one becomes NaN), text,
    and flags. Anything else (another tool's CSV) is a ValueError naming ``source`` and what is
    missing."""
    df = _args.frame("df", df)
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if not any(c in df.columns for c in MEASURED_COLUMNS):
        missing.append(" or ".join(MEASURED_COLUMNS))
    if missing:
        found = ", ".join(map(str, list(df.columns)[:8])) + (", ..." if len(df.columns) > 8 else "")
        raise ValueError(f"{source}: not a bwprof results table: missing column(s) {', '.join(missing)} "
                         f"(found: {found or 'no columns'})")
    out = df.copy()
    for col, kind in schema_types().items():
        if col not in out.columns:
            continue
        if kind == "number":
            out[col] = pd.to_numeric(out[col], errors="coerce").astype(float)
        elif kind == "flag":
            out[col] = out[col].map(lambda v: str(v).strip().lower() in ("true", "1", "yes"))
        else:
            out[col] = out[col].map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    return out


# ---- the values of rows read from files ----------------------------------------------------------

# Columns whose values are counts or rates and can never be negative.
_NON_NEGATIVE = ("time_median_us", "time_min_us", "time_max_us", "time_mean_us", "time_std_us", "time_cv",
                 "repeats", "warmup", "graph_launches", "rotation_sets", "throttled_samples", "throttled_retaken",
                 "target_rel_spread", "bytes_read",
                 "bytes_written", "flops", "bandwidth_gbs", "gflops", "peak_bandwidth_gbs",
                 "theoretical_bandwidth_gbs", "attainable_bandwidth_gbs", "peak_gflops", "peak_matrix_gflops",
                 "peak_l2_gbs", "peak_l1_gbs", "intensity_flop_per_byte", "attainable_gflops",
                 "size_bandwidth_gbs", "sm_clock_mhz")
_WHOLE = {"repeats": 1, "warmup": 0, "graph_launches": 0, "rotation_sets": 0, "throttled_samples": 0,
          "throttled_retaken": 0}


def _schema_version(value, source: str) -> None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{source}: schema_version {value!r} is not a number") from None
    if isinstance(value, bool) or not math.isfinite(v) or v != int(v) or v < 1:
        raise ValueError(f"{source}: schema_version {value!r} is not a schema version (a whole number >= 1)")
    if v > _core.SCHEMA_VERSION:
        raise ValueError(f"{source}: written with results schema version {int(v)}, newer than this bwprof "
                         f"reads (up to {_core.SCHEMA_VERSION}); upgrade bwprof to read it")


def check_results(df: pd.DataFrame, source: str, schema_version=None) -> pd.DataFrame:
    """Rows read from ``source`` checked as bwprof results: a schema version this bwprof reads,
    bwprof's columns, numbers where the schema has numbers, no negative time, rate or count, whole
    repeats, and min <= median <= max. Anything else is a ValueError naming ``source``, the field
    and the first row that breaks it. The frame is returned as read."""
    _schema_version(schema_version, source)
    # A run has a kernel and a measured column (a run of user rows may lack dtype); when it does
    # not, the message lists every column a results table needs.
    measured = any(c in df.columns for c in MEASURED_COLUMNS)
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns] + ([] if measured else [" or ".join(MEASURED_COLUMNS)])
    found = ", ".join(map(str, list(df.columns)[:8])) + (", ..." if len(df.columns) > 8 else "")
    foreign = ValueError(f"{source}: not a bwprof results file: missing column(s) {', '.join(missing)} "
                         f"(found: {found or 'no columns'})")
    if "kernel" not in df.columns or not measured:  # another tool's CSV
        raise foreign
    try:
        return _check_values(df, source)
    except ValueError:
        if missing:  # a bad value in a table that is not bwprof's either: say the more basic problem
            raise foreign from None
        raise


def _check_values(df: pd.DataFrame, source: str) -> pd.DataFrame:
    if df.empty:
        return df
    if "schema_version" in df.columns:
        for v in pd.unique(df["schema_version"]):
            _schema_version(v, f"{source}: column schema_version")
    types = schema_types()
    values = {}
    for col in df.columns:
        if types.get(col) != "number":
            continue
        raw = df[col]
        if pd.api.types.is_numeric_dtype(raw.dtype) and not pd.api.types.is_bool_dtype(raw.dtype):
            # read as numbers already: no text to find (the per-value scan below is most of a load)
            values[col] = raw.to_numpy(dtype=float, na_value=np.nan)
            continue
        num = pd.to_numeric(raw, errors="coerce")
        text = num.isna() & raw.notna() & ~raw.map(lambda v: isinstance(v, str) and not v.strip())
        if text.any():
            i = int(text.to_numpy().nonzero()[0][0])
            raise ValueError(f"{source}: field {col} of row {i + 1} is {str(raw.iloc[i])!r}, not a number")
        values[col] = num.astype(float).to_numpy()

    def first(bad, what: str, col: str):
        if bad.any():
            i = int(bad.nonzero()[0][0])
            raise ValueError(f"{source}: field {col} of row {i + 1} is {float(values[col][i]):g}: {what}"
                             + (f" ({int(bad.sum())} rows)" if bad.sum() > 1 else ""))
    for col, v in values.items():
        first(np.isinf(v), "not a finite number", col)
    for col in _NON_NEGATIVE:
        if col in values:
            first(values[col] < 0, "negative; it is a time, a rate or a count", col)
    for col, lo in _WHOLE.items():
        if col in values:
            v = values[col]
            with np.errstate(invalid="ignore"):
                first(~np.isnan(v) & ((v != np.round(v)) | (v < lo)), f"not a whole number >= {lo}", col)
    med = values.get("time_median_us")
    if med is not None:
        slack = 1e-9 * np.abs(med) + 1e-12
        with np.errstate(invalid="ignore"):
            if "time_min_us" in values:
                first(values["time_min_us"] > med + slack, "above the row's time_median_us", "time_min_us")
            if "time_max_us" in values:
                first(values["time_max_us"] < med - slack, "below the row's time_median_us", "time_max_us")
    return df
