"""Issue 24: a presented long training loop. The server streams the class's run; while it runs, every follower (and
the presenter) sees "running…", the passes so far and the loss curve growing, before the run's answer exists; then
the answer is loaded as any class run (never run by a follower). Presenter and follower each in a browser context of
its own (class_fixture.py); screenshots of both mid-run (/tmp/class/, test-artifacts/)."""

from __future__ import annotations

import uuid

from class_fixture import PHONE, lecture_fixture, snap  # noqa: F401  (lecture_fixture: the fixture `lecture`)

# NOTE: long enough that the class hears of it several times before it ends on a fast machine (1,500 steps ran in
# 0.45 s, before the first frame); the suite's server sends progress every 0.1 s (conftest.py)
STEPS = 4000
LOOP = f"""import torch

x = torch.linspace(-1, 1, 8)
y = 3 * x + 0.5
w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
for step in range({STEPS}):
    loss = ((w * x + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.01 * w.grad
        b -= 0.01 * b.grad
    w.grad.zero_()
    b.grad.zero_()
print(w.item(), b.item())
"""

# read in the same moment as the state it waits for (no race with the DOM: the run may end right after)
MID_RUN = """p => {
    const status = document.getElementById('stream-status');
    const training = document.getElementById('training');
    if (!(document.body.classList.contains('class-running') && Number(status.dataset.classPasses) > 0
          && !training.hidden && window.__fg.lastSource !== p && window.__fg.lossChart.xs.length > 0)) return false;
    return {status: status.innerText, passes: Number(status.dataset.classPasses),
            points: window.__fg.lossChart.xs.length, training: getComputedStyle(training).opacity,
            graph: getComputedStyle(document.getElementById('graph')).opacity};
}"""


def test_followers_see_a_long_loop_while_it_runs(lecture, shot):
    teacher = lecture.presenter()
    phone = lecture.follower(teacher.code, PHONE)
    program = LOOP + f"# {uuid.uuid4().hex}: a program no run has had\n"
    teacher.evaluate("src => { window.__fg.editor.text = src; }", program)
    teacher.get_by_role("button", name="Run", exact=True).click()

    # mid-run, before any answer: the phone shows the run under way (it still shows the last run's graph)
    mid = phone.wait_for_function(MID_RUN, arg=program, timeout=60000).json_value()
    seen = [mid["passes"], mid["points"]]
    assert "running…" in mid["status"]
    # the last run's graph is dimmed, this run's loss curve is not
    assert mid["training"] == "1" and float(mid["graph"]) < 1
    # the presenter shows it under way too, unless the run ended meanwhile (a fast machine: no race with the DOM)
    running = teacher.evaluate("() => document.body.classList.contains('class-running')"
                               " && document.getElementById('stream-status').innerText")
    snap(phone, "class-long-run-phone", shot)
    if running:
        assert "running…" in running
        snap(teacher, "class-long-run-presenter", shot)

    # the passes count on while it runs (a later frame has more of them)
    phone.wait_for_function("""([p, n]) => window.__fg.lastSource === p
        || Number(document.getElementById('stream-status').dataset.classPasses) > n""", arg=[program, seen[0]],
                            timeout=60000)

    # the run ends: its answer is the followers' run, loaded, and "running…" is gone
    phone.wait_for_function("p => window.__fg.lastSource === p && window.__fg.model && !window.__fg.classroom.applying"
                            " && !document.body.classList.contains('class-running')", arg=program, timeout=120000)
    assert phone.evaluate("window.__fg.trace.passes.length") == STEPS
    assert phone.evaluate("window.__fg.lossChart.xs.length") > 2
    teacher.wait_for_function("p => window.__fg.lastSource === p && window.__fg.model"
                              " && !document.body.classList.contains('class-running')", arg=program, timeout=60000)
    snap(phone, "class-long-run-phone-done", shot)
    assert not phone.runs  # the follower never ran it
    lecture.assert_clean()
