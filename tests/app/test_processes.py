"""Several server processes as operators run them: two processes, a real redis-server, a round-robin proxy."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import threading

import httpx
import pytest
from flowgrad_testing import real_server
from redis_process import free_port, redis_server

from app.cluster.solo import UnsharedProcesses, claim

PROGRAM = ("import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))\n"
           "opt = torch.optim.SGD(model.parameters(), lr=0.05)\nx = torch.randn(16, 2)\ny = x.sum(1, keepdim=True)\n"
           "for step in range(10):\n    opt.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n"
           "    loss.backward()\n    opt.step()\nprint(round(loss.item(), 6))\n")


@contextlib.contextmanager
def round_robin(ports: list[int]):
    """A TCP proxy on a free port: each new connection goes to the next backend in turn."""
    port, turn = free_port(), [0]
    loop = asyncio.new_event_loop()
    started = threading.Event()

    async def pipe(reader, writer):
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def serve(client_reader, client_writer):
        backend = ports[turn[0] % len(ports)]
        turn[0] += 1
        reader, writer = await asyncio.open_connection("127.0.0.1", backend)
        await asyncio.gather(pipe(client_reader, writer), pipe(reader, client_writer))

    async def main():
        server = await asyncio.start_server(serve, "127.0.0.1", port)
        started.set()
        async with server:
            await server.serve_forever()

    def run():
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(main())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        for task in asyncio.all_tasks(loop):
            loop.call_soon_threadsafe(task.cancel)
        thread.join(5)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with redis_server(tmp_path_factory.mktemp("redis")) as (url, _):
        shared = {"FLOWGRAD_BROKER_URL": url, "FLOWGRAD_IDENTITY_SECRET": "one-key-for-every-process-here"}
        with real_server(**shared) as (port_a, a), real_server(**shared) as (port_b, b):
            with round_robin([port_a, port_b]) as proxy:
                yield proxy, a, b


def fresh_request(proxy: str, method: str, path: str, **kwargs) -> httpx.Response:
    with httpx.Client(base_url=proxy, timeout=60) as client:  # a new connection: the proxy's next backend
        return client.request(method, path, **kwargs)


def test_both_processes_are_ready_behind_the_proxy(cluster):
    proxy, a, b = cluster
    for _ in range(2):
        ready = fresh_request(proxy, "GET", "/readyz")
        assert ready.status_code == 200 and ready.json()["checks"] == {"workers": True, "broker": True}


def test_a_program_run_on_one_process_is_served_by_the_other_from_redis(cluster):
    proxy, a, b = cluster
    answers = [fresh_request(proxy, "POST", "/api/run", json={"source": PROGRAM}) for _ in range(4)]
    assert all(r.status_code == 200 for r in answers)
    assert len({r.json()["stdout"] for r in answers}) == 1 and answers[0].json()["error"] is None
    executed = sum(httpx.get(f"{url}/healthz").json()["pool"]["completed"] for url in (a, b))
    hits = [httpx.get(f"{url}/healthz").json()["answers"]["hits"] for url in (a, b)]
    assert executed == 1 and sum(hits) == 3 and all(h >= 1 for h in hits)


def test_an_export_works_through_either_process(cluster):
    proxy, _, _ = cluster
    for _ in range(2):
        r = fresh_request(proxy, "POST", "/api/export/html", json={"source": "import torch\nprint(torch.ones(2))\n"})
        assert r.status_code == 200 and r.text.lstrip().lower().startswith("<!doctype html")


def test_the_join_link_is_https_behind_a_tls_proxy(cluster):
    _, a, _ = cluster  # uvicorn trusts X-Forwarded-* from FORWARDED_ALLOW_IPS (127.0.0.1 by default)
    r = httpx.post(f"{a}/api/sessions", headers={"x-forwarded-proto": "https", "host": "class.example.org"})
    assert r.status_code == 201, r.text
    assert r.json()["join_url"].startswith("https://class.example.org/s/")


def test_a_sibling_process_without_a_broker_refuses_to_start(tmp_path):
    port = free_port()  # a port nobody serves: the claim's name only
    holder = subprocess.Popen([sys.executable, "-c", f"import sys, time; sys.path.insert(0, '.'); "
                               f"from app.cluster.solo import claim; c = claim({port}, allowed=False, parent=1); "
                               f"print('held', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(UnsharedProcesses, match="FLOWGRAD_BROKER_URL"):
            claim(port, allowed=False, parent=1)
        assert claim(port, allowed=True, parent=1) is None  # sticky routing: it starts, with the warning
    finally:
        holder.kill()
        holder.wait(10)
    mine = claim(port, allowed=False, parent=1)  # the sibling is gone: the claim is free
    assert mine is not None
    mine.close()
