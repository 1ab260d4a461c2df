"""Class-session benchmark on real servers: fan-out delivery, a question round, memory over time.

    .venv/bin/python bench/classroom.py                 # one process, in memory
    .venv/bin/python bench/classroom.py --redis         # two processes sharing sessions through Redis
    .venv/bin/python bench/classroom.py --seconds 600   # the 10-minute memory run

Targets (issue 13): 200 followers on one session, the presenter posting 10 states a second: every
follower gets every state in order; delivery p99 <= 150 ms in one process, <= 250 ms across two
processes through Redis. 30 followers answering within the same second: all counted, the
presenter's histogram updated <= 200 ms after the last answer. Server memory flat over the run.
The followers run in this process (asyncio, one connection each), so the machine's 2 cores are
shared by the clients and the servers: the figures include that load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def start_server(env_extra: dict) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**__import__("os").environ, "FLOWGRAD_WORKERS": "1", "FLOWGRAD_PORT": str(port), **env_extra}
    log = open(f"/tmp/bench-classroom-{port}.log", "w")  # noqa: SIM115 - the server's lifetime
    proc = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("server did not start")
        time.sleep(0.2)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def join(client, url, code) -> str:
    """A follower token (POST …/join): the stream and answers take only tokens the server gave."""
    return (await client.post(f"{url}/api/sessions/{code}/join")).json()["follower"]


async def follower(client, url, code, name, received: list, ready: asyncio.Event, counter: list):
    token = await join(client, url, code)
    async with client.stream("GET", f"{url}/api/sessions/{code}/events?follower={token}") as r:
        async for line in r.aiter_lines():
            if line.startswith("data:"):
                now = time.time()
                ev = json.loads(line[5:])
                received.append((ev["seq"], now - ev["state"].get("t", now)))
                if len(received) == 1:  # the latest state arrived: this follower is listening
                    counter[0] += 1
                    if counter[0] == counter[1]:
                        ready.set()


async def fanout(urls, followers: int, rate: float, seconds: float, procs) -> dict:
    limits = httpx.Limits(max_connections=followers + 20, max_keepalive_connections=followers + 20)
    async with httpx.AsyncClient(timeout=None, limits=limits) as client:
        d = (await client.post(urls[0] + "/api/sessions")).json()
        code, headers = d["code"], {"Authorization": "Bearer " + d["presenter_token"]}
        await client.post(f"{urls[0]}/api/sessions/{code}/state", json={"t": time.time(), "i": -1}, headers=headers)
        got = [[] for _ in range(followers)]
        ready, counter = asyncio.Event(), [0, followers]
        tasks = [asyncio.create_task(follower(client, urls[i % len(urls)], code, f"f{i}", got[i], ready, counter))
                 for i in range(followers)]
        await asyncio.wait_for(ready.wait(), 60)
        await asyncio.sleep(1.0)
        memory = [[rss_mb(p.pid) for p in procs]]
        posts = int(seconds * rate)
        t0 = time.monotonic()
        last_sample = t0
        for i in range(posts):
            target = t0 + i / rate
            await asyncio.sleep(max(0, target - time.monotonic()))
            await client.post(f"{urls[i % len(urls)]}/api/sessions/{code}/state", json={"t": time.time(), "i": i},
                              headers=headers)
            if time.monotonic() - last_sample > 10:
                last_sample = time.monotonic()
                memory.append([rss_mb(p.pid) for p in procs])
        await asyncio.sleep(1.5)
        memory.append([rss_mb(p.pid) for p in procs])
        last_seq = (await client.get(f"{urls[0]}/api/sessions/{code}")).json()["seq"]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    in_order = all([s for s, _ in g] == sorted(set(s for s, _ in g)) for g in got)
    complete = all(g and g[-1][0] == last_seq and len(g) == last_seq for g in got)
    lost = [(i, sorted(set(range(1, last_seq + 1)) - {s for s, _ in g})[:5]) for i, g in enumerate(got)
            if len(g) != last_seq]
    if lost:
        print(f"  followers missing states: {len(lost)}; e.g. {lost[:3]}")
    delays = [d for g in got for s, d in g[1:]]
    return {"states": posts, "in_order": in_order, "complete": complete, "p50": pct(delays, 50) * 1000,
            "p99": pct(delays, 99) * 1000, "max": max(delays) * 1000, "memory": memory}


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

        tokens = [await join(client, urls[i % len(urls)], code) for i in range(answering)]
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
    ap.add_argument("--followers", type=int, default=200)
    ap.add_argument("--rate", type=float, default=10.0, help="presenter states a second")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--answers", type=int, default=30)
    args = ap.parse_args()
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
        started = [start_server(env) for _ in range(2 if args.redis else 1)]
        procs, urls = [p for p, _ in started], [u for _, u in started]
        where = "two processes through Redis" if args.redis else "one process, in memory"
        target = 250 if args.redis else 150
        print(f"class sessions — {where}; {args.followers} followers, {args.rate:g} states/s for {args.seconds:g} s")
        f = asyncio.run(fanout(urls, args.followers, args.rate, args.seconds, procs))
        print(f"  delivery: {f['states']} states to each follower; in order: {f['in_order']}; none lost: {f['complete']}")
        print(f"  delivery latency: p50 {f['p50']:.1f} ms, p99 {f['p99']:.1f} ms (target <= {target} ms), "
              f"max {f['max']:.1f} ms; ratio p99/target {f['p99'] / target:.2f}")
        first, last = f["memory"][0], f["memory"][-1]
        print("  server RSS: " + ", ".join(f"{a:.1f} → {b:.1f} MB" for a, b in zip(first, last))
              + f" over {len(f['memory'])} samples (max {max(max(m) for m in f['memory']):.1f} MB)")
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
