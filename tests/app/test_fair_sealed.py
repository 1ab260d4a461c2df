"""Issue 22, holes 1, 10 and 11: the work a program causes outside its run process is bounded by the run's own
budgets (folding, group payloads, export), a program never gets a worker replaced, a worker that grew is
recycled, and timings say nothing about other users' runs. No timing asserts: the bounds are CPU budgets,
byte caps and process limits, checked by what the answers say."""

from __future__ import annotations

import asyncio
import signal
import threading
import time

import httpx
import pytest
from flowgrad_testing import real_server, strict_json

from app.core.config import Settings
from app.layout import LayoutEngine, LayoutInput
from app.layout.dot import check_dot
from app.runner.capture import run_capture
from app.runner.protocol import Events, RunOptions, RunStored
from app.runner.session import RunSession
from app.runner.worker import capture_budgets, payload_budget, sandbox_limits
from app.runs.export import inline_payloads
from app.runs.store import RunStore
from app.trace.build import FoldOptions, TraceBuilder
from app.trace.folded import FoldTooSlow, PayloadsTooBig, cpu_budget
from app.trace.policy import RunPolicy

# hole 1 as reported: 48,000 trace events, one pass of 48,000 nodes to fold
BIG_FOLD = "import torch\nx = torch.ones(1)\ns = sum([x] * 24000)\n"
# the same shape, small enough to fold quickly in-process
SMALL_FOLD = "import torch\nx = torch.ones(1)\ns = sum([x] * 1500)\n"


def capture(source: str, settings: Settings) -> list:
    msgs: list = []
    run_capture(source, sandbox_limits(settings), settings.value_limit, settings.max_events, msgs.append,
                stream=False, policy=RunPolicy.from_settings(settings), **capture_budgets(settings))
    return msgs


def folded_builder(settings: Settings, cpu_budget_s: float | None = None, layout=None) -> TraceBuilder:
    s = settings
    b = TraceBuilder(layout, policy=RunPolicy.from_settings(s), max_nodes=s.max_drawn_nodes,
                     fold=FoldOptions(s.fold_threshold, s.max_folded_nodes, s.fold_max_children, SMALL_FOLD, "0" * 32,
                                      cpu_budget_s=cpu_budget_s))
    for m in capture(SMALL_FOLD, s):
        if isinstance(m, Events):
            b.feed_all(m.events)
    b.finish()
    return b


@pytest.fixture(scope="module")
def folded(settings):
    b = folded_builder(settings)
    assert b.passes[0]["graph"]["folded"] is True
    return b


# ---------------------------------------------------------------------------- hole 1: folding and payloads
def test_folding_past_its_cpu_budget_summarises_the_pass_and_says_why(settings):
    b = folded_builder(settings, cpu_budget_s=0.001)  # any fold of 3,000 nodes takes more than 1 ms of CPU
    p = b.passes[0]
    assert p["graph"] is None and p["frames"] == []
    assert "CPU time" in p["folded"] and "hard_kill_s" in p["folded"]
    assert b.truncated and not b.folded_passes
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)  # the timer is off again
    assert signal.getsignal(signal.SIGPROF) in (signal.SIG_DFL, None, signal.SIG_IGN)


def test_the_cpu_budget_stops_pure_python_work_and_is_off_elsewhere():
    with pytest.raises(FoldTooSlow), cpu_budget(0.01):
        while True:
            pass
    with cpu_budget(None):  # no budget: nothing armed
        assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    seen = []
    t = threading.Thread(target=lambda: seen.append(cpu_budget(0.001).__enter__() is None))
    t.start()
    t.join()
    assert seen == [True]  # off the main thread: no signal can land, so no budget (and no error)


def test_group_payloads_past_their_byte_budget_are_dropped_not_kept(settings, folded):
    fp = next(iter(folded.folded_passes.values()))
    with pytest.raises(PayloadsTooBig):
        fp.payloads(max_bytes=1_000)
    assert fp.payloads().nbytes() > 1_000  # within a budget they are all there
    assert payload_budget(settings) == settings.run_store_max_bytes // 8


def test_the_session_sends_no_payloads_over_the_budget(settings):
    sent: list = []
    session = RunSession(1, SMALL_FOLD, RunOptions(), settings, None, {}, sent.append, started=time.monotonic(), sent=time.monotonic())
    for m in capture(SMALL_FOLD, settings):
        if isinstance(m, Events):
            session.receive(m)
    assert session.finish(None, None) is True  # its answer is out; payloads are still to be built
    stored: list = []
    session.store_payloads(stored.append, max_bytes=1_000)
    assert stored == [RunStored(session.run_id, None)]
    session.store_payloads(stored.append, max_bytes=10**9)
    assert stored[1].passes and stored[1].run_id == session.run_id


def test_the_big_fold_answers_and_leaves_the_pool_serving(client):
    before = client.get("/healthz").json()["pool"]
    r = client.post("/api/run", json={"source": BIG_FOLD})
    assert r.status_code == 200
    d = strict_json(r.text)
    # bounded: folded, summarised past a budget, or stopped by the run's own limits, never a replaced worker
    assert "replaced" not in str(d["error"]) and "stopped unexpectedly" not in str(d["error"])
    if d["error"] is None:
        assert d["variables"]["s"]["value"] == [24000.0]
        g = d["passes"][0]["graph"]
        assert (g is not None and g["folded"]) or d["passes"][0]["folded"]
    r = client.post("/api/run", json={"source": "print(1)"})
    assert r.status_code == 200 and strict_json(r.text)["stdout"] == "1\n"
    after = client.get("/healthz").json()["pool"]
    assert after["restarts"] == before["restarts"] and after["ready"] == after["size"]


def test_a_grown_worker_is_recycled_and_capped_payloads_answer_run_expired():
    # every worker is past 64 MB after a run: each run is followed by a recycle; a store of 1 MB allows one run
    # 125 KB of payloads, less than the fold's
    with real_server(FLOWGRAD_WORKER_MAX_RSS_MB="64", FLOWGRAD_RUN_STORE_MAX_BYTES="1000000") as (_port, url):
        with httpx.Client(base_url=url, timeout=60) as c:
            d = strict_json(c.post("/api/run", json={"source": SMALL_FOLD}).text)
            assert d["error"] is None
            g = d["passes"][0]["graph"]
            if g is not None:  # folded (a loaded machine may leave it a summary: the answer was due)
                gid = next(n["id"] for n in g["nodes"] if n["kind"] == "group")
                r = c.get(f"/api/runs/{g['run']}/passes/{g['pass_index']}/groups/{gid}")
                assert r.status_code == 404 and r.json()["error"]["type"] == "RunExpired"
            for _ in range(2):
                r = c.post("/api/run", json={"source": "print(1)"})
                assert r.status_code == 200 and r.json()["stdout"] == "1\n"
            pool = c.get("/healthz").json()["pool"]
            assert pool["recycled"] >= 1 and pool["restarts"] == 0


# ---------------------------------------------------------------------------- hole 10: export
def test_the_offline_size_is_known_before_unpacking(folded):
    payloads = next(iter(folded.folded_passes.values())).payloads()
    blob = payloads.offline_all(10**9)
    assert blob is not None and len(blob) <= payloads.offline_bytes() <= len(blob) + 64 * len(payloads.cores)
    assert payloads.offline_all(len(blob) - 1) is None


def test_an_export_too_big_for_its_room_unpacks_nothing(folded):
    store = RunStore(max_bytes=10**9, max_runs=4, ttl_s=60)
    payloads = next(iter(folded.folded_passes.values())).payloads()

    def unpacked(_gid):
        raise AssertionError("unpacked a pass that cannot fit")

    payloads.offline = unpacked
    store.put("ab" * 16, {0: payloads})
    trace = b'{"passes":[{"index":0,"graph":{"folded":true,"run":"' + b"ab" * 16 + b'","pass_index":0}}]}'
    assert asyncio.run(inline_payloads(trace, store, 1_000)) == trace


def test_an_export_that_fits_carries_every_group(folded):
    store = RunStore(max_bytes=10**9, max_runs=4, ttl_s=60)
    payloads = next(iter(folded.folded_passes.values())).payloads()
    store.put("ab" * 16, {0: payloads})
    trace = b'{"passes":[{"index":0,"graph":{"folded":true,"run":"' + b"ab" * 16 + b'","pass_index":0}}]}'
    out = strict_json(asyncio.run(inline_payloads(trace, store, 10**9)))
    assert set(out["passes"][0]["graph"]["payloads"]) == set(payloads.cores)


# ---------------------------------------------------------------------------- hole 11: timings
def test_a_layout_from_another_runs_cache_entry_reports_what_it_cost(settings):
    layout = LayoutEngine.from_settings(settings, dot_binary=check_dot(settings.dot_binary).path)
    try:
        g = LayoutInput([("a", "op|add|", 60.0, 30.0), ("b", "op|mul|", 60.0, 30.0), ("c", "tensor|leaf|", 60.0, 30.0)],
                        [("e1", "a", "b"), ("e2", "b", "c")], [])
        layout.begin_run()
        layout.layout(g)
        assert layout.spared_s == 0.0
        cost = next(iter(layout.costs.values()))
        assert cost > 0
        layout.begin_run()  # another client's run: served from the cache, reported as if laid out
        res = layout.layout(g)
        assert layout.spared_s == cost and res.method != "cache"
        layout.layout(g)  # the same run again: a hit of its own, nothing more to count
        assert layout.spared_s == cost
    finally:
        layout.close()


def test_the_answer_times_count_the_spared_layout(settings):
    sent: list = []

    class Spared:
        spared_s = 5.0  # as if 5 s of layouts came from other runs' cache entries

    session = RunSession(1, "print(1)", RunOptions(), settings, None, {}, sent.append, started=time.monotonic(), sent=time.monotonic())
    session.layout = Spared()
    session.finish(None, None)
    d = strict_json(sent[-1].data)
    assert d["timing_ms"]["trace"] >= 5000 and d["elapsed_ms"] >= 5000
