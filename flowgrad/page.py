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
WIDGET_CSS = HERE / "widget.css"
PLACEHOLDER = "/*FLOWGRAD_PAGE*/null"

# what the widget's document adds to the offline page's <head>. NOTE: an about:srcdoc document has no address
# of its own, so history.replaceState (the page keeps its step in the URL hash) throws there: it is made a no-op.
WIDGET_SCRIPT = """<script>(function () {
  var replace = history.replaceState.bind(history);
  history.replaceState = function (state, title, url) { try { replace(state, title, url); } catch (e) { return; } };
})();</script>
"""
# the widget opens with the code hidden (the notebook cell shows it); the page's "Code" button brings it back
OPENING = (
    ('class="fg-loading fg-offline"', 'class="fg-loading fg-offline fg-widget"'),
    ('<main class="layout" id="layout">', '<main class="layout no-editor" id="layout">'),
    ('aria-label="Hide program editor" aria-pressed="true"', 'aria-label="Show program editor" aria-pressed="false"'),
)


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
    head = f"<style>{WIDGET_CSS.read_text(encoding='utf-8')}</style>\n{WIDGET_SCRIPT}"
    before, after = html_parts(load_assets(root / "static", root / "templates" / "index.html"), head)
    before = before.decode()
    for old, new in OPENING:
        if old not in before:
            raise RuntimeError(f"the page's template has no {old!r} (flowgrad/page.py OPENING)")
        before = before.replace(old, new, 1)
    page = json.dumps({"before": before, "after": after.decode()})  # ASCII: a valid JS expression
    js = WIDGET_JS.read_text(encoding="utf-8")
    if PLACEHOLDER not in js:
        raise RuntimeError(f"{WIDGET_JS} has no {PLACEHOLDER}")
    return js.replace(PLACEHOLDER, page, 1)
