"""Finding your way in a graph (issue 11): minimap, search, breadcrumbs, fit to screen.

Small tutorial graphs run through the real app; the folded pass comes from folded_fixture.py in the
contract's format (loaded into the page, its run endpoints answered by `page.route`) until the
server sends folded passes itself. Screenshots in test-artifacts/nav_*.png."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from folded_fixture import RUN_ID, folded_pass, group_payload, search_answer
from playwright.sync_api import expect
from test_page import open_app, pause, run_source

ROOT = Path(__file__).resolve().parents[2]
MODULE_SGD = (ROOT / "examples" / "18_module_sgd.py").read_text()
SQUARE = (ROOT / "examples" / "01_square_of_sum.py").read_text()
# a graph too big to read whole that the server does not fold (~320 nodes, under fold_threshold = 400)
BIG_UNFOLDED = ("import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x\nfor i in range(40):\n"
                "    y = torch.sin(y) * 1.01 + 0.1\ny.backward()\n")


def view_box(page) -> dict:
    return page.evaluate("window.__fg.graph.viewBox()")


def centre(box: dict) -> tuple[float, float]:
    return box["x"] + box["w"] / 2, box["y"] + box["h"] / 2


def settle(page, ms: int = 350):
    """Until the view's transitions (DURATIONS.zoom 300 ms) have ended: the view stops moving."""
    page.wait_for_timeout(ms)
    last = None
    for _ in range(50):
        now = view_box(page)
        if now == last:
            return
        last = now
        page.wait_for_timeout(120)


def search_box(page):
    """The search box, opened with "/" as a user opens it."""
    page.keyboard.press("/")
    return page.get_by_role("combobox", name="Search the graph by tensor name or op")


def test_minimap_draws_and_a_click_pans_the_view(page, shot):
    open_app(page)
    run_source(page, MODULE_SGD)
    pause(page)
    # at 11 px text (issue 23) this graph does not fit the view readable: the map shows the way by itself
    mm = page.locator("#minimap-canvas")
    mm.wait_for(state="visible")
    assert page.get_by_role("button", name="Hide minimap").get_attribute("aria-pressed") == "true"
    assert int(page.locator("#minimap").get_attribute("data-nodes")) > 20
    # the map is drawn: more than the background colour in it
    colours = page.evaluate("""() => { const c = document.getElementById('minimap-canvas');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; const s = new Set();
        for (let i = 0; i < d.length; i += 16) s.add(d[i] + ',' + d[i + 1] + ',' + d[i + 2]); return s.size; }""")
    assert colours > 4
    page.get_by_role("button", name="Zoom in").click()
    page.get_by_role("button", name="Zoom in").click()
    settle(page)
    # from the graph's top left, so the corner clicked below is away from where the view starts
    page.evaluate("window.__fg.graph.panTo(0, 0)")
    settle(page)
    before = view_box(page)
    b = mm.bounding_box()
    # click the map's bottom-right corner region: the view moves toward it
    mm.click(position={"x": b["width"] * 0.9, "y": b["height"] * 0.85})
    settle(page)
    after = view_box(page)
    cx0, cy0 = centre(before)
    cx1, cy1 = centre(after)
    gw, gh = page.evaluate("[window.__fg.model.graph.width, window.__fg.model.graph.height]")
    target = (gw * 0.9, gh * 0.85)
    assert abs(cx1 - target[0]) < abs(cx0 - target[0]) and abs(cy1 - target[1]) <= abs(cy0 - target[1]) + 1
    assert after["w"] == pytest.approx(before["w"]), "a click pans, it does not zoom"
    shot(page, "nav_minimap_tutorial")
    # the rectangle follows the view (fg:camera)
    assert page.locator("#minimap").get_attribute("data-view") != ",".join(f"{before[k]:.1f}" for k in "xywh")
    # a run that builds no graph: no map and no crumbs of the last one
    run_source(page, "import torch\nprint(1)\n")
    page.wait_for_function("document.getElementById('minimap').hidden && document.getElementById('breadcrumbs').hidden")
    page.errors.check()


def test_minimap_shows_by_itself_for_a_big_graph(page, shot):
    src = BIG_UNFOLDED
    open_app(page)
    run_source(page, src)
    pause(page)
    settle(page)
    assert page.locator("#minimap").is_visible()
    mm = page.locator("#minimap-canvas")
    b = mm.bounding_box()
    before = view_box(page)
    # drag along the map: the view follows the pointer
    page.mouse.move(b["x"] + b["width"] * 0.2, b["y"] + b["height"] * 0.5)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] * 0.5, b["y"] + b["height"] * 0.5, steps=5)
    page.mouse.move(b["x"] + b["width"] * 0.8, b["y"] + b["height"] * 0.5, steps=5)
    page.mouse.up()
    settle(page)
    after = view_box(page)
    assert centre(after)[0] > centre(before)[0]
    shot(page, "nav_minimap_big")
    page.get_by_role("button", name="Hide minimap").click()
    assert page.locator("#minimap").is_hidden()
    page.errors.check()


def test_search_finds_a_visible_node_and_highlights_it(page, shot):
    open_app(page)
    run_source(page, MODULE_SGD)
    pause(page)
    page.locator("#graph-wrap").focus()
    box = search_box(page)
    assert box.evaluate("e => e === document.activeElement")
    box.type("layer2.w")
    results = page.get_by_role("listbox", name="Search results")
    results.wait_for(state="visible")
    options = results.get_by_role("option")
    assert options.count() >= 1
    assert "layer2.weight" in options.first.inner_text()
    shot(page, "nav_search_results")
    want = options.first.get_attribute("data-node-id")
    page.keyboard.press("Enter")
    page.wait_for_selector(f'svg.fg-graph [data-node-id="{want}"].fg-found')
    settle(page)
    assert results.is_hidden()
    # the node is in the middle of the view
    node = page.evaluate(f"window.__fg.model.nodes.get('{want}')")
    vb = view_box(page)
    assert vb["x"] < node["x"] < vb["x"] + vb["w"] and vb["y"] < node["y"] < vb["y"] + vb["h"]
    assert abs(centre(vb)[0] - node["x"]) < vb["w"] * 0.1
    shot(page, "nav_search_found")
    # arrow keys move through the results, Esc closes them; Ctrl+F in the graph focuses the box
    page.locator("#graph-wrap").focus()
    page.keyboard.press("Control+f")
    assert box.evaluate("e => e === document.activeElement")
    box.fill("")
    box.fill("add")  # one input event: one list (typed letter by letter, a later list could replace the one the keys move in)
    results.wait_for(state="visible")
    seen = None
    for _ in range(50):  # the list comes a task after the input event: wait until it holds still
        now = options.count(), options.first.inner_text() if options.count() else ""
        if now[0] >= 2 and now == seen:
            break
        seen = now
        page.wait_for_timeout(150)
    assert options.count() >= 2
    page.keyboard.press("ArrowDown")
    assert options.nth(1).get_attribute("aria-selected") == "true"
    assert box.get_attribute("aria-activedescendant") == "search-result-1"
    page.keyboard.press("ArrowUp")
    assert options.nth(0).get_attribute("aria-selected") == "true"
    page.keyboard.press("Escape")
    assert results.is_hidden()
    box.fill("no such thing anywhere")
    assert "nothing found" in results.inner_text()
    page.errors.check()


def route_runs(page, the_pass: dict) -> list[str]:
    """Answer GET /api/runs/… from the fixture; returns the list of URLs asked."""
    asked: list[str] = []

    def handle(route):
        url = route.request.url
        asked.append(url)
        m = re.search(r"/api/runs/([^/]+)/passes/(\d+)/(search|groups/([^/?]+))", url)
        if not m or m.group(1) != RUN_ID:
            return route.fulfill(status=404, content_type="application/json", body=json.dumps(
                {"error": {"type": "RunExpired", "message": "this run is no longer on the server; run the program again"}}))
        if m.group(3) == "search":
            from urllib.parse import parse_qs, urlparse

            q = parse_qs(urlparse(url).query).get("q", [""])[0]
            return route.fulfill(status=200, content_type="application/json", body=json.dumps(search_answer(the_pass, q)))
        payload = group_payload(the_pass, m.group(4))
        if payload is None:
            return route.fulfill(status=404, content_type="application/json", body=json.dumps({"error": {"type": "NotFound", "message": "no such group"}}))
        return route.fulfill(status=200, content_type="application/json", body=json.dumps(payload))

    page.route("**/api/runs/**", handle)
    return asked


def load_folded(page) -> dict:
    the_pass = folded_pass()
    trace = {"stdout": "", "error": None, "variables": {}, "ops": {}, "steps": [], "truncated": False, "passes": [the_pass]}
    page.evaluate("t => { window.__fg.stopPlaying(); window.__fg.loadTrace(t, {noAutoplay: true, step: 0}); }", trace)
    page.wait_for_function("window.__fg.model && window.__fg.model.graph.folded === true")
    return the_pass


def test_search_opens_the_closed_module_box_holding_its_result(page, shot):
    open_app(page)
    run_source(page, MODULE_SGD)
    # the run's `done` redraws the open pass (the box the user closes opens again): close it once the run is over
    expect(page.get_by_role("button", name="Run", exact=True)).to_be_enabled(timeout=60000)
    pause(page)
    page.get_by_role("button", name="Zoom to fit").click()  # the overview: the page opens readable on the step
    settle(page)
    # the user closes layer2's box: its weight is no longer drawn
    box_id = page.evaluate("window.__fg.graph.clusters.find(c => c.name === 'model.layer2').id")
    page.locator(f'svg.fg-graph [data-cluster-id="{box_id}"] .fg-ctoggle').click()
    page.wait_for_selector(f'svg.fg-graph .fg-cluster.collapsed[data-node-id="{box_id}"]')
    search_box(page).type("layer2.w")
    options = page.get_by_role("listbox", name="Search results").get_by_role("option")
    options.first.wait_for()
    want = options.first.get_attribute("data-node-id")
    assert page.locator(f'svg.fg-graph [data-node-id="{want}"]').evaluate("e => getComputedStyle(e).display") == "none"
    page.keyboard.press("Enter")
    page.wait_for_selector(f'svg.fg-graph [data-node-id="{want}"].fg-found')
    assert page.locator(f'svg.fg-graph [data-node-id="{want}"]').evaluate("e => getComputedStyle(e).display") != "none"
    assert page.locator(f'svg.fg-graph .fg-cluster.collapsed[data-node-id="{box_id}"]').count() == 0
    settle(page)
    shot(page, "nav_search_opens_module_box")
    page.errors.check()


def test_search_on_a_folded_pass_asks_the_server_and_reveals_inside_the_fold(page, shot):
    open_app(page)
    the_pass = folded_pass()
    asked = route_runs(page, the_pass)
    load_folded(page)
    pause(page)
    box = search_box(page)
    box.type("x[17]")
    results = page.get_by_role("listbox", name="Search results")
    page.wait_for_function("document.querySelectorAll('#search-results .search-result').length > 0")
    assert any("/search?q=x%5B17%5D" in u for u in asked), asked
    first = results.get_by_role("option").first
    text = first.inner_text()
    # the fold's chunk "t = 0 … 39" adds nothing in front of "t = 17": the path leaves it out (issue 23 §4)
    assert "x[17]" in text and "t = 0 … 199 › t = 17" in text
    shot(page, "nav_search_folded")
    page.keyboard.press("Enter")
    has_expand = page.evaluate("typeof window.__fg.graph.expand === 'function'")
    if has_expand:
        # the folds' view opens g1 › gc0 › gi17 and shows the node itself
        page.wait_for_selector('svg.fg-graph [data-node-id="t_x17"].fg-found', timeout=10000)
        assert any("/groups/g1" in u for u in asked) or page.evaluate("!!window.__fg.graph.isExpanded('g1')")
    else:
        # without a view that opens folds, the innermost drawn group on the path is shown and marked
        page.wait_for_selector('svg.fg-graph [data-node-id="g1"].fg-found')
    settle(page)
    shot(page, "nav_search_folded_revealed")
    page.errors.check()


def test_search_of_an_expired_run_says_so(page):
    open_app(page)
    the_pass = folded_pass()
    the_pass["graph"]["run"] = "gone"
    route_runs(page, the_pass)
    trace = {"stdout": "", "error": None, "variables": {}, "ops": {}, "steps": [], "truncated": False, "passes": [the_pass]}
    page.evaluate("t => { window.__fg.stopPlaying(); window.__fg.loadTrace(t, {noAutoplay: true, step: 0}); }", trace)
    page.wait_for_function("window.__fg.model && window.__fg.model.graph.folded === true")
    search_box(page).type("W")
    page.wait_for_function("document.getElementById('search-results').innerText.includes('no longer on the server')")


def test_breadcrumbs_follow_stepping(page, shot):
    open_app(page)
    run_source(page, MODULE_SGD)
    # the run's `done` redraws the open pass with its module names (the crumbs too): step once it is over
    expect(page.get_by_role("button", name="Run", exact=True)).to_be_enabled(timeout=60000)
    pause(page)
    page.locator("#graph-wrap").focus()
    page.keyboard.press("Home")
    nav = page.get_by_role("navigation", name="Current group")
    crumbs = nav.locator(".crumb")
    assert crumbs.all_inner_texts() == ["graph"]
    # the first step whose node is in a module: step there by keyboard, waiting for each step (no sampling)
    first = page.evaluate("""() => { const m = window.__fg.model;
        return m.steps.findIndex(s => s.main.kind === 'op' && (m.nodes.get(s.main.node) || {}).module) + 1; }""")
    assert first > 0
    for k in range(1, first + 1):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"document.body.dataset.step === '{k}'")
    page.wait_for_function("document.querySelectorAll('#crumbs .crumb').length >= 3")
    deep = tuple(crumbs.all_inner_texts())
    assert deep[:2] == ("graph", "model (Net)") and deep[2].startswith("model.layer")
    assert crumbs.last.get_attribute("aria-current") == "location"
    shot(page, "nav_breadcrumbs")
    # a crumb shows its group readably (issue 23 §4): centred in a part of the view the overlays leave free
    # (the caption, legend, tools and minimap: per side) when it reads whole at 11 px, else from its start
    # (top left); never zoomed out to unreadable text
    gid = crumbs.nth(2).get_attribute("data-group-id")
    crumbs.nth(2).click()
    settle(page)
    got = page.evaluate(f"""(() => {{ const g = window.__fg.graph, t = g.transform, ins = g.insets(),
        c = g.clusters.find(c => c.id === '{gid}');
        return {{ k: t.k, floor: g.minZoom(), x0: t.applyX(c.x - c.w / 2), y0: t.applyY(c.y - c.h / 2),
                 cx: t.applyX(c.x), cy: t.applyY(c.y), rects: g.freeRects() }}; }})()""")
    assert got["k"] >= got["floor"] - 1e-6, got
    # each way, in one free rectangle: centred, or its start at the padding (GRAPH.fitPadding, 24)
    assert any((abs(got["cx"] - (r["x0"] + r["x1"]) / 2) < 2 or abs(got["x0"] - r["x0"] - 24) < 2) and
               (abs(got["cy"] - (r["y0"] + r["y1"]) / 2) < 2 or abs(got["y0"] - r["y0"] - 24) < 2) for r in got["rects"]), got
    # stepping back to the start: only the root
    page.keyboard.press("Home")
    page.wait_for_timeout(100)
    assert crumbs.all_inner_texts() == ["graph"]
    page.errors.check()


def test_breadcrumbs_of_a_folded_pass_name_the_fold_and_iteration(page):
    open_app(page)
    route_runs(page, folded_pass())
    the_pass = load_folded(page)
    pause(page)
    # step into iteration 17's frames: lazy frames name their group (a timeline that walks every op
    # has a step per lazy frame; one that does not draws them as part of the step before)
    k, gid = page.evaluate("""() => { const m = window.__fg.model;
        let k = m.steps.findIndex(s => s.main && s.main.group === 'gi17');
        if (k < 0) k = m.steps.findIndex(s => s.frames.some(f => f.group === 'gi17'));
        const s = m.steps[k], fs = s.frames.filter(f => f.group);
        return [k + 1, s.main.group || fs[fs.length - 1].group]; }""")
    assert k > 0
    tree = the_pass["graph"]["tree"]
    want = []
    while gid:
        want.insert(0, tree[gid]["label"])
        gid = tree[gid]["parent"]
    page.evaluate(f"window.__fg.setStep({k}, {{animate: false}})")
    crumbs = page.get_by_role("navigation", name="Current group").locator(".crumb")
    # the fold's chunk (want[1], "t = 0 … 39") adds nothing in front of its iteration: no crumb (issue 23 §4)
    page.wait_for_function("document.querySelectorAll('#crumbs .crumb').length === 3")
    assert crumbs.all_inner_texts() == ["graph", want[0], want[2]]
    assert want[0] == "t = 0 … 199" and want[1].startswith("t = ") and " … " in want[1] and want[2].startswith("t = ")


def test_fit_to_screen_shows_the_whole_graph(page, shot):
    src = BIG_UNFOLDED
    open_app(page)
    run_source(page, src)
    pause(page)
    settle(page)
    gw, gh = page.evaluate("[window.__fg.model.graph.width, window.__fg.model.graph.height]")
    vb = view_box(page)
    assert vb["w"] < gw or vb["h"] < gh, "too big to read whole: the page starts at a readable zoom"
    page.get_by_role("button", name="Fit to screen").click()
    settle(page)
    vb = view_box(page)
    assert vb["x"] <= 0.5 and vb["y"] <= 0.5 and vb["x"] + vb["w"] >= gw - 0.5 and vb["y"] + vb["h"] >= gh - 0.5
    shot(page, "nav_fit")
    # the keyboard: zoom in, then "0" fits the whole again
    page.get_by_role("button", name="Zoom in").click()
    settle(page)
    assert view_box(page)["w"] < vb["w"]
    page.locator("#graph-wrap").focus()
    page.keyboard.press("0")
    settle(page)
    assert view_box(page)["w"] == pytest.approx(vb["w"], rel=1e-3)
    page.errors.check()


def test_small_graph_keeps_its_look(page):
    """A tutorial graph: no minimap, the search box and the root crumb only; nothing else moved."""
    open_app(page)
    run_source(page, SQUARE)
    pause(page)
    assert page.locator("#minimap").is_hidden()
    assert page.get_by_role("navigation", name="Current group").locator(".crumb").all_inner_texts() == ["graph"]
    page.errors.check()
