"""Issue 23 §1 and §4, the camera and big-graph navigation: the graph is framed in the part of the view the
caption, the legend, the top-right tools and the minimap leave free (1366×768, the 1280×720 projector and a
390×844 phone), per side: the graph rises to the caption left of the tools. The step's nodes are framed
(all of them, or when an update's parameters spread wider than the view at the floor, the most that fit,
the others off the view or clear of the overlays). On seq150 (150 × (Linear, Tanh) in an nn.Sequential,
folded) the crumbs follow what is centred, a crumb frames its group readably, the first "Fit to screen"
fits, and a fold's chunk level ("#60 … #69") is neither a crumb nor drawn as a frame when open.
Screenshots in test-artifacts/ (bands_*)."""

from __future__ import annotations

import re

import pytest
from test_big_programs import MLP as SEQ150
from test_readable_laptop import LAPTOP, MLP_2_16_1, PROJECTOR, STEP_BOXES, TEXT_PX, open_page, p10, program_hash

# the overlays the band leaves free, as screen boxes
OVERLAYS = """() => Object.fromEntries([...document.querySelectorAll('#caption, #legend, .graph-tools, .nav-search, #breadcrumbs, #minimap')]
  .filter((e) => !e.hidden && e.offsetParent).map((e) => [e.id || e.className, (({x, y, width, height}) => ({x, y, width, height}))(e.getBoundingClientRect())]))"""

# where the graph's top and bottom (with GRAPH.bottomRoom, 12, for the last captions) are against the band
# (px; >= 0: inside it) and whether it is taller than the band
BAND = """() => { const g = window.__fg.graph, t = g.transform, m = g.model.graph, ins = g.insets(), H = g.svg.clientHeight;
  return { above: t.applyY(0) - ins.top, below: H - ins.bottom - t.applyY(m.height + 12), tall: (m.height + 12) * t.k > H - ins.top - ins.bottom }; }"""

# the whole graph in the band (Fit to screen): between the caption and the legend, inside the view's width
WHOLE_IN_BAND = """() => { const g = window.__fg.graph, t = g.transform, m = g.model.graph, ins = g.insets(), s = g.svg;
  return t.applyX(0) >= -2 && t.applyX(m.width) <= s.clientWidth + 2 && t.applyY(0) >= ins.top - 2 && t.applyY(m.height) <= s.clientHeight - ins.bottom + 2; }"""

CRUMBS = "() => [...document.querySelectorAll('#crumbs .crumb')].map((c) => c.textContent)"
PAD = 24  # GRAPH.fitPadding


def overlap(a: dict, b: dict) -> bool:
    return not (a["x"] + a["width"] <= b["x"] + 1 or b["x"] + b["width"] <= a["x"] + 1 or
                a["y"] + a["height"] <= b["y"] + 1 or b["y"] + b["height"] <= a["y"] + 1)


@pytest.mark.parametrize("mode", ["laptop", "projector"])
@pytest.mark.parametrize("case", ["16_two_layer_mlp", "18_module_sgd", "23_seeded_training_loop", "mlp_2_16_1"])
def test_the_step_and_the_graph_sit_in_the_free_band(browser, server, shot, case, mode):
    hash_ = program_hash(MLP_2_16_1) if case == "mlp_2_16_1" else "#example=" + case
    if mode == "projector":
        hash_ += "&projector=1"
    context, page, errors = open_page(browser, server, hash_, LAPTOP if mode == "laptop" else PROJECTOR)
    n = page.evaluate("window.__fg.model.steps.length")
    floor = 11 if mode == "laptop" else 16
    for k in (n, n // 2):  # the pass's end (where it opens with reduced motion), then its middle
        page.evaluate(f"window.__fg.setStep({k})")
        page.wait_for_function(f"document.body.dataset.step === '{k}'")
        covers = page.evaluate(OVERLAYS)
        for b in page.evaluate(STEP_BOXES):
            box = {"x": b["x"], "y": b["y"], "width": b["w"], "height": b["h"]}
            hit = [name for name, c in covers.items() if overlap(box, c)]
            assert not hit, (case, mode, k, box, hit)
        # the minimap (big graphs) keeps clear of the caption, the tools, the search, the crumbs and the legend
        if "minimap" in covers:
            hit = [name for name, c in covers.items() if name != "minimap" and overlap(covers["minimap"], c)]
            assert not hit, (case, mode, k, covers)
        band = page.evaluate(BAND)
        # a graph taller than the band fills it: no empty band above or below it while graph lies beyond
        if band["tall"]:
            assert band["above"] <= PAD + 1 and band["below"] <= PAD + 1, (case, mode, k, band)
        else:
            assert band["above"] >= -1 and band["below"] >= -1, (case, mode, k, band)
        assert p10(page.evaluate(TEXT_PX)) >= floor - 0.05
        shot(page, f"bands_{mode}_{case}_{'end' if k == n else 'middle'}")
    assert not errors, errors
    context.close()


# the step's lit nodes wholly inside the graph's view (screen boxes against the svg's)
IN_VIEW = """() => { const s = document.querySelector('svg.fg-graph').getBoundingClientRect();
  return [...document.querySelectorAll('svg.fg-graph .active-forward, svg.fg-graph .active-backward')].map((e) => e.getBoundingClientRect())
    .filter((r) => r.left >= s.left - 1 && r.right <= s.right + 1 && r.top >= s.top - 1 && r.bottom <= s.bottom + 1).length; }"""


@pytest.mark.parametrize("mode", ["laptop", "projector"])
def test_an_update_frames_the_parameters_it_updates(browser, server, shot, mode):
    # examples/18 at End: SGD.step() updates four parameters spread wider than the view at the floor
    context, page, errors = open_page(browser, server, "#example=18_module_sgd" + ("&projector=1" if mode == "projector" else ""),
                                      LAPTOP if mode == "laptop" else PROJECTOR)
    n = page.evaluate("window.__fg.model.steps.length")
    page.evaluate(f"window.__fg.setStep({n})")
    page.wait_for_function(f"document.body.dataset.step === '{n}'")
    assert page.evaluate("window.__fg.model.steps.at(-1).phase") == "update"
    boxes = page.evaluate(STEP_BOXES)
    assert len(boxes) == 4, boxes  # the update lights its parameters
    assert page.evaluate(IN_VIEW) >= 1
    covers = page.evaluate(OVERLAYS)
    for b in boxes:  # the framed ones clear, the others off the view or clear: none under an overlay
        box = {"x": b["x"], "y": b["y"], "width": b["w"], "height": b["h"]}
        assert not [name for name, c in covers.items() if overlap(box, c)], (mode, box, covers)
    assert p10(page.evaluate(TEXT_PX)) >= (11 if mode == "laptop" else 16) - 0.05
    shot(page, f"bands_{mode}_18_update_end")
    assert not errors, errors
    context.close()


def test_projector_graph_rises_to_the_caption_left_of_the_tools(browser, server, shot):
    # per-side insets: with seq150's crumbs the tools reach far below the caption on the right only, so the
    # view's free part left of them starts at the caption (the step is framed there or under the tools)
    context, page, errors = open_seq150(browser, server, projector=True)
    n = page.evaluate("window.__fg.model.steps.length")
    page.evaluate(f"window.__fg.setStep({n // 4})")
    page.wait_for_function("() => document.querySelectorAll('#crumbs .crumb').length >= 4", timeout=20000)
    page.wait_for_function("() => document.querySelectorAll('svg.fg-graph .fg-group-box').length > 0", timeout=20000)
    ins = page.evaluate("window.__fg.graph.insets()")
    tools = next(b for b in ins["boxes"] if b["y0"] <= ins["top"])
    assert tools["y1"] > ins["top"] + 20, ins  # the crumbs make the tools taller than the caption's band
    rects = page.evaluate("window.__fg.graph.freeRects()")
    assert any(abs(r["y0"] - ins["top"]) < 0.5 and r["x1"] <= tools["x0"] + 0.5 for r in rects), rects
    # the step sits in that part of the view, clear of every overlay
    covers = page.evaluate(OVERLAYS)
    boxes = page.evaluate(STEP_BOXES)
    assert boxes
    for b in boxes:
        box = {"x": b["x"], "y": b["y"], "width": b["w"], "height": b["h"]}
        assert not [name for name, c in covers.items() if overlap(box, c)], (box, covers)
    shot(page, "bands_projector_beside_tools_seq150")
    assert not errors, errors
    context.close()


PHONE = {"width": 390, "height": 844}


@pytest.mark.parametrize("case", ["03_polynomial", "16_two_layer_mlp", "18_module_sgd"])
def test_phone_caption_reads_whole_beside_nothing(browser, server, shot, case):
    # 390×844, touch: the caption spans the width, the zoom tools and the search sit below it, never over its end
    context, page, errors = open_page(browser, server, f"#example={case}", PHONE, has_touch=True, is_mobile=True)
    n = page.evaluate("window.__fg.model.steps.length")
    for k in (n // 2, n):
        page.evaluate(f"window.__fg.setStep({k})")
        page.wait_for_function(f"document.body.dataset.step === '{k}'")
        covers = page.evaluate(OVERLAYS)
        cap = covers.pop("caption")
        hit = [name for name, c in covers.items() if overlap(cap, c)]
        assert not hit, (case, k, cap, covers)
        # the search box is wide enough to type in, and beside the zoom buttons
        search = covers["nav-search"]
        assert search["width"] >= 100 and not overlap(search, covers["graph-tools"]), covers
        for b in page.evaluate(STEP_BOXES):
            box = {"x": b["x"], "y": b["y"], "width": b["w"], "height": b["h"]}
            assert not [name for name, c in page.evaluate(OVERLAYS).items() if overlap(box, c)], (case, k, box)
        shot(page, f"bands_phone_{case}_{'end' if k == n else 'middle'}")
    assert not errors, errors
    context.close()


def open_seq150(browser, server, motion: str = "reduce", projector: bool = False):
    if server["kind"] != "app":
        pytest.skip("needs the real app (folded passes, the group and search endpoints)")
    if projector:
        context, page, errors = open_page(browser, server, program_hash(SEQ150) + "&projector=1", PROJECTOR)
    elif motion == "reduce":
        context, page, errors = open_page(browser, server, program_hash(SEQ150), LAPTOP)
    else:  # glides and autoplay as most students have them
        context = browser.new_context(viewport=LAPTOP, reduced_motion=motion)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{server['url']}/{program_hash(SEQ150)}")
        page.wait_for_function("document.body.dataset.ready", timeout=90000)
        page.wait_for_function("!document.getElementById('run').disabled", timeout=90000)
    assert page.evaluate("window.__fg.model.graph.folded") is True
    return context, page, errors


def search(page, text: str):
    box = page.get_by_role("combobox", name="Search the graph by tensor name or op")
    box.fill(text)
    page.wait_for_function("t => [...document.querySelectorAll('#search-results .search-result')].some((r) => r.textContent.startsWith(t))",
                           arg=text, timeout=20000)
    page.keyboard.press("Enter")


def test_seq150_crumbs_follow_the_centre_and_frame_readably(browser, server, shot):
    context, page, errors = open_seq150(browser, server)
    n = page.evaluate("window.__fg.model.steps.length")
    page.evaluate(f"window.__fg.setStep({n // 4})")  # a step inside the fold: its crumbs are the step's
    page.wait_for_function("() => document.querySelectorAll('#crumbs .crumb').length >= 4", timeout=20000)
    step_trail = page.evaluate(CRUMBS)
    assert not any(c.startswith("model.120") for c in step_trail), step_trail
    search(page, "model.120.weight")
    page.wait_for_function(f"() => ({CRUMBS})().pop() === 'model.120 (Linear)'", timeout=20000)
    trail = page.evaluate(CRUMBS)
    assert trail == ["graph", "model (Sequential)", "× 150", "#60", "model.120 (Linear)"], trail
    # the fold's chunk "#60 … #69" stands between "× 150" and "#60" in the tree: it is no crumb
    assert not any(re.fullmatch(r"#\d+ … #\d+", c) for c in trail), trail
    assert p10(page.evaluate(TEXT_PX)) >= 11 - 0.05
    # nor is it drawn: open, the chunk "#60 … #69" has no frame or title, its iterations sit in the fold's box
    titles = page.evaluate("[...document.querySelectorAll('svg.fg-graph .fg-group-box > text')].map((t) => t.textContent)")
    assert "× 150" in titles and not [t for t in titles if re.match(r"#\d+ … #\d+", t)], titles
    assert page.evaluate("document.querySelectorAll('svg.fg-graph .fg-group-box.bare').length") >= 1
    shot(page, "bands_seq150_search_crumbs")
    # each crumb frames its group readably: 11 px text or more, never the whole 150 layers at ~3 px
    for label in ["#60", "× 150", "model (Sequential)"]:
        page.locator("#crumbs .crumb", has_text=re.compile("^" + re.escape(label) + "$")).first.click()
        page.wait_for_function(f"() => ({CRUMBS})().includes({label!r})")
        sizes = page.evaluate(TEXT_PX)
        assert sizes and p10(sizes) >= 11 - 0.05, (label, p10(sizes))
        shot(page, f"bands_seq150_crumb_{label.replace(' ', '_').replace('#', 'n')}")
    assert not errors, errors
    context.close()


def test_seq150_first_fit_fits_after_a_step_into_the_fold(browser, server, shot):
    context, page, errors = open_seq150(browser, server)
    n = page.evaluate("window.__fg.model.steps.length")
    page.evaluate(f"window.__fg.setStep({n // 3})")
    page.wait_for_function("() => document.querySelectorAll('svg.fg-graph .fg-group-box').length > 0", timeout=20000)
    page.wait_for_function(f"() => !({WHOLE_IN_BAND})()")
    page.locator("#zoom-fit").click()  # once
    page.wait_for_function(WHOLE_IN_BAND)
    shot(page, "bands_seq150_fit_first")
    # it stays the overview while the step moves on into other folds (they widen the graph)
    for k in (n // 3 + 40, n // 2):
        page.evaluate(f"window.__fg.setStep({k})")
        page.wait_for_function(f"document.body.dataset.step === '{k}'")
        page.wait_for_function(WHOLE_IN_BAND)
    assert not errors, errors
    context.close()


def test_seq150_first_fit_fits_while_playing(browser, server, shot):
    context, page, errors = open_seq150(browser, server, motion="no-preference")
    page.evaluate("window.__fg.playing || window.__fg.play()")
    page.wait_for_function("+document.body.dataset.step >= 6", timeout=20000)
    page.locator("#zoom-fit").click()  # once, while steps glide and folds open
    page.wait_for_function(WHOLE_IN_BAND)
    at = int(page.evaluate("document.body.dataset.step"))
    page.wait_for_function(f"+document.body.dataset.step >= {at + 3}", timeout=20000)
    page.wait_for_function(WHOLE_IN_BAND)
    page.evaluate("window.__fg.stopPlaying()")
    shot(page, "bands_seq150_fit_playing")
    assert not errors, errors
    context.close()
