"""A lecture hall is served from what was already computed: identical deterministic runs share one execution."""

from __future__ import annotations

import asyncio
import gzip
import zlib

import orjson
import pytest

from app.core.answer import EVENT_SEPARATOR, failed_answer, run_answer
from app.core.compression import Z_FINISH, Z_SYNC_FLUSH, gzip_fast, gzip_small
from app.core.config import Settings
from app.core.identity import Identity
from app.layout.dot import check_dot
from app.runner.pool import Pool, PoolBusy
from app.runner.service import RunService, run_options
from app.runs.answer_cache import LocalAnswers, SharedAnswers, circumstantial, deterministic, shareable

TUTORIAL = ("import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nx = torch.randn(8, 2)\ny = x.sum(1, keepdim=True)\n"
            "for step in range(5):\n    opt.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n"
            "    loss.backward()\n    opt.step()\nprint(loss.item())\n")


@pytest.mark.parametrize("source, expected", [
    (TUTORIAL, True),
    ("import random\nprint(random.random())\n", True),  # Python's random starts at seed 0 in every run
    ("import numpy as np\nnp.random.seed(3)\nprint(np.random.rand(2))\n", True),
    ("import numpy as np\nprint(np.random.rand(2))\n", False),  # NumPy's RandomState() is seeded by the OS
    ("import torch\ntorch.seed()\nprint(torch.rand(1))\n", False),
    ("import time\nprint(time.time())\n", False),
    ("from time import perf_counter as t\nprint(t())\n", False),
    ("x = object()\nprint(id(x))\n", False),
    ("def f(:\n", True),  # a syntax error is the same answer every time
    ("'''never closed\n", True),
    ("import torch\ntorch.manual_seed(0)\nprint(torch.randn(2))\n", True),  # no suspect word: not tokenized
    ("print('time is random')  # id()\n", True),  # the words only in a string and a comment: tokenized
    ("import torch as t\nt.seed ()\n", False),
])
def test_deterministic_programs_are_found_by_their_tokens(source, expected):
    assert deterministic(source) is expected


def test_answers_cut_by_time_or_folded_are_not_shared():
    assert shareable(b'{"stdout":"1\\n","error":null}')
    assert not shareable(b'{"error":{"type":"TimeoutError","message":"... (limit time_limit_s = 2)"}}')
    assert not shareable(b'{"passes":[{"graph":{"folded":true,"run":"ab12"}}]}')
    assert not shareable(b'{"stdout":"","error":{"type":"Cancelled","message":"the run was cancelled"}}')
    assert not shareable(b'{"type":"pass"}\n{"type":"done","error":{"type":"WorkerError","message":"x"}}')
    assert shareable(b'{"type":"pass"}\n{"type":"done","error":{"type":"NameError","message":"x"}}')


@pytest.mark.parametrize("answer, expected", [
    # what the program printed or named cannot pass for the answer's error
    (run_answer(stdout=',"error":{"type":"Cancelled"},"variables":{}', variables={"error": "Cancelled"}), False),
    (run_answer(variables={"x": 1, "error": {"type": "Cancelled"}}), False),
    (run_answer(stdout="\\", error={"type": "NameError", "message": ',"variables":{}'}), False),
    # an error holding a "variables" key of its own: the cut head does not parse, the whole answer is read
    (run_answer(error={"type": "WorkerError", "variables": {"a": 1}, "message": "x"}), True),
    (run_answer(error={"type": "Cancelled", "message": "the run was cancelled"}, stream=True), True),
    ({"error": {"type": "MemoryError"}, "stdout": ""}, True),  # another key order: parsed whole
    ({"stdout": "", "error": {"type": "Busy"}}, True),  # no "variables" after the error
])
def test_an_answers_error_is_read_from_its_head(answer, expected):
    assert circumstantial(orjson.dumps(answer)) is expected
    assert circumstantial(b'{"type":"pass","pass":{"error":1}}\n' + orjson.dumps(answer)) is expected


def test_failed_answers_are_circumstantial():
    assert circumstantial(failed_answer({"type": "Cancelled", "message": "x"}))
    assert circumstantial(failed_answer({"type": "WorkerError", "message": "x"}, stream=True))
    assert not circumstantial(failed_answer({"type": "ValueError", "message": "x"}))
    assert circumstantial(b'{"stdout":"","error":{"type":"Cancelled"')  # cut short: not the program's own


def test_local_answers_stay_within_their_bytes():
    store = LocalAnswers(max_bytes=1000, ttl_s=60)

    async def fill():
        for i in range(10):
            await store.put(f"k{i}", bytes(300))
        await store.put("huge", bytes(2000))  # bigger than the whole bound: never stored
        return [await store.get(f"k{i}") is not None for i in range(10)], await store.get("huge")

    kept, huge = asyncio.run(fill())
    assert kept == [False] * 7 + [True] * 3 and huge is None and store.nbytes == 900


def test_the_leader_gets_the_packed_answer_smaller_when_others_waited_for_it():
    answer = orjson.dumps(run_answer(stdout="loss 0.25\n" * 500))

    async def main():
        shared = SharedAnswers.from_settings(Settings())
        alone = shared.settle("k1", shared.flights.lead("k1"), answer, True)
        flight = shared.flights.lead("k2")
        assert shared.flights.get("k2") is flight  # another request found it under way
        waited = shared.settle("k2", flight, answer, True)
        refused = shared.settle("k3", shared.flights.lead("k3"), failed_answer({"type": "Cancelled"}), True)
        return alone, waited, refused, await shared.get("k1")

    alone, waited, refused, stored = asyncio.run(main())
    assert gzip.decompress(alone) == gzip.decompress(waited) == answer and stored == (answer, alone)
    assert alone == gzip_fast(answer) and waited == gzip_small(answer)  # the same bytes every time (no mtime)
    assert refused is None and len(waited) < len(alone)


def _service(settings: Settings):
    pool = Pool(settings, dot=check_dot(settings.dot_binary).path)
    return pool, RunService(pool, SharedAnswers.from_settings(settings))


def _run_many(settings: Settings, body):
    async def main():
        pool, service = _service(settings)
        await pool.start()
        try:
            return await body(pool, service)
        finally:
            await pool.stop()

    return asyncio.run(main())


SETTINGS = Settings(workers=1, time_limit_s=5.0)


def test_identical_runs_share_one_execution_and_later_ones_come_from_the_cache():
    async def body(pool, service):
        students = [Identity(f"i:student{n}") for n in range(12)]
        first = await asyncio.gather(*(service.run(TUTORIAL, client=s) for s in students))
        executed_together = pool.completed
        later = await service.run(TUTORIAL, client=Identity("i:late"))
        return first, executed_together, later, pool.completed, service.answers.state()

    first, executed_together, later, executed, state = _run_many(SETTINGS, body)
    assert executed_together == 1 and executed == 1
    answers = {r.answer for r in first} | {later.answer}
    assert len(answers) == 1 and all(r.complete for r in first)
    assert all(gzip.decompress(r.gzipped) == r.answer for r in first)  # the leader's too: compressed once
    assert orjson.loads(later.answer)["error"] is None
    assert state["shared_waits"] >= 1 and state["hits"] >= 1


def test_programs_that_differ_between_runs_run_each_time():
    source = "import time\nprint(time.time())\n"

    async def body(pool, service):
        await asyncio.gather(*(service.run(source, client=Identity(f"i:s{n}")) for n in range(3)))
        return pool.completed

    assert _run_many(SETTINGS, body) == 3


def test_a_leader_that_leaves_does_not_leave_its_followers_without_an_answer():
    async def body(pool, service):
        async def gone():
            return True

        longer = TUTORIAL.replace("range(5)", "range(300)")  # long enough for the leader to see its client go
        leader = asyncio.ensure_future(service.run(longer, client=Identity("i:leaver"), disconnected=gone))
        await asyncio.sleep(0)  # the leader takes the flight first
        followers = await asyncio.gather(*(service.run(longer, client=Identity(f"i:f{n}")) for n in range(4)))
        return await leader, followers

    left, followers = _run_many(SETTINGS, body)
    assert left.answer is None or left.complete  # its client went (normally before the end): nobody reads it
    assert all(f.complete and orjson.loads(f.answer)["error"] is None for f in followers)


def test_a_stream_is_replayed_event_for_event():
    async def body(pool, service):
        async def events(who):
            opened = await service.open_stream(TUTORIAL, client=Identity(who))
            return [e for chunk in [c async for c in opened.events] for e in chunk.split(EVENT_SEPARATOR)]

        first = await events("i:a")
        second = await events("i:b")
        return first, second, pool.completed

    first, second, executed = _run_many(SETTINGS, body)
    assert first == second and executed == 1
    assert [orjson.loads(e)["type"] for e in first][-1] == "done"


def test_a_run_that_would_wait_past_the_queue_budget_is_refused_at_once():
    nap = "import time\ntime.sleep(1.5)\n"  # not shared (a clock): every request runs
    settings = Settings(workers=1, time_limit_s=5.0, queue_timeout_s=1.0)

    async def body(pool, service):
        await service.run(nap, client=Identity("i:warmup"))  # recent runs take 1.5 s or more
        while not all(h.ready and h.settling is None for h in pool.workers):  # its housekeeping after the run
            await asyncio.sleep(0.05)
        running = pool.submit(nap, run_options(), identity="i:a")
        queued = pool.submit(nap, run_options(), identity="i:b")  # starts in ~1.5 s...
        with pytest.raises(PoolBusy) as refused:
            pool.submit(nap, run_options(), identity="i:c")  # ... this one in ~3 s, past the 1 s budget
        for job in (running, queued):
            pool.cancel(job)
        return refused.value.retry_after

    assert _run_many(settings, body) >= 1


def test_answers_are_ordinary_gzip_at_two_sizes():
    # the compressor (ISA-L where installed) writes gzip that the standard library, and so every browser, reads
    from app.core.compression import gunzip, stream_compressor

    answer = orjson.dumps(run_answer(stdout="".join(f"step {i} loss {1 / (i + 1):.6f}\n" for i in range(400))))
    fast, small = gzip_fast(answer), gzip_small(answer)
    assert gzip.decompress(fast) == gzip.decompress(small) == gunzip(fast) == answer
    assert max(len(small), len(fast)) < len(answer) // 3
    z = stream_compressor()  # event by event: each flushed piece decompresses as it comes
    d = zlib.decompressobj(31)
    first = z.compress(b'{"type":"step"}\n') + z.flush(Z_SYNC_FLUSH)
    assert d.decompress(first) == b'{"type":"step"}\n'
    assert d.decompress(z.compress(b'{"type":"done"}\n') + z.flush(Z_FINISH)) == b'{"type":"done"}\n'
