"""Issue 24, what was left: a question masks every number that gives its answer away (not only the asked node's),
a presenter reloading mid-question keeps it, heatmap cells read by a tap on touch screens, and the teacher's Run is
one run on the server. Presenter and followers each in a browser context of their own (class_fixture.py); the
screenshots (/tmp/class/) are of the presenter, a phone and a tablet during a question and after Reveal."""

from __future__ import annotations

import re
import uuid

import httpx
from class_fixture import (  # noqa: F401  (lecture_fixture: the fixture `lecture`)
    PHONE,
    SQUARE,
    TABLET,
    lecture_fixture,
    ran,
    snap,
)

# x.grad and y.grad are both 2 * (x + y) = 10, and so is each momentum buffer: no value of the program is 10
MOMENTUM = """import torch

x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
opt = torch.optim.SGD([x, y], lr=0.1, momentum=0.9)
z = (x + y) ** 2
z.backward()
print(x.grad, y.grad)
opt.step()
"""
VECTOR = """import torch

w = torch.tensor([1.5, -2.0, 3.0], requires_grad=True)
loss = (w * w).sum()
loss.backward()
"""

# every number a reader can see or hear on the page: visible graph and caption text, hover and aria texts,
# the inspector and the output pane (each only when shown)
SHOWN_TEXTS = """() => {
    const seen = (e) => e.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true });
    const out = [];
    for (const t of document.querySelectorAll('#graph text, #caption .cap-text')) if (seen(t)) out.push(t.textContent);
    for (const g of document.querySelectorAll('#graph [data-node-id]')) {
        out.push(g.getAttribute('aria-label') || '');
        const title = g.querySelector(':scope > title');
        if (title) out.push(title.textContent);
    }
    for (const r of document.querySelectorAll('#graph g.fg-cellg')) {
        if (getComputedStyle(r).pointerEvents !== 'none') for (const t of r.querySelectorAll('title')) out.push(t.textContent);
    }
    const insp = document.getElementById('inspector');
    if (seen(insp)) out.push(insp.innerText);
    const stdout = document.getElementById('stdout');
    if (seen(stdout)) out.push(stdout.textContent);
    return out.join('\\n'); }"""
CELL_VISIBILITY = """row => [...document.querySelectorAll(`#graph [data-node-id] > g.fg-cellg${row === 'value' ? ':first-of-type' :
    ' ~ g.fg-cellg'} .fg-celltext`)].map((t) => getComputedStyle(t).visibility)"""


def run_program(page, source):
    prev = page.evaluate("document.body.dataset.ready")
    page.evaluate("src => { window.__fg.editor.text = src; }", source)
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function("p => document.body.dataset.ready !== p && window.__fg.model && !window.__fg.playing", arg=prev,
                           timeout=30000)


def node_named(page, name):
    return page.evaluate("""n => [...window.__fg.model.nodes.values()]
        .find((m) => m.kind === 'tensor' && (m.name || m.display || m.label) === n).id""", name)


def shows_ten(page) -> bool:
    return re.search(r"(?<![\d.])10(?:\.0+)?(?![\d.])", page.evaluate(SHOWN_TEXTS)) is not None


def test_a_question_masks_every_number_that_gives_the_answer_away(lecture, shot):
    teacher = lecture.presenter(program=MOMENTUM)
    phone, tablet = (lecture.follower(teacher.code, size) for size in (PHONE, TABLET))
    teacher.evaluate("window.__fg.setStep(window.__fg.model.steps.length)")
    x, y = node_named(teacher, "x"), node_named(teacher, "y")
    teacher.evaluate("id => window.__fg.select(id)", y)  # y's inspector: .grad 10 and the momentum buffer
    teacher.wait_for_function("() => /momentum_buffer/.test(document.getElementById('inspector').innerText)")
    assert shows_ten(teacher), "the test's number 10 is on the page before the question"
    teacher.evaluate("id => window.__fg.select(id)", x)
    teacher.get_by_role("button", name="its gradient").click()
    teacher.wait_for_function("document.body.dataset.classMask === 'gradient'")
    teacher.evaluate("id => window.__fg.select(id)", y)  # the other node carrying the same number
    teacher.wait_for_function("document.querySelectorAll('#inspector [data-masked]').length >= 2")  # .grad, optimizer
    for page in (teacher, phone, tablet):
        page.wait_for_function("document.body.dataset.classMask === 'gradient'", timeout=15000)
        page.wait_for_function("window.__fg.step === window.__fg.model.steps.length && !window.__fg.classroom.applying")
        assert set(page.evaluate(CELL_VISIBILITY, "gradient")) == {"hidden"}
        assert set(page.evaluate(CELL_VISIBILITY, "value")) == {"visible"}  # a gradient question leaves values
        assert page.evaluate("getComputedStyle(document.getElementById('stdout')).visibility") == "hidden"
        assert page.evaluate("[...document.querySelectorAll('.scale-end')].every((e) => getComputedStyle(e).visibility === 'hidden')")
        assert not shows_ten(page), page.evaluate(SHOWN_TEXTS)
    for student in (phone, tablet):  # a student opening y reads "?" for its .grad and its optimizer state
        student.evaluate("id => window.__fg.select(id)", y)
        student.wait_for_function("document.querySelectorAll('#inspector [data-masked]').length >= 2")
        assert not shows_ten(student), student.evaluate(SHOWN_TEXTS)
        student.evaluate("window.__fg.select(null)")
    phone.get_by_label("Your answer").fill("10")
    phone.get_by_role("button", name="Answer", exact=True).click()
    teacher.wait_for_function("document.getElementById('class-tally').dataset.count === '1'", timeout=15000)
    snap(teacher, "rounds_01_presenter_question", shot)
    snap(phone, "rounds_02_phone_question", shot)
    snap(tablet, "rounds_03_tablet_question", shot)
    teacher.get_by_role("button", name="Reveal", exact=True).click()
    for page in (teacher, phone, tablet):
        page.wait_for_function("!document.body.dataset.classMask", timeout=15000)
        page.wait_for_function(f"() => ({CELL_VISIBILITY})('gradient').every((v) => v === 'visible')")
        assert page.evaluate("getComputedStyle(document.getElementById('stdout')).visibility") == "visible"
    teacher.wait_for_function("() => /momentum_buffer/.test(document.getElementById('inspector').innerText)")
    assert shows_ten(teacher)
    phone.wait_for_function("document.getElementById('question-result').textContent.startsWith('Right')")
    snap(teacher, "rounds_04_presenter_revealed", shot)
    snap(phone, "rounds_05_phone_revealed", shot)
    snap(tablet, "rounds_06_tablet_revealed", shot)

    # a value question masks every value and leaves the gradients
    teacher.evaluate("id => window.__fg.select(id)", node_named(teacher, "z"))
    teacher.get_by_role("button", name="its value").click()
    for page in (teacher, tablet):
        page.wait_for_function("document.body.dataset.classMask === 'value'", timeout=15000)
        assert set(page.evaluate(CELL_VISIBILITY, "value")) == {"hidden"}
        assert "hidden" not in set(page.evaluate(CELL_VISIBILITY, "gradient"))
        assert page.evaluate("getComputedStyle(document.getElementById('loss-chart')).visibility") == "hidden"
        labels = page.evaluate("[...document.querySelectorAll('#graph [data-node-id]')].map((g) => g.getAttribute('aria-label'))")
        assert not any(": value 25" in (text or "") for text in labels), labels
    teacher.get_by_role("button", name="Reveal", exact=True).click()
    tablet.wait_for_function("!document.body.dataset.classMask", timeout=15000)
    lecture.assert_clean()
    assert not phone.runs and not tablet.runs


def test_a_presenter_reloading_mid_question_keeps_it(lecture, shot):
    teacher = lecture.presenter()
    phone = lecture.follower(teacher.code, PHONE)
    teacher.evaluate("window.__fg.setStep(window.__fg.model.steps.length)")
    x = node_named(teacher, "x")
    teacher.evaluate("id => window.__fg.select(id)", x)
    teacher.get_by_role("button", name="its gradient").click()
    phone.locator("#question-box").wait_for(state="visible")
    phone.get_by_label("Your answer").fill("10")
    phone.get_by_role("button", name="Answer", exact=True).click()
    teacher.wait_for_function("document.getElementById('class-tally').dataset.count === '1'", timeout=15000)
    own_runs = len(teacher.runs)
    teacher.reload()
    ran(teacher)
    # the question as it was: its label, the histogram so far, Reveal; the projector still masks
    teacher.wait_for_function("document.getElementById('class-tally').dataset.count === '1'", timeout=15000)
    assert teacher.locator("#class-question-label").inner_text() == "∂L/∂x = ?"
    assert teacher.locator("#class-question").is_visible()
    assert teacher.get_by_role("button", name="Reveal", exact=True).is_enabled()
    assert teacher.evaluate("document.body.dataset.classMask") == "gradient"
    assert teacher.locator(".class-bar").count() >= 1
    assert len(teacher.runs) == own_runs  # the reloaded page's run is the class's, not one of its own
    # where the class was: the end of the pass, x selected, not playing from the start
    teacher.wait_for_function("window.__fg.model && window.__fg.step === window.__fg.model.steps.length")
    assert teacher.evaluate("[window.__fg.playing, window.__fg.selected]") == [False, x]
    snap(teacher, "rounds_07_presenter_reloaded_mid_question", shot)
    teacher.get_by_role("button", name="Reveal", exact=True).click()
    phone.wait_for_function("document.getElementById('question-result').textContent.startsWith('Right')")
    teacher.locator(".class-truth").wait_for(state="attached")
    assert teacher.locator("#class-answer").inner_text() == "answer: 10"
    lecture.assert_clean()


def test_a_tap_reads_a_heatmap_cell_on_touch_screens(lecture, shot):
    teacher = lecture.presenter(program=VECTOR)
    phone = lecture.follower(teacher.code, PHONE, touch=True)
    teacher.evaluate("window.__fg.setStep(window.__fg.model.steps.length)")
    w = node_named(teacher, "w")
    teacher.evaluate("id => window.__fg.select(id)", w)
    phone.wait_for_function("id => window.__fg.selected === id && document.querySelector('#inspector .heatmap-cell')", arg=w)
    # a page of its own on a touch tablet (no class): the same tap
    tablet = lecture.page(TABLET, touch=True)
    tablet.goto(lecture.url + "/")
    ran(tablet)
    run_program(tablet, VECTOR)
    tablet.evaluate("id => window.__fg.select(id)", node_named(tablet, "w"))
    tablet.locator("#inspector .heatmap-cell").first.wait_for()
    for page in (phone, tablet):
        readout = page.locator("#inspector .heatmap-readout").first
        assert readout.inner_text() == "tap a cell to read it"
        cell = page.locator("#inspector .heatmap-cell").nth(1)
        cell.scroll_into_view_if_needed()
        cell.tap()
        assert readout.inner_text() == "value[1] = -2"
        assert "read" in cell.get_attribute("class")
    snap(phone, "rounds_08_phone_tap_reads_a_cell", shot)
    lecture.assert_clean()


def test_the_teachers_run_is_one_run_on_the_server(lecture):
    teacher = lecture.presenter()
    phone = lecture.follower(teacher.code, PHONE)
    teacher.wait_for_function("window.__fg.classroom.shared && window.__fg.classroom.shared.id", timeout=30000)

    def completed():
        return httpx.get(lecture.url + "/healthz").json()["pool"]["completed"]

    before, own_runs, shares = completed(), len(teacher.runs), len(teacher.shares)
    program = SQUARE + f"# {uuid.uuid4().hex}: a program no run has had (no answer to share from before)\n"
    run_program(teacher, program)
    phone.wait_for_function("t => window.__fg.lastSource === t && window.__fg.model && !window.__fg.classroom.applying",
                            arg=program, timeout=30000)
    assert completed() - before == 1
    assert len(teacher.runs) == own_runs and len(teacher.shares) == shares + 1
    assert teacher.evaluate("window.__fg.lastSource") == program
    assert "for the class" in teacher.locator("#status").inner_text()
    # the teacher's page shows the class's run: the answer the followers load
    assert teacher.evaluate("window.__fg.model.graph.nodes.length") == phone.evaluate("window.__fg.model.graph.nodes.length")
    assert not phone.runs
    lecture.assert_clean()


def test_starting_a_class_on_the_program_shown_is_not_another_run(lecture):
    program = SQUARE + f"# {uuid.uuid4().hex}: a program no run has had\n"
    teacher = lecture.presenter(program=program, start=False)  # the teacher's page ran it (streamed)

    def completed():
        return httpx.get(lecture.url + "/healthz").json()["pool"]["completed"]

    before = completed()
    teacher.get_by_role("button", name="Start class session").click()
    teacher.wait_for_function("window.__fg.classroom.shared && window.__fg.classroom.shared.id", timeout=30000)
    code = teacher.locator("[data-join-code]").get_attribute("data-join-code")
    phone = lecture.follower(code, PHONE)
    assert phone.evaluate("window.__fg.lastSource") == program
    assert completed() == before  # the class shares the page's run: starting it ran nothing
    assert not phone.runs
    lecture.assert_clean()
