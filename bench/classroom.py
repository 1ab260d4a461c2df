"""Class-session benchmark on real servers: fan-out delivery, a question round, memory over time.

    .venv/bin/python bench/classroom.py                 # one process, in memory
    .venv/bin/python bench/classroom.py --redis         # two processes sharing sessions through Redis
    .venv/bin/python bench/classroom.py --minutes 10    # the memory run: RSS every 10 s, its slope after minute 1

Targets (issue 13): 200 followers on one session, the presenter posting 10 states a second: every
follower gets every state in order; delivery p99 <= 150 ms in one process, <= 250 ms across two
processes through Redis. 30 followers answering within the same second: all counted, the
presenter's histogram updated <= 200 ms after the last answer. Server memory flat over the run.

Issue 24 (a real lecture): 300 followers by default; while stepping, the presenter types (each state carries
the typed draft, never run) and opens a question that ``--answers`` followers answer, then reveals it; then
presses Run: the server runs the program once (POST …/run) and every follower loads that answer
(GET …/runs/{id}), as the page does. Counted from the servers' own run counters (/healthz): runs while the
teacher typed (target 0) and runs for the whole class's Run (target 1, not one per follower).

Measured 2026-11-27 19:25 (before issue 24's delivery work; httpx followers) at load 15-20: delivery p50 296 ms,
p99 928 ms; the shared run's 300 loads took seconds; the Redis run did not connect its followers within 120 s.

Delivery work, 2026-11-27 21:45-22:40 (wip-deliver), on the shared 2-core machine at load average 15-23 (others'
test suites and browsers): latencies below are that machine's, the CPU figures are the comparable ones.
* The multi-second shared-run fetch was the benchmark's client: 300 GETs of the 1.4 kB gzip run through one httpx
  client took p50 9.3 s, over raw sockets 1.2 s, against the same server at load 6; the server spends ~1 ms CPU
  per such request with its connection, the same as GET /healthz. The followers now speak HTTP over asyncio
  streams (``request``); the route sends the stored gzip bytes with an ETag (304 on If-None-Match).
* Fan-out: each state is encoded once per process (the hub's frame); per follower and frame there were two
  asyncio.wait_for (a task and a timer each, on 3.11): now asyncio.timeout. Server CPU per delivered frame, 300
  followers: 121 µs before, 90 µs after (one process); 142 µs across two processes through Redis (1,000 followers,
  heartbeats and the Redis subscription included).
* Redis, 1,000 followers: 101 streams were refused 503 (the 32-connection pool's 10 s wait ran out at ~19 round
  trips per follower): a bug, not only the load. Now ~6 round trips per follower: 1000/1000 joined in 28 s at
  load 20, every state in order, none lost, 1 run for the class's Run and 1000/1000 loads of it.
Quiet at the end (22:56, load 0.6-2.3), this branch:
* one process, 300 followers, 30 s: delivery p50 22.0 ms, p99 72.2 ms (target 150), max 180 ms, every state in
  order, none lost; question p99 38 ms, reveal p99 70 ms; 0 runs while typing, 1 for the Run; 300/300 loads of the
  shared run p50 443 ms, p99 506 ms after the state (was p50 2343, p99 5999); 88 µs server CPU per frame.
* two processes through Redis, 1,000 followers, 20 s: joined in 8.2 s; delivery p50 76 ms, p99 272 ms (target
  250), max 451 ms; 7.6 of 10 states/s reached (the presenter's posts wait on the busy loops); question p99 106 ms,
  reveal p99 89 ms; 1000/1000 loads p50 735 ms, p99 1210 ms; 85 µs server CPU per frame.
* --minutes 10, one process, 300 followers (load 17 falling to 2): 6000 states to each, in order, none lost;
  RSS 88.9 -> 92.3 MB, slope +0.04 MB/min after the first minute (flat).
Session 5 (wip-class, 2026-11-28 00:40-01:42), the machine loaded by others' suites (load 5-26; no quiet run):
* a presenter's POST …/state is one Redis round trip (was ~6: alive, digest, life, publish, life, expiry pipeline):
  the token digest, the session's life, the frame, PUBLISH and every expiry in one Lua script.
* 1,000 followers through Redis at load 4.4 before / 5.9 after the change: delivery p50 107 / 194 ms, p99 458 / 1005
  ms, 4.9 / 5.1 states/s reached, POST …/state p50 115 ms (the loaded loops, not Redis, dominate it); at load 12:
  p99 1617 ms, 1.8 states/s (and after, at load 7-8: p99 1498 ms, 3.1 states/s). Every state in order, none
  lost, 0 runs while typing, 1 for the Run, in every run.
  The targets (10 states/s, p99 <= 250 ms) were not measurable on this machine tonight: re-measure quiet.
* memory through Redis, 1,000 followers (two --minutes 10 runs cut short by the load): each process's RSS
  103.5 / 103.1 MB at minute 14 of the first; 103.54 / 103.22 MB at minutes 20-25 of the second, sampled each
  minute (+0.004 MB over 5 minutes): flat. A 20 s run ends at ~114 MB: the 1,000 shared-run loads at its end.
Session 6 (wip-class, 2026-11-28 04:00-04:40), load 3 rising to 15 (others' suites; no quiet minute): where the
time goes, by py-spy on a server at 300 followers: a third is uvicorn's write (one send() per follower per frame,
the minimum: frames are already encoded once per process and joined into one write when several are due); a tenth
was the follower stream's asyncio.timeout around each wait (a timer heap push and cancel per frame and stream: now
one heartbeat timer per stream, armed again only when it rings); ~15% SendGuard's own asyncio.timeout per send and
~15% the eight ASGI middleware hops per frame (app/api/send_guard.py, app/main.py: not this area). The client is not
free: its followers cost 60-90 µs per frame (¾ of it kernel: recv and epoll, measured by py-spy), as much as the
server, on the same two cores; they now parse in a Protocol callback (no task wake per frame), and the report gives
the client's CPU and its loop's lateness (p99 40-100 ms at load 13: part of every latency below).
Old (HEAD before) and new, alternately, same bench client, 300 followers one process / 1,000 through Redis:
* one process: 106 / 66 µs server CPU per frame, then 76 / 63; p99 564 / 315 ms, then 419 / 286 ms; 5.8 / 7.4,
  then 7.6 / 8.7 states/s reached (load 13-14).
* Redis, 1,000: 100 / 112 µs per frame (the new run reached 1.9 states/s: fixed costs over fewer frames), then
  111 / 68 µs; p99 1353 / 1596 ms, then 1544 / 1172 ms; 3.0 / 1.9, then 1.7 / 2.9 states/s (load 14-15).
* earlier at load 8: one process 87 / 54 µs per frame, p99 451 / 229 ms, 6.8 / 10.0 states/s; Redis (old only)
  149 µs, p99 1353 ms.
* 05:03-05:06, the load falling to 2-5 (the quietest minutes): one process, old / new: 103 / 65 µs per frame,
  p50 36.4 / 33.5 ms, p99 102 / 145 ms (max 198 / 414; the load rose 2 -> 4 during the new run, its client's loop
  p99 late 22 / 50 ms), 10.0 / 10.0 states/s. Redis, 1,000: 115 / 82 µs per frame, p50 224 / 72 ms, p99 794 / 212 ms
  (target 250), max 1205 / 333 ms, 5.2 / 10.0 states/s reached, presenter POST p50 170 / 31 ms, p99 583 / 200 ms.
Before these minutes the targets were not reachable (the servers got ~20% of a core each); at 10 states/s the
bench needs ~0.65 core (one process, 300) and ~1.3 cores (Redis, 1,000: ~0.6 server, ~0.6 client) of the two.
The followers run in this process (one raw connection each), so the machine's cores are shared by the
clients and the servers: latencies include that; the report gives the load average beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import orjson
from _harness import free_port, host_port, pct, request, start_server

ROOT = Path(__file__).resolve().parent.parent


def cpu_split(pid: int) -> tuple[float, float]:
    """CPU seconds process ``pid`` used so far: (user, system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / os.sysconf("SC_CLK_TCK"), int(fields[12]) / os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` used so far."""
    return sum(cpu_split(pid))


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def slope_mb_per_min(samples: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB) samples, in MB per minute."""
    if len(samples) < 2:
        return float("nan")
    n = len(samples)
    mt, mm = sum(t for t, _ in samples) / n, sum(m for _, m in samples) / n
    var = sum((t - mt) ** 2 for t, _ in samples)
    return 60 * sum((t - mt) * (m - mm) for t, m in samples) / var if var else float("nan")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def join(url, code) -> str:
    """A follower token (POST …/join): the stream and answers take only tokens the server gave."""
    for attempt in range(5):
        status, _, body = await request(url, "POST", f"/api/sessions/{code}/join", b"")
        if status == 200:
            return orjson.loads(body)["follower"]
        await asyncio.sleep(0.5 * (attempt + 1))
    raise RuntimeError(f"join refused: {status} {body[:200]!r}")


async def load_run(url, code, run_id, loads: list, asked: float) -> None:
    """What a follower's page does with a new run id: load the teacher's answer (never run the program)."""
    sent = time.time()
    status, headers, body = await request(url, "GET", f"/api/sessions/{code}/runs/{run_id}",
                                          headers={"Accept-Encoding": "gzip"})
    if status != 200:
        print(f"  a follower could not load the shared run: {status}")
        return
    done = time.time()
    answer = gzip.decompress(body) if headers.get("content-encoding") == "gzip" else body
    if b'"passes"' not in answer:
        print("  a follower loaded something that is not a run's answer")
        return
    loads.append((done - asked, len(body), done - sent))


class FollowerStream(asyncio.Protocol):
    """One follower's event stream, parsed as bytes arrive (chunked HTTP, then SSE frames), in the transport's
    callback: no task wakes per frame on the client (1,000 StreamReader tasks took a third of the CPU the
    whole benchmark used, on the cores the servers measured share)."""

    def __init__(self, request_head: bytes, on_event, opened: asyncio.Future):
        self.request_head, self.on_event, self.opened = request_head, on_event, opened
        self.raw = b""  # bytes not parsed yet (the head, then the chunked body)
        self.events = b""  # the SSE text of whole chunks, not yet split into frames
        self.head_done = False
        self.closed = asyncio.get_running_loop().create_future()

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.request_head)

    def data_received(self, data: bytes) -> None:
        self.raw += data
        if not self.head_done:
            end = self.raw.find(b"\r\n\r\n")
            if end < 0:
                return
            status = int(self.raw[:end].split(b" ", 2)[1])
            if b"transfer-encoding: chunked" not in self.raw[:end].lower() or status != 200:
                if not self.opened.done():
                    self.opened.set_exception(RuntimeError(f"stream refused: {status}"))
                self.transport.close()
                return
            self.head_done = True
            self.raw = self.raw[end + 4:]
            self.opened.set_result(True)
        raw, pos = self.raw, 0
        while True:  # whole chunks: "<hex size>\r\n<bytes>\r\n"
            eol = raw.find(b"\r\n", pos)
            if eol < 0:
                break
            size = int(raw[pos:eol].split(b";")[0], 16)
            if len(raw) < eol + 2 + size + 2:
                break
            self.events += raw[eol + 2: eol + 2 + size]
            pos = eol + 2 + size + 2
        self.raw = raw[pos:]
        if b"\n\n" not in self.events:
            return
        *frames, self.events = self.events.split(b"\n\n")
        now = time.time()
        for frame in frames:
            for line in frame.split(b"\n"):
                if line.startswith(b"data:"):
                    self.on_event(orjson.loads(line[5:]), now)

    def connection_lost(self, exc) -> None:
        if not self.opened.done():
            self.opened.set_exception(RuntimeError("stream closed before its head"))
        if not self.closed.done():
            self.closed.set_result(None)


async def follower(url, code, name, received: list, ready: asyncio.Event, counter: list, questions: dict,
                   loads: list, connected: list):
    token = await join(url, code)
    loaded, pending = None, set()
    host, port = host_port(url)

    def on_event(ev: dict, now: float) -> None:
        nonlocal loaded
        state, q = ev["state"], ev["question"]
        received.append((ev["seq"], now - state.get("t", now), state.get("i")))
        if q is not None and (q["id"], q["status"]) not in questions.setdefault(name, {}):
            questions[name][(q["id"], q["status"])] = now
        if state.get("run") and state["run"] != loaded:
            loaded = state["run"]
            task = asyncio.create_task(load_run(url, code, loaded, loads, now))
            pending.add(task)
            task.add_done_callback(pending.discard)
        if len(received) == 1:  # the latest state arrived: this follower is listening
            counter[0] += 1
            if counter[0] == counter[1]:
                ready.set()

    head = (f"GET /api/sessions/{code}/events?follower={token} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Accept: text/event-stream\r\n\r\n").encode()
    loop = asyncio.get_running_loop()
    opened = loop.create_future()
    transport, stream = await loop.create_connection(lambda: FollowerStream(head, on_event, opened), host, port)
    try:
        await opened
        connected[0] += 1
        await stream.closed
    finally:
        transport.close()


async def loop_lag(lags: list, every: float = 0.01) -> None:
    """How late this process's event loop wakes a 10 ms timer: a busy client would delay every frame it times."""
    while True:
        before = time.monotonic()
        await asyncio.sleep(every)
        lags.append(time.monotonic() - before - every)


async def runs_done(client, urls) -> int:
    """Programs the servers ran so far (their pools' counters): a follower-side run would show here."""
    total = 0
    for url in urls:
        total += (await client.get(url + "/healthz")).json()["pool"]["completed"]
    return total


PROGRAM = (ROOT / "examples" / "01_square_of_sum.py").read_text()
TYPED = "\n# the teacher types a comment while explaining; nothing runs until Run is pressed. " * 4


async def fanout(urls, followers: int, rate: float, seconds: float, procs, answering: int) -> dict:
    # the presenter (a few requests a second) on httpx; every follower on its own raw connection (request())
    async with httpx.AsyncClient(timeout=None) as client:
        d = (await client.post(urls[0] + "/api/sessions")).json()
        code, headers = d["code"], {"Authorization": "Bearer " + d["presenter_token"]}
        shared = (await client.post(f"{urls[0]}/api/sessions/{code}/run", json={"source": PROGRAM, "values": "summary"},
                                    headers=headers)).json()["run"]
        base = {"program": PROGRAM, "run": shared, "pass": 0, "node": None, "playing": False, "speed": 1}
        await client.post(f"{urls[0]}/api/sessions/{code}/state", json={**base, "t": time.time(), "i": -1, "step": 0},
                          headers=headers)
        got = [[] for _ in range(followers)]
        questions: dict = {}
        loads: list = []
        ready, counter, connected = asyncio.Event(), [0, followers], [0]

        async def beat():  # the presenter's page beats while open: its followers never see it "away"
            while True:
                await asyncio.sleep(5)
                await client.post(f"{urls[0]}/api/sessions/{code}/presence", headers=headers)

        beating = asyncio.create_task(beat())
        joining = time.monotonic()
        tasks = [asyncio.create_task(follower(urls[i % len(urls)], code, f"f{i}", got[i], ready, counter, questions,
                                              loads, connected)) for i in range(followers)]
        try:
            await asyncio.wait_for(ready.wait(), 120)
        except TimeoutError:
            failed = [t.exception() for t in tasks if t.done() and not t.cancelled() and t.exception()]
            raise SystemExit(f"only {counter[0]}/{followers} followers got their first state within 120 s "
                             f"({connected[0]} streams open, {len(failed)} failed: {failed[:3]}); load {load_average()}") from None
        join_s = time.monotonic() - joining
        await asyncio.sleep(1.0)
        started = time.monotonic()
        memory = [(0.0, [rss_mb(p.pid) for p in procs])]
        runs_before = await runs_done(client, urls)
        tokens = [await join(urls[i % len(urls)], code) for i in range(answering)]
        posts = int(seconds * rate)
        ask_at, reveal_at = posts // 3, 2 * posts // 3
        opened = revealed = None
        answer_tasks = []
        post_s = []  # each presenter POST …/state, sent to answered: what caps the states a second it reaches
        received_before = sum(len(g) for g in got)
        cpu_before, client_before = [cpu_s(p.pid) for p in procs], time.process_time()
        system_before = sum(cpu_split(p.pid)[1] for p in procs)
        lags: list = []
        lagging = asyncio.create_task(loop_lag(lags))
        asking = None
        t0 = time.monotonic()
        last_sample = t0
        for i in range(posts):
            target = t0 + i / rate
            if i > reveal_at and time.monotonic() - t0 >= seconds:  # a loaded machine: the run lasts its time, not
                posts = i                                             # its count (the memory run's ten minutes)
                break
            if time.monotonic() - t0 >= seconds / 3 and ask_at > i:  # the question's round by the clock as well
                ask_at = i
            if time.monotonic() - t0 >= 2 * seconds / 3 and reveal_at > i and i > ask_at:
                reveal_at = i
            await asyncio.sleep(max(0, target - time.monotonic()))
            url = urls[i % len(urls)]
            # stepping while typing: every state carries the draft (text only, never run by anyone)
            draft = PROGRAM + TYPED[: (i * 3) % len(TYPED)]
            sent = time.monotonic()
            await client.post(f"{url}/api/sessions/{code}/state",
                              json={**base, "draft": draft, "t": time.time(), "i": i, "step": i % 10}, headers=headers)
            post_s.append(time.monotonic() - sent)
            if i == ask_at:  # the page sends its question beside the stepping, not between two steps
                opened = time.time()
                asking = asyncio.create_task(open_question(client, url, code, headers, answering, tokens, urls,
                                                           answer_tasks))
            if i == reveal_at:
                revealed = time.time()
                reveal_task = asyncio.create_task(reveal_question(client, url, code, headers, asking))
            if time.monotonic() - last_sample > 10:
                last_sample = time.monotonic()
                memory.append((last_sample - started, [rss_mb(p.pid) for p in procs]))
        posting_s = time.monotonic() - t0  # the rate reached: states over the time they took to send
        await reveal_task
        await asyncio.sleep(1.0)  # the last states arrive
        lagging.cancel()
        stepping_s = time.monotonic() - t0
        system_used = sum(cpu_split(p.pid)[1] for p in procs) - system_before
        cpu_used = sum(cpu_s(p.pid) for p in procs) - sum(cpu_before)
        client_cpu = time.process_time() - client_before
        delivered = sum(len(g) for g in got) - received_before
        answered = sum(await asyncio.gather(*answer_tasks))
        await asyncio.sleep(0.5)
        runs_typing = await runs_done(client, urls) - runs_before
        # Run: the server runs the program once for the class; every follower loads the answer
        loads.clear()
        cpu_before_loads = sum(cpu_s(p.pid) for p in procs)
        ran = PROGRAM.replace("3.0", "4.0")
        shared = (await client.post(f"{urls[0]}/api/sessions/{code}/run", json={"source": ran, "values": "summary"},
                                    headers=headers)).json()["run"]
        await client.post(f"{urls[0]}/api/sessions/{code}/state",
                          json={**base, "program": ran, "run": shared, "t": time.time(), "i": posts, "step": 0},
                          headers=headers)
        deadline = time.monotonic() + 60
        while len(loads) < followers and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        load_cpu = sum(cpu_s(p.pid) for p in procs) - cpu_before_loads  # the run itself is in the pool's worker
        runs_for_run = await runs_done(client, urls) - runs_before - runs_typing
        await asyncio.sleep(1.0)
        memory.append((time.monotonic() - started, [rss_mb(p.pid) for p in procs]))
        last_seq = (await client.get(f"{urls[0]}/api/sessions/{code}")).json()["seq"]
        for t in [*tasks, beating]:
            t.cancel()
        await asyncio.gather(*tasks, beating, return_exceptions=True)
    in_order = all([s for s, _, _ in g] == sorted(set(s for s, _, _ in g)) for g in got)
    # every frame from the latest at joining (the first) on, none missing
    complete = all(g and g[-1][0] == last_seq and len(g) == last_seq - g[0][0] + 1 for g in got)
    lost = [(i, sorted(set(range(g[0][0], last_seq + 1)) - {s for s, _, _ in g})[:5]) for i, g in enumerate(got)
            if g and len(g) != last_seq - g[0][0] + 1]
    if lost:
        print(f"  followers missing states: {len(lost)}; e.g. {lost[:3]}")
    # a state's delay, counted once per state (question frames repeat the last state: timed on their own below)
    delays = []
    for g in got:
        seen = set()
        for _, d, i in g[1:]:
            if i is not None and i >= 0 and i not in seen:
                seen.add(i)
                delays.append(d)
    asked = [t - opened for per in questions.values() for (qid, status), t in per.items() if status == "open"]
    shown = [t - revealed for per in questions.values() for (qid, status), t in per.items() if status == "revealed"]
    return {"states": posts, "in_order": in_order, "complete": complete, "p50": pct(delays, 50) * 1000,
            "p99": pct(delays, 99) * 1000, "max": max(delays) * 1000, "memory": memory, "join_s": join_s,
            "question_p99": pct(asked, 99) * 1000, "reveal_p99": pct(shown, 99) * 1000, "asked": len(asked),
            "revealed": len(shown), "answered": answered, "runs_typing": runs_typing, "runs_for_run": runs_for_run,
            "loads": len(loads), "load_p50": pct([t for t, _, _ in loads], 50) * 1000,
            "load_p99": pct([t for t, _, _ in loads], 99) * 1000, "load_bytes": loads[0][1] if loads else 0,
            "request_p99": pct([t for _, _, t in loads], 99) * 1000, "delivered": delivered,
            "post_p50": pct(post_s, 50) * 1000, "post_p99": pct(post_s, 99) * 1000,
            "cpu_s": cpu_used, "client_cpu_s": client_cpu, "stepping_s": stepping_s, "load_cpu_s": load_cpu,
            "posting_s": posting_s, "system_s": system_used, "lag_p50": pct(lags, 50) * 1000,
            "lag_p99": pct(lags, 99) * 1000}


async def open_question(client, url, code, headers, answering: int, tokens, urls, answer_tasks: list) -> dict:
    q = (await client.post(f"{url}/api/sessions/{code}/questions", json={"node": "t1", "answer": 10, "label": "∂L/∂x"},
                           headers=headers)).json()
    for k in range(answering):  # the class answers over the next second, stepping goes on
        answer_tasks.append(asyncio.create_task(answer_later(urls[k % len(urls)], code, q["id"], tokens[k],
                                                             9 + k % 3, k / answering)))
    return q


async def reveal_question(client, url, code, headers, asking: asyncio.Task) -> None:
    q = await asking
    await client.post(f"{url}/api/sessions/{code}/questions/{q['id']}/reveal", headers=headers)


async def answer_later(url, code, qid, token, value, after: float) -> int:
    await asyncio.sleep(after)
    status, _, _ = await request(url, "POST", f"/api/sessions/{code}/questions/{qid}/answers",
                                 orjson.dumps({"follower": token, "value": value}))
    return int(status == 200)


async def question_round(urls, answering: int) -> dict:
    async with httpx.AsyncClient(timeout=None) as client:
        d = (await client.post(urls[0] + "/api/sessions")).json()
        code, headers = d["code"], {"Authorization": "Bearer " + d["presenter_token"]}
        q = (await client.post(f"{urls[0]}/api/sessions/{code}/questions", json={"node": "n1", "answer": 10},
                               headers=headers)).json()
        seen: list[tuple[float, int]] = []
        opened = asyncio.Event()

        async def tally():
            async with client.stream("GET", f"{urls[0]}/api/sessions/{code}/tally", headers=headers) as r:
                opened.set()
                async for line in r.aiter_lines():
                    if line.startswith("data:"):
                        seen.append((time.monotonic(), json.loads(line[5:])["count"]))

        task = asyncio.create_task(tally())
        await opened.wait()
        await asyncio.sleep(0.3)

        async def answer(i):
            await asyncio.sleep(i / answering)  # spread over one second
            sent = time.monotonic()
            await client.post(f"{urls[i % len(urls)]}/api/sessions/{code}/questions/{q['id']}/answers",
                              json={"follower": tokens[i], "value": 9 + i % 3})
            return sent

        tokens = [await join(urls[i % len(urls)], code) for i in range(answering)]
        done = await asyncio.gather(*(answer(i) for i in range(answering)))
        deadline = time.monotonic() + 5
        while not (seen and seen[-1][1] == answering) and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    counted = seen[-1][1] if seen else 0
    lag = (seen[-1][0] - max(done)) * 1000 if counted == answering else float("nan")
    return {"answers": answering, "counted": counted, "histogram_lag_ms": lag}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", action="store_true", help="two server processes sharing sessions through Redis")
    ap.add_argument("--followers", type=int, default=300)
    ap.add_argument("--rate", type=float, default=10.0, help="presenter states a second")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--minutes", type=float, default=None, help="the memory run: step this many minutes "
                                                                 "(overrides --seconds), RSS sampled every 10 s")
    ap.add_argument("--answers", type=int, default=30)
    args = ap.parse_args()
    seconds = 60 * args.minutes if args.minutes else args.seconds
    procs, redis = [], None
    # every simulated student is this one client (one identity): its per-identity shares are lifted; the
    # processes share one identity_secret so a token from one is good on the other
    many = str(10 * max(500, args.followers))
    env = {"FLOWGRAD_MAX_FOLLOWERS": str(max(500, args.followers)), "FLOWGRAD_MAX_FOLLOWERS_PER_IDENTITY": many,
           "FLOWGRAD_MAX_STREAMS_PER_IDENTITY": many, "FLOWGRAD_IDENTITY_SECRET": secrets.token_hex(32)}
    try:
        if args.redis:
            if shutil.which("redis-server") is None:
                raise SystemExit("redis-server is not installed (apt install redis-server)")
            port = free_port()
            redis = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
                                     stdout=subprocess.DEVNULL)
            time.sleep(0.5)
            env["FLOWGRAD_BROKER_URL"] = f"redis://127.0.0.1:{port}/0"
        started = [start_server({"FLOWGRAD_WORKERS": "1", **env}, log="/tmp/bench-classroom-{port}.log")
                   for _ in range(2 if args.redis else 1)]
        procs, urls = [p for p, _ in started], [u for _, u in started]
        where = "two processes through Redis" if args.redis else "one process, in memory"
        target = 250 if args.redis else 150
        print(f"class sessions — {where}; {args.followers} followers, {args.rate:g} states/s for {seconds:g} s; "
              f"load average {load_average()}")
        f = asyncio.run(fanout(urls, args.followers, args.rate, seconds, procs, args.answers))
        print(f"  {args.followers} followers joined and got their first state in {f['join_s']:.1f} s")
        print(f"  delivery: {f['states']} states to each follower ({f['states'] / f['posting_s']:.1f} states/s "
              f"reached); in order: {f['in_order']}; none lost: {f['complete']}; the presenter's POST …/state "
              f"p50 {f['post_p50']:.1f} ms, p99 {f['post_p99']:.1f} ms")
        print(f"  question round while stepping: {f['asked']}/{args.followers} got the question (p99 "
              f"{f['question_p99']:.1f} ms), {f['answered']}/{args.answers} answers taken, {f['revealed']} got the "
              f"reveal (p99 {f['reveal_p99']:.1f} ms)")
        print(f"  runs while the teacher typed and stepped: {f['runs_typing']} (target 0); runs for the class's Run: "
              f"{f['runs_for_run']} (target 1); {f['loads']}/{args.followers} followers loaded the shared run "
              f"({f['load_bytes']} bytes gzip) p50 {f['load_p50']:.1f} ms, p99 {f['load_p99']:.1f} ms after the state "
              f"came (the request itself p99 {f['request_p99']:.1f} ms); server CPU "
              f"{1000 * f['load_cpu_s'] / max(1, f['loads']):.2f} ms per load (with its connection)")
        print(f"  delivery latency: p50 {f['p50']:.1f} ms, p99 {f['p99']:.1f} ms (target <= {target} ms), "
              f"max {f['max']:.1f} ms; ratio p99/target {f['p99'] / target:.2f}; load average {load_average()}")
        per_state = 1e6 * f["cpu_s"] / max(1, f["delivered"])
        print(f"  server CPU while stepping: {f['cpu_s']:.2f} s for {f['delivered']} delivered frames = "
              f"{per_state:.0f} µs per delivered frame ({100 * f['cpu_s'] / f['stepping_s']:.0f}% of a core; system "
              f"{100 * f['system_s'] / max(f['cpu_s'], 1e-9):.0f}% of it); the followers' client "
              f"{f['client_cpu_s']:.2f} s ({1e6 * f['client_cpu_s'] / max(1, f['delivered']):.0f} µs per frame), its "
              f"loop late p50 {f['lag_p50']:.1f} ms, p99 {f['lag_p99']:.1f} ms")
        first, last = f["memory"][0][1], f["memory"][-1][1]
        slopes = [slope_mb_per_min([(t, m[k]) for t, m in f["memory"] if t >= 60 or seconds < 120])
                  for k in range(len(procs))]
        print("  server RSS: " + ", ".join(f"{a:.1f} → {b:.1f} MB (slope {s:+.2f} MB/min)"
                                           for a, b, s in zip(first, last, slopes))
              + f" over {len(f['memory'])} samples (max {max(max(m) for _, m in f['memory']):.1f} MB)")
        if seconds >= 120:  # the memory run: each process's RSS at every minute
            for minute in range(int(f["memory"][-1][0] // 60) + 1):
                t, m = min(f["memory"], key=lambda sample: abs(sample[0] - 60 * minute))
                print(f"    minute {minute:2d} ({t:5.0f} s): " + ", ".join(f"{x:.1f} MB" for x in m))
        q = asyncio.run(question_round(urls, args.answers))
        print(f"  question: {q['counted']}/{q['answers']} answers counted; histogram updated "
              f"{q['histogram_lag_ms']:.1f} ms after the last answer (target <= 200 ms)")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(10)
        if redis is not None:
            redis.terminate()
            redis.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
