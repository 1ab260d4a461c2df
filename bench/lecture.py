"""A lecture hall pressing Run at once (issue 25): 200 students, one server process, its own worker pool.

    .venv/bin/python bench/lecture.py                 # starts its own server on a free port
    .venv/bin/python bench/lecture.py --url http://127.0.0.1:8000 --students 100

Each student is a client of its own (the server's identity cookie, taken from a first page load, as a browser
does), posts the program to /api/run once, and counts as an error whatever is not a 200 answer without a
server-side error (a 429 is an error: the page shows it, it does not retry). Two rounds:

* ``same``: everyone runs the same tutorial program (a 2-16-1 MLP, 20 SGD steps). Target p99 <= 1 s.
* ``different``: everyone runs the same program with a learning rate of their own (200 different programs).
  Targets p50 <= 3 s, p99 <= 6 s, 0 errors.

Latency is from the request to the whole answer. Figures go to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent

MLP = ("import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
       "model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))\n"
       "opt = torch.optim.SGD(model.parameters(), lr={lr})\n"
       "x = torch.randn(32, 2)\ny = (x[:, :1] * x[:, 1:]).tanh()\n"
       "for step in range(20):\n    opt.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n"
       "    loss.backward()\n    opt.step()\nprint(f'loss {{loss.item():.4f}}')\n")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, max(0, int(round(p / 100 * (len(xs) - 1)))))]


def start_server(extra_env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "FLOWGRAD_PORT": str(port), **extra_env}
    proc = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/readyz", timeout=3).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not become ready")


async def student(url: str, source: str, start: asyncio.Event) -> tuple[float, str | None]:
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        await client.get("/healthz")  # the identity cookie, as a page load gives it
        await start.wait()
        t0 = time.perf_counter()
        try:
            r = await client.post("/api/run", json={"source": source})
        except httpx.HTTPError as e:
            return time.perf_counter() - t0, type(e).__name__
        took = time.perf_counter() - t0
        if r.status_code != 200:
            return took, f"HTTP {r.status_code}"
        error = orjson.loads(r.content).get("error")
        return took, None if error is None else str(error.get("type"))


async def hall(url: str, sources: list[str]) -> dict:
    start = asyncio.Event()
    tasks = [asyncio.create_task(student(url, s, start)) for s in sources]
    await asyncio.sleep(1.0)  # every student has its cookie and waits at the start line
    t0 = time.perf_counter()
    start.set()
    results = await asyncio.gather(*tasks)
    wall = time.perf_counter() - t0
    times = [t for t, _ in results]
    errors: dict[str, int] = {}
    for _, e in results:
        if e is not None:
            errors[e] = errors.get(e, 0) + 1
    return {"students": len(sources), "p50_s": round(pct(times, 50), 3), "p99_s": round(pct(times, 99), 3),
            "max_s": round(max(times), 3), "wall_s": round(wall, 2), "errors": errors}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="a running server (else one is started)")
    parser.add_argument("--students", type=int, default=200)
    args = parser.parse_args()
    proc = None
    url = args.url
    if url is None:
        proc, url = start_server({})
    try:
        health = httpx.get(url + "/healthz").json()
        print(f"server: {health['pool']['size']} workers, {os.cpu_count()} cores")
        n = args.students
        same = asyncio.run(hall(url, [MLP.format(lr=0.1)] * n))
        print("same program      ", same, "  target p99 <= 1 s")
        different = asyncio.run(hall(url, [MLP.format(lr=round(0.01 + 0.001 * i, 3)) for i in range(n)]))
        print("different programs", different, "  targets p50 <= 3 s, p99 <= 6 s, 0 errors")
        print("pool after:", httpx.get(url + "/healthz").json()["pool"])
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
