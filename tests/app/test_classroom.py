"""Class sessions (docs/classroom.md): the contract on a real server, in memory and through Redis."""

from __future__ import annotations

import asyncio
import json
import math
import shutil
import socket
import subprocess
import threading
import time

import httpx
import pytest
from flowgrad_testing import real_server

from app.classroom.broker import Limits, MemoryBroker, SessionFull, TooManySessions
from app.classroom.codes import CODE_ALPHABET
from app.classroom.hub import Hub

# the contract tests come from one address with no cookie (one identity): its shares are lifted here; the shares
# themselves are tested in test_class_session_abuse.py
FAST = {"FLOWGRAD_FOLLOWER_HEARTBEAT_S": "0.5", "FLOWGRAD_MAX_SESSIONS_PER_IDENTITY": "10000",
        "FLOWGRAD_MAX_FOLLOWERS_PER_IDENTITY": "10000", "FLOWGRAD_MAX_STREAMS_PER_IDENTITY": "10000"}


@pytest.fixture(scope="module")
def server():
    with real_server(**FAST) as (_, url):
        yield url


class Follower:
    """An SSE follower in a thread: collects every ``data:`` JSON (and the ``id:`` lines)."""

    def __init__(self, url, code, follower=None, headers=None, path="events", want=10**9):
        self.events: list[dict] = []
        self.ids: list[int] = []
        self.status = None
        self.want = want
        self._stop = threading.Event()
        self._ready = threading.Event()
        self.url = f"{url}/api/sessions/{code}/{path}" + (f"?follower={follower}" if follower else "")
        self.headers = headers or {}
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self._ready.wait(10)

    def _run(self):
        try:
            with httpx.stream("GET", self.url, headers=self.headers, timeout=30) as r:
                self.status = r.status_code
                self._ready.set()
                for line in r.iter_lines():
                    if line.startswith("id:"):
                        self.ids.append(int(line[3:]))
                    if line.startswith("data:"):
                        self.events.append(json.loads(line[5:]))
                    if self._stop.is_set() or len(self.events) >= self.want:
                        return
        except httpx.HTTPError:
            pass
        finally:
            self._ready.set()

    def wait_for(self, n, timeout=10):
        deadline = time.monotonic() + timeout
        while len(self.events) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.events

    def close(self):
        self._stop.set()


def create(url):
    r = httpx.post(url + "/api/sessions")
    assert r.status_code == 201, r.text
    d = r.json()
    return d["code"], {"Authorization": "Bearer " + d["presenter_token"]}, d


def join(url, code):
    """A follower token, as the page gets one when it joins."""
    r = httpx.post(f"{url}/api/sessions/{code}/join")
    assert r.status_code == 200, r.text
    return r.json()["follower"]


def post_state(url, code, headers, state):
    return httpx.post(f"{url}/api/sessions/{code}/state", json=state, headers=headers)


def test_create_gives_a_readable_code_a_secret_token_and_a_join_url(server):
    codes = set()
    for _ in range(5):
        code, _, d = create(server)
        codes.add(code)
        assert set(code) <= set(CODE_ALPHABET) and not set(code) & set("0O1lI") and len(code) == 6
        assert len(d["presenter_token"]) * 6 >= 128  # URL-safe base64: 6 bits a character
        assert d["join_url"].endswith("/s/" + code) and d["presenter_token"] not in d["join_url"]
    assert len(codes) == 5
    info = httpx.get(f"{server}/api/sessions/{code.lower()}").json()  # typed codes are case-insensitive
    assert info["code"] == code and info["followers"] == 0 and info["seq"] == 0
    assert "digest" not in info and "presenter_token" not in json.dumps(info)
    assert httpx.get(f"{server}/api/sessions/ZZZZZZ").status_code == 404
    assert httpx.get(f"{server}/api/sessions/nope!").status_code == 404


def test_followers_get_the_latest_first_then_every_state_in_order(server):
    code, headers, _ = create(server)
    assert post_state(server, code, headers, {"step": 0}).json() == {"seq": 1}
    early = Follower(server, code, join(server, code))
    for step in range(1, 30):
        assert post_state(server, code, headers, {"step": step}).status_code == 200
    late = Follower(server, code, join(server, code))  # joins late: catches up at once with the latest state
    for step in range(30, 40):
        post_state(server, code, headers, {"step": step})
    early_events = early.wait_for(40)
    late_events = late.wait_for(11)
    assert [e["seq"] for e in early_events] == list(range(1, 41))
    assert [e["state"]["step"] for e in early_events] == list(range(40))
    assert late_events[0]["seq"] == 30 and late_events[0]["state"] == {"step": 29}
    assert [e["seq"] for e in late_events] == list(range(30, 41))
    assert early.ids == [e["seq"] for e in early_events]
    assert httpx.get(f"{server}/api/sessions/{code}").json()["followers"] == 2
    early.close()
    late.close()


def test_a_follower_that_reconnects_gets_the_latest_state(server):
    code, headers, _ = create(server)
    post_state(server, code, headers, {"step": 1})
    f = join(server, code)
    first = Follower(server, code, f, want=1)
    first.wait_for(1)
    first.thread.join(5)
    post_state(server, code, headers, {"step": 2})
    post_state(server, code, headers, {"step": 3})
    again = Follower(server, code, f, headers={"Last-Event-ID": "1"}, want=1)
    assert again.wait_for(1)[0] == {"seq": 3, "state": {"step": 3}, "question": None}
    # already up to date (Last-Event-ID = latest): nothing is sent twice
    same = Follower(server, code, join(server, code), headers={"Last-Event-ID": "3"})
    post_state(server, code, headers, {"step": 4})
    assert [e["seq"] for e in same.wait_for(1)] == [4]
    same.close()


@pytest.mark.parametrize("body, status", [
    ([1, 2], 422), ('"text"', 422), ("{not json", 422), ("null", 422), ({"big": "x" * 70_000}, 413)])
def test_bad_states_are_refused(server, body, status):
    code, headers, _ = create(server)
    content = body if isinstance(body, str) else json.dumps(body)
    r = httpx.post(f"{server}/api/sessions/{code}/state", content=content, headers=headers)
    assert r.status_code == status, r.text
    assert r.json()["error"]["message"]


def test_only_the_presenter_may_post(server):
    code, headers, _ = create(server)
    other, other_headers, _ = create(server)
    url = f"{server}/api/sessions/{code}/state"
    r = httpx.post(url, json={})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert httpx.post(url, json={}, headers={"Authorization": "Bearer wrong"}).status_code == 403
    assert httpx.post(url, json={}, headers=other_headers).status_code == 403  # another session's token
    assert httpx.post(url, json={}, headers={"Authorization": "Basic abc"}).status_code == 401
    assert httpx.post(f"{server}/api/sessions/ZZZZZZ/state", json={}, headers=headers).status_code == 404
    assert httpx.post(f"{server}/api/sessions/{code}/questions", json={"node": "n1", "answer": 1}).status_code == 401
    assert httpx.get(f"{server}/api/sessions/{code}/tally").status_code == 401


def test_a_question_round(server):
    code, headers, _ = create(server)
    base = f"{server}/api/sessions/{code}"
    post_state(server, code, headers, {"step": 5})
    ana, ben, cy = join(server, code), join(server, code), join(server, code)
    a, b = Follower(server, code, ana), Follower(server, code, ben)
    tally = Follower(server, code, None, headers=headers, path="tally")
    r = httpx.post(base + "/questions", json={"node": "n7", "kind": "gradient", "label": "∂L/∂w", "answer": 10.0,
                                              "tolerance": 0.01}, headers=headers)
    assert r.status_code == 201
    qid = r.json()["id"]
    seen = a.wait_for(2)[-1]["question"]
    assert seen == {"id": qid, "node": "n7", "kind": "gradient", "label": "∂L/∂w", "tolerance": 0.01, "status": "open"}
    assert "answer" not in httpx.get(f"{base}/questions/{qid}?follower={ana}").json()  # hidden until revealed
    assert httpx.post(f"{base}/questions/{qid}/answers", json={"follower": ana, "value": 3}).status_code == 200
    assert httpx.post(f"{base}/questions/{qid}/answers", json={"follower": ana, "value": 10.05}).status_code == 200
    assert httpx.post(f"{base}/questions/{qid}/answers", json={"follower": ben, "value": 2}).status_code == 200
    for bad in ({"follower": ben, "value": "NaN"}, {"follower": "b n", "value": 1}, {"value": 1}):
        assert httpx.post(f"{base}/questions/{qid}/answers", json=bad).status_code == 422
    assert httpx.post(f"{base}/questions/nope/answers", json={"follower": ana, "value": 1}).status_code == 404
    tallies = tally.wait_for(4)
    assert tallies[-1]["question"] == qid and tallies[-1]["count"] == 2 and sorted(tallies[-1]["values"]) == [2, 10.05]
    assert [t["count"] for t in tallies] == [0, 1, 1, 2]  # latest wins: ana's second answer replaces her first
    full = httpx.get(f"{base}/questions/{qid}", headers=headers).json()
    assert full["answer"] == 10.0 and sorted(full["values"]) == [2, 10.05]
    r = httpx.post(f"{base}/questions/{qid}/reveal", headers=headers)
    assert r.status_code == 200 and r.json()["status"] == "revealed"
    revealed = b.wait_for(3)[-1]["question"]
    assert revealed["status"] == "revealed" and revealed["answer"] == 10.0
    assert httpx.get(f"{base}/questions/{qid}?follower={ana}").json()["correct"] is True
    assert httpx.get(f"{base}/questions/{qid}?follower={ben}").json()["correct"] is False
    assert httpx.get(f"{base}/questions/{qid}?follower={cy}").json()["correct"] is None
    r = httpx.post(f"{base}/questions/{qid}/answers", json={"follower": cy, "value": 10})
    assert r.status_code == 409 and "revealed" in r.json()["error"]["message"]
    for f in (a, b, tally):
        f.close()


def test_answers_are_bounded_per_follower(server):
    code, headers, _ = create(server)
    base = f"{server}/api/sessions/{code}"
    qid = httpx.post(base + "/questions", json={"node": "n1", "answer": 1}, headers=headers).json()["id"]
    x = join(server, code)
    codes = [httpx.post(f"{base}/questions/{qid}/answers", json={"follower": x, "value": i}).status_code
             for i in range(22)]
    assert codes[:20] == [200] * 20 and codes[20:] == [429, 429]


def run(coro):
    """asyncio.run in a thread of its own: Playwright's sync API may hold this thread's event loop."""
    out = {}

    def target():
        try:
            out["result"] = asyncio.run(coro)
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
            out["error"] = e

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(30)
    if "error" in out:
        raise out["error"]
    return out.get("result")


def limits(**kw):
    base = dict(max_sessions=3, max_followers=2, idle_s=100, code_length=6, max_questions=2, max_answer_changes=3,
                follower_timeout_s=30)
    return Limits(**{**base, **kw})


def test_memory_broker_limits_and_expiry(monkeypatch):
    async def scenario():
        broker = MemoryBroker(limits(), Hub())
        codes = [await broker.create("d") for _ in range(3)]
        with pytest.raises(TooManySessions):
            await broker.create("d")
        await broker.join(codes[0], "a")
        await broker.join(codes[0], "b")
        await broker.join(codes[0], "a")  # the same follower again: not a third
        with pytest.raises(SessionFull):
            await broker.join(codes[0], "c")
        for i in range(3):
            await broker.open_question(codes[1], {"node": "n", "kind": "value", "answer": i, "tolerance": 0})
        assert len(broker.sessions[codes[1]].questions) == 2  # the oldest is forgotten
        now = time.time()
        monkeypatch.setattr(time, "time", lambda: now + 101)  # 3 hours idle, scaled down
        assert await broker.info(codes[0]) is None
        await broker.create("d")  # expired sessions free their places
        assert len(broker.sessions) == 1
    run(scenario())


def test_a_slow_follower_skips_to_the_latest_instead_of_growing_memory():
    hub = Hub(keep=4)
    channel = hub.listen("state:X")
    for seq in range(1, 11):
        channel.put(seq, b"f%d" % seq)
    frames, newest, gap = channel.after(2)
    assert gap and newest == 10 and len(channel.log) == 4
    channel.put(10, b"dup")  # an event seen twice is kept once
    assert len(channel.log) == 4 and channel.log[-1] == (10, b"f10")


def test_streams_wait_on_a_future_the_next_frame_resolves():
    async def scenario():
        channel = Hub().listen("state:X")
        waiting, gone = channel.wait(), channel.wait()
        gone.cancel()  # a stream cancelled while it waited: skipped, not an error
        channel.put(1, b"f1")
        assert waiting.done() and not channel.waiters
        again = channel.wait()
        channel.put(1, b"f1 twice")  # the same event twice wakes nobody
        assert not again.done()
        channel.put(2, b"f2")
        assert again.done()
        for _ in range(1000):  # an idle class: every heartbeat ends a wait without a frame, and nothing piles up
            channel.forget(channel.wait())
        assert not channel.waiters
    run(scenario())


# ---- several processes through Redis ----

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (`make test` installs Debian's redis-server)")
    port, data = free_port(), tmp_path_factory.mktemp("redis")
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data), "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).stdout.strip() != b"PONG":
        assert time.monotonic() < deadline, "redis-server did not start"
        time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0", port, args
    subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], capture_output=True)
    proc.wait(10)


@pytest.fixture(scope="module")
def two_servers(redis_url):
    url = redis_url[0]
    shared = {"FLOWGRAD_BROKER_URL": url, "FLOWGRAD_IDENTITY_SECRET": "the-same-key-on-every-process", **FAST}
    with real_server(**shared) as (_, a), real_server(**shared) as (_, b):
        yield a, b


def test_two_processes_share_sessions_through_redis(two_servers):
    a, b = two_servers
    code, headers, _ = create(a)
    assert httpx.get(f"{b}/api/sessions/{code}").json()["code"] == code
    post_state(a, code, headers, {"step": 0})
    token_b, token_a = join(b, code), join(a, code)  # a token from either process is good on both (one secret)
    on_b, on_a = Follower(b, code, token_b), Follower(a, code, token_a)
    for step in range(1, 40):
        assert post_state(a if step % 2 else b, code, headers, {"step": step}).status_code == 200  # presenter on either
    for f in (on_a, on_b):
        assert [e["state"]["step"] for e in f.wait_for(40)] == list(range(40))
    assert httpx.get(f"{a}/api/sessions/{code}").json()["followers"] == 2
    qid = httpx.post(f"{b}/api/sessions/{code}/questions", json={"node": "n2", "answer": -1.5},
                     headers=headers).json()["id"]
    tally = Follower(a, code, None, headers=headers, path="tally")
    httpx.post(f"{b}/api/sessions/{code}/questions/{qid}/answers", json={"follower": token_b, "value": -1.5})
    httpx.post(f"{a}/api/sessions/{code}/questions/{qid}/answers", json={"follower": token_a, "value": 4})
    assert sorted(tally.wait_for(3)[-1]["values"]) == [-1.5, 4]
    httpx.post(f"{a}/api/sessions/{code}/questions/{qid}/reveal", headers=headers)
    assert on_b.wait_for(42)[-1]["question"]["answer"] == -1.5
    assert httpx.get(f"{b}/api/sessions/{code}/questions/{qid}?follower={token_b}").json()["correct"] is True
    for f in (on_a, on_b, tally):
        f.close()


def test_a_presenters_state_is_checked_in_its_one_broker_call(server, two_servers):
    """POST …/state checks the token where it publishes (one Redis round trip): the answers stay those of every
    other presenter call, in memory and through Redis, and a refused state reaches no follower."""
    for url in (server, *two_servers):
        code, headers, _ = create(url)
        follower = Follower(url, code, join(url, code))
        assert post_state(url, code, headers, {"step": 1}).json() == {"seq": 1}
        assert post_state(url, code, {"Authorization": "Bearer not-the-token"}, {"step": 2}).status_code == 403
        assert post_state(url, code, {"Authorization": "Basic dGVhY2hlcg=="}, {"step": 2}).status_code == 401
        assert post_state(url, code, {}, {"step": 2}).status_code == 401
        assert post_state(url, "ZZZZZZ", headers, {"step": 2}).status_code == 404
        assert post_state(url, "not a code!", headers, {"step": 2}).status_code == 404
        assert post_state(url, code, headers, {"step": 3}).json() == {"seq": 2}
        assert [e["state"] for e in follower.wait_for(2)] == [{"step": 1}, {"step": 3}]
        httpx.post(f"{url}/api/sessions/{code}/end", headers=headers)
        assert post_state(url, code, headers, {"step": 4}).status_code == 404
        assert post_state(url, code, {}, {"step": 4}).status_code == 404  # an ended class: 404 before 401
        follower.close()


def test_redis_going_away_and_coming_back(two_servers, redis_url):
    a, b = two_servers
    _, port, args = redis_url
    code, headers, _ = create(a)
    post_state(a, code, headers, {"step": 1})
    follower = Follower(b, code, join(a, code))
    assert follower.wait_for(1)[0]["state"] == {"step": 1}
    subprocess.run(["redis-cli", "-p", str(port), "shutdown", "save"], capture_output=True)  # keeps its data on disk
    time.sleep(0.3)
    r = post_state(a, code, headers, {"step": 2})
    assert r.status_code == 503 and "unavailable" in r.json()["error"]["message"]
    time.sleep(1.2)  # a couple of heartbeats with the broker away: the follower's stream stays open
    assert follower.thread.is_alive() and len(follower.events) == 1
    subprocess.Popen(args, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while True:  # the presenter retries until the broker is back
        r = post_state(a, code, headers, {"step": 3})
        if r.status_code == 200:
            break
        assert time.monotonic() < deadline, r.text
        time.sleep(0.2)
    events = follower.wait_for(2)
    assert events[-1]["state"] == {"step": 3} and not math.isnan(events[-1]["seq"])
    follower.close()


def test_redis_broker_shares_and_unjoined_expiry(redis_url):
    """Issue 22 in Redis: an identity's sessions are capped, a session nobody joined lives session_unjoined_s
    (its keys' TTL), one that was joined lives session_idle_s; follower tokens are capped per identity."""
    from app.classroom.broker import TooManyOwnFollowers, TooManyOwnSessions
    from app.classroom.redis_broker import RedisBroker

    async def scenario():
        broker = RedisBroker(redis_url[0], limits(max_sessions=100, idle_s=3600, max_sessions_per_identity=2,
                                                  unjoined_s=600, max_followers_per_identity=2), Hub())
        try:
            first = await broker.create("d", "teacher-x")
            second = await broker.create("d", "teacher-x")
            with pytest.raises(TooManyOwnSessions) as refused:
                await broker.create("d", "teacher-x")
            assert 1 <= refused.value.retry_after <= 600
            await broker.create("d", "teacher-y")  # another identity is served
            assert 0 < await broker.redis.ttl("fg:s:" + first) <= 600
            await broker.post_state(first, b"{}")  # a presenter's state does not stretch an unjoined session
            assert 0 < await broker.redis.ttl("fg:s:" + first) <= 600
            await broker.join(second, "f1")
            assert await broker.redis.ttl("fg:s:" + second) > 600  # joined: session_idle_s
            for _ in range(2):
                await broker.mint_follower(second, "greedy")
            with pytest.raises(TooManyOwnFollowers):
                await broker.mint_follower(second, "greedy")
            await broker.mint_follower(second, "student")
        finally:
            await broker.stop()
    run(scenario())
