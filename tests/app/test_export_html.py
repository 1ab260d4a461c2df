"""POST /api/export/html: one self-contained .html file with the page and the recorded trace.

The offline behaviour itself (opened from disk, no network, stepping as on the page) is in
tests/browser/test_export_offline_file.py; here: the answer, what is inside it, its size, hostile input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from flowgrad_testing import strict_json

from app.core.config import Settings
from app.export.html import STATIC, load_assets
from app.main import create_app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
SQUARE = (ROOT / "examples" / "01_square_of_sum.py").read_text()
TUTORIAL_BUDGET = 3_000_000  # issue 14: ≤ 3 MB for every tutorial example


def script_json(html: str, element_id: str):
    m = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', html, re.S)
    assert m, f"no #{element_id} in the file"
    return strict_json(m.group(1))


def export(client, source: str, **view):
    r = client.post("/api/export/html", json={"source": source, **view})
    assert r.status_code == 200, r.text[:300]
    return r


def test_answer_is_an_html_attachment_with_the_trace_of_api_run(client):
    r = export(client, SQUARE, step=2, node="n1", theme="dark", projector=True)
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["content-disposition"] == 'attachment; filename="flowgrad-step2.html"'
    html = r.text
    data = script_json(html, "fg-offline")
    ran = strict_json(client.post("/api/run", json={"source": SQUARE}).text)
    assert data["source"] == SQUARE
    assert data["view"] == {"pass": None, "step": 2, "node": "n1", "theme": "dark", "projector": True}
    assert data["trace"]["stdout"] == ran["stdout"]
    assert len(data["trace"]["passes"]) == len(ran["passes"])
    assert data["trace"]["passes"][0]["graph"]["nodes"] == ran["passes"][0]["graph"]["nodes"]
    assert '<html lang="en" class="fg-loading fg-offline">' in html


def test_file_holds_every_module_the_page_imports_with_bare_specifiers(client):
    html = export(client, SQUARE).text
    modules = script_json(html, "fg-modules")
    assert "fg/js/main.js" in modules and "fg/js/offline.js" in modules
    assert {"fg/vendor/d3.js", "fg/vendor/katex/katex.js", "fg/vendor/uplot/uplot.js"} <= set(modules)
    relative = re.compile(r"""(\bfrom\s*|\bimport\s*\(?\s*)["'](\.\.?/[^"']+)["']""")
    for name, text in modules.items():
        assert (STATIC / name.removeprefix("fg/")).is_file(), name
        if name.startswith("fg/js/"):  # the page's own modules: no relative import left (Blob URLs have no base)
            assert not relative.search(text), (name, relative.search(text).group(0))
    for file in (STATIC / "js").glob("*.js"):  # every page module is reachable from main.js
        assert f"fg/js/{file.name}" in modules, f"{file.name} is not imported by the page (or the exporter missed it)"


def test_nothing_in_the_file_points_at_the_server(client):
    html = export(client, SQUARE).text
    without_modules = re.sub(r'<script type="application/json" id="fg-modules">.*?</script>', "", html, flags=re.S)
    assert "/static/" not in without_modules.replace('data-href="/static/', "")
    assert not re.search(r'<(link|script|img)\b[^>]*\b(src|href)="(?!data:)', without_modules)
    assert 'id="export-html"' in html  # present but hidden by the offline stylesheet
    assert "#export-html" in html and ".fg-offline #run" in html


def test_katex_fonts_inline_as_woff2_only():
    styles = load_assets().styles_html
    from app.export.fonts import subset_fonts

    kept = [name for name, data in subset_fonts().items() if data is not None]  # the subsets (app/export/fonts.py)
    assert styles.count("data:font/woff2;base64,") == styles.count("@font-face") == len(kept) > 0
    assert "url(fonts/" not in styles and ".woff)" not in styles and ".ttf)" not in styles
    assert 'data-href="/static/vendor/katex/katex.min.css"' in styles


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_tutorial_example_exports_within_3_mb(client, path, record_property):
    html = export(client, path.read_text()).content
    record_property("bytes", len(html))
    print(f"{path.stem}: {len(html) / 1e6:.2f} MB")
    assert len(html) <= TUTORIAL_BUDGET
    data = script_json(html.decode(), "fg-offline")
    assert data["trace"]["error"] is None or path.stem == "11_backward_twice_error"


HOSTILE_CLOSERS = [
    'print("</script><script>alert(1)</script>")\n',
    '# </script><!-- <script>\nprint("<!--")\n',
    'x = "</SCRIPT >"\nprint(x)\n',
]


@pytest.mark.parametrize("tail", HOSTILE_CLOSERS)
def test_program_text_and_output_cannot_end_the_data_script(client, tail):
    source = SQUARE + tail
    html = export(client, source, node='"</script><img src=x onerror=alert(1)>').text
    assert html.lower().count("</script") == 3  # the data, the modules, the loader: nothing else closes
    data = script_json(html, "fg-offline")
    assert data["source"] == source
    assert "</script" in data["trace"]["stdout"].lower() or "<!--" in data["trace"]["stdout"]
    assert data["view"]["node"].startswith('"</script>')


def test_a_failing_program_is_exported_with_its_error(client):
    html = export(client, "import torch\nx = torch.tensor(1.0)\nprint(x)\nundefined_name\n").text
    trace = script_json(html, "fg-offline")["trace"]
    assert trace["error"]["type"] == "NameError"
    assert trace["stdout"] == "tensor(1.)\n"


@pytest.mark.parametrize("body", [
    {},
    {"source": SQUARE, "theme": "neon"},
    {"source": SQUARE, "pass": -1},
    {"source": SQUARE, "step": "3; rm"},
    {"source": SQUARE, "node": "n" * 129},
    {"source": 5},
])
def test_malformed_requests_are_422(client, body):
    r = client.post("/api/export/html", json=body)
    assert r.status_code == 422
    strict_json(r.text)


def test_past_the_request_limit_is_413(client, settings):
    r = client.post("/api/export/html", json={"source": "#" * (settings.max_request_bytes + 10)})
    assert r.status_code == 413


def test_source_past_the_source_limit_is_an_error_in_the_file(client, settings):
    html = export(client, "x = 1\n" * (settings.max_source_chars // 6 + 10)).text
    trace = script_json(html, "fg-offline")["trace"]
    assert trace["error"] is not None and trace["passes"] == []


def test_file_past_max_export_bytes_is_413():
    app = create_app(Settings(workers=1, max_export_bytes=1_000_000))
    with TestClient(app) as c:
        r = c.post("/api/export/html", json={"source": SQUARE})
    assert r.status_code == 413
    body = strict_json(r.text)
    assert body["error"]["type"] == "ExportTooLarge" and "max_export_bytes = 1000000" in body["error"]["message"]


def test_openapi_documents_the_route(client):
    spec = json.loads(client.get("/openapi.json").text)
    assert "/api/export/html" in spec["paths"]


def test_the_pass_the_file_opens_at_is_recorded_in_full(client):
    source = (ROOT / "examples" / "17_linear_regression.py").read_text()
    plain = script_json(export(client, source).text, "fg-offline")["trace"]
    middle = next(p["index"] for p in plain["passes"] if p["graph"] is None)
    trace = script_json(export(client, source, **{"pass": middle}).text, "fg-offline")["trace"]
    assert trace["passes"][middle]["graph"] is not None
