"""Folded passes on the page (issue 11): collapsed groups, expand/collapse in place, stepping into folds,
RunExpired, culling, offline payloads. The answers come from fold_fixture.py through Playwright's
`page.route`, so these tests do not depend on the server's folding. Screenshots in test-artifacts/."""

from __future__ import annotations

import functools
import json
import re

import pytest
from fold_fixture import chain, mlp, rnn
from test_page import open_app, pause, run_source


@functools.cache
def _fixture(name: str, n: int):
    trace, payloads = {"chain": chain, "rnn": rnn, "mlp": mlp}[name](n)
    return json.dumps(trace), {gid: json.dumps(p) for gid, p in payloads.items()}, trace["_source"]


def serve(page, name: str = "chain", n: int = 3300, *, expired: bool | str = False, inline: bool = False):
    """Answers /api/stream, /api/run and the group endpoint from the fixture; returns the list of group requests."""
    trace_json, payloads, source = _fixture(name, n)
    if inline:  # an offline file's pass: every payload in the answer
        trace = json.loads(trace_json)
        trace["passes"][0]["graph"]["payloads"] = {g: json.loads(p) for g, p in payloads.items()}
        trace_json = json.dumps(trace)
    asked: list[str] = []

    def stream(route):
        trace = json.loads(trace_json)
        events = [("pass", {"type": "pass", "pass": p}) for p in trace["passes"]]
        rest = {k: v for k, v in trace.items() if k not in ("passes", "_source")}
        events.append(("done", {"type": "done", **rest}))
        body = "".join(f"event: {k}\ndata: {json.dumps(v)}\n\n" for k, v in events)
        route.fulfill(status=200, headers={"Content-Type": "text/event-stream"}, body=body)

    def group(route):
        m = re.search(r"/api/runs/([^/]+)/passes/(\d+)/groups/([^/?]+)", route.request.url)
        asked.append(m.group(3))
        if expired or m.group(3) not in payloads:
            body = {"error": {"type": "RunExpired", "message": "this run is no longer on the server; run the program again"},
                    "reason": "elsewhere" if expired == "elsewhere" else "expired"}
            return route.fulfill(status=404, content_type="application/json", body=json.dumps(body))
        route.fulfill(status=200, content_type="application/json", body=payloads[m.group(3)])

    page.route("**/api/stream", stream)
    page.route("**/api/run", lambda route: route.fulfill(status=200, content_type="application/json", body=trace_json))
    page.route("**/api/runs/**", group)
    return asked, source


def run_folded(page, name="chain", n=3300, **kw):
    open_app(page)  # the page's own first run is not the fixture's
    asked, source = serve(page, name, n, **kw)
    run_source(page, source)
    pause(page)
    page.keyboard.press("Home")
    return asked


def box_of(page, node_id):
    return page.evaluate("id => { const r = window.__fg.graph.nodeEls.get(id); return r && {x: r.n.x, y: r.n.y, w: r.n.w, h: r.n.h}; }", node_id)


def expand(page, gid):
    page.evaluate("gid => window.__fg.graph.expand(gid)", gid)


def test_collapsed_groups_are_buttons_with_count_and_summary(page, shot):
    run_folded(page)
    card = page.locator('svg.fg-graph .fg-group-node[data-node-id="g0_3300"]')
    assert card.count() == 1
    assert card.get_attribute("role") == "button" and card.get_attribute("tabindex") == "0"
    label = card.get_attribute("aria-label")
    assert label.startswith("Expand i = 0 … 3,299, 3,300 steps, y: min ") and " … max " in label
    assert "× 3,300" in card.text_content()
    # the fold's two inputs from x are one bundled edge with its count
    assert page.locator(".fg-edge.bundled").count() >= 1
    assert "× 2" in page.locator("svg.fg-graph .fg-bundle-count").first.text_content()
    # the timeline still walks every op of the 3,300 iterations
    assert int(page.evaluate("document.body.dataset.steps")) > 3 * 3300 * 2
    shot(page, "folds_chain_collapsed")
    page.errors.check()


def test_expand_in_place_and_collapse_restores(page, shot):
    run_folded(page, "rnn", 200)
    before = {i: box_of(page, i) for i in ("t1", "t2", "t3", "t4", "n1001", "t1005")}
    fold = box_of(page, "g0_200")
    expand(page, "g0_200")
    assert page.evaluate("window.__fg.graph.isExpanded('g0_200')")
    after = {i: box_of(page, i) for i in before}
    # untouched records only move (right of the fold by the width it gained, below it by its height)
    for i, b in before.items():
        a = after[i]
        assert (a["w"], a["h"]) == (b["w"], b["h"])
        dx, dy = a["x"] - b["x"], a["y"] - b["y"]
        assert dx in (0, pytest.approx(dx)) and dx >= 0 and dy >= 0
        if b["x"] + b["w"] / 2 <= fold["x"] - fold["w"] / 2 and b["y"] + b["h"] / 2 <= fold["y"] + fold["h"] / 2:
            assert (dx, dy) == (0, 0), i  # left of the fold and not below it: untouched
    # the contents (20 chunk cards) sit inside the fold's old place, from its top-left corner
    chunk = box_of(page, "g0_10")
    assert chunk["x"] - chunk["w"] / 2 >= fold["x"] - fold["w"] / 2
    assert chunk["y"] - chunk["h"] / 2 >= fold["y"] - fold["h"] / 2
    assert page.locator('svg.fg-graph .fg-group-node[data-node-id="g190_200"]').count() == 1
    page.wait_for_timeout(300)
    shot(page, "folds_rnn_expanded")
    page.get_by_role("button", name="Collapse t = 0 … 199").click()
    assert not page.evaluate("window.__fg.graph.isExpanded('g0_200')")
    assert {i: box_of(page, i) for i in before} == before
    page.errors.check()


def test_keyboard_expands_a_group(page):
    run_folded(page, "rnn", 200)
    page.locator('svg.fg-graph .fg-group-node[data-node-id="g0_200"]').focus()
    page.keyboard.press("Enter")
    page.wait_for_function("window.__fg.graph.isExpanded('g0_200')")
    page.locator('svg.fg-graph .fg-group-node[data-node-id="g0_10"]').focus()
    page.keyboard.press(" ")
    page.wait_for_function("window.__fg.graph.isExpanded('g0_10')")
    assert page.locator('svg.fg-graph .fg-group-node[data-node-id="gi3"]').count() == 1
    page.errors.check()


def test_stepping_into_a_fold_expands_it_and_shows_the_lazy_value(page, shot):
    asked = run_folded(page)
    events = page.evaluate("""() => { window.__steps = []; document.addEventListener('fg:step', e => window.__steps.push(e.detail)); }""")
    assert events is None
    # step 1 is x; step 2 runs sin inside iteration 0 of the fold
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("window.__fg.graph.isExpanded('gi0')")
    page.keyboard.press("ArrowRight")  # sin's output, a lazy frame until the group came
    page.wait_for_function("() => { const r = window.__fg.graph.nodeEls.get('t2'); return r && !r.g.classList.contains('pending'); }")
    label = page.locator('svg.fg-graph [data-node-id="t2"]').get_attribute("aria-label")
    assert "value 0.4794" in label  # sin(0.5)
    path = page.evaluate("window.__fg.graph.currentPath()")
    assert [p["id"] for p in path] == ["g0_3300", "g0_100", "g0_10", "gi0"]
    assert page.evaluate("window.__steps.at(-1).path.length") == 4
    assert asked[0] == "g0_3300" and len(asked) <= 3
    shot(page, "folds_chain_stepped_in")
    # on to the next iteration: the first one folds again, the second opens
    n = page.evaluate("""() => { const m = window.__fg.model; for (let k = window.__fg.step + 1; k <= m.steps.length; k++)
        if (m.stepGroup(k) === 'gi1') return k; }""")
    page.evaluate("k => window.__fg.setStep(k, {animate: false})", n)
    page.wait_for_function("window.__fg.graph.isExpanded('gi1')")
    assert not page.evaluate("window.__fg.graph.isExpanded('gi0')")
    # and back out of the fold to the loss: everything playback opened is folded again
    page.keyboard.press("End")
    page.wait_for_function("window.__fg.graph.fold.expanded.size === 0")
    page.errors.check()


def test_run_expired_runs_the_program_again(page):
    open_app(page)
    _, source = serve(page, "rnn", 200, expired=True)
    first = page.evaluate("window.__fg.runSeq")
    run_source(page, source)
    pause(page)
    expand(page, "g0_200")  # 404 RunExpired: the page runs the program again
    page.wait_for_function("seq => window.__fg.runSeq >= seq + 2", arg=first)
    assert page.evaluate("window.__fg.runSeq") == first + 2
    page.wait_for_function("/again|did not keep/.test(document.getElementById('status').textContent)")
    # the new run's answer expired too: no endless re-running, the status line says so
    pause(page)
    expand(page, "g0_200")
    page.wait_for_function("document.getElementById('status').textContent.includes('did not keep')")
    runs = page.evaluate("window.__fg.runSeq")
    page.wait_for_timeout(1000)
    assert page.evaluate("window.__fg.runSeq") == runs


def test_a_run_on_another_server_process_is_told_apart_from_an_expired_one(page):
    open_app(page)
    _, source = serve(page, "rnn", 200, expired="elsewhere")  # several processes without a broker
    first = page.evaluate("window.__fg.runSeq")
    run_source(page, source)
    pause(page)
    expand(page, "g0_200")
    page.wait_for_function("seq => window.__fg.runSeq >= seq + 2", arg=first)
    page.wait_for_function("document.getElementById('status').textContent.includes('another server process')")
    assert "left the server" not in page.evaluate("document.getElementById('status').textContent")
    pause(page)
    expand(page, "g0_200")  # the new run is on another process too: it says what the server needs
    page.wait_for_function("document.getElementById('status').textContent.includes('sticky routing or a broker')")


def test_culling_keeps_the_dom_small_on_a_huge_expanded_group(page, shot):
    run_folded(page)
    for gid in ["g0_3300", "g0_100", "g0_10", "g10_20"] + [f"gi{i}" for i in range(20)]:
        expand(page, gid)
    total = page.evaluate("window.__fg.graph.nodeEls.size")
    assert total > 150
    # zoomed in on the first iteration: most records are out of view and not rendered
    page.evaluate("window.__fg.graph.zoomBy(3)")
    page.wait_for_function("window.__fg.graph.transform.k > 1")
    page.evaluate("""() => { const g = window.__fg.graph, n = g.nodeEls.get('n1').n; g.panTo(n.x, n.y); }""")
    page.wait_for_timeout(200)
    drawn = "[...document.querySelectorAll('svg.fg-graph [data-node-id]')].filter(e => !e.closest('[display=none]')).length"
    shown = page.evaluate(drawn)
    assert shown < total / 4
    shot(page, "folds_chain_zoomed_in")
    # panning brings records back (and paints them at the current step)
    page.evaluate("""() => { const g = window.__fg.graph, n = g.nodeEls.get('n46').n; g.panTo(n.x, n.y); }""")
    page.wait_for_timeout(200)
    assert page.evaluate("() => { const r = window.__fg.graph.nodeEls.get('n46'); return !r.culled; }")
    # zoomed far out: records are dots, labels hidden
    page.evaluate("window.__fg.graph.fit(false)")
    page.evaluate("window.__fg.graph.zoomBy(0.05)")
    page.wait_for_function("document.querySelector('svg.fg-graph').classList.contains('fg-far')")
    assert page.evaluate("getComputedStyle(document.querySelector('svg.fg-graph .fg-node .fg-dot')).display") != "none"
    assert page.evaluate("getComputedStyle(document.querySelector('svg.fg-graph .fg-node .fg-frame')).display") == "none"
    shot(page, "folds_chain_far")
    page.errors.check()


def test_offline_payloads_need_no_fetch(page):
    asked = run_folded(page, "rnn", 200, inline=True)
    expand(page, "g0_200")
    expand(page, "g0_10")
    expand(page, "gi0")
    assert page.evaluate("window.__fg.graph.isExpanded('gi0')")
    assert asked == []
    page.errors.check()


@pytest.mark.parametrize("name, n, open_", [("rnn", 200, []), ("mlp", 150, ["g0_150", "g0_10", "gi1"])])
def test_big_folded_programs_read_at_a_glance(page, shot, name, n, open_):
    run_folded(page, name, n)
    assert page.locator("svg.fg-graph .fg-group-node").count() == 1
    if name == "rnn":  # W and U beside the fold, each with one bundled edge carrying its count
        for param in ("t2", "t3"):
            edge = page.evaluate("id => window.__fg.model.graph.edges.find(e => e.source === id)", param)
            assert edge["target"] == "g0_200" and edge["count"] == 200
    shot(page, f"folds_{name}_collapsed")
    for gid in open_:
        expand(page, gid)
    if open_:
        page.evaluate("() => { const g = window.__fg.graph, n = g.nodeEls.get('n4').n; g.panTo(n.x, n.y); }")
        page.wait_for_timeout(400)
        assert "model.2.weight" in page.locator('svg.fg-graph [data-node-id="t7"]').get_attribute("aria-label")
        shot(page, f"folds_{name}_layer_open")
    page.errors.check()


def test_reveal_and_the_navigation_api(page):
    run_folded(page, "rnn", 200)
    page.evaluate("""() => { window.__ev = []; for (const k of ['fg:graph-changed', 'fg:camera'])
        document.addEventListener(k, e => window.__ev.push(k)); }""")
    start = {i: box_of(page, i) for i in ("t1", "t4", "t1005")}
    # a node three groups deep: every group on its path opens, the node is centred and highlighted
    page.evaluate("window.__fg.graph.reveal('t57', ['g0_200', 'g10_20', 'gi10'])")
    page.wait_for_function("document.querySelector('svg.fg-graph [data-node-id=\"t57\"]')?.classList.contains('fg-found')")
    n = box_of(page, "t57")
    v = page.evaluate("window.__fg.graph.viewBox()")
    assert abs(v["x"] + v["w"] / 2 - n["x"]) < 2 and abs(v["y"] + v["h"] / 2 - n["y"]) < 2
    box = page.evaluate("window.__fg.graph.visibleBox()")
    assert box["w"] >= n["x"] and box["h"] >= n["y"]
    assert {"fg:graph-changed", "fg:camera"} <= set(page.evaluate("window.__ev"))
    # drawn again (names arriving at the end of a stream): everything folded and back in its place
    page.evaluate("() => { const g = window.__fg.graph; g.render(window.__fg.model); }")
    assert {i: box_of(page, i) for i in start} == start
    assert not page.evaluate("window.__fg.graph.isExpanded('g0_200')")
    # a tutorial graph answers the same API
    page.unroute("**/api/stream")
    page.unroute("**/api/run")
    run_source(page, "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * x\ny.backward()\n")
    page.evaluate("window.__fg.graph.reveal('t1', [])")
    assert page.evaluate("window.__fg.graph.currentPath()") == []
    page.errors.check()


def test_playback_opens_the_folds_it_enters_and_folds_them_after(page):
    asked = run_folded(page)
    page.evaluate("() => { window.__fg.speed = 4; window.__fg.play(); }")
    page.wait_for_function("window.__fg.step > 40", timeout=60000)
    pause(page)
    # the iteration being played is open, the ones played before are folded again
    k = page.evaluate("window.__fg.step")
    inner = page.evaluate("k => window.__fg.model.stepGroup(k)", k)
    open_ = page.evaluate("[...window.__fg.graph.fold.expanded.keys()]")
    assert inner in open_ and len(open_) <= 4
    assert not page.evaluate("window.__fg.graph.isExpanded('gi0')")
    assert asked.count("g0_3300") == 1  # fetched once, ahead of the steps that needed it
    page.errors.check()
