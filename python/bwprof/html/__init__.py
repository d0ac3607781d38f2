"""The interactive report of a run: one self-contained HTML file (plotly.js and the data inline;
nothing is fetched to view it) with the roofline (hover, filters by family, dtype and bound, zoom,
the memory level of the x axis), the size ceiling, the dtypes side by side, the time breakdown,
the busy/idle bar and the tables of a model or step report, and how the run was made::

    import bwprof
    bwprof.report("results/20260101-120000-gpu0")           # -> results/.../report.html
    bwprof.report(bwprof.run_suite(quick=True), "run.html")
    bwprof.report(bwprof.model("decode", quick=True), "decode.html")

Needs plotly (``pip install 'bwprof[report]'``). ``python3 -m bwprof report RUN [--out FILE]``.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from ..files import atomic_write_text, check_output_file
from .kinds import PAGES, Run, load, page_of
from .page import INSTALL_HINT, MissingPlotly, render

REPORT_FILE = "report.html"


def to_html(run: Any, *, command: str | None = None) -> str:
    """The report of ``run`` as one HTML document (a string); see :func:`report`."""
    return render(page_of(run, command=command))


def default_path(run: Any) -> Path:
    """Where :func:`report` writes when no path is given: report.html in the run's folder (beside
    the file given), else ./report.html."""
    if isinstance(run, (str, os.PathLike)):
        p = Path(run)
        return (p if p.is_dir() else p.parent) / REPORT_FILE
    return Path(REPORT_FILE)


def report(run: Any, path: Any = None, *, command: str | None = None) -> Path:
    """Write the interactive HTML report of ``run`` and return its path.

    ``run``: a run folder or file (a ``bench`` run, a model or step report's folder, results.csv,
    rows.jsonl, bandwidth_report.json, or a profiler's trace), a results DataFrame (``run_suite``,
    ``sweep``, ``load_run``), a trace DataFrame (``bwprof.traces.read``), a Measurement or a list
    of them, a model report (``bwprof.model``) or a step report. ``path``: the HTML file (default:
    report.html in the run's folder, else in the current folder). ``command``: the command line
    to show (default: the one the run folder recorded). A run with no rows, or anything that is
    neither a bwprof run nor a trace, is a ValueError naming ``run``; a missing plotly an
    ImportError saying how to install it."""
    out = default_path(run) if path is None else Path(os.fspath(path))
    check_output_file("path", out)
    text = to_html(run, command=command)
    atomic_write_text(out, text)
    return out


def _cmd_report(args) -> int:
    try:
        path = report(args.run, args.out)
    except MissingPlotly as e:
        print(f"bwprof: {e}", file=sys.stderr)
        return 2
    print(path)
    return 0


def register_cli(subparsers) -> None:
    """Adds ``report RUN [--out FILE.html]`` to the bwprof CLI."""
    s = subparsers.add_parser("report", help="write a run's interactive HTML report (roofline with hover and "
                              "filters, size ceiling, dtypes, time breakdown, tables); one file, viewable offline")
    s.add_argument("run", metavar="RUN", help="a run folder (bench, model, step), its results.csv, rows.jsonl or "
                   "bandwidth_report.json, or a profiler trace")
    s.add_argument("--out", metavar="FILE.html", help="the HTML file (default: report.html in the run folder)")
    s.set_defaults(func=_cmd_report)


__all__ = ["INSTALL_HINT", "MissingPlotly", "PAGES", "REPORT_FILE", "Run", "default_path", "load", "page_of",
           "register_cli", "report", "to_html"]
