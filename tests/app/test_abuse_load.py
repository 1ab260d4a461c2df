"""Issue 22's load test (not a timing test): one identity runs the worst holes at once — the big fold, the export
of a folded run, 7.5 MB answers, a burst of heavy runs — while another identity runs small programs. Every answer of
the small client is right and none is a 429, no worker is replaced, and the server's process tree stays within the
budgets its settings give it. No wall-clock asserts: on a loaded 2-core machine it is slower, not different."""

from __future__ import annotations

import os
import threading
import time

import pytest
from fastapi.testclient import TestClient
from flowgrad_testing import identity_headers, strict_json

from app.core.config import Settings
from app.main import create_app
from app.runner.worker import MAX_STORERS

BIG_FOLD = "import torch\nx = torch.ones(1)\ns = sum([x] * 24000)\n"
FOLDED = ("import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x\nfor i in range(3000):\n"
          "    y = y * 1.0001\ny.backward()\nprint(x.grad)\n")
BIG_ANSWER = "import torch\na = torch.rand(390000)\n"
HEAVY = "import torch\nx = torch.randn(200, 200)\nfor i in range(300):\n    y = x @ x\n"
SMALL = [("print(1)\n", "1\n"),
         ("import torch\nx = torch.tensor(2.0, requires_grad=True)\n(x * 3).backward()\nprint(x.grad)\n",
          "tensor(3.)\n")]
MB = 2**20


def pss(pid: int) -> int:
    """Proportional set size in bytes (pages shared by forks counted once over them); 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next((int(line.split()[1]) * 1024 for line in f if line.startswith("Pss:")), 0)
    except OSError:
        return 0


def descendants(pid: int) -> list[int]:
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    kids = [int(c) for c in f.read().split()]
            except OSError:
                continue
            out += kids
            stack += kids
    return out


class Peaks:
    """Samples, until stopped, the server process's growth and the PSS of its workers with their children."""

    def __init__(self, pool):
        self.pool = pool
        self.base = pss(os.getpid())
        self.server = 0
        self.workers = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while not self.done.is_set():
            self.server = max(self.server, pss(os.getpid()) - self.base)
            pids = [w["pid"] for w in self.pool.workers_info() if w["pid"]]
            self.workers = max(self.workers, sum(pss(p) for pid in pids for p in (pid, *descendants(pid))))
            self.done.wait(0.2)

    def stop(self) -> None:
        self.done.set()
        self.thread.join()


@pytest.mark.slow
def test_a_small_client_is_served_right_while_another_runs_the_worst_holes():
    s = Settings(workers=2)
    with TestClient(create_app(s)) as c:
        pool = c.app.state.pool
        store = c.app.state.run_store
        bad, good = identity_headers(s), identity_headers(s)
        before = c.get("/healthz").json()["pool"]
        peaks = Peaks(pool)
        abuser_codes: list[int] = []

        def abuse(jobs) -> None:
            for path, body in jobs:
                r = c.post(path, json=body, headers=bad)
                abuser_codes.append(r.status_code)

        folds = [("/api/run", {"source": BIG_FOLD, "client_id": "a1"}),
                 ("/api/export/html", {"source": FOLDED, "client_id": "a1"})]
        answers = [("/api/run", {"source": BIG_ANSWER, "client_id": "a2"})] * 3
        burst = [[("/api/run", {"source": HEAVY, "client_id": f"b{k}"})] for k in range(8)]
        abusers = [threading.Thread(target=abuse, args=(jobs,)) for jobs in (folds, answers, *burst)]
        for t in abusers:
            t.start()
        small: list[tuple[int, dict]] = []
        while any(t.is_alive() for t in abusers) or len(small) < 6:
            source, stdout = SMALL[len(small) % len(SMALL)]
            r = c.post("/api/run", json={"source": source, "client_id": "student"}, headers=good)
            d = strict_json(r.text) if r.status_code == 200 else {}
            small.append((r.status_code, d))
            assert r.status_code == 200, (r.status_code, r.text[:300])  # never 429 for the well-behaved client
            assert d["error"] is None and d["stdout"] == stdout, r.text[:300]
        for t in abusers:
            t.join()
        # the payload processes of the abuser's folded runs finish (or meet their limits) before the last reading
        deadline = time.monotonic() + 4 * (s.max_wall_s + s.supervisor_grace_s)
        while any(h.storing for h in pool.workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        peaks.stop()
        after = c.get("/healthz").json()["pool"]
        assert after["restarts"] == before["restarts"] and after["ready"] == after["size"]
        assert set(abuser_codes) <= {200, 413, 429}  # the abuser is answered or told to wait, never an error
        assert store.nbytes <= s.run_store_max_bytes
        # workers: each at most what it may grow to before it is recycled; per worker at most MAX_STORERS
        # payload processes (forks of it, limited like a run) and its run process
        worker_budget = s.workers * (2 + MAX_STORERS) * s.worker_max_rss_mb * MB
        # the server: the run store plus the answers and exports in flight (a few of max_answer_bytes each)
        server_budget = s.run_store_max_bytes + s.hub_max_bytes + 4 * s.max_answer_bytes + 64 * MB
        print(f"\nsmall runs {len(small)}, abuser answers {sorted(abuser_codes)}, peaks: workers and their children "
              f"{peaks.workers / MB:.0f} MB PSS (budget {worker_budget / MB:.0f}), server growth "
              f"{peaks.server / MB:.0f} MB (budget {server_budget / MB:.0f}), run store {store.nbytes / MB:.0f} MB")
        assert peaks.workers <= worker_budget, f"workers peaked at {peaks.workers / MB:.0f} MB"
        assert peaks.server <= server_budget, f"the server grew by {peaks.server / MB:.0f} MB"
        # once the load is over, every worker is back within the size it is recycled at
        for w in pool.workers_info():
            assert pss(w["pid"]) <= s.worker_max_rss_mb * MB
