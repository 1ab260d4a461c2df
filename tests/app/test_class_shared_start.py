"""Issue 24: a class started on the program the presenter's page already ran reuses that run (no second run)."""

from __future__ import annotations

import json
import uuid

import httpx
import orjson
import pytest
from flowgrad_testing import real_server

from app.classroom.shared_runs import answer_of_events

SHARES = {"FLOWGRAD_MAX_SESSIONS_PER_IDENTITY": "1000", "FLOWGRAD_MAX_FOLLOWERS_PER_IDENTITY": "1000"}
SQUARE = "import torch\nx = torch.tensor(2.0, requires_grad=True)\nz = (x + 3) ** 2\nz.backward()\nprint(x.grad)\n"
LOOP = ("import torch\ntorch.manual_seed(0)\nw = torch.randn(3, requires_grad=True)\nfor step in range(30):\n"
        "    loss = (w * w).sum()\n    loss.backward()\n    with torch.no_grad():\n        w -= 0.1 * w.grad\n"
        "    w.grad.zero_()\n    print(loss.item())\n")


@pytest.fixture(scope="module")
def server():
    with real_server(**SHARES) as (_, url):
        yield url


def completed(url: str) -> int:
    return httpx.get(url + "/healthz").json()["pool"]["completed"]


def streamed(url: str, source: str) -> list[dict]:
    r = httpx.post(url + "/api/stream", json={"source": source, "values": "summary"}, timeout=60)
    assert r.status_code == 200
    return [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:")]


def start_class(url: str) -> tuple[str, dict]:
    d = httpx.post(url + "/api/sessions").json()
    return d["code"], {"Authorization": "Bearer " + d["presenter_token"]}


def share(url: str, code: str, headers: dict, source: str) -> dict:
    r = httpx.post(f"{url}/api/sessions/{code}/run", json={"source": source, "values": "summary"}, headers=headers,
                   timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def loaded(url: str, code: str, run_id: str) -> dict:
    r = httpx.get(f"{url}/api/sessions/{code}/runs/{run_id}", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200
    return r.json()


@pytest.mark.parametrize("program", [SQUARE, LOOP], ids=["one-pass", "training-loop"])
def test_starting_a_class_on_the_program_shown_is_not_another_run(server, program):
    program += f"# {uuid.uuid4().hex}: no run had this program before\n"
    events = streamed(server, program)  # the presenter's page ran it, before the class
    before = completed(server)
    code, headers = start_class(server)
    run_id = share(server, code, headers, program)["run"]
    assert completed(server) == before  # the class reuses the page's run
    answer = loaded(server, code, run_id)
    done = events[-1]
    assert done["type"] == "done"
    assert answer["stdout"] == done["stdout"] and answer["steps"] == done["steps"]
    streamed_passes = {e["pass"]["index"]: e["pass"] for e in events if e["type"] == "pass"}
    assert [p["index"] for p in answer["passes"]] == sorted(streamed_passes)
    assert answer["passes"][-1] == streamed_passes[max(streamed_passes)]  # the full graph, not its summary
    # the answer a follower loads is POST /api/run's for the same program (timings aside)
    ran = httpx.post(server + "/api/run", json={"source": program, "values": "summary"}, timeout=60).json()
    assert set(ran) == set(answer)
    assert [p["loss"] for p in ran["passes"]] == [p["loss"] for p in answer["passes"]]
    assert [p["graph"] is None for p in ran["passes"]] == [p["graph"] is None for p in answer["passes"]]


def test_a_program_the_page_did_not_run_runs_once_for_the_class(server):
    program = SQUARE + f"# {uuid.uuid4().hex}\n"
    code, headers = start_class(server)
    before = completed(server)
    run_id = share(server, code, headers, program)["run"]
    assert completed(server) == before + 1
    assert loaded(server, code, run_id)["stdout"] == "tensor(10.)\n"


def test_a_program_whose_answer_differs_per_run_is_run_for_the_class_not_replayed(server):
    program = "import torch\nx = torch.seed()\nprint(torch.rand(2))\n"  # seeded by the OS: no answer is kept for it
    streamed(server, program)
    code, headers = start_class(server)
    before = completed(server)
    share(server, code, headers, program)
    assert completed(server) == before + 1


# hostile: what the answer cache holds is bytes; anything but one run's complete events is no answer
@pytest.mark.parametrize("events", [
    b"", b"not json", b"[1, 2]", b'{"type": "pass", "pass": {"index": 0}}',  # no done
    b'{"type": "done"}\n{"type": "pass", "pass": {"index": 0}}',  # something after done
    b'{"type": "pass", "pass": {"index": -1}}\n{"type": "done"}',
    b'{"type": "pass", "pass": {"index": true}}\n{"type": "done"}',
    b'{"type": "pass", "pass": {"index": "0"}}\n{"type": "done"}',
    b'{"type": "pass", "pass": [0]}\n{"type": "done"}',
    b'{"type": "pass"}\n{"type": "done"}',
    b"\xff\xfe\n" + b'{"type": "done"}',
    b"[" * 100_000,
])
def test_events_that_are_not_one_run_are_no_answer(events):
    assert answer_of_events(events) is None


def test_events_of_one_run_are_its_answer_in_pass_order():
    events = b"\n".join(orjson.dumps(e) for e in [
        {"type": "stdout", "text": "1\n"},
        {"type": "pass", "pass": {"index": 1, "graph": None}},
        {"type": "pass", "pass": {"index": 0, "graph": {"nodes": []}}},
        {"type": "pass", "pass": {"index": 1, "graph": {"nodes": [1]}}},  # the full graph replaces the summary
        {"type": "done", "error": None, "stdout": "1\n", "steps": []}])
    answer = orjson.loads(answer_of_events(events))
    assert answer == {"error": None, "stdout": "1\n", "steps": [],
                      "passes": [{"index": 0, "graph": {"nodes": []}}, {"index": 1, "graph": {"nodes": [1]}}]}
