"""Issue 22 hole 6: fairness a client cannot switch off. The server mints the identity (a signed cookie, else
the client address); a fresh client_id per request is still one identity; one identity runs one program at a
time and queues at most ``identity_queue_limit`` more (429 + Retry-After past it); identities take turns."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from fastapi.testclient import TestClient
from flowgrad_testing import identity_headers, strict_json

from app.core.config import Settings
from app.core.identity import (
    AddressShare,
    Identity,
    IdentityCookie,
    cookie_ident,
    cookie_value,
    new_id,
    secret_of,
    token_ident,
)
from app.main import create_app
from app.runner.pool import Pool, PoolBusy
from app.runner.service import run_options

LONG = "import torch\nx = torch.randn(316, 316)\nfor i in range(10000):\n    y = x @ x\n"
OK = "print(1)\n"


# ---------------------------------------------------------------- the identity
def test_a_cookie_is_minted_signed_and_checked():
    s = Settings(identity_secret="k" * 32)
    secret = secret_of(s)
    ident = new_id()
    value = cookie_value(secret, ident)
    assert cookie_ident(secret, value) == ident
    forged = value[:-1] + ("0" if value[-1] != "0" else "1")
    for bad in (forged, ident, "", None, value + "0", "x" * len(value), cookie_value(b"another key", ident)):
        assert cookie_ident(secret, bad) is None, bad
    assert token_ident(secret, "identity", value) is None  # a cookie is not a follower token


def test_a_client_id_refines_an_identity_and_never_escapes_it():
    me = Identity("c:0123456789abcdef")
    tabs = [me.refined(f"tab-{i}") for i in range(50)]
    assert {t.key for t in tabs} == {me.key}
    assert len({t.run_slot for t in tabs}) == 50 and me.run_slot is None


def test_an_address_is_honoured_a_bounded_number_of_identities():
    now = [0.0]
    share = AddressShare(3, 60.0, clock=lambda: now[0])
    assert [share.allow("10.0.0.1", f"id{i}") for i in range(5)] == [True, True, True, False, False]
    assert share.allow("10.0.0.1", "id0")  # one already honoured stays so
    assert share.allow("10.0.0.2", "id4")  # another address is not charged
    now[0] = 61.0
    assert share.allow("10.0.0.1", "id4")  # the others were not seen for a window: their places are free


def _who(middleware, cookie: str | None, address: str = "10.1.2.3") -> tuple[Identity, bytes | None]:
    """One request through the middleware: the identity the app saw and the Set-Cookie it answered with."""
    seen, sent = {}, {}

    async def app(scope, receive, send):
        seen["identity"] = scope["state"]["identity"]
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def send(message):
        if message["type"] == "http.response.start":
            sent["cookie"] = dict(message["headers"]).get(b"set-cookie")

    headers = [(b"cookie", cookie.encode())] if cookie else []
    scope = {"type": "http", "headers": headers, "client": (address, 1234)}
    middleware.app = app
    asyncio.run(middleware(scope, None, send))
    return seen["identity"], sent["cookie"]


def test_requests_without_a_cookie_are_their_address_however_many_cookies_they_are_given():
    s = Settings(identity_secret="k" * 32, identities_per_address=3)
    middleware = IdentityCookie(None, s)
    given = set()
    for _ in range(20):  # a client that refuses cookies: one identity, the address
        identity, cookie = _who(middleware, None)
        assert identity.key == "a:10.1.2.3" and cookie
        given.add(cookie.split(b";")[0].decode())
    assert len(given) == 20  # minting stores nothing: a flood of them costs the class nothing
    assert b"HttpOnly" in cookie and b"Secure" not in cookie  # plain http here; https answers add Secure
    honoured = [_who(middleware, c)[0].key for c in sorted(given)]
    assert len(set(honoured[:3])) == 3 and all(k.startswith("c:") for k in honoured[:3])
    assert set(honoured[3:]) == {"a:10.1.2.3"}  # a client collecting cookies is still one identity past the share
    assert _who(middleware, sorted(given)[5], address="10.9.9.9")[0].key.startswith("c:")  # elsewhere: its own


@pytest.fixture(scope="module")
def fair():
    s = Settings(workers=1, queue_limit=16, identity_queue_limit=1, time_limit_s=1.0, hard_kill_s=1.0,
                 identities_per_address=1000)
    with TestClient(create_app(s)) as c:
        yield c, s


def test_the_server_mints_the_cookie_and_refuses_forged_ones(fair):
    client, s = fair
    fresh = TestClient(client.app)  # shares the running app; its own cookie jar
    r = fresh.get("/healthz")
    minted = r.cookies.get(s.identity_cookie)
    assert minted and cookie_ident(secret_of(s), minted) is not None
    assert "HttpOnly" in r.headers["set-cookie"]
    assert s.identity_cookie not in fresh.get("/healthz").cookies  # kept: not minted again
    r = client.get("/healthz", headers={"cookie": f"{s.identity_cookie}=forged"})
    assert r.cookies.get(s.identity_cookie) != "forged"  # a forged cookie is the address, and is given a real one


def _until(condition, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "the server did not get there"
        time.sleep(0.01)


def _post(client, source, headers, client_id, out, i):
    out[i] = client.post("/api/run", json={"source": source, "client_id": client_id}, headers=headers)


@pytest.mark.slow
def test_a_flood_from_one_identity_is_refused_and_another_is_served(fair):
    """24 runs from one identity, each with a fresh client_id: one runs, identity_queue_limit wait, the rest are
    429 with Retry-After at once; another identity's print(1) is still answered."""
    client, s = fair
    greedy, other = identity_headers(s), identity_headers(s)
    out: dict = {}
    threads = [threading.Thread(target=_post, args=(client, LONG, greedy, f"tab-{i}", out, i)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    refused = [r for r in out.values() if r.status_code == 429]
    served = [r for r in out.values() if r.status_code == 200]
    assert len(served) + len(refused) == 24
    assert len(refused) >= 24 - 1 - s.identity_queue_limit - 1  # a run may finish (and a slot free) meanwhile
    for r in refused:
        assert r.json()["error"]["type"] == "Busy" and int(r.headers["retry-after"]) >= 1
        assert "identity_queue_limit" in r.json()["error"]["message"] or "busy" in r.json()["error"]["message"]
    r = client.post("/api/run", json={"source": OK, "client_id": "tab-0"}, headers=other)
    assert r.status_code == 200 and strict_json(r.text)["stdout"] == "1\n"


@pytest.mark.slow
def test_the_stream_is_refused_with_429_before_any_event(fair):
    client, s = fair
    me = identity_headers(s)
    got: dict = {}
    running = threading.Thread(target=_post, args=(client, LONG, me, "a", got, 0))
    running.start()
    try:
        _until(lambda: client.get("/healthz").json()["pool"]["busy"] == 1)
        waiting = threading.Thread(target=_post, args=(client, LONG, me, "b", got, 1))
        waiting.start()
        _until(lambda: client.get("/healthz").json()["pool"]["queued"] == 1)
        r = client.post("/api/stream", json={"source": OK, "client_id": "c"}, headers=me)
        assert r.status_code == 429 and r.headers["retry-after"] and r.json()["error"]["type"] == "Busy"
        r = client.get("/api/stream", params={"source": OK, "client_id": "d"}, headers=me)
        assert r.status_code == 429
        with client.stream("POST", "/api/stream", json={"source": OK}, headers=identity_headers(s)) as r:
            assert r.status_code == 200 and "event: done" in r.read().decode()
        waiting.join(30)
    finally:
        running.join(30)


# ---------------------------------------------------------------- the queue itself (no worker: nothing runs)
def test_identities_take_turns_and_each_runs_one_at_a_time():
    pool = Pool(Settings(workers=1, queue_limit=100, identity_queue_limit=10), dot="dot")
    opts = run_options()
    greedy = [pool.submit("g", opts, client=f"g/{i}", identity="g") for i in range(5)]
    polite = pool.submit("p", opts, client="p/0", identity="p")
    late = pool.submit("q", opts, client="q/0", identity="q")
    first = pool._next_job()
    assert first is greedy[0]
    pool.running["g"] = first  # as _assign does
    assert pool._next_job() is polite  # the greedy identity is running: the others go first
    assert pool._next_job() is late
    assert pool._next_job() is None  # only the greedy identity waits, and it has a run going
    del pool.running["g"]
    assert pool._next_job() is greedy[1]


def test_an_identity_queue_past_its_share_is_busy_with_retry_after():
    pool = Pool(Settings(workers=1, queue_limit=100, identity_queue_limit=2, busy_retry_after_s=3), dot="dot")
    opts = run_options()
    pool.submit("g", opts, identity="g")
    pool.running["g"] = pool._next_job()  # as _assign does
    for _ in range(2):
        pool.submit("g", opts, identity="g")
    with pytest.raises(PoolBusy) as e:
        pool.submit("g", opts, identity="g")
    assert e.value.retry_after == 3 and "identity_queue_limit" in str(e.value)
    pool.submit("o", opts, identity="o")  # another identity is still taken
    assert pool.state()["queued"] == 3


def test_an_identity_with_nothing_running_yet_still_queues_only_its_share():
    """A client sending 20 runs at once behind other identities' runs: one that will run and
    identity_queue_limit waiting, the rest busy, though none of its runs has started."""
    pool = Pool(Settings(workers=1, queue_limit=100, identity_queue_limit=2), dot="dot")
    opts = run_options()
    pool.submit("o", opts, identity="o")
    pool.running["o"] = pool._next_job()  # another identity holds the only worker
    taken, refused = 0, 0
    for _ in range(20):
        try:
            pool.submit("g", opts, identity="g")
            taken += 1
        except PoolBusy:
            refused += 1
    assert (taken, refused) == (3, 17)
    assert "g" not in pool.running
