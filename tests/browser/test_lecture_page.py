"""Issue 24: a class session through a real lecture, the presenter and each follower in a browser context of its own
(phone 390×844 and tablet 820×1180 among them). Screenshots in /tmp/class/ and test-artifacts/ (set-up: class_fixture.py)."""

from __future__ import annotations

import httpx
import pytest
from class_fixture import (  # noqa: F401  (lecture_fixture: the fixture `lecture`)
    PHONE,
    PROJECTOR,
    SQUARE,
    TABLET,
    following,
    gradient_node,
    lecture_fixture,
    ran,
    snap,
)

TYPED = "\n# the teacher types this comment live; nothing runs until Run"  # 60+ characters


def test_followers_load_the_teachers_run_and_never_run_what_is_typed(lecture, shot):
    teacher = lecture.presenter()
    students = [lecture.follower(teacher.code, size) for size in (PHONE, TABLET, (1280, 720))]
    for s in students:
        assert s.evaluate("window.__fg.editor.text") == SQUARE
        assert s.loads, "the follower loads the teacher's run"
    # the teacher types 60+ characters without pressing Run: followers see the text, badged, and run nothing
    teacher.locator(".cm-content").click()
    teacher.keyboard.press("Control+End")
    teacher.keyboard.type(TYPED)
    typed = teacher.evaluate("window.__fg.editor.text")
    assert typed.endswith("until Run")
    for s in students:
        s.wait_for_function("t => window.__fg.editor.text === t", arg=typed, timeout=15000)
        assert s.locator("#follow-editing").is_visible()
        assert s.evaluate("window.__fg.lastSource") == SQUARE  # the graph is still the run's
    snap(students[0], "lecture_01_phone_teacher_typing", shot)
    assert [s.runs for s in students] == [[], [], []]
    # Run: the server runs it once; every follower loads that answer instead of running it
    teacher.get_by_role("button", name="Run", exact=True).click()
    for s in students:
        s.wait_for_function("t => window.__fg.lastSource === t && window.__fg.model", arg=typed, timeout=30000)
        s.locator("#follow-editing").wait_for(state="hidden")
        assert len(s.loads) >= 2
    assert [s.runs for s in students] == [[], [], []]
    snap(students[1], "lecture_02_tablet_after_run", shot)
    lecture.assert_clean()


def test_only_the_teacher_ends_the_class_and_a_reload_keeps_it(lecture, shot):
    teacher = lecture.presenter()
    code, url = teacher.code, lecture.url
    phone = lecture.follower(code, PHONE)
    following(phone, "Following the teacher")
    # hiding the panel is not ending the class
    teacher.get_by_role("button", name="Hide class panel").click()
    assert teacher.locator("#class-panel").is_hidden()
    assert httpx.get(f"{url}/api/sessions/{code}").status_code == 200
    teacher.locator("#class-start").click()
    assert teacher.locator("#class-panel").is_visible()
    # a reload keeps the class: the same code, the panel back
    teacher.reload()
    ran(teacher)
    teacher.wait_for_function("c => document.getElementById('class-code').dataset.joinCode === c", arg=code)
    assert teacher.locator("#class-panel").is_visible()
    # the teacher's page goes away: followers wait for the teacher
    teacher.goto("about:blank")
    following(phone, "Waiting for the teacher")
    snap(phone, "lecture_03_phone_waiting_for_teacher", shot)
    # another tab of the teacher's browser takes the class back
    tab = lecture.page(context=teacher.context)
    tab.goto(url + "/")
    ran(tab)
    tab.get_by_role("button", name=f"Resume class session {code}").click()
    tab.wait_for_function("c => document.getElementById('class-code').dataset.joinCode === c", arg=code)
    following(phone, "Following the teacher")
    # ending asks first; "Keep going" keeps it
    tab.get_by_role("button", name="End class", exact=True).click()
    assert tab.get_by_role("alertdialog").is_visible()
    snap(tab, "lecture_04_end_confirm", shot)
    tab.get_by_role("button", name="Keep going").click()
    assert httpx.get(f"{url}/api/sessions/{code}").status_code == 200
    tab.get_by_role("button", name="End class", exact=True).click()
    tab.get_by_role("button", name="End it").click()
    following(phone, "The teacher ended the class")
    tab.wait_for_function("document.getElementById('class-panel').hidden")
    assert httpx.get(f"{url}/api/sessions/{code}").status_code == 404
    assert tab.locator("#class-start").inner_text() == "Class"
    snap(phone, "lecture_05_phone_class_ended", shot)
    assert not phone.runs
    lecture.assert_clean()


MASKED_CELL = """id => [...document.querySelectorAll(`#graph [data-node-id="${id}"] > g.fg-cellg ~ g.fg-cellg .fg-celltext`)]
    .map((t) => getComputedStyle(t).visibility)"""


def test_a_question_masks_the_answer_everywhere_until_reveal(lecture, shot):
    teacher = lecture.presenter(PROJECTOR)
    teacher.get_by_role("button", name="Projector mode").click()
    qr_before = teacher.locator("#class-qr svg").bounding_box()["width"]
    students = [lecture.follower(teacher.code, size) for size in (PHONE, TABLET)]
    teacher.wait_for_function("document.getElementById('class-panel').classList.contains('joined')", timeout=15000)
    assert teacher.locator("#class-qr svg").bounding_box()["width"] < qr_before  # the QR shrinks once they joined
    # the 104 px join code fits inside the panel
    fits = teacher.evaluate("""() => { const c = document.getElementById('class-code'), p = document.getElementById('class-panel');
        const a = c.getBoundingClientRect(), b = p.getBoundingClientRect();
        return [parseFloat(getComputedStyle(c).fontSize), c.scrollWidth <= c.clientWidth + 1, a.left >= b.left, a.right <= b.right]; }""")
    assert fits[0] >= 104 and all(fits[1:]), fits
    teacher.evaluate("window.__fg.setStep(window.__fg.model.steps.length)")
    node, grad = gradient_node(teacher)
    assert node is not None
    other = teacher.evaluate("id => window.__fg.model.graph.nodes.find((n) => n.id !== id).id", node)
    teacher.evaluate("id => window.__fg.select(id)", node)
    shown = f"{grad:g}"
    assert shown in teacher.locator("#inspector").inner_text()
    teacher.get_by_role("button", name="its gradient").click()
    # the projector: the cell blank, the inspector a "?", the hover text and the caption without the number
    teacher.locator("#inspector [data-masked]").wait_for()
    assert set(teacher.evaluate(MASKED_CELL, node)) == {"hidden"}
    assert shown not in teacher.locator("#inspector").inner_text()
    title = teacher.evaluate("id => document.querySelector(`#graph [data-node-id='${id}'] > title`).textContent", node)
    assert shown not in title and "hidden" in title
    teacher.evaluate("window.__fg.setStep(window.__fg.model.steps.length - 1)")
    teacher.evaluate("window.__fg.setStep(window.__fg.model.steps.length)")
    assert set(teacher.evaluate(MASKED_CELL, node)) == {"hidden"}  # redrawn, still masked
    assert shown not in teacher.locator("#caption").inner_text()
    # the question, histogram and Reveal are in view in the panel; histogram labels ≥ 16 px
    in_view = teacher.evaluate("""() => { const p = document.getElementById('class-panel').getBoundingClientRect();
        return ['class-question-label', 'class-tally', 'class-reveal'].map((id) => {
            const r = document.getElementById(id).getBoundingClientRect();
            return r.top >= p.top - 1 && r.bottom <= p.bottom + 1 && r.bottom <= innerHeight; }); }""")
    assert all(in_view), in_view
    for student in students:
        student.locator("#question-box").wait_for(state="visible")
        student.wait_for_function("document.getElementById('layout').classList.contains('no-inspector')")
        student.wait_for_function(f"() => ({MASKED_CELL})({node!r}).length > 0", timeout=15000)
        assert set(student.evaluate(MASKED_CELL, node)) == {"hidden"}
        student.evaluate("id => window.__fg.select(id)", node)  # a student opening the node reads "?" too
        student.locator("#inspector [data-masked]").wait_for()
        assert shown not in student.locator("#inspector").inner_text()
        # the teacher's next state (here another node selected) leaves the node the student opened open
        teacher.evaluate("id => window.__fg.select(id)", other)
        student.wait_for_function("id => window.__fg.classroom.latest.node === id", arg=other, timeout=15000)
        assert student.evaluate("window.__fg.selected") == node
        assert student.locator("#inspector [data-masked]").is_visible()
        teacher.evaluate("id => window.__fg.select(id)", node)
        student.wait_for_function("id => window.__fg.classroom.latest.node === id", arg=node, timeout=15000)
        student.evaluate("window.__fg.select(null)")
    phone = students[0]
    phone.get_by_label("Your answer").fill(str(grad))
    phone.get_by_role("button", name="Answer", exact=True).click()
    teacher.wait_for_function("document.getElementById('class-tally').dataset.count === '1'", timeout=15000)
    px = teacher.evaluate("""() => { const svg = document.querySelector('#class-tally svg');
        const k = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        return [...svg.querySelectorAll('.class-axis, .class-bar-n')].map((t) => parseFloat(getComputedStyle(t).fontSize) * k); }""")
    assert px and min(px) >= 16, px
    snap(teacher, "lecture_06_projector_question_masked", shot)
    snap(phone, "lecture_07_phone_question_masked", shot)
    teacher.get_by_role("button", name="Reveal", exact=True).click()
    teacher.wait_for_function("id => !document.querySelector('#inspector [data-masked]')", arg=node)
    assert set(teacher.evaluate(MASKED_CELL, node)) == {"visible"}
    assert shown in teacher.locator("#inspector").inner_text()
    phone.wait_for_function("document.getElementById('question-result').textContent.startsWith('Right')")
    phone.wait_for_function(f"() => ({MASKED_CELL})({node!r}).every((v) => v === 'visible')")
    snap(teacher, "lecture_08_projector_revealed", shot)
    lecture.assert_clean()
    assert not any(s.runs for s in students)


@pytest.mark.parametrize("size", [PHONE, TABLET], ids=["phone", "tablet"])
def test_phones_and_tablets_get_a_compact_bar_and_a_question_card(lecture, shot, size):
    teacher = lecture.presenter()
    student = lecture.follower(teacher.code, size)
    following(student, "Following the teacher")
    # a compact bar: the banner with Explore, no top bar of buttons; the code collapsed by default
    assert student.locator(".topbar").is_hidden()
    bar = student.locator("#follow-banner").bounding_box()
    assert bar["height"] <= 110, bar
    assert student.get_by_role("button", name="Explore on my own").is_visible()
    assert student.evaluate("document.getElementById('layout').classList.contains('no-editor')")
    student.get_by_role("button", name="Show the teacher's code").click()
    assert not student.evaluate("document.getElementById('layout').classList.contains('no-editor')")
    student.get_by_role("button", name="Show the teacher's code").click()
    # the transport is on screen (the tablet had it at y = 1151 of 1180)
    transport = student.locator(".transport").bounding_box()
    assert transport["y"] + transport["height"] <= size[1], transport
    # the teacher selects a node (a sheet opens), then asks: the card is on top, the sheet closed
    teacher.evaluate("window.__fg.setStep(window.__fg.model.steps.length)")
    node, grad = gradient_node(teacher)
    teacher.evaluate("id => window.__fg.select(id)", node)
    student.wait_for_function("id => window.__fg.selected === id", arg=node)
    teacher.get_by_role("button", name="its gradient").click()
    student.locator("#question-box").wait_for(state="visible")
    student.wait_for_function("document.getElementById('layout').classList.contains('no-inspector')")
    on_top = student.evaluate("""() => { const i = document.getElementById('question-input').getBoundingClientRect();
        const hit = document.elementFromPoint(i.left + i.width / 2, i.top + i.height / 2);
        return hit && hit.id; }""")
    assert on_top == "question-input"
    # touch targets ≥ 44 px
    sizes = student.evaluate("""() => ['follow-explore', 'follow-code', 'question-input', 'question-send']
        .map((id) => { const r = document.getElementById(id).getBoundingClientRect(); return [id, r.width, r.height]; })""")
    assert all(w >= 44 and h >= 44 for _, w, h in sizes), sizes
    # negative answers can be typed (no inputmode that hides the minus key)
    attrs = student.evaluate("(() => { const i = document.getElementById('question-input'); return [i.type, i.inputMode]; })()")
    assert attrs[0] == "text" and attrs[1] not in ("decimal", "numeric"), attrs
    student.get_by_label("Your answer").click()
    student.keyboard.type(f"{-abs(grad) - 1:g}")
    student.keyboard.press("Enter")
    student.wait_for_function("document.getElementById('question-result').textContent.startsWith('Sent: -')")
    teacher.wait_for_function("document.getElementById('class-tally').dataset.count === '1'", timeout=15000)
    snap(student, f"lecture_09_{'phone' if size == PHONE else 'tablet'}_question_card", shot)
    teacher.get_by_role("button", name="Reveal", exact=True).click()
    student.wait_for_function("document.getElementById('question-result').textContent.startsWith('Not quite')")
    snap(student, f"lecture_10_{'phone' if size == PHONE else 'tablet'}_revealed", shot)
    # exploring brings the page's own controls back; following again hides them
    student.get_by_role("button", name="Explore on my own").click()
    assert student.locator(".topbar").is_visible()
    student.get_by_role("button", name="Follow again").click()
    assert student.locator(".topbar").is_hidden()
    assert not student.runs
    lecture.assert_clean()
