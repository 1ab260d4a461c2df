"""One self-contained ``.html`` file: the page's ES modules, styles, KaTeX fonts and a recorded trace inline.

The page is ES modules with relative imports and import cycles, so it is not concatenated. Each
module's relative specifiers (``"./store.js"``, ``"../vendor/d3.js"``, ``import("../vendor/katex/katex.js")``)
are rewritten to bare names (``"fg/js/store.js"``, ``"fg/vendor/d3.js"``), the sources go in as JSON, and
a small classic loader (``LOADER``) turns each into a Blob URL, maps the bare names to them with an
``<script type="importmap">`` and imports ``fg/js/main.js``. Cycles need no order: an import map only
names URLs. Works from ``file://`` (origin "null"). Stylesheets the page loads on first use (KaTeX,
uPlot) are inlined as ``<style data-href=…>``, which ``static/js/lazy.js`` takes as already loaded; KaTeX's
fonts are cut to the glyphs the page's LaTeX can use (``app/export/fonts.py``).
The trace, source and view state go in ``<script type="application/json" id="fg-offline">``, which
``static/js/offline.js`` reads: its presence is the page's "offline" mode.
"""

from __future__ import annotations

import base64
import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jinja2
import orjson

from app.export.fonts import subset_fonts

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "static"
TEMPLATE = ROOT / "templates" / "index.html"
ENTRY = "js/main.js"
BARE_PREFIX = "fg/"
# the stylesheets the page fetches on first use (static/js/lazy.js): inlined, marked with their href
LAZY_STYLES = ("vendor/katex/katex.min.css", "vendor/uplot/uPlot.min.css")

# `from "./x.js"`, `import "./x.js"`, `import("./x.js")`, `export … from "../y.js"`: relative specifiers only
_SPECIFIER = re.compile(r"""(\bfrom\s*|\bimport\s*\(?\s*)(["'])(\.\.?/[^"'\n]+?)\2""")
# tags of the served page that point into /static (stylesheets, module preloads, the entry module, the icon)
_STATIC_LINK = re.compile(r"""[ \t]*<link\b[^>]*\bhref="/static/[^"]*"[^>]*>[ \t]*\n?""")
_STATIC_SCRIPT = re.compile(r"""[ \t]*<script\b[^>]*\bsrc="/static/[^"]*"[^>]*>\s*</script>[ \t]*\n?""")
_FONT_URL = re.compile(r"""url\((fonts/[^)]+?\.(woff2|woff|ttf))\)\s*format\(["'][a-z0-9]+["']\)""")

# NOTE: Blob URLs cannot be the base of a relative import, which is why every specifier is made bare.
LOADER = """(function () {
  var sources = JSON.parse(document.getElementById("fg-modules").textContent);
  var imports = {};
  Object.keys(sources).forEach(function (name) {
    imports[name] = URL.createObjectURL(new Blob([sources[name]], { type: "text/javascript" }));
  });
  var map = document.createElement("script");
  map.type = "importmap";
  map.textContent = JSON.stringify({ imports: imports });
  document.head.appendChild(map);
  var entry = document.createElement("script");
  entry.type = "module";
  entry.textContent = 'import "%ENTRY%";';
  document.body.appendChild(entry);
})();"""

# what needs the server is hidden: run, the examples (fetched), class sessions, links to this file, the FD check
OFFLINE_CSS = """
.fg-offline #run, .fg-offline #examples-open, .fg-offline #class-start, .fg-offline #copy-link,
.fg-offline #export-html, .fg-offline #class-panel, .fg-offline #follow-banner, .fg-offline #question-box,
.fg-offline .inspector button[aria-label="Check gradient"], .fg-offline .inspector .fd-out,
.fg-offline .inspector h3:has(+ button[aria-label="Check gradient"]) { display: none !important; }
"""


class ExportError(Exception):
    """The page's files are not as this builder expects (a module imports a file that is not there)."""


@dataclass(frozen=True)
class Assets:
    modules_json: bytes  # {bare name: source}, `<` escaped so it cannot close its <script>
    styles_html: str     # the page's stylesheet and the lazy ones, fonts as data: URLs
    page_html: str       # templates/index.html rendered, without its /static tags
    favicon: str         # data: URL


def _bare(static_path: str) -> str:
    return BARE_PREFIX + static_path


def _module_graph(static: Path, entry: str) -> dict[str, str]:
    """Every module reachable from ``entry`` (static-relative path) → its source, specifiers made bare."""
    out: dict[str, str] = {}
    todo = [entry]
    while todo:
        path = todo.pop()
        if _bare(path) in out:
            continue
        file = static / path
        if not file.is_file():
            raise ExportError(f"module {path} is imported but {file} does not exist")
        text = file.read_text(encoding="utf-8")
        here = posixpath.dirname(path)

        def rewrite(m: re.Match, here: str = here) -> str:
            target = posixpath.normpath(posixpath.join(here, m.group(3)))
            if not (static / target).is_file():
                return m.group(0)  # a string that only looks like an import (inside vendored code)
            todo.append(target)
            return f"{m.group(1)}{m.group(2)}{_bare(target)}{m.group(2)}"

        out[_bare(path)] = _SPECIFIER.sub(rewrite, text)
    return out


def _inline_fonts(css: str, css_dir: Path, subsets: dict[str, bytes | None] | None = None) -> str:
    """Font URLs as data: URLs, woff2 only (every browser that runs ES modules reads woff2). With `subsets`
    ({file name: woff2 bytes or None}, app/export/fonts.py) a font is its subset, and a left-out font's
    @font-face goes."""
    if subsets:
        for name, data in subsets.items():
            if data is None:
                css = re.sub(r"@font-face\{[^}]*url\(fonts/" + re.escape(name) + r"\)[^}]*\}", "", css)

    def font(m: re.Match) -> str:
        if m.group(2) != "woff2":
            return ""
        name = posixpath.basename(m.group(1))
        raw = subsets[name] if subsets and subsets.get(name) is not None else (css_dir / m.group(1)).read_bytes()
        data = base64.b64encode(raw).decode()
        return f'url(data:font/woff2;base64,{data}) format("woff2")'

    css = _FONT_URL.sub(font, css)
    # the dropped woff/ttf fallbacks leave ", ," and ",;" behind
    css = re.sub(r",\s*(?=[,;}])", "", css)
    return re.sub(r"src:\s*,", "src:", css)


def _style(css: str, href: str | None = None) -> str:
    attr = f' data-href="{href}"' if href else ""
    body = css.replace("</", "<\\/")  # a stylesheet cannot end its <style> early
    return f"<style{attr}>{body}</style>"


def _json_for_script(data: bytes) -> bytes:
    # NOTE: JSON has `<` only inside strings, where \u003c means the same; "</script>" cannot appear.
    return data.replace(b"<", b"\\u003c")


@lru_cache(maxsize=4)
def load_assets(static: Path = STATIC, template: Path = TEMPLATE) -> Assets:
    """Read once per process: the files do not change under a running server."""
    modules = _module_graph(static, ENTRY)
    styles = [_style((static / "css" / "app.css").read_text(encoding="utf-8"))]
    for rel in LAZY_STYLES:
        css = (static / rel).read_text(encoding="utf-8")
        subsets = subset_fonts() if rel.startswith("vendor/katex/") and static == STATIC else None
        styles.append(_style(_inline_fonts(css, (static / rel).parent, subsets), "/static/" + rel))
    styles.append(_style(OFFLINE_CSS))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(template.parent)), autoescape=True)
    page = env.get_template(template.name).render(request=None, follow_code=None)
    page = _STATIC_SCRIPT.sub("", _STATIC_LINK.sub("", page))
    if "/static/" in page:
        raise ExportError("templates/index.html refers to /static in a way the exporter does not rewrite")
    favicon = "data:image/svg+xml;base64," + base64.b64encode((static / "favicon.svg").read_bytes()).decode()
    return Assets(_json_for_script(orjson.dumps(modules)), "\n".join(styles), page, favicon)


def html_parts(assets: Assets | None = None, extra_head: str = "") -> tuple[bytes, bytes]:
    """The file around its data: ``before + <the fg-offline JSON, `<` escaped> + after`` is the page in offline
    mode. The notebook widget (flowgrad/widget.js) joins them in the browser with its trace; ``extra_head`` (its
    styles and script) goes at the end of <head>."""
    assets = assets or load_assets()
    head_extra = (f'<link rel="icon" href="{assets.favicon}" type="image/svg+xml">\n'
                  f"{assets.styles_html}\n{extra_head}")
    page = assets.page_html.replace('<html lang="en" class="fg-loading">',
                                    '<html lang="en" class="fg-loading fg-offline">', 1)
    page = page.replace("</head>", head_extra + "</head>", 1)
    head, sep, tail = page.rpartition("</body>")
    if not sep:
        raise ExportError("templates/index.html has no </body>")
    loader = LOADER.replace("%ENTRY%", _bare(ENTRY))
    before = head.encode() + b'<script type="application/json" id="fg-offline">'
    after = b"".join([
        b"</script>\n",
        b'<script type="application/json" id="fg-modules">', assets.modules_json, b"</script>\n",
        b"<script>", loader.encode(), b"</script>\n",
        sep.encode(), tail.encode(),
    ])
    return before, after


def offline_data(trace_json: bytes, source: str, view: dict) -> bytes:
    """What ``static/js/offline.js`` reads: the source, the view to open at, the trace (the bytes /api/run answers)."""
    return (b'{"source":' + orjson.dumps(source) + b',"view":' + orjson.dumps(view)
            + b',"trace":' + trace_json + b"}")


def build_html(trace_json: bytes, source: str, view: dict, assets: Assets | None = None) -> bytes:
    """The file: the page in offline mode showing ``trace_json`` (the bytes /api/run answers) at ``view``."""
    before, after = html_parts(assets)
    return before + _json_for_script(offline_data(trace_json, source, view)) + after
