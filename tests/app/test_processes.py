"""Several server processes as operators run them: two processes, a real redis-server, a round-robin proxy."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from flowgrad_testing import real_server
from redis_process import free_port, redis_server
from test_classroom import Follower

from app.cluster.solo import UnsharedProcesses, claim

MLP_150 = (Path(__file__).resolve().parents[1] / "programs" / "fold_mlp_150.py").read_text()

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


def process_of(url: str) -> str:
    return httpx.get(f"{url}/healthz").json()["process"]


def next_goes_to(proxy: str, process: str) -> None:
    """Spend the proxy's turns until its next connection goes to ``process`` (it alternates between the two)."""
    for _ in range(4):
        if fresh_request(proxy, "GET", "/healthz").json()["process"] != process:
            return
    raise AssertionError("the proxy does not alternate")


def run_on(proxy: str, process: str, path: str, **kwargs) -> httpx.Response:
    next_goes_to(proxy, process)
    return fresh_request(proxy, "POST", path, **kwargs)


def get_on(proxy: str, process: str, path: str, **kwargs) -> httpx.Response:
    next_goes_to(proxy, process)
    return fresh_request(proxy, "GET", path, **kwargs)


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


def test_a_folded_run_is_served_by_the_process_that_did_not_run_it(cluster):
    proxy, a, b = cluster
    ran_on, other = process_of(a), process_of(b)
    r = run_on(proxy, ran_on, "/api/run", json={"source": MLP_150})
    assert r.status_code == 200, r.text
    graph = r.json()["passes"][0]["graph"]
    assert graph["folded"] is True
    run, k = graph["run"], graph.get("pass_index", 0)
    gid = next(n["id"] for n in graph["nodes"] if n["kind"] == "group")
    here = httpx.get(f"{a}/api/runs/{run}/passes/{k}/groups/{gid}")
    there = get_on(proxy, other, f"/api/runs/{run}/passes/{k}/groups/{gid}")
    assert here.status_code == there.status_code == 200, there.text
    assert there.json() == here.json()  # the same payload, rebuilt from Redis
    found = get_on(proxy, other, f"/api/runs/{run}/passes/{k}/search", params={"q": "tanh", "limit": 5})
    assert found.status_code == 200 and found.json() == httpx.get(f"{a}/api/runs/{run}/passes/{k}/search",
                                                                   params={"q": "tanh", "limit": 5}).json()
    assert found.json()["total"] > 0
    stored = httpx.get(f"{a}/healthz").json()["runs"]
    assert stored["shared"] == "redis" and stored["written"] >= 1 and stored["written_bytes"] > 0
    assert httpx.get(f"{b}/healthz").json()["runs"]["read"] >= 1


def test_an_unknown_run_is_expired_on_every_process(cluster):
    proxy, a, b = cluster
    for url in (a, b):
        r = httpx.get(f"{url}/api/runs/{'cd' * 16}/passes/0/groups/g1")
        assert r.status_code == 404 and r.json()["error"]["type"] == "RunExpired" and r.json()["reason"] == "expired"


def test_a_recorded_pass_and_an_export_of_a_folded_run_work_on_either_process(cluster):
    proxy, a, b = cluster
    training = PROGRAM.replace("range(10)", "range(4)")
    for process in (process_of(a), process_of(b)):
        r = run_on(proxy, process, "/api/run", json={"source": training, "passes": [2], "client_id": "rec"})
        assert r.status_code == 200 and r.json()["error"] is None
        assert any(p.get("index") == 2 for p in r.json()["passes"])
        html = run_on(proxy, process, "/api/export/html", json={"source": MLP_150})
        assert html.status_code == 200 and b'"payloads"' in html.content


def test_a_cancel_sent_to_the_other_process_cancels_the_run(cluster):
    proxy, a, b = cluster
    ran_on, other = process_of(a), process_of(b)
    forever = "import torch\nx = torch.ones(1)\nfor i in range(10**9):\n    x = x + 1\n"
    headers = {"x-client-id": "tab-cancel"}
    next_goes_to(proxy, ran_on)
    answer: list[httpx.Response] = []
    runner = threading.Thread(target=lambda: answer.append(fresh_request(
        proxy, "POST", "/api/run", json={"source": forever}, headers=headers)))
    runner.start()
    deadline = time.monotonic() + 30
    while httpx.get(f"{a}/healthz").json()["pool"]["busy"] == 0:  # the run is under way on a
        assert time.monotonic() < deadline
        time.sleep(0.05)
    cancelled = run_on(proxy, other, "/api/cancel", headers=headers)
    assert cancelled.status_code == 200 and cancelled.json() == {"cancelled": True}
    runner.join(30)
    assert answer and answer[0].status_code == 200 and answer[0].json()["error"]["type"] == "Cancelled"
    assert httpx.get(f"{a}/healthz").json()["pool"]["busy"] == 0


def test_an_identity_share_counts_runs_on_both_processes(cluster):
    proxy, a, b = cluster
    forever = "import torch\nx = torch.ones(1)\nfor i in range(10**9):\n    x = x + 1\n"
    cookie = httpx.get(f"{a}/healthz").cookies  # one identity on both processes (the same identity_secret)
    tabs = [f"tab-{i}" for i in range(4)]
    answers: list[httpx.Response] = []

    def run(tab):
        with httpx.Client(base_url=proxy, timeout=60, cookies=cookie) as client:
            answers.append(client.post("/api/run", json={"source": forever}, headers={"x-client-id": tab}))

    threads = [threading.Thread(target=run, args=(t,)) for t in tabs]
    for t in threads:
        t.start()
        time.sleep(0.2)
    deadline = time.monotonic() + 30
    while not any(r.status_code == 429 for r in answers):  # identity_queue_limit = 2: the fourth is refused
        assert time.monotonic() < deadline, [r.status_code for r in answers]
        time.sleep(0.05)
    for tab in tabs:
        with httpx.Client(base_url=proxy, timeout=60, cookies=cookie) as client:
            client.post("/api/cancel", headers={"x-client-id": tab})
            client.post("/api/cancel", headers={"x-client-id": tab})  # the proxy's other process, too
    for t in threads:
        t.join(30)
    assert sorted(r.status_code for r in answers) == [200, 200, 200, 429]


def test_an_identity_runs_one_run_at_a_time_across_both_processes(cluster):
    proxy, a, b = cluster
    forever = "import torch\nx = torch.ones(1)\nfor i in range(10**9):\n    x = x + 1\n"
    cookie = httpx.get(f"{a}/healthz").cookies
    answers: dict[str, httpx.Response] = {}

    def run(tab, url, source):
        with httpx.Client(base_url=url, timeout=60, cookies=cookie) as client:
            answers[tab] = client.post("/api/run", json={"source": source}, headers={"x-client-id": tab})

    first = threading.Thread(target=run, args=("first", a, forever))
    first.start()
    deadline = time.monotonic() + 30
    while httpx.get(f"{a}/healthz").json()["pool"]["busy"] == 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    done_on_b = httpx.get(f"{b}/healthz").json()["pool"]["completed"]
    second = threading.Thread(target=run, args=("second", b, "print('second')\n"))
    second.start()
    time.sleep(1.5)  # b is idle, yet the identity's second run waits for its first one on a
    assert "second" not in answers and httpx.get(f"{b}/healthz").json()["pool"]["completed"] == done_on_b
    httpx.post(f"{a}/api/cancel", headers={"x-client-id": "first"}, cookies=cookie)
    first.join(30)
    second.join(30)
    assert answers["first"].json()["error"]["type"] == "Cancelled"
    assert answers["second"].status_code == 200 and answers["second"].json()["stdout"] == "second\n"


def test_a_tabs_run_waiting_for_its_turn_is_cancelled_from_the_other_process(cluster):
    proxy, a, b = cluster
    forever = "import torch\nx = torch.ones(1)\nfor i in range(10**9):\n    x = x + 1\n"
    cookie = httpx.get(f"{a}/healthz").cookies
    answers: dict[str, httpx.Response] = {}

    def run(tab, url):
        with httpx.Client(base_url=url, timeout=60, cookies=cookie) as client:
            answers[tab] = client.post("/api/run", json={"source": forever}, headers={"x-client-id": tab})

    threads = [threading.Thread(target=run, args=("running", a)), threading.Thread(target=run, args=("waiting", b))]
    threads[0].start()
    deadline = time.monotonic() + 30
    while httpx.get(f"{a}/healthz").json()["pool"]["busy"] == 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    threads[1].start()
    # a cancel before the waiting run is marked finds nothing and changes nothing: ask until it finds it
    while httpx.post(f"{a}/api/cancel", headers={"x-client-id": "waiting"}, cookies=cookie).json() != {"cancelled": True}:
        assert time.monotonic() < deadline + 30
        time.sleep(0.05)
    threads[1].join(30)
    assert answers["waiting"].json()["error"]["type"] == "Cancelled"
    httpx.post(f"{a}/api/cancel", headers={"x-client-id": "running"}, cookies=cookie)
    threads[0].join(30)
    assert answers["running"].json()["error"]["type"] == "Cancelled"


def test_waiting_for_an_identical_run_counts_in_the_cluster_share(cluster):
    proxy, a, b = cluster
    forever = "import torch\nx = torch.ones(1)\nfor i in range(10**9):\n    x = x + 1\n"
    shared = forever + "# the presenter's program\n"  # deterministic: identical requests wait for its one run
    mine, presenter = httpx.get(f"{a}/healthz").cookies, httpx.get(f"{a}/healthz").cookies
    answers: dict[str, httpx.Response | Exception] = {}

    def run(name, url, cookies, source, timeout=60.0):
        try:
            with httpx.Client(base_url=url, timeout=timeout, cookies=cookies) as client:
                answers[name] = client.post("/api/run", json={"source": source}, headers={"x-client-id": name})
        except httpx.HTTPError as e:  # a follower's client gives up (the server then drops its wait)
            answers[name] = e

    def until(check):
        deadline = time.monotonic() + 30
        while not check():
            assert time.monotonic() < deadline, answers
            time.sleep(0.05)

    threads = [threading.Thread(target=run, args=("lead", a, presenter, shared))]
    threads[0].start()
    until(lambda: httpx.get(f"{a}/healthz").json()["pool"]["busy"] == 1)
    for tab in ("b1", "b2"):  # on b: one running, one waiting (identity_queue_limit = 2 leaves room for one more)
        threads.append(threading.Thread(target=run, args=(tab, b, mine, forever)))
        threads[-1].start()
        until(lambda: httpx.get(f"{b}/healthz").json()["pool"]["busy"] == 1)
    waits = httpx.get(f"{a}/healthz").json()["answers"]["shared_waits"]
    threads.append(threading.Thread(target=run, args=("a1", a, mine, shared, 8.0)))
    threads[-1].start()
    until(lambda: httpx.get(f"{a}/healthz").json()["answers"]["shared_waits"] == waits + 1)  # following on a
    run("a2", a, mine, shared, 8.0)  # nothing of this identity's runs on a itself: the cluster's count refuses it
    assert isinstance(answers["a2"], httpx.Response) and answers["a2"].status_code == 429
    for tab, cookies in (("lead", presenter), ("b1", mine), ("b2", mine)):
        for url in (a, b):
            httpx.post(f"{url}/api/cancel", headers={"x-client-id": tab}, cookies=cookies)
    for t in threads:
        t.join(30)
    assert answers["lead"].json()["error"]["type"] == "Cancelled"


def test_a_class_session_across_both_processes(cluster):
    proxy, a, b = cluster
    teacher, student = process_of(a), process_of(b)
    made = run_on(proxy, teacher, "/api/sessions")
    assert made.status_code == 201, made.text
    code, headers = made.json()["code"], {"Authorization": "Bearer " + made.json()["presenter_token"]}
    joined = run_on(proxy, student, f"/api/sessions/{code}/join")
    assert joined.status_code == 200, joined.text
    follower = Follower(b, code, joined.json()["follower"])  # the student's stream: on the other process
    try:
        posted = run_on(proxy, teacher, f"/api/sessions/{code}/state", json={"step": 3}, headers=headers)
        assert posted.status_code in (200, 204), posted.text
        deadline = time.monotonic() + 30
        while not any(e.get("state") == {"step": 3} for e in follower.events):  # relayed through Redis
            assert time.monotonic() < deadline, follower.events
            time.sleep(0.05)
    finally:
        follower.close()
