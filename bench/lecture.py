"""A lecture hall pressing Run at once (issue 25): 200 students, one server process, its own worker pool.

    .venv/bin/python bench/lecture.py                 # starts its own server on a free port
    .venv/bin/python bench/lecture.py --url http://127.0.0.1:8000 --students 100

Each student is a client of its own (the server's identity cookie, taken from a first page load, as a browser
does), posts the program to /api/run once, and counts as an error whatever is not a 200 answer without a
server-side error (a 429 is an error: the page shows it, it does not retry). Two rounds:

* ``same``: everyone runs the same tutorial program (a 2-16-1 MLP, 20 SGD steps). Target p99 <= 1 s.
* ``different``: everyone runs the same program with a learning rate of their own (200 different programs).
  Targets p50 <= 3 s, p99 <= 6 s, 0 errors.
* ``different, streamed``: the same, through ``POST /api/stream`` as the page runs a program (the events of each
  run until its ``done``). No target of its own; it shows what the page's path costs beside ``/api/run``.

Latency is from the request to the whole answer. Figures go to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import zlib
from pathlib import Path

import httpx
import orjson
from _harness import pct, request, start_server, stop_server

ROOT = Path(__file__).resolve().parent.parent

MLP = ("import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
       "model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))\n"
       "opt = torch.optim.SGD(model.parameters(), lr={lr})\n"
       "x = torch.randn(32, 2)\ny = (x[:, :1] * x[:, 1:]).tanh()\n"
       "for step in range(20):\n    opt.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n"
       "    loss.backward()\n    opt.step()\nprint(f'loss {{loss.item():.4f}}')\n")


class Student:
    """One browser: its identity cookie from a first page load, then runs posted over HTTP/1.1 on raw sockets
    (an httpx pool with 200 connections busy spends seconds per answer on the client, on the same 2 cores)."""

    def __init__(self, url: str):
        self.url, self.cookie = url, ""

    async def arrive(self) -> None:
        _, headers, _ = await request(self.url, "GET", "/healthz")
        self.cookie = headers.get("set-cookie", "").split(";")[0]

    async def run(self, source: str, stream: bool = False) -> tuple[float, str | None]:
        """Seconds to the whole answer (``stream``: to the stream's end), and what went wrong (None: a 200 answer
        without a server-side error)."""
        t0 = time.perf_counter()
        path, body = ("/api/stream", {"source": source, "values": "summary"}) if stream else ("/api/run", {"source": source})
        try:
            status, headers, body = await request(self.url, "POST", path, orjson.dumps(body),
                                                  {"Cookie": self.cookie, "Accept-Encoding": "gzip",
                                                   "Accept": "text/event-stream"})
        except OSError as e:
            return time.perf_counter() - t0, type(e).__name__
        took = time.perf_counter() - t0
        if status != 200:
            return took, f"HTTP {status}"
        if stream:  # the last event is `done`, carrying the run's error
            if headers.get("content-encoding") == "gzip":
                body = zlib.decompressobj(wbits=31).decompress(body)
            error = orjson.loads(body.rstrip().rpartition(b"\ndata: ")[2]).get("error")
            return took, None if error is None else str(error.get("type"))
        if headers.get("content-encoding") == "gzip":  # the answer's head says its error: read only that
            body = zlib.decompressobj(wbits=31).decompress(body, 1 << 16)
        head = body[:body.index(b',"variables"')] + b"}" if b',"variables"' in body else body
        error = orjson.loads(head).get("error")
        return took, None if error is None else str(error.get("type"))


def summary(results: list[tuple[float, str | None]]) -> dict:
    times = [t for t, _ in results]
    errors: dict[str, int] = {}
    for _, e in results:
        if e is not None:
            errors[e] = errors.get(e, 0) + 1
    return {"runs": len(results), "p50_s": round(pct(times, 50), 3), "p99_s": round(pct(times, 99), 3),
            "max_s": round(max(times), 3), "errors": errors}


async def hall(url: str, n: int) -> None:
    # NOTE: the same students (cookies) in every round: new clients from one address past identities_per_address
    # would count as that address, one identity, and be refused as one client sending many runs
    clients = [Student(url) for _ in range(n + 1)]
    students, greedy = clients[:n], clients[n]
    await asyncio.gather(*(c.arrive() for c in clients))  # the identity cookie, as a page load gives it
    same = await asyncio.gather(*(c.run(MLP.format(lr=0.1)) for c in students))
    print("same program      ", summary(same), "  target p99 <= 1 s")
    t0 = time.perf_counter()
    different = await asyncio.gather(*(c.run(MLP.format(lr=round(0.01 + 0.001 * i, 3)))
                                       for i, c in enumerate(students)))
    print("different programs", summary(different), f"wall {time.perf_counter() - t0:.2f} s",
          "  targets p50 <= 3 s, p99 <= 6 s, 0 errors")
    t0 = time.perf_counter()
    streamed = await asyncio.gather(*(c.run(MLP.format(lr=round(0.3 + 0.001 * i, 3)), stream=True)
                                      for i, c in enumerate(students)))
    print("different, streamed", summary(streamed), f"wall {time.perf_counter() - t0:.2f} s",
          "  (the page's path; no target of its own)")
    # one client sending 20 runs at once among 20 students doing one each: it may keep one running and
    # identity_queue_limit waiting, the rest answered 429 at once
    rivals = [c.run(MLP.format(lr=round(0.5 + 0.001 * i, 3))) for i, c in enumerate(students[:20])]
    greedy_runs = [greedy.run(MLP.format(lr=round(0.7 + 0.001 * i, 3))) for i in range(20)]
    results = await asyncio.gather(*rivals, *greedy_runs)
    served = sum(1 for _, e in results[20:] if e is None)
    print("fair share        ", {"students": summary(results[:20]), "greedy_served": served,
                                 "greedy_refused": 20 - served},
          "  target: the greedy client served no more than its share (1 running + its queue)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="a running server (else one is started)")
    parser.add_argument("--students", type=int, default=200)
    args = parser.parse_args()
    proc = None
    url = args.url
    if url is None:
        proc, url = start_server()
    try:
        health = httpx.get(url + "/healthz").json()
        print(f"server: {health['pool']['size']} workers, {os.cpu_count()} cores")
        asyncio.run(hall(url, args.students))
        print("pool after:", httpx.get(url + "/healthz").json()["pool"])
    finally:
        if proc is not None:
            stop_server(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
