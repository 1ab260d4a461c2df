"""Abuse benchmark (issue 22): one client runs the worst holes while a well-behaved student measures.

    .venv/bin/python bench/abuse.py                 # starts its own server (2 workers) on a free port
    .venv/bin/python bench/abuse.py --url http://127.0.0.1:8000 --seconds 40
    .venv/bin/python bench/abuse.py --root /tmp/old-checkout     # the same load against another checkout

The abuser, in a loop (``--abusers`` concurrent connections, 1 by default: one client): the big fold
(``sum([x] * 24000)``: 48,000 trace events folded into one pass with thousands of groups) and the export
of a folded run (``POST /api/export/html``: every group's payload inlined). The student, meanwhile,
posts ``print(1)`` once a second and polls ``/healthz`` every 100 ms.

Targets (issue 22): the student's small run <= 1 s p99, ``/healthz`` <= 200 ms p99, no worker replaced; the
server's memory (its process tree: server, workers, run and payload processes; RSS summed and PSS) is printed
at the start, its peak, just after the load and ``--settle`` seconds later (it should come back down).
This is a benchmark, not a test: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

import httpx
from _harness import pct, start_server, stop_server

ROOT = Path(__file__).resolve().parent.parent

BIG_FOLD = "import torch\nx = torch.ones(1)\ns = sum([x] * 24000)\n"
FOLDED_EXPORT = ("import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x\nfor i in range(3000):\n"
                 "    y = y * 1.0001\ny.backward()\nprint(x.grad)\n")
SMALL = "print(1)\n"


def _pss(pid: int) -> int:
    """Proportional set size in bytes (pages shared by forks counted once over them), 0 when unknown."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_memory(pid: int) -> dict[str, float]:
    """MB of ``pid`` and every process below it (/proc): ``rss`` (the sum of resident sizes: a page shared by
    forks counts in each), ``pss`` (each page once), and the PSS of the server process alone, of the workers
    (its grandchildren, below the fork server) and of their children (run processes, payload processes, dot)."""
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
    out = {"rss": 0.0, "pss": 0.0, "server": 0.0, "workers": 0.0, "their children": 0.0}
    stack = [(pid, 0)]
    while stack:
        p, depth = stack.pop()
        pss = _pss(p)
        out["rss"] += rss.get(p, 0) / 1e6
        out["pss"] += pss / 1e6
        kind = {0: "server", 2: "workers"}.get(depth, "their children" if depth >= 3 else None)
        if kind:
            out[kind] += pss / 1e6
        stack.extend((c, depth + 1) for c in children.get(p, ()))
    return out


def show_memory(m: dict[str, float]) -> str:
    return (f"RSS sum {m['rss']:.0f} MB, PSS {m['pss']:.0f} MB (server {m['server']:.0f}, workers "
            f"{m['workers']:.0f}, their children {m['their children']:.0f})")


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


async def student(client: httpx.AsyncClient, url: str, stop: float, runs: list[float], errors: list[str],
                  slow: list[str]) -> None:
    while time.monotonic() < stop:
        t, wall = time.monotonic(), time.time()
        timing = None
        try:
            r = await client.post(url + "/api/run", json={"source": SMALL, "client_id": "student"}, timeout=60)
            if r.status_code != 200 or r.json().get("stdout") != "1\n":
                errors.append(f"{r.status_code} {r.text[:120]}")
            else:
                timing = {"elapsed_ms": r.json().get("elapsed_ms"), **(r.json().get("timing_ms") or {})}
        except httpx.HTTPError as e:
            errors.append(type(e).__name__)
        runs.append(time.monotonic() - t)
        if runs[-1] > 0.5:  # where a slow one spent its time: the worker's part is in the answer's timing
            slow.append(f"{time.strftime('%H:%M:%S', time.localtime(wall))}.{int(wall * 1000) % 1000:03d} "
                        f"{runs[-1] * 1000:.0f} ms, answer timing {timing}")
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


async def main_async(url: str, seconds: float, server_pid: int | None, abusers: int, settle: float) -> None:
    async with httpx.AsyncClient() as c:
        before = (await c.get(url + "/healthz")).json()["pool"]
    mem0 = tree_memory(server_pid) if server_pid else None
    runs: list[float] = []
    hz: list[float] = []
    errors: list[str] = []
    slow: list[str] = []
    counts: dict = {"replaced_answers": 0}
    peak: dict[str, float] = dict(mem0 or {})

    async def sample_memory(stop: float) -> None:
        while server_pid and time.monotonic() < stop:
            for k, v in tree_memory(server_pid).items():
                peak[k] = max(peak.get(k, 0.0), v)
            await asyncio.sleep(0.5)

    stop = time.monotonic() + seconds
    async with httpx.AsyncClient() as bad, httpx.AsyncClient() as good, httpx.AsyncClient() as hc:
        for c in (bad, good):  # each takes its identity cookie first, as a browser does when it loads the page
            await c.get(url + "/healthz")
        await asyncio.gather(*(abuser(bad, url, stop, f"abuser-{k}", counts) for k in range(abusers)),
                             student(good, url, stop, runs, errors, slow), health(hc, url, stop, hz), sample_memory(stop))
        after = (await hc.get(url + "/healthz")).json()["pool"]
    await asyncio.sleep(1.0)
    mem1 = tree_memory(server_pid) if server_pid else None
    await asyncio.sleep(settle)
    mem2 = tree_memory(server_pid) if server_pid else None
    print(f"abuser requests: {dict(sorted(counts.items()))}")
    print(f"student print(1): n={len(runs)} p50={pct(runs, 50) * 1000:.0f} ms p99={pct(runs, 99) * 1000:.0f} ms "
          f"max={max(runs, default=0) * 1000:.0f} ms errors={len(errors)} {errors[:3]}")
    for line in slow:
        print(f"  slow print(1) at {line}")
    print(f"/healthz: n={len(hz)} p50={pct(hz, 50) * 1000:.0f} ms p99={pct(hz, 99) * 1000:.0f} ms "
          f"max={max(hz, default=0) * 1000:.0f} ms")
    print(f"worker restarts: {after['restarts'] - before['restarts']} (ready {after['ready']}/{after['size']})")
    if mem0 and mem1 and mem2:
        print(f"server tree memory: start {show_memory(mem0)}")
        print(f"  peak (each figure's own peak) {show_memory(peak)}")
        print(f"  1 s after the abuser stopped {show_memory(mem1)}")
        print(f"  {settle:g} s later {show_memory(mem2)}")
    ok = (pct(runs, 99) <= 1.0 and pct(hz, 99) <= 0.2 and after["restarts"] == before["restarts"] and not errors)
    print("targets (small run p99 <= 1 s, /healthz p99 <= 200 ms, no worker replaced):", "met" if ok else "MISSED")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url")
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--abusers", type=int, default=1, help="concurrent abusing connections (client ids)")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose server is started")
    ap.add_argument("--settle", type=float, default=20.0, help="seconds after the load when memory is read again")
    ap.add_argument("--server-log", type=Path, help="where the started server's output goes (else nowhere)")
    args = ap.parse_args()
    proc = None
    url = args.url
    if url is None:
        proc, url = start_server({"FLOWGRAD_WORKERS": str(args.workers)}, root=args.root, log=args.server_log)
    try:
        asyncio.run(main_async(url, args.seconds, proc.pid if proc else None, args.abusers, args.settle))
    finally:
        if proc is not None:
            stop_server(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
