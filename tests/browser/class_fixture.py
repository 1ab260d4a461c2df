"""One set-up for the class-session browser tests (test_classroom_page, test_lecture_page, test_class_rounds): a
presenter and its followers, each page in a browser context of its own, recorded alike (errors, the runs it asked
for, the teacher's runs it loaded), every context closed at the end. Screenshots in /tmp/class/ and test-artifacts/."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SQUARE = (ROOT / "examples" / "01_square_of_sum.py").read_text()
SHOTS = Path("/tmp/class")
DESKTOP, PROJECTOR, PHONE, TABLET = (1280, 720), (1920, 1080), (390, 844), (820, 1180)
RUN_PATHS = ("/api/run", "/api/stream")  # a page running a program itself


class Lecture:
    def __init__(self, browser, server):
        self.browser, self.url = browser, server["url"]
        self.contexts, self.pages = [], []

    def page(self, size=DESKTOP, context=None, touch=False):
        """A page in a context of its own (or in `context`: another tab of the same browser); `touch`: a touch
        screen without hover, as a phone's or a tablet's."""
        if context is None:
            context = self.browser.new_context(viewport={"width": size[0], "height": size[1]}, has_touch=touch,
                                               is_mobile=touch)
            self.contexts.append(context)
        page = context.new_page()
        page.errors, page.runs, page.loads, page.shares = [], [], [], []
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.on("console", lambda m: m.type == "error" and "Failed to load resource" not in m.text
                and page.errors.append(m.text))
        page.on("request", lambda r: _record(page, r))
        self.pages.append(page)
        return page

    def presenter(self, size=DESKTOP, program=SQUARE, start=True):
        """The teacher's page with `program` run (not playing); with `start`, a class started: `page.code`."""
        page = self.page(size)
        page.goto(self.url + "/")
        ran(page)
        page.evaluate("src => { window.__fg.editor.text = src; }", program)
        prev = page.evaluate("document.body.dataset.ready")
        page.get_by_role("button", name="Run", exact=True).click()
        page.wait_for_function("p => document.body.dataset.ready !== p", arg=prev)
        page.evaluate("window.__fg.playing && document.getElementById('play').click()")
        page.code = None
        if start:
            page.get_by_role("button", name="Start class session").click()
            page.locator("[data-join-code]").wait_for(state="visible")
            page.code = page.locator("[data-join-code]").get_attribute("data-join-code")
        return page

    def follower(self, code, size=DESKTOP, touch=False):
        """A student's page at /s/CODE once it shows the teacher's run."""
        page = self.page(size, touch=touch)
        page.goto(f"{self.url}/s/{code}")
        page.wait_for_function("window.__fg.model && window.__fg.lastSource", timeout=30000)
        return page

    def assert_clean(self):
        for page in self.pages:
            assert not page.errors, page.errors

    def close(self):
        for context in self.contexts:
            context.close()


def _record(page, request):
    path = request.url.split("?")[0]
    if path.endswith(RUN_PATHS):
        page.runs.append(request.url)
    elif "/api/sessions/" in path and "/runs/" in path:
        page.loads.append(request.url)  # the teacher's shared run, loaded
    elif "/api/sessions/" in path and path.endswith("/run"):
        page.shares.append(request.url)  # the presenter asking the server to run for the class


@pytest.fixture(name="lecture")  # a test module imports lecture_fixture; its tests take `lecture`
def lecture_fixture(browser, server):
    if server["kind"] != "app":
        pytest.skip("class sessions need the real app")
    held = Lecture(browser, server)
    yield held
    held.close()


def ran(page):
    """Wait until the page shows a run (its ready mark set after a run)."""
    page.wait_for_function("document.body.dataset.ready && window.__fg.model", timeout=30000)


def following(page, text):
    page.wait_for_function("t => document.getElementById('follow-text').textContent.startsWith(t)", arg=text,
                           timeout=30000)


def wait_step(page, k, timeout=10000):
    page.wait_for_function("k => window.__fg.model && window.__fg.step === k && !window.__fg.classroom.applying", arg=k,
                           timeout=timeout)


def snap(page, name, shot):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    shot(page, name)


def gradient_node(page, leaf=True):
    """A node with a scalar gradient at the end of the pass (a leaf's, by default): [id, grad]."""
    return page.evaluate("""leaf => {
        const m = window.__fg.model, st = m.stateAt(m.steps.length);
        for (const n of m.graph.nodes) { const s = st.nodes.get(n.id);
            if ((n.is_leaf || !leaf) && s && typeof s.grad === 'number') return [n.id, s.grad]; }
        return [null, null]; }""", leaf)
