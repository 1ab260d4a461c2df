"""A run a length limit stops (issue 21 §2): its answer says how far it got, on the line of the loop, and is
`truncated` with that reason; the passes until then are kept."""
from __future__ import annotations

from app.core.answer import run_answer, stopped_reason

STOPPED = {"type": "LimitExceeded", "line": 4, "column": 0,
           "message": "stopped after 600 of 2,000 iterations of the loop on line 4: the run used its 20 s "
                      "(limit time_limit_s = 20)"}


def test_a_length_limit_cuts_the_answer():
    a = run_answer(error=STOPPED)
    assert a["truncated"] is True and a["truncated_reason"] == STOPPED["message"]
    wall = {"type": "TimeoutError", "message": "the program used more than 25 s of CPU time and was stopped "
                                               "(limit hard_kill_s = 25)", "line": None, "column": None}
    assert stopped_reason(wall) == wall["message"]


def test_other_errors_cut_nothing():
    for error in (None, {"type": "ValueError", "message": "limit time_limit_s = 3 in a program's own text"},
                  {"type": "LimitExceeded", "message": "tensor of shape [10, 10] has 100 elements; the limit is "
                                                       "max_tensor_elements = 10"}):
        a = run_answer(error=error)
        assert a["truncated"] is False and a["truncated_reason"] is None


def test_a_run_stopped_by_its_time_limit_says_how_far_it_got(run, settings):
    # big enough that 10,000 steps (max_loop_iterations) take ~10x time_limit_s: on any machine the time stops it
    src = ("import torch\nw = torch.zeros(200_000, requires_grad=True)\nx = torch.ones(200_000)\nfor step in range(10 ** 6):\n"
           "    loss = ((w * x - 1.0) ** 2).sum()\n    loss.backward()\n    with torch.no_grad():\n"
           "        w -= 0.1 * w.grad\n    w.grad = None\n")
    d = run(src, values="summary")
    e = d["error"]
    assert e["type"] == "LimitExceeded" and e["line"] == 4, e
    assert e["message"].startswith("stopped after ") and " of 1,000,000 iterations of the loop on line 4: " in e["message"]
    assert f"limit time_limit_s = {settings.time_limit_s:g}" in e["message"]
    assert d["truncated"] is True and e["message"] in d["truncated_reason"]
    done = int(e["message"].split()[2].replace(",", ""))
    assert len(d["steps"]) in (done, done + 1) and d["passes"][0]["graph"] is not None
