"""Result files: the measured figures that docs/BENCHMARKS.md is generated from, kept as data.

One CSV per benchmark (suite) and machine, named ``<suite>_<machine>_<commit>.csv`` in docs/results/;
each row is a bwprof row (any of its columns, docs/schema.md) with where and when it was measured
and, where the benchmark compares with one, the peer's figure. The format: docs/results/README.md.
A benchmark script calls ``write``; ``benchmarks/benchmarks_md.py`` turns the folder into the doc.
"""
from __future__ import annotations

import csv
import datetime as _dt
import io
import math
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "docs" / "results"

# Where and when a row was measured; every row has them (machine: a short name such as h200).
PROVENANCE = ["date", "commit", "machine", "source"]
# The peer's figure for the same work, where the benchmark times one (e.g. torch.matmul).
PEER = ["peer", "peer_time_us", "peer_bandwidth_gbs", "peer_gflops"]
EXTRA = ["label", "note"]  # the suite's name for a configuration; a short remark
# Columns every row fills.
REQUIRED = PROVENANCE + ["device_name", "family", "kernel", "variant", "dtype", "shape"]
# A row holds at least one of these (a time; or a rate where only a rate is measured, as for a peak).
FIGURES = ["time_median_us", "time_min_us", "bandwidth_gbs", "gflops", "size_bandwidth_gbs"]
# What makes two rows measurements of the same thing on one machine.
KEY = ["machine", "family", "kernel", "variant", "dtype", "shape", "cache", "timing"]
KEY_DEFAULTS = {"cache": "cold", "timing": "single"}

_SUITE = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)*$")
_MACHINE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}( \d{2}:\d{2})?$")


def allowed_columns() -> list[str]:
    """Every column a result file may hold, in the order ``write`` puts them."""
    import bwprof

    return PROVENANCE + [c for c in bwprof.columns() if c not in PROVENANCE] + EXTRA + PEER


def machine_name(device_name: str, count: int = 1) -> str:
    """A file-name form of a device: 'NVIDIA H100 80GB HBM3' -> 'h100'; two of them 'h100-x2'."""
    words = re.findall(r"[a-z0-9]+", device_name.lower())
    model = next((w for w in words if re.search(r"\d", w) and not re.fullmatch(r"\d+gb|hbm\d\w*", w)), None)
    name = model or "-".join(words) or "device"
    return f"{name}-x{count}" if count > 1 else name


def file_name(suite: str, machine: str, commit: str) -> str:
    for what, value, pattern in (("suite", suite, _SUITE), ("machine", machine, _MACHINE),
                                 ("commit", commit, _COMMIT)):
        if not isinstance(value, str) or not pattern.match(value):
            raise ValueError(f"result file: {what} {value!r} does not match {pattern.pattern}")
    return f"{suite}_{machine}_{commit}.csv"


def parse_name(path: str | Path) -> tuple[str, str, str]:
    """(suite, machine, commit) from a result file's name; ValueError if it is not one."""
    parts = Path(path).name.removesuffix(".csv").rsplit("_", 2)
    if (len(parts) != 3 or not _SUITE.match(parts[0]) or not _MACHINE.match(parts[1])
            or not _COMMIT.match(parts[2])):
        raise ValueError(f"{Path(path).name}: a result file is named <suite>_<machine>_<commit>.csv")
    return parts[0], parts[1], parts[2]


def current_commit(root: Path = ROOT) -> str:
    """The short commit of the checkout; ValueError outside a git checkout."""
    out = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=root, capture_output=True, text=True)
    if out.returncode != 0:
        raise ValueError("commit: not a git checkout here; pass commit= (the commit the module was built from)")
    return out.stdout.strip()


def _cell(v) -> str:
    if v is None or type(v).__name__ in ("NAType", "NaTType"):
        return ""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)
    return str(v)


def check_rows(rows: list[dict], where: str) -> None:
    """ValueError naming the file and row where a row lacks a required column or has an unknown one."""
    allowed = set(allowed_columns())
    for i, row in enumerate(rows, 1):
        unknown = sorted(set(row) - allowed)
        if unknown:
            raise ValueError(f"{where}, row {i}: unknown column(s) {unknown} (docs/results/README.md)")
        missing = [c for c in REQUIRED if _cell(row.get(c)) == ""]
        if missing:
            raise ValueError(f"{where}, row {i}: {', '.join(missing)} missing")
        if all(_cell(row.get(c)) == "" for c in FIGURES):
            raise ValueError(f"{where}, row {i}: no figure (one of {', '.join(FIGURES)})")
        if not _DATE.match(str(row["date"])):
            raise ValueError(f"{where}, row {i}: date {row['date']!r} is not YYYY-MM-DD[ HH:MM]")
        if _cell(row.get("peer")) == "" and any(_cell(row.get(c)) != "" for c in PEER[1:]):
            raise ValueError(f"{where}, row {i}: a peer's figure without the peer's name")


def write(suite: str, rows: list[dict], *, source: str, device_name: str | None = None,
          machine: str | None = None, commit: str | None = None, date: str | None = None,
          folder: str | Path = FOLDER, replace: bool = True) -> Path:
    """Write ``rows`` (bwprof rows, e.g. ``m.to_dict()``, plus ``peer``/``peer_time_us`` where there is
    a peer) as ``<folder>/<suite>_<machine>_<commit>.csv``; returns its path.

    ``source`` says what produced them (the command line). The device's name defaults to the rows'
    ``device_name``, the machine to its short form, the commit to the checkout's, the date to now (UTC).
    A key that is no result-file column is a ValueError (a misspelt peer column must not vanish). With
    ``replace``, the file of an earlier run of the same suite on the same machine is removed: the folder
    holds the current run, git the others.
    """
    if not rows:
        raise ValueError(f"{suite}: no rows to write")
    device_name = device_name or rows[0].get("device_name")
    if not device_name:
        raise ValueError("device_name: not in the rows; pass device_name=")
    machine = machine or machine_name(device_name)
    commit = commit or current_commit()
    date = date or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    folder = Path(folder)
    path = folder / file_name(suite, machine, commit)
    allowed = allowed_columns()
    full = []
    for r in rows:
        row = {k: v for k, v in r.items() if _cell(v) != ""}
        row.update(date=date, commit=commit, machine=machine, source=source)
        row.setdefault("device_name", device_name)
        full.append(row)
    check_rows(full, path.name)
    cols = [c for c in allowed if any(c in r for r in full)]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in full:
        w.writerow([_cell(r.get(c)) for c in cols])
    from bwprof.files import atomic_write_text, ensure_folder

    ensure_folder("folder", folder)
    atomic_write_text(path, buf.getvalue())
    if replace:
        for old in folder.glob(f"{suite}_{machine}_*.csv"):
            if old != path and parse_name(old)[:2] == (suite, machine):
                old.unlink()
    return path


def read(path: str | Path) -> list[dict]:
    """The rows of one result file (empty cells left out), checked; each gets its ``suite``."""
    path = Path(path)
    suite, machine, commit = parse_name(path)
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [{k: v for k, v in r.items() if v != ""} for r in csv.DictReader(fh)]
    check_rows(rows, path.name)
    for i, r in enumerate(rows, 1):
        if (r["machine"], r["commit"]) != (machine, commit):
            raise ValueError(f"{path.name}, row {i}: machine/commit {r['machine']}/{r['commit']} "
                             "differ from the file's name")
        r["suite"] = suite
    return rows


def key(row: dict) -> tuple:
    return tuple(row.get(c, KEY_DEFAULTS.get(c)) for c in KEY)


def current(folder: str | Path = FOLDER) -> list[dict]:
    """Every row of the folder that no later measurement of the same thing replaces.

    One file per suite and machine (a second is an error naming both). The same key (``KEY``) in two
    files: the later date wins; the same date, or the same key twice in one file, is an error. Rows keep
    the order of the files (by name) and, within one, the file's order.
    """
    files = sorted(Path(folder).glob("*.csv"))
    seen: dict[tuple, Path] = {}
    for f in files:
        sm = parse_name(f)[:2]
        if sm in seen:
            raise ValueError(f"two result files for suite {sm[0]} on {sm[1]}: {seen[sm].name} and {f.name}; "
                             "keep the current one (git keeps the other)")
        seen[sm] = f
    best: dict[tuple, dict] = {}
    for f in files:
        for r in read(f):
            k = key(r)
            old = best.get(k)
            if old is not None and old["date"] == r["date"]:
                raise ValueError(f"{f.name}: {k[1:]} measured on {r['date']} twice "
                                 f"(suites {old['suite']} and {r['suite']})")
            if old is None or r["date"] > old["date"]:
                best[k] = r
    return list(best.values())


def row(m: dict, peer: str | None = None, peer_time_us: float | None = None, **extra) -> dict:
    """A result row from a bwprof row ``m`` (``Measurement.to_dict()``), its peer and any other columns."""
    out = dict(m, **extra)
    if peer is not None and peer_time_us is not None:
        out.update(peer=peer, peer_time_us=peer_time_us)
    return out


def add_arguments(ap, suite: str) -> None:
    """The options a benchmark script takes to write its rows as a result file."""
    ap.add_argument("--results", nargs="?", const=str(FOLDER), metavar="DIR",
                    help="also write the rows as a result file in DIR (default docs/results; docs/results/README.md)")
    ap.add_argument("--suite", default=suite, help=f"the result file's suite (default {suite}; give a partial run "
                    "its own, so that it does not replace the whole run's file)")
    ap.add_argument("--commit", help="the commit the module was built from (default: the checkout's)")


def write_from_args(args, rows: list[dict], argv: list[str] | None = None) -> Path | None:
    """``write`` the rows when the script was given --results; the source is its command line."""
    if not args.results:
        return None
    import sys

    words = argv if argv is not None else sys.argv[1:]
    source = " ".join(["benchmarks/" + Path(sys.argv[0]).name, *words])
    path = write(args.suite, rows, source=source, commit=args.commit, folder=args.results)
    print(f"result file: {path}", flush=True)
    return path


def add(paths: list[str | Path], folder: str | Path = FOLDER) -> list[Path]:
    """Copy result files written elsewhere (a GPU machine's output) into ``folder``, each checked,
    each replacing the file of the same suite and machine there; returns the new paths."""
    import shutil

    files = []
    for p in paths:
        p = Path(p)
        files += sorted(p.glob("*.csv")) if p.is_dir() else [p]
    for f in files:
        read(f)  # a bad file is an error before anything is copied
    out = []
    for f in files:
        suite, machine, _ = parse_name(f)
        for old in Path(folder).glob(f"{suite}_{machine}_*.csv"):
            if parse_name(old)[:2] == (suite, machine) and old.name != f.name:
                old.unlink()
        out.append(Path(shutil.copyfile(f, Path(folder) / f.name)))
    return out


def explain_choice(family, **kw):
    """A row's `choice`: the kernel bwprof chooses, or None under a module older than bwprof.explain
    (the module of a --before run)."""
    import bwprof
    return bwprof.explain(family, **kw) if hasattr(bwprof, "explain") else None


def main(argv=None) -> int:
    """A bwprof run folder (``bwprof bench --out``, ``save_run``) as a result file; or, with ``add``,
    result files made elsewhere copied into the folder."""
    import argparse
    import sys

    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["add"]:
        ap = argparse.ArgumentParser(prog="result_files.py add",
                                     description="copy result files (or folders of them) into docs/results")
        ap.add_argument("paths", nargs="+")
        ap.add_argument("--folder", default=str(FOLDER))
        a = ap.parse_args(args[1:])
        for path in add(a.paths, a.folder):
            print(f"result file: {path}")
        return 0
    ap = argparse.ArgumentParser(description="write a bwprof run's rows as a result file (docs/results/README.md)")
    ap.add_argument("run", help="a run folder, results.csv, rows.jsonl or bandwidth_report.json")
    ap.add_argument("--suite", default="bench")
    ap.add_argument("--source", required=True, help="the command that made the run, e.g. 'bwprof bench'")
    ap.add_argument("--commit", help="the commit the module was built from (default: the checkout's)")
    ap.add_argument("--folder", default=str(FOLDER))
    args = ap.parse_args(args)
    import bwprof

    rows = bwprof.load_run(args.run).to_dict("records")
    path = write(args.suite, rows, source=args.source, commit=args.commit, folder=args.folder)
    print(f"result file: {path} ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
