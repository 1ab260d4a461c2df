"""A class session in three browsers: the presenter, a follower from the start and one joining late
(tablet width), stepping together, exploring alone, and a question round. Screenshots in test-artifacts/."""

from __future__ import annotations

from class_fixture import SQUARE, TABLET, lecture_fixture, wait_step  # noqa: F401  (the fixture `lecture`)


def step_of(page) -> int:
    return page.evaluate("window.__fg.step")


def test_a_class_follows_the_teacher_and_answers_a_question(lecture, shot):
    presenter = lecture.presenter(start=False)
    presenter.get_by_role("button", name="Start class session").click()
    code_el = presenter.locator("[data-join-code]")
    code_el.wait_for(state="visible")
    code = code_el.get_attribute("data-join-code")
    assert len(code) == 6 and code_el.inner_text() == code
    assert presenter.locator("#class-qr svg.class-qr path").count() == 1
    assert code in presenter.locator("#class-url").inner_text()

    alice = lecture.follower(code)
    assert alice.get_by_text("Following the teacher").is_visible()
    assert alice.evaluate("window.__fg.editor.text") == SQUARE
    # the teacher steps: the follower's page steps with them
    presenter.evaluate("window.__fg.setStep(0)")
    for _ in range(3):
        presenter.evaluate("window.__fg.setStep(window.__fg.step + 1)")
    k = step_of(presenter)
    assert k == 3
    wait_step(alice, k)
    # a late joiner at tablet width catches up at once
    ben = lecture.follower(code.lower(), TABLET)
    wait_step(ben, k)
    presenter.wait_for_function("document.getElementById('class-count').dataset.followers === '2'", timeout=10000)

    # a question at a node with a gradient
    presenter.evaluate("window.__fg.setStep(window.__fg.model.steps.length)")
    node, grad = presenter.evaluate("""() => {
        const m = window.__fg.model, st = m.stateAt(m.steps.length);
        for (const n of m.graph.nodes) { const s = st.nodes.get(n.id); if (s && typeof s.grad === 'number') return [n.id, s.grad]; }
        return [null, null]; }""")
    assert node is not None
    presenter.evaluate("id => window.__fg.select(id)", node)
    alice.wait_for_function("id => window.__fg.selected === id", arg=node)
    # the teacher is on the projector: the panel, the code and the histogram grow with it
    small = presenter.evaluate("parseFloat(getComputedStyle(document.getElementById('class-code')).fontSize)")
    presenter.get_by_role("button", name="Projector mode").click()
    assert presenter.evaluate("parseFloat(getComputedStyle(document.getElementById('class-code')).fontSize)") > small
    assert presenter.locator("#class-panel").is_visible()
    presenter.get_by_role("button", name="its gradient").click()
    for student in (alice, ben):
        student.locator("#question-box").wait_for(state="visible")
    alice.get_by_label("Your answer").fill(str(grad))
    alice.get_by_role("button", name="Answer").click()
    ben.get_by_label("Your answer").fill(str(grad + 100))
    ben.get_by_role("button", name="Answer").click()
    presenter.wait_for_function("document.getElementById('class-tally').dataset.count === '2'", timeout=5000)
    assert presenter.locator(".class-bar").count() >= 2
    shot(presenter, "class_01_presenter_tally")
    shot(alice, "class_02_follower_question")
    presenter.get_by_role("button", name="Reveal").click()
    alice.wait_for_function("document.getElementById('question-result').textContent.startsWith('Right')")
    ben.wait_for_function("document.getElementById('question-result').textContent.startsWith('Not quite')")
    presenter.locator(".class-truth").wait_for(state="attached")
    shot(presenter, "class_03_presenter_revealed")
    shot(ben, "class_04_late_follower_tablet_revealed")

    # exploring alone: the teacher's steps no longer move Alice's page; "Follow again" snaps back
    alice.get_by_role("button", name="Explore on my own").click()
    alice.evaluate("window.__fg.setStep(1)")
    presenter.evaluate("window.__fg.setStep(2)")
    wait_step(ben, 2)
    assert step_of(alice) == 1
    alice.get_by_role("button", name="Follow again").click()
    wait_step(alice, 2)
    assert alice.get_by_text("Following the teacher").is_visible()
    lecture.assert_clean()


def test_an_unknown_class_code_says_so(lecture):
    page = lecture.page()
    page.goto(lecture.url + "/s/ZZZZZZ")
    page.wait_for_function("document.getElementById('status').textContent.includes('No class session')")
    assert page.evaluate("window.__fg.classroom.role") is None
