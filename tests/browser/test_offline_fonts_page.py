"""The offline file's KaTeX fonts are subsets (app/export/fonts.py): every op's LaTeX, and the inspector's
chain-rule lines, set in the offline file take exactly the widths they take on the served page with KaTeX's
whole fonts (a glyph missing from a subset would be drawn by another font, at another width), and no font
face fails to load. Screenshot of an offline chain rule in test-artifacts/."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_export_offline_file import EXAMPLE, assert_no_network, export_file, offline

from engine.recorder import op_table

ROOT = Path(__file__).resolve().parents[2]

# each LaTeX as the inspector sets it (static/js/inspector.js), with numbers and a program name around it
INSPECTOR_FORMS = [
    "\\displaystyle \\frac{\\partial\\,\\text{out}}{\\partial a} = {}",
    "\\underbrace{0.25}_{\\partial L/\\partial \\text{h_1}} \\times \\underbrace{{}}_{\\partial \\text{h_1}/\\partial "
    "\\text{x}} = \\underbrace{-1.5e-3}_{\\partial L/\\partial \\text{x}}",
    "\\textstyle\\sum_{\\text{dim 0}}:\\ [4, 3]\\to[3] = \\underbrace{{}}_{\\partial L/\\partial \\text{bias}}",
]

MEASURE = """async ([katexUrl, lines]) => {
  const katex = (await import(katexUrl)).default;
  const box = document.createElement('div');
  box.style.cssText = 'position:absolute;left:0;top:0;font-size:16px;white-space:nowrap';
  document.body.appendChild(box);
  const divs = lines.map((l) => {
    const d = document.createElement('div');
    d.style.display = 'inline-block';
    katex.render(l, d, { throwOnError: false, displayMode: true });
    box.appendChild(d);
    box.appendChild(document.createElement('br'));
    return d;
  });
  await document.fonts.ready;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const widths = divs.map((d) => Math.round(d.getBoundingClientRect().width * 100) / 100);
  const failed = [...document.fonts].filter((f) => f.status === 'error').map((f) => f.family);
  const loaded = [...document.fonts].filter((f) => f.status === 'loaded').map((f) => f.family + ' ' + f.style + ' ' + f.weight);
  box.remove();
  return { widths, failed, loaded };
}"""


def _lines():
    latex = sorted({l for op in op_table().values() for l in op["latex"] if l})
    return latex + [form.replace("{}", "{" + l + "}") for l in latex for form in INSPECTOR_FORMS]


def test_every_op_latex_renders_in_the_offline_file_as_on_the_page(page, browser, tmp_path, shot):
    if page.server_kind != "app":
        pytest.skip("the export route needs the real app")
    lines = _lines()
    assert len(lines) > 200
    page.goto(page.base + "/")
    page.evaluate("""() => new Promise((ok) => { const l = document.createElement('link'); l.rel = 'stylesheet';
        l.href = '/static/vendor/katex/katex.min.css'; l.onload = ok; document.head.appendChild(l); })""")
    served = page.evaluate(MEASURE, ["/static/vendor/katex/katex.js", lines])
    path = export_file(page, tmp_path, EXAMPLE("14_softmax_cross_entropy"))
    with offline(browser, path) as pg:
        offline_run = pg.evaluate(MEASURE, ["fg/vendor/katex/katex.js", lines])
        assert not offline_run["failed"], offline_run["failed"]
        assert {"KaTeX_Main normal 400", "KaTeX_Math italic 400"} <= set(offline_run["loaded"])
        differ = [(l, a, b) for l, a, b in zip(lines, served["widths"], offline_run["widths"]) if abs(a - b) > 0.05]
        assert not differ, (len(differ), differ[:10])
        # the inspector's chain rule of a few ops, as a reader opens it
        pg.keyboard.press("End")
        for name in pg.evaluate("window.__fg.model.pass.graph.nodes.filter(n => n.op).slice(0, 4).map(n => n.id)"):
            # the graph opens readable on the step, so others may lie off screen: the node's own click handler
            pg.locator(f'g[data-node-id="{name}"]').dispatch_event("click")
            pg.wait_for_selector("#inspector .katex", timeout=10000)
        shot(pg, "export_offline_fonts_inspector")
        pg.locator("#inspector").screenshot(path=str(ROOT / "test-artifacts" / "export_offline_fonts_chain_rule.png"))
        assert_no_network(pg, path)
    assert not served["failed"]
