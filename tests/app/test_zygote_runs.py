"""The zygote that forks run processes (app.runner.zygote): pipes handed over, exit statuses reported, kills that
reach only its own children, and nothing left behind when it or the worker goes."""

from __future__ import annotations

import errno
import multiprocessing.connection as mpc
import os
import signal
import socket
import time

import pytest

from app.runner.zygote import ZygoteClient, _pidfds_work, serve_runs

HAS_PIDFD = hasattr(os, "pidfd_open")


@pytest.fixture(params=[pytest.param(True, marks=pytest.mark.skipif(not HAS_PIDFD, reason="needs pidfd (Linux 5.3+)")),
                        False], ids=["pidfds", "no-pidfds"])
def pidfds(request) -> bool:
    """Each zygote test with pidfds and without them (refused as a seccomp filter or a kernel before 5.3 does)."""
    return request.param


def _refused(pid: int, flags: int = 0) -> int:
    raise OSError(errno.ENOSYS, "pidfd_open refused")


def _run_child(job_r, writer, warm: bool) -> None:
    """A stand-in run process: echoes its job, then exits with the code the job asks for."""
    code = job_r.recv()
    writer.send(("ran", code, warm))
    writer.close()
    os._exit(code)


def _start(pidfds: bool) -> ZygoteClient:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            ours.close()
            if not pidfds:
                os.pidfd_open = _refused
            serve_runs(theirs, _run_child)
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    theirs.close()
    return ZygoteClient(pid, ours)


def _spawn(zygote: ZygoteClient, warm: bool = True):
    job_r, job_w = mpc.Pipe(duplex=False)
    reader, writer = mpc.Pipe(duplex=False)
    pid = zygote.fork(job_r, writer, warm)
    job_r.close()
    writer.close()
    return pid, job_w, reader


def _gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True  # a zombie waiting for its (new) parent: it runs nothing
        except FileNotFoundError:
            return True
        time.sleep(0.01)
    return False


def test_pidfds_refused_are_noticed(monkeypatch):
    monkeypatch.setattr(os, "pidfd_open", _refused, raising=False)
    assert not _pidfds_work()


def test_a_run_process_gets_its_pipes_and_its_exit_status_comes_back(pidfds):
    zygote = _start(pidfds)
    try:
        pid, job_w, reader = _spawn(zygote, warm=False)
        assert pid != zygote.pid and pid != os.getpid()
        job_w.send(3)
        assert reader.recv() == ("ran", 3, False)
        status = zygote.reap(pid)
        # it may have exited on its own (3) or been killed by the reap first
        assert (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3) or os.WTERMSIG(status) == signal.SIGKILL
        assert pid not in zygote.pidfds and pid not in zygote.exits
    finally:
        zygote.close()


def test_reap_kills_a_run_process_that_has_not_finished(pidfds):
    zygote = _start(pidfds)
    try:
        pid, job_w, reader = _spawn(zygote)
        status = zygote.reap(pid)  # it still waits for its job
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        assert _gone(pid)
        job_w.close()
        with pytest.raises(EOFError):
            reader.recv()
    finally:
        zygote.close()


def test_many_run_processes_in_turn_leave_nothing_behind(pidfds):
    zygote = _start(pidfds)
    try:
        pids = []
        for code in range(20):
            pid, job_w, reader = _spawn(zygote)
            job_w.send(code)
            assert reader.recv()[1] == code
            zygote.reap(pid)
            pids.append(pid)
        assert not zygote.pidfds and not zygote.exits
        assert all(_gone(p) for p in pids)
    finally:
        zygote.close()


def test_closing_the_zygote_ends_its_waiting_run_processes(pidfds):
    zygote = _start(pidfds)
    pid, job_w, reader = _spawn(zygote)
    zygote.close()
    assert _gone(zygote.pid) and _gone(pid)


def test_a_dead_zygote_is_noticed_not_waited_for(pidfds):
    zygote = _start(pidfds)
    pid, job_w, reader = _spawn(zygote)
    os.kill(zygote.pid, signal.SIGKILL)
    os.waitpid(zygote.pid, 0)
    assert zygote.reap(pid) == 0  # nobody can tell how it ended
    with pytest.raises((OSError, EOFError)):
        _spawn(zygote)
    zygote.kill()
    job_w.close()  # its job pipe closed: the orphaned run process exits
    assert _gone(pid)


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]


def _plots(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/maps") as f:
            return "ft2font" in f.read()
    except OSError:
        return False


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


@pytest.mark.slow
@pytest.mark.skipif(not HAS_PIDFD, reason="needs pidfd (Linux 5.3+)")
def test_a_worker_whose_zygote_died_starts_another_and_keeps_answering():
    from fastapi.testclient import TestClient

    from app.core.config import Settings
    from app.main import create_app

    def run(k: int) -> dict:  # a program of its own each time: never served from the answer cache
        r = client.post("/api/run", json={"source": f"import torch\nprint(torch.tensor({k}.0) * 3)\n"})
        assert r.status_code == 200
        return r.json()

    with TestClient(create_app(Settings(workers=1))) as client:
        assert run(1)["stdout"] == "tensor(3.)\n"
        worker = client.app.state.pool.workers_info()[0]["pid"]
        zygotes = [c for c in _children(worker) if _comm(c) != "dot" and os.getpriority(os.PRIO_PROCESS, c) == 0
                   and not _plots(c)]  # the zygote of programs that plot has matplotlib loaded
        assert len(zygotes) == 1
        os.kill(zygotes[0], signal.SIGKILL)
        for k in range(2, 5):  # the spare it had forked, then run processes of a new zygote
            d = run(k)
            assert d["error"] is None and d["stdout"] == f"tensor({3 * k}.)\n"
        assert client.app.state.pool.workers_info()[0] == {**client.app.state.pool.workers_info()[0], "pid": worker,
                                                            "runs": 4}
        assert [c for c in _children(worker) if _comm(c) != "dot" and c != zygotes[0]]
