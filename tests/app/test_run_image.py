"""The run processes' image (app.runner.runproc): the zygote forked before pydantic, the trace builder and the
layout load, the same sandbox limits as the settings say, and no warm-up for a run process while runs wait."""

from __future__ import annotations

import os
import threading
from collections import deque
from types import SimpleNamespace

import pytest

from app.core.config import Settings, build_sandbox_limits
from app.runner.pool import Job, Pool, WorkerHandle
from app.runner.protocol import RunJob, RunOptions
from app.runner.runproc import capture_budgets, sandbox_limits, vm_bytes


def _as_the_worker_gets_them(settings: Settings) -> SimpleNamespace:
    """The settings as a worker's entry sees them before pydantic loads: the pool's validated values."""
    return SimpleNamespace(**settings.model_dump(exclude={"identity_secret"}))


@pytest.mark.parametrize("changes", [{}, {"max_steps": 12_345_678, "time_limit_s": 3.0, "hard_kill_s": 4.0,
                                          "max_live_elements": 1_000, "max_figures": 2, "max_files": 1}])
def test_the_limits_from_the_validated_values_are_the_settings_limits(changes):
    from sandbox import SandboxLimits

    settings = Settings(**changes)
    expected = build_sandbox_limits(SandboxLimits, settings.limit_values())
    assert sandbox_limits(_as_the_worker_gets_them(settings)) == expected
    assert sandbox_limits(settings) == expected
    assert capture_budgets(_as_the_worker_gets_them(settings)) == capture_budgets(settings)


def test_vm_bytes_is_this_process_address_space():
    with open("/proc/self/status") as f:
        vm_kb = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
    assert abs(vm_bytes() - vm_kb * 1024) < 64 * 1024 * 1024  # the same process, read a moment apart


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]


def _maps(pid: int) -> str:
    with open(f"/proc/{pid}/maps") as f:
        return f.read()


@pytest.mark.slow
def test_the_zygote_carries_neither_pydantic_nor_the_worker_side():
    from fastapi.testclient import TestClient

    from app.main import create_app

    with TestClient(create_app(Settings(workers=1))) as client:
        r = client.post("/api/run", json={"source": "import torch\nprint(torch.tensor(2.0) * 3)\n"})
        assert r.status_code == 200 and r.json()["stdout"] == "tensor(6.)\n"
        worker = client.app.state.pool.workers_info()[0]["pid"]
        pythons = [c for c in _children(worker) if "python" in open(f"/proc/{c}/cmdline", "rb").read().decode()
                   and os.getpriority(os.PRIO_PROCESS, c) == 0]
        zygote, plots_zygote = sorted(pythons)[:2]  # forked first, before dot and every run process
        assert "pydantic_core" in _maps(worker)  # the worker validates its settings
        assert "ft2font" in _maps(worker) and "ft2font" in _maps(plots_zygote)  # matplotlib: preloaded for plots
        assert "pydantic_core" not in _maps(zygote) and "pydantic_core" not in _maps(plots_zygote)
        assert "ft2font" not in _maps(zygote)
        # their run processes: a fresh copy each, answering as before, a plot as before
        for k in range(3):
            r = client.post("/api/run", json={"source": f"import torch\nprint(torch.tensor({k}.0) + 1)\n"})
            assert r.json()["error"] is None and r.json()["stdout"] == f"tensor({k + 1}.)\n"
            r = client.post("/api/run", json={"source": f"import matplotlib.pyplot as plt\nplt.plot([0, {k}])\n"
                                                        "plt.show()\nprint('drawn')\n"})
            assert r.json()["error"] is None and r.json()["stdout"] == "drawn\n"
            assert len(r.json()["figures"]) == 1 and r.json()["figures"][0]["svg"].startswith("<?xml")
        assert set(_children(worker)) >= {zygote, plots_zygote}  # neither was replaced


def test_without_preloading_matplotlib_there_is_one_zygote_and_plots_still_draw():
    from fastapi.testclient import TestClient

    from app.main import create_app

    with TestClient(create_app(Settings(workers=1, preload_matplotlib=False))) as client:
        r = client.post("/api/run", json={"source": "import matplotlib.pyplot as plt\nplt.plot([0, 1])\nplt.show()\n"})
        assert r.json()["error"] is None and len(r.json()["figures"]) == 1
        worker = client.app.state.pool.workers_info()[0]["pid"]
        pythons = [c for c in _children(worker) if "python" in open(f"/proc/{c}/cmdline", "rb").read().decode()
                   and os.getpriority(os.PRIO_PROCESS, c) == 0]
        assert not any("ft2font" in _maps(c) for c in pythons + [worker])


class _Conn:
    def __init__(self):
        self.sent: list = []

    def send(self, msg) -> None:
        self.sent.append(msg)


def _handle() -> WorkerHandle:
    return WorkerHandle(0, SimpleNamespace(is_alive=lambda: True), _Conn(), pid=1, ready=True)


def test_a_run_with_runs_waiting_behind_it_says_so():
    pool = Pool(Settings(workers=1), dot="dot")
    first, second = (Job(i, "print(1)", RunOptions(), client=None) for i in (1, 2))
    pool.queues["job:2"] = deque([second])
    h = _handle()
    pool._assign(h, first)
    assert h.conn.sent == [RunJob(1, "print(1)", RunOptions(), backlog=True)]
    pool.queues.clear()
    h = _handle()
    pool._assign(h, second)
    assert h.conn.sent == [RunJob(2, "print(1)", RunOptions(), backlog=False)]


@pytest.mark.slow
def test_runs_of_a_burst_from_cold_run_processes_answer_as_warm_ones():
    from fastapi.testclient import TestClient

    from app.main import create_app

    answers: dict[int, dict] = {}
    # one client here: it may have all four waiting (each run after the first is dispatched with runs behind it)
    with TestClient(create_app(Settings(workers=1, identity_queue_limit=4))) as client:

        def run(k: int) -> None:
            r = client.post("/api/run", json={"source": f"import torch\nx = torch.tensor({k}.0, requires_grad=True)\n"
                                                        "(x * x).backward()\nprint(x.grad)\n"})
            answers[k] = r.json() if r.status_code == 200 else {"status": r.status_code}

        threads = [threading.Thread(target=run, args=(k,)) for k in range(1, 5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    assert {k: (a.get("error"), a.get("stdout")) for k, a in answers.items()} == \
        {k: (None, f"tensor({2 * k}.)\n") for k in range(1, 5)}


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfd (Linux 5.3+)")
def test_a_plotting_zygote_that_died_is_started_again():
    import signal

    from fastapi.testclient import TestClient

    from app.main import create_app

    def plot(k: int) -> dict:  # a program of its own each time: never served from the answer cache
        r = client.post("/api/run", json={"source": f"import matplotlib.pyplot as plt\nplt.plot([0, {k}])\nplt.show()\n"})
        assert r.status_code == 200
        return r.json()

    with TestClient(create_app(Settings(workers=1))) as client:
        assert plot(1)["error"] is None
        worker = client.app.state.pool.workers_info()[0]["pid"]
        plotting = [c for c in _children(worker) if "ft2font" in _maps(c) and os.getpriority(os.PRIO_PROCESS, c) == 0]
        assert len(plotting) == 1
        os.kill(plotting[0], signal.SIGKILL)
        for k in range(2, 4):
            d = plot(k)
            assert d["error"] is None and len(d["figures"]) == 1
        assert client.app.state.pool.workers_info()[0]["pid"] == worker
