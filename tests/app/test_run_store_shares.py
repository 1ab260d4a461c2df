"""Issue 22 hole 9: one client's many folded runs push out its own stored runs, never the class's; the store's
byte count covers what it holds (pieces and entries, not only their measured bytes) and never goes past it."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from flowgrad_testing import identity_headers

from app.core.config import Settings
from app.main import create_app
from app.runs.store import PIECE_BYTES, RunStore
from app.trace.payloads import PassPayloads


def _payloads(nbytes: int) -> dict[int, PassPayloads]:
    p = PassPayloads()
    p.cores["g1"] = b""
    overhead = p.measure()
    p.cores["g1"] = bytes(max(0, nbytes - overhead))
    p.measure()
    return {0: p}


def _ids(prefix: int, n: int) -> list[str]:
    return [f"{prefix:08x}{i:024x}" for i in range(n)]


def test_sixty_six_tiny_runs_of_one_client_evict_its_own():
    store = RunStore(max_bytes=10_000_000, max_runs=64, ttl_s=60)
    theirs = _ids(1, 3)
    for i, run in enumerate(theirs):
        store.put(run, _payloads(1_000), owner=f"student-{i}")
    greedy = _ids(2, 66)
    for run in greedy:
        store.put(run, _payloads(100), owner="greedy")
    assert all(store.get(run, 0) is not None for run in theirs)
    assert len(store.runs) == 64 and store.state()["owners"] == 4
    kept = [run for run in greedy if run in store.runs]
    assert kept == greedy[-61:]  # its oldest went first


def test_when_bytes_are_short_the_heaviest_holder_gives_way():
    store = RunStore(max_bytes=10_000, max_runs=100, ttl_s=60)
    mine = _ids(3, 1)[0]
    store.put(mine, _payloads(3_000), owner="student")
    for run in _ids(4, 10):
        store.put(run, _payloads(2_000), owner="greedy")
        assert store.nbytes <= 10_000
    assert store.get(mine, 0) is not None
    # a newcomer holding less than the greedy one takes room from the greedy one too
    newcomer = _ids(5, 1)[0]
    store.put(newcomer, _payloads(2_500), owner="another")
    assert store.get(newcomer, 0) is not None and store.get(mine, 0) is not None


def test_a_run_is_counted_for_its_pieces_and_entries():
    store = RunStore(max_bytes=1_000_000, max_runs=10, ttl_s=60, entry_bytes=4_096)
    passes = _payloads(5_000)
    counted = store.counted(passes)
    assert counted == passes[0].nbytes() + 2 * 4_096 + PIECE_BYTES  # the run, its pass, its one piece
    store.put(_ids(6, 1)[0], passes, owner="x")
    assert store.nbytes == counted
    assert Settings().run_store_entry_bytes > 0


def test_the_store_never_holds_more_than_its_budget_even_while_a_run_goes_in():
    store = RunStore(max_bytes=10_000, max_runs=100, ttl_s=60)
    for i, run in enumerate(_ids(7, 40)):
        store.put(run, _payloads(1_000 + 37 * i), owner=f"o{i % 3}")
        assert store.nbytes <= 10_000
    assert sum(s.nbytes for s in store.runs.values()) == store.nbytes


# ---------------------------------------------------------------- through the server
SMALL_FOLD = "import torch\nx = torch.tensor(0.5, requires_grad=True)\ny = x\nfor i in range(20):\n    y = torch.sin(y) * 2\ny.backward()\n"


def _folded(client, headers) -> tuple[str, str]:
    r = client.post("/api/run", json={"source": SMALL_FOLD}, headers=headers)
    assert r.status_code == 200, r.text[:300]
    graph = r.json()["passes"][0]["graph"]
    assert graph["folded"]
    gid = next(n["id"] for n in graph["nodes"] if n.get("kind") == "group")
    return graph["run"], gid


@pytest.mark.slow
def test_another_clients_groups_still_expand_after_a_flood_of_folded_runs():
    s = Settings(workers=1, fold_threshold=10, run_store_max_runs=4)
    with TestClient(create_app(s)) as client:
        student, greedy = identity_headers(s), identity_headers(s)
        run, gid = _folded(client, student)
        flood = [_folded(client, greedy) for _ in range(6)]
        r = client.get(f"/api/runs/{run}/passes/0/groups/{gid}", headers=student)
        assert r.status_code == 200 and r.json()
        r = client.get(f"/api/runs/{run}/passes/0/search", params={"q": "sin"}, headers=student)
        assert r.status_code == 200
        oldest, newest = flood[0], flood[-1]
        assert client.get(f"/api/runs/{oldest[0]}/passes/0/groups/{oldest[1]}").json()["error"]["type"] == "RunExpired"
        assert client.get(f"/api/runs/{newest[0]}/passes/0/groups/{newest[1]}").status_code == 200
