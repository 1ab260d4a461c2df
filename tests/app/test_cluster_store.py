"""The run store through Redis (app/runs/cluster_store.py, app/runs/wire.py): a real redis-server, one event loop
standing for two processes (two stores over one Redis)."""

from __future__ import annotations

import asyncio
import zlib

import pytest
from redis_process import redis_server

from app.runs import wire
from app.runs.cluster_store import ClusterRunStore
from app.runs.store import ELSEWHERE, EXPIRED, RunStore
from app.trace.payloads import PassPayloads, pack


def payloads(n: int = 3, size: int = 100) -> PassPayloads:
    p = PassPayloads()
    for i in range(n):
        g = f"g{i}"
        p.cores[g] = pack(b'{"id":"%s","width":1,"height":1,"nodes":[],"edges":[],"clusters":[]}' % g.encode())
        p.entries[g] = b'{"kind":"iter","label":"' + bytes(str(i), "ascii") * size + b'"}'
        p.frames[g] = pack(b'"%d":{"v":1}' % i)
        p.children[g] = [f"g{i + 1}"] if i + 1 < n else []
        p.sizes[g] = n - i
        p.raw[g] = 10
    p.search = [("tanh", b'{"kind":"op","op":"tanh"}'), ("w", b'{"kind":"tensor","name":"W"}')]
    return p


def test_payloads_cross_redis_as_they_were():
    p = payloads()
    back = wire.decode(wire.encode(p))
    assert (back.cores, back.entries, back.frames, back.children, back.sizes, back.raw, back.search) == \
           (p.cores, p.entries, p.frames, p.children, p.sizes, p.raw, p.search)
    assert back.payload("g0", 10) == p.payload("g0", 10) and back.find("TANH", 5) == p.find("TANH", 5)
    assert len(wire.encode(payloads(50, 400))) < payloads(50, 400).nbytes() // 4  # compressed


@pytest.mark.parametrize("hostile", [b"", b"not zlib", zlib.compress(b"\x00\x00\x00\x05{\"v\"}"),
                                     zlib.compress(b"\xff\xff\xff\xff" + b"x" * 10),
                                     zlib.compress(b"\x00\x00\x00\x08{\"v\":2}"),
                                     zlib.compress(b"\x00\x00\x00\x1a" + b'{"v":1,"lens":[99999999]}' + b"!"),
                                     zlib.compress(b"\x00\x00\x00\x12" + b'{"v":1,"lens":"x"}')])
def test_damaged_or_foreign_bytes_are_refused_cleanly(hostile):
    with pytest.raises(wire.BadPayloads):
        wire.decode(hostile)


def test_a_store_without_a_broker_tells_expired_from_never_here():
    store = RunStore(max_bytes=10**9, max_runs=1, ttl_s=60)
    first, second = "a" * 32, "b" * 32
    store.put(first, {0: payloads()}, "alice")
    store.put(second, {0: payloads()}, "alice")  # one run at most: the first goes
    assert store.get(first, 0) is None and store.missing(first) == EXPIRED
    assert store.missing("c" * 32) == ELSEWHERE  # never here: another process ran it


@pytest.fixture
def redis_url(tmp_path):
    with redis_server(tmp_path) as (url, _):
        yield url


def two_stores(url, **bounds):
    import redis.asyncio as aioredis

    client = aioredis.from_url(url)
    settings = {"max_bytes": 10**9, "max_runs": 64, "ttl_s": 60, **bounds}
    return client, ClusterRunStore(RunStore(**settings), client), ClusterRunStore(RunStore(**settings), client)


def test_a_run_stored_by_one_process_is_served_by_the_other(redis_url):
    async def main():
        client, ran, other = two_stores(redis_url)
        run = "1" * 32
        ran.expect(run, "alice")
        waiting = asyncio.ensure_future(other.wait(run, 0, 10))  # pending in Redis: the other process waits
        await asyncio.sleep(0.1)
        assert not waiting.done()
        ran.put(run, {0: payloads(), 3: payloads(2)})
        got = await waiting
        assert got is not None and got.payload("g1", 10) == payloads().payload("g1", 10)
        assert set(await other.wait_run(run, 5)) == {0, 3}
        assert await other.wait(run, 7, 1) is None  # no such pass
        assert await other.wait("2" * 32, 0, 1) is None and other.missing("2" * 32) == EXPIRED
        assert other.state()["read"] >= 1 and ran.state()["written"] == 1
        await client.aclose()

    asyncio.run(main())


def test_the_cluster_budget_drops_the_heaviest_identity_first(redis_url):
    async def main():
        one = len(wire.encode(payloads(20, 300)))
        client, a, b = two_stores(redis_url, max_bytes=max(1_000_000, int(4.5 * one)))
        limit = a.local.max_bytes // one  # runs of this size that fit the cluster's bytes
        runs = [f"{i:032x}" for i in range(limit + 2)]
        a.put(runs[0], {0: payloads(20, 300)}, "bob")  # one student's run
        for run in runs[1:]:  # another student's many runs, written by both processes
            (a if int(run, 16) % 2 else b).put(run, {0: payloads(20, 300)}, "mallory")
            await asyncio.gather(*a._tasks, *b._tasks)
        total = int(await client.get("fg:run:total"))
        assert total <= a.local.max_bytes
        assert await client.exists("fg:run:" + runs[0]) == 1  # bob's run stays: mallory's own runs went
        assert await client.exists("fg:run:" + runs[1]) == 0
        await client.aclose()

    asyncio.run(main())


def test_redis_away_serves_what_this_process_ran(tmp_path):
    async def main():
        import redis.asyncio as aioredis

        client = aioredis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
        store = ClusterRunStore(RunStore(max_bytes=10**9, max_runs=8, ttl_s=60), client)
        run = "3" * 32
        store.expect(run, "alice")
        store.put(run, {0: payloads()})
        assert (await store.wait(run, 0, 1)) is not None  # from this process's memory
        assert await store.wait("4" * 32, 0, 1) is None
        await asyncio.gather(*store._tasks)
        assert store.state()["failed"] >= 1
        await client.aclose()

    asyncio.run(main())


def test_without_a_broker_the_404_says_elsewhere_or_expired_and_who_answered(client):
    store = client.app.state.run_store
    never, gone = "5" * 32, "6" * 32
    store.put(gone, {0: payloads()}, "alice")
    store.runs[gone].used -= store.ttl_s + 1  # past its age: the next read drops it
    for run, reason in ((never, "elsewhere"), (gone, "expired")):
        r = client.get(f"/api/runs/{run}/passes/0/groups/g1")
        assert r.status_code == 404 and r.json()["error"]["type"] == "RunExpired"
        assert r.json()["reason"] == reason and r.json()["process"] == r.headers["x-flowgrad-process"]
    assert "another server process" in client.get(f"/api/runs/{never}/passes/0/search", params={"q": "x"}).text
