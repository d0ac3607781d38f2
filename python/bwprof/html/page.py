"""The page itself: one self-contained HTML file with plotly.js, the report's script and style and
the run's data inline (nothing is fetched when it is opened)."""
from __future__ import annotations

import html
import json
from pathlib import Path

HERE = Path(__file__).parent
INSTALL_HINT = "pip install 'bwprof[report]' (or: pip install plotly)"


class MissingPlotly(ImportError):
    """The HTML report needs plotly (an optional dependency: the ``report`` extra)."""


def plotly_js() -> str:
    """The plotly.js bundle that the installed plotly package ships (its offline copy)."""
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        raise MissingPlotly(f"the HTML report needs plotly, which is not installed: {INSTALL_HINT}") from None
    return get_plotlyjs()


def _script_json(data: dict) -> str:
    """``data`` as JSON that can sit inside a <script> element: every "<" is written as its \\u
    escape, so no "</script>" or "<!--" in a kernel name can end it early."""
    text = json.dumps(data, allow_nan=False, separators=(",", ":"), ensure_ascii=False, default=str)
    return text.replace("<", "\\u003c")


def render(page: dict) -> str:
    """The HTML document of a page's data (kinds.page_of)."""
    js = plotly_js()
    own = (HERE / "report.js").read_text(encoding="utf-8")
    css = (HERE / "report.css").read_text(encoding="utf-8")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        # Nothing but what the file holds: a stray reference to the network would be refused.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' "
        "'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:\">\n"
        f"<title>{html.escape(str(page.get('title') or 'bwprof report'))}</title>\n"
        f"<style>{css}</style>\n</head>\n<body>\n<main id=\"report\"></main>\n"
        f"<script type=\"application/json\" id=\"bwprof-data\">{_script_json(page)}</script>\n"
        f"<script>{js}</script>\n<script>{own}</script>\n</body>\n</html>\n")
