"""Issue 22 holes 2, 3 and 4: one client cannot take every class-session slot, lock a class out with made-up
followers or idle streams, or make the hubs park memory. Each test reproduces the hole, checks the clear answer
(429 with Retry-After, 403, or a bounded result) and that someone else is still served."""

from __future__ import annotations

import asyncio
import contextlib
import time

import httpx
import pytest
from flowgrad_testing import real_server

from app.classroom.broker import Limits, MemoryBroker, TooManyOwnFollowers, TooManyOwnSessions
from app.classroom.hub import Hub

SHARES = {"FLOWGRAD_MAX_SESSIONS_PER_IDENTITY": "3", "FLOWGRAD_MAX_FOLLOWERS_PER_IDENTITY": "3",
          "FLOWGRAD_MAX_STREAMS_PER_IDENTITY": "4", "FLOWGRAD_FOLLOWER_HEARTBEAT_S": "0.5"}


@pytest.fixture(scope="module")
def server():
    with real_server(**SHARES) as (_, url):
        yield url


@contextlib.contextmanager
def browser(url: str):
    """A browser: it opens the page first (the server mints its identity cookie) and keeps its cookies."""
    with httpx.Client(base_url=url, timeout=10) as client:
        assert client.get("/healthz").status_code == 200 and client.cookies.get("flowgrad_id")
        yield client


def test_one_client_cannot_take_every_session_slot(server):
    """Hole 2: a burst of anonymous POST /api/sessions gets 3 sessions, then 429 with Retry-After; a teacher
    (another identity, even from the same address) still starts a class."""
    answers = [httpx.post(server + "/api/sessions") for _ in range(40)]  # no cookie kept: the address
    made = [r for r in answers if r.status_code == 201]
    refused = [r for r in answers if r.status_code == 429]
    assert len(made) == 3 and len(refused) == 37
    body = refused[-1].json()
    assert body["error"]["type"] == "TooManySessions" and "max_sessions_per_identity" in body["error"]["message"]
    assert 1 <= int(refused[-1].headers["retry-after"]) <= 600  # nobody joined them: they end within 10 minutes
    with browser(server) as teacher:
        assert teacher.post("/api/sessions").status_code == 201


def _session(url: str) -> tuple[str, dict]:
    with browser(url) as teacher:
        d = teacher.post("/api/sessions").json()
    return d["code"], {"Authorization": "Bearer " + d["presenter_token"]}


def test_made_up_followers_are_refused_on_the_stream_and_on_answers(server):
    """Hole 3: /events?follower=ghostN and answers under made-up ids fill nothing: 403 UnknownFollower."""
    code, presenter = _session(server)
    base = f"{server}/api/sessions/{code}"
    qid = httpx.post(base + "/questions", json={"node": "n1", "answer": 1}, headers=presenter).json()["id"]
    for i in range(20):
        r = httpx.get(f"{base}/events?follower=ghost{i}")
        assert r.status_code == 403 and r.json()["error"]["type"] == "UnknownFollower"
        r = httpx.post(f"{base}/questions/{qid}/answers", json={"follower": f"ghost{i}", "value": 666})
        assert r.status_code == 403 and "join first" in r.json()["error"]["message"]
    assert httpx.get(base).json()["followers"] == 0
    # a token of another session is not a token of this one
    other, _ = _session(server)
    with browser(server) as student:
        elsewhere = student.post(f"/api/sessions/{other}/join").json()["follower"]
        r = student.post(f"/api/sessions/{code}/questions/{qid}/answers", json={"follower": elsewhere, "value": 1})
        assert r.status_code == 403
        mine = student.post(f"/api/sessions/{code}/join").json()["follower"]
        assert student.post(f"/api/sessions/{code}/questions/{qid}/answers",
                            json={"follower": mine, "value": 1}).status_code == 200
    full = httpx.get(f"{base}/questions/{qid}", headers=presenter).json()
    assert full["values"] == [1]  # the tally holds the real student's answer only


def test_one_identity_gets_a_few_follower_tokens_and_streams_and_a_student_still_joins(server):
    """Hole 3: one identity takes max_followers_per_identity tokens of a session (429 past it) and holds
    max_streams_per_identity streams (429 past it); a real student still joins, follows and answers."""
    code, presenter = _session(server)
    httpx.post(f"{server}/api/sessions/{code}/state", json={"step": 1}, headers=presenter)
    with browser(server) as greedy, contextlib.ExitStack() as held:
        tokens = [greedy.post(f"/api/sessions/{code}/join") for _ in range(6)]
        assert [r.status_code for r in tokens] == [200] * 3 + [429] * 3
        assert tokens[-1].json()["error"]["type"] == "TooManyFollowers"
        token = tokens[0].json()["follower"]
        opened = []
        for _ in range(6):
            r = held.enter_context(greedy.stream("GET", f"/api/sessions/{code}/events?follower={token}"))
            opened.append(r.status_code)
        assert opened == [200] * 4 + [429] * 2
        assert httpx.get(f"{server}/api/sessions/{code}").json()["followers"] == 1  # one token: one follower
        with browser(server) as student:
            mine = student.post(f"/api/sessions/{code}/join").json()["follower"]
            with student.stream("GET", f"/api/sessions/{code}/events?follower={mine}") as r:
                assert r.status_code == 200
                first = next(line for line in r.iter_lines() if line.startswith("data:"))
                assert '"step":1' in first
    # the streams closed: their slots came back
    with browser(server) as again:
        token = again.post(f"/api/sessions/{code}/join").json()["follower"]
        with again.stream("GET", f"/api/sessions/{code}/events?follower={token}") as r:
            assert r.status_code == 200


# ---------------------------------------------------------------- the brokers and the hub, in process
def run(coro):
    return asyncio.new_event_loop().run_until_complete(coro)


def limits(**kw) -> Limits:
    base = dict(max_sessions=100, max_followers=50, idle_s=3 * 3600, code_length=6, max_questions=5,
                max_answer_changes=3, follower_timeout_s=30, max_sessions_per_identity=2, unjoined_s=600,
                max_followers_per_identity=2)
    return Limits(**{**base, **kw})


def test_a_session_nobody_joined_ends_and_gives_its_place_back(monkeypatch):
    async def scenario():
        broker = MemoryBroker(limits(), Hub())
        unjoined = await broker.create("d", "teacher")
        joined = await broker.create("d", "teacher")
        with pytest.raises(TooManyOwnSessions) as refused:
            await broker.create("d", "teacher")
        assert refused.value.retry_after <= 600
        await broker.create("d", "someone else")
        await broker.join(joined, "f1")
        now = time.time()
        monkeypatch.setattr(time, "time", lambda: now + 601)
        assert await broker.info(unjoined) is None  # nobody came within session_unjoined_s
        assert await broker.info(joined) is not None  # a joined session lives session_idle_s
        await broker.create("d", "teacher")  # its place is free again
    run(scenario())


def test_follower_tokens_per_identity_in_the_broker():
    async def scenario():
        broker = MemoryBroker(limits(), Hub())
        code = await broker.create("d", "t")
        for _ in range(2):
            await broker.mint_follower(code, "greedy")
        with pytest.raises(TooManyOwnFollowers):
            await broker.mint_follower(code, "greedy")
        await broker.mint_follower(code, "student")
    run(scenario())


def test_hub_frames_stay_within_the_byte_budget_and_go_when_streams_close():
    """Hole 4: 100 sessions of 64 frames of 64 KB would park 400 MiB; the hub keeps at most its budget and keeps
    every session's newest frame; closing the streams gives everything back."""
    hub = Hub(keep=64, max_bytes=8_000_000)
    frame = b"x" * 65_536
    names = [f"state:S{i:03d}" for i in range(100)]
    channels = [hub.listen(name) for name in names]
    for seq in range(1, 65):
        for name in names:
            hub.put(name, seq, frame + str(seq).encode())
            assert hub.nbytes <= 8_000_000
    assert all(c.log and c.log[-1][0] == 64 for c in channels)  # the latest state of every session is kept
    assert hub.nbytes == sum(c.nbytes for c in channels)
    frames, newest, gap = channels[0].after(1)
    assert gap and newest == 64  # a follower behind gets the latest state instead of what was dropped
    for name in names:
        hub.leave(name)
    assert hub.nbytes == 0 and not hub.channels
