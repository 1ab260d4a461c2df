"""Issue 24: a presented long loop. The class's run streams on the server; while it runs, its progress ("running",
passes so far, the loss curve thinned to a bound) is in every follower's frames and in the session's info, and is
cleared when the run ends. Both brokers; the route with the progress sent at every event
(class_progress_every_s = 0)."""

from __future__ import annotations

import asyncio
import gzip
import uuid

import orjson
import pytest
from redis_process import redis_server

from app.classroom.broker import Limits, MemoryBroker, state_channel
from app.classroom.hub import Hub
from app.classroom.progress import RunProgress

LOOP = ("import torch\nw = torch.tensor(1.0, requires_grad=True)\nfor step in range(12):\n"
        "    loss = (w * 3 - 2) ** 2\n    loss.backward()\n    with torch.no_grad():\n        w -= 0.05 * w.grad\n"
        "    w.grad.zero_()\n")


def step(i: int, loss) -> bytes:
    return orjson.dumps({"type": "step", "step": i, "loss": loss, "param_norm": 0.0, "grad_norm": 0.0})


def limits() -> Limits:
    return Limits(max_sessions=10, max_followers=10, idle_s=100, code_length=6, max_questions=4, max_answer_changes=3,
                  follower_timeout_s=30)


def test_the_loss_curve_is_thinned_to_its_bound_and_keeps_the_newest():
    p = RunProgress(max_points=16, every_s=0)
    for i in range(1000):
        p.take(step(i, 1000.0 - i))
        p.take(orjson.dumps({"type": "pass", "pass": {"index": i, "loss": 1.0, "graph": None}}))
    shown = orjson.loads(p.payload())
    assert shown["running"] and shown["passes"] == 1000 and shown["steps"] == 1000
    xs = [x for x, _ in shown["losses"]]
    assert len(xs) <= 17 and xs == sorted(xs) and xs[0] == 0 and xs[-1] == 999  # the newest is always there
    assert all(v == 1000.0 - x for x, v in shown["losses"])


@pytest.mark.parametrize("event", [b"not json", b"[1, 2]", b'"text"', b"{}", step(1, float("nan")),
                                   step(1, True), step(1, "1e309"), step(1, None), step("7", 1.0),
                                   orjson.dumps({"type": "pass", "pass": {"index": True}}),
                                   orjson.dumps({"type": "pass", "pass": [1]})])
def test_hostile_events_change_nothing_shown(event):
    p = RunProgress(every_s=0)
    p.take(event)
    shown = orjson.loads(p.payload())
    assert shown["passes"] == 0 and shown["losses"] == []


def test_a_run_of_a_million_passes_stays_a_few_kilobytes():
    p = RunProgress(every_s=0)
    for i in range(200_000):
        p.take(step(i, 1e300 / (i + 1)))
    assert len(p.payload()) < 16_000


def test_progress_is_never_sent_sooner_than_every_s():
    p = RunProgress(every_s=3600)
    assert not p.due() and not p.sent_any
    assert RunProgress(every_s=0).due()


async def frames_of(broker, code: str) -> list[dict]:
    return [orjson.loads(f.split(b"data: ", 1)[1]) for _, f in broker.hub.channels[state_channel(code)].log]


def test_memory_broker_frames_carry_the_progress_until_it_is_cleared():
    async def scenario():
        broker = MemoryBroker(limits(), Hub())
        code = await broker.create("d")
        broker.hub.listen(state_channel(code))
        await broker.post_state(code, b'{"pass": 0}')
        await broker.progress(code, b'{"running":true,"passes":3,"losses":[[0,1.5]]}')
        await broker.post_state(code, b'{"pass": 1}')  # the presenter's states keep it while the run goes on
        assert (await broker.info(code))["progress"]["passes"] == 3
        _, latest = await broker.latest(code)
        assert orjson.loads(latest)["progress"]["passes"] == 3  # a late joiner sees the run under way
        await broker.progress(code, None)
        shown = [f.get("progress") for f in await frames_of(broker, code)]
        assert shown == [None, {"running": True, "passes": 3, "losses": [[0, 1.5]]}, shown[1], None]
        assert (await broker.info(code))["progress"] is None
        assert "progress" not in orjson.loads((await broker.latest(code))[1])
    asyncio.run(scenario())


def test_redis_broker_frames_carry_the_progress_until_it_is_cleared(tmp_path):
    from app.classroom.redis_broker import RedisBroker

    async def scenario(url):
        broker = RedisBroker(url, limits(), Hub())
        try:
            code = await broker.create("d")
            await broker.post_state(code, b'{"pass": 0}')
            await broker.progress(code, b'{"running":true,"passes":5,"losses":[]}')
            assert (await broker.info(code))["progress"]["passes"] == 5
            assert orjson.loads((await broker.latest(code))[1])["progress"]["passes"] == 5
            await broker.presence(code)  # the presenter is heard: its frame still shows the run under way
            assert orjson.loads((await broker.latest(code))[1])["progress"]["passes"] == 5
            await broker.progress(code, None)
            assert (await broker.info(code))["progress"] is None
            assert "progress" not in orjson.loads((await broker.latest(code))[1])
        finally:
            await broker.stop()

    with redis_server(tmp_path) as (url, _):
        asyncio.run(scenario(url))


def test_the_class_run_streams_its_progress_to_the_class_then_clears_it(client, settings, monkeypatch):
    monkeypatch.setattr(settings, "class_progress_every_s", 0.0)  # every event: a short loop shows what a long one does
    created = client.post("/api/sessions").json()
    code, headers = created["code"], {"Authorization": "Bearer " + created["presenter_token"]}
    broker = client.app.state.classroom.broker
    sent, real = [], broker.progress

    async def recorded(at, shown):
        sent.append(None if shown is None else orjson.loads(shown))
        return await real(at, shown)

    monkeypatch.setattr(broker, "progress", recorded)
    program = LOOP + f"# {uuid.uuid4().hex}\n"
    r = client.post(f"/api/sessions/{code}/run", json={"source": program, "values": "summary"}, headers=headers)
    assert r.status_code == 200, r.text
    assert sent and sent[-1] is None and all(s["running"] for s in sent[:-1])
    passes = [s["passes"] for s in sent[:-1]]
    assert passes == sorted(passes) and passes[-1] == 12
    assert [x for x, _ in sent[-2]["losses"]] == list(range(12))
    assert client.get(f"/api/sessions/{code}").json()["progress"] is None
    got = client.get(f"/api/sessions/{code}/runs/{r.json()['run']}", headers={"Accept-Encoding": "identity"})
    answer = orjson.loads(got.content if got.headers.get("content-encoding") != "gzip" else gzip.decompress(got.content))
    assert len(answer["passes"]) == 12 and answer["error"] is None


def test_a_broker_away_while_the_run_streams_does_not_stop_the_class_run(client, settings, monkeypatch):
    from app.classroom.broker import BrokerDown

    monkeypatch.setattr(settings, "class_progress_every_s", 0.0)
    created = client.post("/api/sessions").json()
    code, headers = created["code"], {"Authorization": "Bearer " + created["presenter_token"]}
    broker = client.app.state.classroom.broker

    async def away(at, shown):
        raise BrokerDown("the session broker (Redis) is unavailable")

    monkeypatch.setattr(broker, "progress", away)
    r = client.post(f"/api/sessions/{code}/run", json={"source": LOOP + f"# {uuid.uuid4().hex}\n", "values": "summary"},
                    headers=headers)
    assert r.status_code == 200, r.text
    assert client.get(f"/api/sessions/{code}").json()["run"] == r.json()["run"]
