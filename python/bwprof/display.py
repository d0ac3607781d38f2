"""Rich display in Jupyter: a Measurement, a model report and a step report show as a compact
table with the verdict (``_repr_html_``), and a long run's progress as a bar that updates in place
in a notebook (the terminal keeps the text bar of suite._Progress). No Jupyter package is needed to
import this module; the bar uses IPython's display only inside a running kernel."""
from __future__ import annotations

import html
import math
import sys

from . import _core
from . import tables as _tables


def _fmt(v, spec: str = "{:.4g}", unit: str = "") -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return html.escape(str(v)) if v not in (None, "") else "-"
    if not math.isfinite(f):
        return "-"
    return spec.format(f) + (f" {unit}" if unit else "")


def _table(rows: list[tuple[str, str]]) -> str:
    cells = "".join(f"<tr><th style='text-align:left;padding:1px 10px 1px 0'>{html.escape(k)}</th>"
                    f"<td style='text-align:left;padding:1px 0'>{v}</td></tr>" for k, v in rows)
    return f"<table style='border-collapse:collapse;font-size:0.92em'>{cells}</table>"


def _verdict(text: str) -> str:
    return (f"<div style='margin:4px 0;padding:4px 8px;border-left:3px solid #e0a800;background:#fff8e1'>"
            f"{html.escape(text)}</div>") if text else ""


def measurement_html(m) -> str:
    """A Measurement as a small table: what ran, how long, how fast against which peak, the bound
    and the core's bottleneck sentence."""
    r = m.to_dict()
    pct_bw = _fmt(r.get("bandwidth_pct_peak"), "{:.0f}", "% of peak")
    pct_fl = _fmt(r.get("compute_pct_peak"), "{:.0f}", "% of peak")
    rows = [("kernel", html.escape(f"{r.get('kernel')} / {r.get('variant')} ({r.get('dtype')})")),
            ("shape", html.escape(str(r.get("shape") or "-"))),
            ("device", html.escape(f"{r.get('device_name')} ({r.get('device')}), cache {r.get('cache')}, "
                                   f"timing {r.get('timing')}")),
            ("time", f"{_fmt(r.get('time_median_us'), '{:.4g}', 'us')} median of {r.get('repeats')} "
                     f"(min {_fmt(r.get('time_min_us'), '{:.4g}')}, cv {_fmt(r.get('time_cv'), '{:.2f}')})"),
            ("bandwidth", f"{_fmt(r.get('bandwidth_gbs'), '{:.4g}', 'GB/s')} ({pct_bw})"),
            ("compute", f"{_fmt(r.get('gflops'), '{:.4g}', 'GFLOP/s')} ({pct_fl})"),
            ("bound", html.escape(f"{r.get('bound')} ({r.get('grade')})")),
            ("verified", "yes" if r.get("verified") else "<b style='color:#c00000'>no</b>")]
    if r.get("above_peak"):
        rows.append(("warning", "<b style='color:#c00000'>above a peak: the data was in a cache, or the traffic "
                                "is wrong</b>"))
    return f"<div class='bwprof-measurement'>{_table(rows)}{_verdict(str(r.get('bottleneck') or ''))}</div>"


def _plain_cell(v) -> str:
    if isinstance(v, str):
        return v or "-"
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "-" if v is None else str(v)
    return f"{f:.4g}" if math.isfinite(f) else "-"


def _frame_html(df, columns, top: int = 12) -> str:
    """The first ``top`` rows; in a row flagged above a peak the judged figures end in "!", and a
    line under the table says what the mark means (as the text tables do)."""
    cols = [c for c in columns if c in df.columns]
    shown = df[cols].head(top).copy()
    more = f"<div style='color:#666;font-size:0.85em'>{len(df) - top} more rows</div>" if len(df) > top else ""
    marked = [_tables.flagged(v) for v in df[_tables.FLAG].head(top)] if _tables.FLAG in df.columns else []
    note = ""
    if any(marked):
        for c in cols:
            if c in _tables.JUDGED:
                text = [_plain_cell(v) for v in shown[c]]  # to_html escapes it
                shown[c] = [t + (_tables.MARK if m and t != "-" else "") for t, m in zip(text, marked)]
        note = f"<div style='color:#c00000;font-size:0.85em'><b>{html.escape(_tables.ABOVE_PEAK_NOTE)}</b></div>"
    return shown.to_html(index=False, float_format=lambda v: f"{v:.4g}", na_rep="-", border=0) + note + more


def model_html(report) -> str:
    """A model report: its step whole against its parts and its bound (the verdict), the steps
    and the ops of the main step."""
    s = report.summary
    verdict = (f"step '{s.get('main_step')}': {_fmt(s.get('step_us'), '{:.1f}', 'us')} whole, parts "
               f"{_fmt(s.get('parts_us'), '{:.1f}', 'us')}, gap {_fmt(s.get('gap_pct'), '{:+.1f}', '%')}; "
               f"{_fmt(s.get('pct_of_bound'), '{:.0f}', '%')} of its bound "
               f"({_fmt(s.get('bound_us'), '{:.1f}', 'us')})")
    head = f"<b>{html.escape(str(s.get('title', report.workload.name)))}</b> on " \
           f"{html.escape(str(s.get('device_name')))} ({html.escape(str(s.get('device')))})"
    main = report.ops[report.ops["step"] == report.main_step]
    warn = "" if s.get("verified", True) else "<div style='color:#c00000'><b>an op's output did not match its " \
                                              "reference</b></div>"
    if s.get("above_peak"):
        warn += ("<div style='color:#c00000'><b>above a measured roof: the data was in a cache, or the declared "
                 "bytes or FLOPs are wrong; these figures are no utilization</b></div>")
    return (f"<div class='bwprof-model'>{head}{_verdict(verdict)}{warn}"
            + _frame_html(report.steps, ["step", "launches", "time_us", "parts_us", "gap_us", "gap_pct",
                                         "items_per_s", "pct_of_bound", "above_peak", "mode", "verified"])
            + f"<div style='margin-top:6px'>ops of step '{html.escape(str(report.main_step))}':</div>"
            + _frame_html(main.sort_values("total_us", ascending=False),
                          ["op", "category", "kernel", "count", "time_us", "total_us", "share_pct", "bandwidth_gbs",
                           "gflops", "bound", "above_peak"]) + "</div>")


def step_html(report) -> str:
    """A step report: its verdict, wall time split into busy and idle, and the top kernels."""
    s = report.summary
    head = f"<b>step {html.escape(repr(getattr(report, 'name', '')))}</b> on " \
           f"{html.escape(str(s.get('device_name')))} ({html.escape(str(s.get('device')))})"
    split = _table([("wall", _fmt(s.get("wall_us"), "{:.1f}", "us per step")),
                    ("busy", f"{_fmt(s.get('busy_us'), '{:.1f}', 'us')} ({_fmt(s.get('busy_pct'), '{:.1f}', '%')})"),
                    ("idle", _fmt(s.get("idle_us"), "{:.1f}", "us"))])
    k = report.kernels
    top = k.sort_values("time_per_step_us", ascending=False) if "time_per_step_us" in k and len(k) else k
    return (f"<div class='bwprof-step'>{head}{_verdict(str(s.get('verdict_text') or ''))}{split}"
            + (_frame_html(top, ["kernel", "op", "calls_per_step", "time_per_step_us", "step_share_pct",
                                 "bandwidth_gbs", "bandwidth_pct_peak", "gflops", "bound", "above_peak"])
               if len(k) else "")
            + "</div>")


# ---- progress in a notebook ---------------------------------------------------------------------

def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython's ZMQ shell), where an HTML bar can update in place."""
    ip = sys.modules.get("IPython")
    if ip is None:
        return False
    try:
        shell = ip.get_ipython()
    except Exception:  # noqa: BLE001 - any IPython oddity: not a notebook
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class NotebookBar:
    """A progress bar that a notebook cell shows and updates in place (one output, not a line per
    step): an HTML <progress> element with the step's text."""

    def __init__(self, total: int):
        from IPython.display import HTML, display
        self._html = HTML
        self.total = total
        self.handle = display(HTML(self._body(0, "starting")), display_id=True)

    def _body(self, done: int, text: str) -> str:
        return (f"<div class='bwprof-progress'><progress value='{done}' max='{max(self.total, 1)}' "
                f"style='width:22em'></progress> {done}/{self.total} {html.escape(text)}</div>")

    def update(self, done: int, elapsed_s: float, text: str) -> None:
        if self.handle is not None:
            self.handle.update(self._html(self._body(done, f"{elapsed_s:5.1f}s {text}")))


def install() -> None:
    """Gives the core's Measurement its notebook display (a pybind11 class takes the attribute)."""
    if not hasattr(_core.Measurement, "_repr_html_"):
        _core.Measurement._repr_html_ = measurement_html
