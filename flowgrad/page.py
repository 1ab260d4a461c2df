"""The page's files for the widget: where they are, and the widget's ES module built from them.

The widget is the offline page (``app/export/html.py``: the page's own ES modules, styles and KaTeX
fonts inline) in an iframe, so it shares no module state or CSS with the notebook and several widgets
can live in one notebook. A repository checkout (or an editable install) reads ``static/`` and
``templates/`` at its root; a built wheel carries copies in ``flowgrad/_page/`` (``setup.py``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
WIDGET_JS = HERE / "widget.js"
PLACEHOLDER = "/*FLOWGRAD_PAGE*/null"

# a notebook output has less room than a browser window: the notebook's cell holds the program, so no editor
WIDGET_CSS = """
.fg-widget #toggle-editor, .fg-widget #copy-program { display: none !important; }
"""


def page_root() -> Path:
    """The folder holding ``static/`` and ``templates/``: the wheel's copy, else the checkout's."""
    for root in (HERE / "_page", HERE.parent):
        if (root / "static" / "js" / "main.js").is_file() and (root / "templates" / "index.html").is_file():
            return root
    raise FileNotFoundError("flowgrad's page files (static/, templates/) are not installed beside the package")


@lru_cache(maxsize=1)
def widget_esm() -> str:
    """``flowgrad/widget.js`` with the page (the offline file's text before and after its data) written in."""
    from app.export.html import html_parts, load_assets

    root = page_root()
    before, after = html_parts(load_assets(root / "static", root / "templates" / "index.html"), WIDGET_CSS)
    page = json.dumps({"before": before.decode(), "after": after.decode()})  # ASCII: a valid JS expression
    js = WIDGET_JS.read_text(encoding="utf-8")
    if PLACEHOLDER not in js:
        raise RuntimeError(f"{WIDGET_JS} has no {PLACEHOLDER}")
    return js.replace(PLACEHOLDER, page, 1)
