"""Abuse benchmark (issue 22): one client runs the worst holes while a well-behaved student measures.

    .venv/bin/python bench/abuse.py                 # starts its own server (2 workers) on a free port
    .venv/bin/python bench/abuse.py --url http://127.0.0.1:8000 --seconds 40
    .venv/bin/python bench/abuse.py --root /tmp/old-checkout     # the same load against another checkout

The abuser, in a loop (``--abusers`` concurrent connections, 1 by default: one client): the big fold
(``sum([x] * 24000)``: 48,000 trace events folded into one pass with thousands of groups) and the export
of a folded run (``POST /api/export/html``: every group's payload inlined). The student, meanwhile,
posts ``print(1)`` once a second and polls ``/healthz`` every 100 ms.

Targets (issue 22): the student's small run <= 1 s p99, ``/healthz`` <= 200 ms p99, no worker replaced; the
server's RSS (its process tree: server, workers, run processes) is printed at the start and the end.
This is a benchmark, not a test: it prints figures and asserts nothing.
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

ROOT = Path(__file__).resolve().parent.parent

BIG_FOLD = "import torch\nx = torch.ones(1)\ns = sum([x] * 24000)\n"
FOLDED_EXPORT = ("import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x\nfor i in range(3000):\n"
                 "    y = y * 1.0001\ny.backward()\nprint(x.grad)\n")
SMALL = "print(1)\n"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, max(0, round(p / 100 * (len(xs) - 1))))]


def tree_rss_mb(pid: int) -> float:
    """Resident MB of ``pid`` and every process below it (/proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(d))
        rss[int(d)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack.extend(children.get(p, ()))
    return total / 1e6


def start_server(workers: int, root: Path = ROOT) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "FLOWGRAD_WORKERS": str(workers), "FLOWGRAD_PORT": str(port)}
    proc = subprocess.Popen([sys.executable, "-m", "app"], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(url + "/healthz", timeout=1).json()["pool"]["ready"] == workers:
                return proc, url
        except (httpx.HTTPError, KeyError, ValueError):
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("the server did not start")
        time.sleep(0.1)


async def abuser(client: httpx.AsyncClient, url: str, stop: float, name: str, counts: dict) -> None:
    while time.monotonic() < stop:
        for kind, path, body in (("fold", "/api/run", {"source": BIG_FOLD, "client_id": name}),
                                 ("export", "/api/export/html", {"source": FOLDED_EXPORT, "client_id": name})):
            try:
                r = await client.post(url + path, json=body, timeout=120)
                ok = r.status_code == 200
                text = r.text if path == "/api/run" else ""
                if "worker was replaced" in text or "stopped unexpectedly" in text:
                    counts["replaced_answers"] += 1
                counts[f"{kind}_{'ok' if ok else r.status_code}"] = counts.get(f"{kind}_{'ok' if ok else r.status_code}",
                                                                               0) + 1
            except httpx.HTTPError as e:
                counts[f"{kind}_{type(e).__name__}"] = counts.get(f"{kind}_{type(e).__name__}", 0) + 1
            if time.monotonic() >= stop:
                return


async def student(client: httpx.AsyncClient, url: str, stop: float, runs: list[float], errors: list[str]) -> None:
    while time.monotonic() < stop:
        t = time.monotonic()
        try:
            r = await client.post(url + "/api/run", json={"source": SMALL, "client_id": "student"}, timeout=60)
            if r.status_code != 200 or r.json().get("stdout") != "1\n":
                errors.append(f"{r.status_code} {r.text[:120]}")
        except httpx.HTTPError as e:
            errors.append(type(e).__name__)
        runs.append(time.monotonic() - t)
        await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - t)))


async def health(client: httpx.AsyncClient, url: str, stop: float, lat: list[float]) -> None:
    while time.monotonic() < stop:
        t = time.monotonic()
        try:
            await client.get(url + "/healthz", timeout=30)
        except httpx.HTTPError:
            pass
        lat.append(time.monotonic() - t)
        await asyncio.sleep(0.1)


async def main_async(url: str, seconds: float, server_pid: int | None, abusers: int) -> None:
    async with httpx.AsyncClient() as c:
        before = (await c.get(url + "/healthz")).json()["pool"]
    rss0 = tree_rss_mb(server_pid) if server_pid else float("nan")
    runs: list[float] = []
    hz: list[float] = []
    errors: list[str] = []
    counts: dict = {"replaced_answers": 0}
    rss_peak = [rss0]

    async def sample_rss(stop: float) -> None:
        while server_pid and time.monotonic() < stop:
            rss_peak[0] = max(rss_peak[0], tree_rss_mb(server_pid))
            await asyncio.sleep(0.5)

    stop = time.monotonic() + seconds
    async with httpx.AsyncClient() as bad, httpx.AsyncClient() as good, httpx.AsyncClient() as hc:
        await asyncio.gather(*(abuser(bad, url, stop, f"abuser-{k}", counts) for k in range(abusers)),
                             student(good, url, stop, runs, errors), health(hc, url, stop, hz), sample_rss(stop))
        after = (await hc.get(url + "/healthz")).json()["pool"]
    await asyncio.sleep(1.0)
    rss1 = tree_rss_mb(server_pid) if server_pid else float("nan")
    print(f"abuser requests: {dict(sorted(counts.items()))}")
    print(f"student print(1): n={len(runs)} p50={pct(runs, 50) * 1000:.0f} ms p99={pct(runs, 99) * 1000:.0f} ms "
          f"max={max(runs, default=0) * 1000:.0f} ms errors={len(errors)} {errors[:3]}")
    print(f"/healthz: n={len(hz)} p50={pct(hz, 50) * 1000:.0f} ms p99={pct(hz, 99) * 1000:.0f} ms "
          f"max={max(hz, default=0) * 1000:.0f} ms")
    print(f"worker restarts: {after['restarts'] - before['restarts']} (ready {after['ready']}/{after['size']})")
    print(f"server tree RSS: start {rss0:.0f} MB, peak {rss_peak[0]:.0f} MB, end {rss1:.0f} MB")
    ok = (pct(runs, 99) <= 1.0 and pct(hz, 99) <= 0.2 and after["restarts"] == before["restarts"] and not errors)
    print("targets (small run p99 <= 1 s, /healthz p99 <= 200 ms, no worker replaced):", "met" if ok else "MISSED")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url")
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--abusers", type=int, default=1, help="concurrent abusing connections (client ids)")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose server is started")
    args = ap.parse_args()
    proc = None
    url = args.url
    if url is None:
        proc, url = start_server(args.workers, args.root)
    try:
        asyncio.run(main_async(url, args.seconds, proc.pid if proc else None, args.abusers))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
