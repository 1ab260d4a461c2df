"""Streaming (SSE): the same trace as events while the program runs, and cancellation."""

from __future__ import annotations

import json
import socket
import threading
import time

import httpx
import pytest
from flowgrad_testing import real_server, strict_json

LOOP = ("import torch\nfrom torch import nn\ntorch.manual_seed(0)\nmodel = nn.Linear(2, 1)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nx = torch.randn(8, 2)\ny = x.sum(1, keepdim=True)\n"
        "for i in range(8):\n    opt.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n    loss.backward()\n"
        "    opt.step()\n    print(i)\n")
LONG = "import torch\nx = torch.randn(316, 316)\nfor i in range(10000):\n    y = x @ x\n"
# a long training loop: one pass (and one `step` event) per iteration; uncancelled it runs to the CPU budget (20 s)
LONG_TRAIN = ("import torch\nw = torch.randn(300, 300, requires_grad=True)\nx = torch.randn(300, 300)\n"
              "for i in range(10000):\n    y = (w @ x).sum()\n    y.backward()\n")


def read_events(response):
    """Parse an SSE byte stream into (event, data, time received)."""
    out = []
    event, data = None, []
    for line in response.iter_lines():
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif line == "" and data:
            out.append((event, strict_json("\n".join(data)), time.monotonic()))
            event, data = None, []
    return out


def test_stream_emits_the_trace(client, run):
    with client.stream("POST", "/api/stream", json={"source": LOOP}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = read_events(r)
    kinds = [e for e, _, _ in events]
    assert kinds[-1] == "done" and kinds.count("done") == 1
    for e, d, _ in events:
        assert d["type"] == e
    steps = [d for e, d, _ in events if e == "step"]
    assert [s["step"] for s in steps] == list(range(8))
    passes = {}
    for e, d, _ in events:
        if e == "pass":
            passes[d["pass"]["index"]] = d["pass"]  # a later message replaces an earlier one
    assert sorted(passes) == list(range(8))
    assert passes[0]["graph"] is not None and passes[7]["graph"] is not None and passes[4]["graph"] is None
    stdout = "".join(d["text"] for e, d, _ in events if e == "stdout")
    assert stdout == "".join(f"{i}\n" for i in range(8))
    done = events[-1][1]
    assert done["error"] is None and "model.weight" in done["variables"]
    # the same trace as /api/run
    whole = run(LOOP)
    assert whole["variables"] == done["variables"] and whole["steps"] == done["steps"]
    assert whole["passes"][0]["graph"]["nodes"] == passes[0]["graph"]["nodes"]
    # steps arrive before the end
    first_step = min(t for e, _, t in events if e == "step")
    assert first_step <= events[-1][2]


def test_stream_get_and_errors(client):
    with client.stream("GET", "/api/stream", params={"source": "x = = 1"}) as r:
        events = read_events(r)
    assert events[-1][0] == "done" and events[-1][1]["error"]["type"] == "SyntaxError"
    r = client.post("/api/stream", json={"nope": 1})
    assert r.status_code == 422


def test_new_run_cancels_the_clients_previous_one(client):
    got = {}

    def streamer():
        with client.stream("POST", "/api/stream", json={"source": LONG, "client_id": "student-1"}) as r:
            got["events"] = read_events(r)

    t = threading.Thread(target=streamer)
    t.start()
    deadline = time.monotonic() + 10
    while client.get("/healthz").json()["pool"]["busy"] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    r = client.post("/api/run", json={"source": "print(1)\n", "client_id": "student-1"})
    assert r.status_code == 200 and r.json()["stdout"] == "1\n"
    t.join(10)
    assert not t.is_alive()
    done = got["events"][-1][1]
    assert done["type"] == "done" and done["error"]["type"] == "Cancelled"


def test_cancel_endpoint(client):
    got = {}

    def runner():
        got["r"] = client.post("/api/run", json={"source": LONG}, headers={"x-client-id": "student-2"})

    t = threading.Thread(target=runner)
    t.start()
    deadline = time.monotonic() + 10
    while client.get("/healthz").json()["pool"]["busy"] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    r = client.post("/api/cancel", headers={"x-client-id": "student-2"})
    assert r.status_code == 200 and r.json()["cancelled"] is True
    t.join(10)
    assert got["r"].status_code == 200 and got["r"].json()["error"]["type"] == "Cancelled"


@pytest.mark.slow
def test_disconnect_cancels_the_run_on_a_real_server():
    """Through uvicorn: closing the SSE response stops the run's process (it would run ~2 s)."""
    with real_server() as (port, url):
        with httpx.Client(base_url=url, timeout=10) as c:
            with c.stream("POST", "/api/stream", json={"source": LONG_TRAIN}) as r:
                assert r.status_code == 200
                first = None
                for line in r.iter_lines():
                    if line.startswith("event:"):
                        first = line[6:].strip()
                    elif line.startswith("data:"):
                        break  # first piece: the program is running
            assert first != "done", "steps must arrive while the program runs"
            closed = time.monotonic()
            while c.get("/healthz").json()["pool"]["busy"]:
                # NOTE: a wide margin, not a timing target: uncancelled, the run would use its 20 CPU seconds
                assert time.monotonic() - closed < 10, "the run went on after the client left"
                time.sleep(0.02)
            assert c.post("/api/run", json={"source": "print(2)"}).json()["stdout"] == "2\n"
            # the same for POST /api/run: a client that aborts its request (fetch + AbortController)
            body = json.dumps({"source": LONG_TRAIN}).encode()
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(b"POST /api/run HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n" % len(body) + body)
                busy_deadline = time.monotonic() + 30  # a loaded machine may be slow to start the run
                while not c.get("/healthz").json()["pool"]["busy"]:
                    assert time.monotonic() < busy_deadline
                    time.sleep(0.01)
            closed = time.monotonic()
            while c.get("/healthz").json()["pool"]["busy"]:
                assert time.monotonic() - closed < 10, "the run went on after the client left"
                time.sleep(0.02)


PLOTS = ("import matplotlib.pyplot as plt\nprint('before')\nplt.plot([1, 2, 3])\nplt.show()\nprint('between')\n"
         "plt.imshow([[1, 2], [3, 4]])\nplt.colorbar()\nplt.show()\nprint('after')\nplt.figure()\nplt.plot([1])\n")


def test_figures_stream_in_order_with_the_printed_text(client, run):
    with client.stream("POST", "/api/stream", json={"source": PLOTS}) as r:
        events = read_events(r)
    order = [(e, d.get("text") if e == "stdout" else d.get("at")) for e, d, _ in events if e in ("stdout", "figure")]
    # every figure after the text printed before it; the one still open at the end after everything
    printed = ""
    figures = []
    for e, d, _ in events:
        if e == "stdout":
            printed += d["text"]
        elif e == "figure":
            assert d["at"] == len(printed), order
            assert d["svg"].startswith("<?xml") and "</svg>" in d["svg"]
            figures.append(d)
    assert printed == "before\nbetween\nafter\n"
    assert [f["at"] for f in figures] == [7, 15, 21], order
    done = events[-1][1]
    assert done["figures"] == [{"svg": f["svg"], "at": f["at"]} for f in figures]  # done repeats them
    assert run(PLOTS)["figures"] == done["figures"]  # and /api/run answers the same


def test_the_events_of_one_batch_go_in_one_chunk_and_frame_as_fastapi_would():
    # the worker sends what it made of one message of the run process as one Piece; the route frames its events
    # in one write, byte for byte as FastAPI's format_sse_event frames each
    import pickle

    from fastapi.sse import format_sse_event

    from app.api.routes.stream import frames
    from app.core.answer import EVENT_SEPARATOR
    from app.core.config import Settings
    from app.runner.protocol import Done, Events, Piece, RunOptions
    from app.runner.runproc import RunImage
    from app.runner.session import RunSession
    from engine.recorder import op_table

    settings = Settings()
    shipped: list = []
    RunImage(settings).capture(LOOP, shipped.append, RunOptions(stream=True, values="summary"))
    sent: list = []
    session = RunSession(1, LOOP, RunOptions(stream=True, values="summary"), settings, None, op_table(), sent.append,
                         started=time.monotonic(), sent=time.monotonic())
    end = None
    for message in shipped:
        before = len(sent)
        end = session.receive(pickle.loads(pickle.dumps(message))) or end
        assert len(sent) - before <= 1  # at most one Piece per message of the run process
        if isinstance(message, Events) and any(e.get("kind") == "backward_end" for e in message.events
                                               if isinstance(e, dict)):
            assert len(sent) == before + 1
    session.finish(end, None)
    pieces = [m for m in sent if isinstance(m, Piece)]
    assert isinstance(sent[-1], Done) and pieces
    events = [e for p in pieces for e in p.data.split(EVENT_SEPARATOR)]
    kinds = [json.loads(e)["type"] for e in events]
    assert kinds.count("step") == 8 and "pass" in kinds and any(EVENT_SEPARATOR in p.data for p in pieces)
    for p in pieces:
        expected = b"".join(format_sse_event(data_str=e.decode(), event=json.loads(e)["type"])
                            for e in p.data.split(EVENT_SEPARATOR))
        assert frames(p.data) == expected
    odd = '{"type":"stdout","text":"caf\\u00e9 ☕"}'.encode()
    assert frames(odd) == format_sse_event(data_str=odd.decode(), event="stdout")
    assert frames(b'[1,2]') == format_sse_event(data_str="[1,2]", event="message")
