"""Issue 24 on the wire: a class ends only when its presenter ends it, followers hear a quiet presenter, and the
presenter's run is shared (run once by the server, loaded by every follower: no follower runs the program)."""

from __future__ import annotations

import asyncio
import gzip

import httpx
import pytest
from flowgrad_testing import real_server
from test_classroom import Follower, create, join, post_state, redis_url  # noqa: F401 - redis_url: a fixture

from app.classroom.broker import Limits, MemoryBroker
from app.classroom.hub import Hub

FAST = {"FLOWGRAD_FOLLOWER_HEARTBEAT_S": "0.3", "FLOWGRAD_PRESENTER_QUIET_S": "0.5",
        "FLOWGRAD_MAX_SESSIONS_PER_IDENTITY": "10000", "FLOWGRAD_MAX_FOLLOWERS_PER_IDENTITY": "10000",
        "FLOWGRAD_MAX_STREAMS_PER_IDENTITY": "10000"}
PROGRAM = "import torch\nx = torch.tensor(3.0, requires_grad=True)\ny = x * x\ny.backward()\nprint(x.grad)\n"


@pytest.fixture(scope="module", params=["memory", "redis"])
def server(request):
    """The contract holds with either broker (Redis: two processes, the presenter on one, followers on the other
    is test_classroom's; here one process through Redis checks the new scripts)."""
    extra = {"FLOWGRAD_BROKER_URL": request.getfixturevalue("redis_url")[0]} if request.param == "redis" else {}
    with real_server(**FAST, **extra) as (_, url):
        yield url


def test_only_the_presenter_ends_the_class_and_followers_get_a_last_frame(server):
    code, headers, _ = create(server)
    post_state(server, code, headers, {"step": 1})
    f = Follower(server, code, join(server, code))
    assert f.wait_for(1)[0]["state"] == {"step": 1}
    assert httpx.post(f"{server}/api/sessions/{code}/end").status_code == 401
    assert httpx.post(f"{server}/api/sessions/{code}/end", headers={"Authorization": "Bearer nope"}).status_code == 403
    r = httpx.post(f"{server}/api/sessions/{code}/end", headers=headers)
    assert r.status_code == 200 and r.json()["ended"] is True
    seen = f.wait_for(2)
    if not any(e.get("ended") for e in seen):  # on a slow machine the quiet presenter's "away" (0.5 s) comes first
        seen = f.wait_for(3)
    last = [e for e in seen if e.get("ended")]
    assert last and last[0]["seq"] == r.json()["seq"]
    assert httpx.get(f"{server}/api/sessions/{code}").status_code == 404  # the code stops working
    assert httpx.post(f"{server}/api/sessions/{code}/join").status_code == 404
    assert post_state(server, code, headers, {"step": 2}).status_code == 404
    f.close()


def test_a_quiet_presenter_is_away_until_it_speaks_again(server):
    code, headers, _ = create(server)
    post_state(server, code, headers, {"step": 1})
    f = Follower(server, code, join(server, code))
    # nothing from the presenter past presenter_quiet_s: one frame says so (the state is unchanged)
    events = f.wait_for(2)
    assert events[1]["away"] is True and events[1]["state"] == {"step": 1}
    assert httpx.get(f"{server}/api/sessions/{code}").json()["away"] is True
    assert httpx.post(f"{server}/api/sessions/{code}/presence", headers=headers).json() == {"here": True}
    back = f.wait_for(3)[2]
    assert "away" not in back and back["state"] == {"step": 1}
    f.close()


def test_a_closing_presenter_page_says_so_at_once(server):
    code, headers, _ = create(server)
    post_state(server, code, headers, {"step": 4})
    assert httpx.post(f"{server}/api/sessions/{code}/presence", json={"here": False}).status_code == 401
    assert httpx.post(f"{server}/api/sessions/{code}/presence", json={"here": False}, headers=headers).status_code == 200
    f = Follower(server, code, join(server, code))
    assert f.wait_for(1)[0]["away"] is True  # a late joiner learns it from the latest frame
    post_state(server, code, headers, {"step": 5})  # any presenter call is presence
    assert "away" not in f.wait_for(2)[1]
    f.close()


def test_the_presenters_run_is_run_once_and_loaded_by_followers(server):
    code, headers, _ = create(server)
    assert httpx.post(f"{server}/api/sessions/{code}/run", json={"source": PROGRAM}).status_code == 401
    r = httpx.post(f"{server}/api/sessions/{code}/run", json={"source": PROGRAM, "values": "summary"}, headers=headers,
                   timeout=60)
    assert r.status_code == 200, r.text
    run_id = r.json()["run"]
    assert httpx.get(f"{server}/api/sessions/{code}").json()["run"] == run_id
    shared = httpx.get(f"{server}/api/sessions/{code}/runs/{run_id}")  # httpx asks for gzip and decodes it
    assert shared.status_code == 200 and shared.headers["content-encoding"] == "gzip"
    trace = shared.json()
    assert trace["stdout"].strip() == "tensor(6.)" and trace["passes"][0]["graph"]["nodes"]
    # the same answer as /api/run gives (runs are deterministic)
    direct = httpx.post(f"{server}/api/run", json={"source": PROGRAM, "values": "summary"}, timeout=60).json()
    assert direct["stdout"] == trace["stdout"] and direct["variables"] == trace["variables"]
    plain = httpx.get(f"{server}/api/sessions/{code}/runs/{run_id}", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.json() == trace
    # a newer run replaces it; the old id is gone; a made-up one never was
    again = httpx.post(f"{server}/api/sessions/{code}/run", json={"source": PROGRAM.replace("3.0", "4.0")},
                       headers=headers, timeout=60).json()["run"]
    assert again != run_id
    assert httpx.get(f"{server}/api/sessions/{code}/runs/{run_id}").status_code == 404
    assert httpx.get(f"{server}/api/sessions/{code}/runs/{'0' * 16}").status_code == 404
    with httpx.stream("GET", f"{server}/api/sessions/{code}/runs/{again}", headers={"Accept-Encoding": "gzip"}) as raw:
        assert b'"passes"' in gzip.decompress(b"".join(raw.iter_raw()))  # compressed once, sent as stored


def test_the_shared_run_goes_as_stored_gzip_and_is_cached_by_its_etag(server):
    """What 300 followers fetch at once: the stored gzip bytes with Content-Encoding, an ETag naming the run
    (immutable), 304 without a body for a follower that has it; typed codes are case-insensitive here too."""
    code, headers, _ = create(server)
    run_id = httpx.post(f"{server}/api/sessions/{code}/run", json={"source": PROGRAM, "values": "summary"},
                        headers=headers, timeout=60).json()["run"]
    url = f"{server}/api/sessions/{code}/runs/{run_id}"
    with httpx.stream("GET", url, headers={"Accept-Encoding": "gzip"}) as raw:
        body = b"".join(raw.iter_raw())
        assert raw.status_code == 200 and raw.headers["content-encoding"] == "gzip"
        assert raw.headers["content-type"] == "application/json" and int(raw.headers["content-length"]) == len(body)
        assert raw.headers["etag"] == f'"{run_id}"' and "immutable" in raw.headers["cache-control"]
        assert "accept-encoding" in raw.headers["vary"].lower()
    assert b'"passes"' in gzip.decompress(body)
    for asked in (f'"{run_id}"', f'W/"{run_id}"', f'"{"0" * 16}", "{run_id}"', "*"):
        again = httpx.get(url, headers={"If-None-Match": asked, "Accept-Encoding": "gzip"})
        assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == f'"{run_id}"', asked
    other = httpx.get(url, headers={"If-None-Match": f'"{"0" * 16}"', "Accept-Encoding": "gzip"})
    assert other.status_code == 200 and other.headers["content-encoding"] == "gzip"
    plain = httpx.get(url, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.headers["etag"] == f'"{run_id}"'
    assert plain.content == gzip.decompress(body)
    assert httpx.get(url.replace(code, code.lower())).status_code == 200
    assert httpx.get(f"{server}/api/sessions/ZZZZZZ/runs/{run_id}").status_code == 404
    assert httpx.get(f"{server}/api/sessions/{'A' * 300}/runs/{run_id}").status_code == 404
    httpx.post(f"{server}/api/sessions/{code}/end", headers=headers)
    gone = httpx.get(url, headers={"If-None-Match": f'"{run_id}"'})
    assert gone.status_code == 404 and gone.json()["error"]["type"] == "NotFound"  # an ended class keeps no run


@pytest.mark.parametrize("bad", ["../../etc", "ABCDEF0123456789", "0" * 17, "%00" * 4])
def test_hostile_run_ids_are_refused(server, bad):
    code, _, _ = create(server)
    assert httpx.get(f"{server}/api/sessions/{code}/runs/{bad}").status_code in (404, 422)


def test_hostile_shared_programs_stay_in_the_sandbox(server):
    code, headers, _ = create(server)
    for source in ("import os\nos.system('id')\n", "def f():\n    return f()\nf()\n", "x = 'a' * 10**10\n", 12):
        r = httpx.post(f"{server}/api/sessions/{code}/run", json={"source": source}, headers=headers, timeout=60)
        if source == 12:
            assert r.status_code == 422
            continue
        assert r.status_code == 200, r.text
        shared = httpx.get(f"{server}/api/sessions/{code}/runs/{r.json()['run']}").json()
        assert shared["error"] is not None  # the sandbox refused it, in the answer every follower loads
    assert httpx.post(f"{server}/api/sessions/{code}/presence", json={"here": "maybe"}, headers=headers).status_code == 422


def test_shared_runs_stay_within_the_process_budget():
    """Many classes' runs: the least recently touched sessions' runs go first, the one just stored stays."""
    limits = Limits(max_sessions=100, max_followers=10, idle_s=3600, code_length=6, max_questions=5,
                    max_answer_changes=5, follower_timeout_s=30, max_sessions_per_identity=100,
                    shared_runs_max_bytes=3_000)

    async def scenario():
        broker = MemoryBroker(limits, Hub())
        codes = [await broker.create("d" * 64, "teacher") for _ in range(5)]
        for i, code in enumerate(codes):
            await broker.put_run(code, f"{i:016x}", bytes(1_000))
            assert broker.run_bytes <= limits.shared_runs_max_bytes
            assert await broker.get_run(code, f"{i:016x}") == bytes(1_000)  # the newest is always kept
        assert await broker.get_run(codes[0], f"{0:016x}") is None
        await broker.end(codes[-1])
        assert broker.run_bytes == sum(len(s.run_answer) for s in broker.sessions.values())

    asyncio.run(scenario())
