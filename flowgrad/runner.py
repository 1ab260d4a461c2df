"""One pool worker of the server's (``app.runner.worker``), driven synchronously from Python or a notebook kernel.

The worker is the server's own: it forks a rlimited process per run, runs the program in the sandbox
(``app.runner.capture``), builds the trace (``app.trace``) and answers the bytes ``POST /api/run`` answers.
So a notebook gets the server's sandbox, limits and trace, and the kernel never runs the program's text.
The worker is started on first use and kept for the session (a run costs milliseconds, a start ~1 s).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import threading
import time

import orjson

from app.core.config import Settings
from app.core.problems import empty_trace, problem
from app.layout.dot import check_dot
from app.runner.pool import _ctx


class WorkerFailed(RuntimeError):
    """The worker process could not start (no Graphviz ``dot``, a broken install)."""


class WorkerClient:
    """A worker process and its pipe; ``run`` sends one program and waits for its answer."""

    def __init__(self, settings: Settings | None = None):
        self.settings = settings or Settings()
        self.proc = None
        self.conn = None
        self.ids = itertools.count(1)
        self.lock = threading.Lock()  # one run at a time: the worker serves one job at a time

    def _start(self) -> None:
        from app.runner.worker import worker_main

        s = self.settings
        dot = check_dot(s.dot_binary).path
        ctx = _ctx()
        parent, child = ctx.Pipe(duplex=True)
        proc = ctx.Process(target=worker_main, args=(child, s.model_dump(), dot), daemon=True, name="flowgrad-worker")
        proc.start()
        child.close()
        if not parent.poll(s.worker_start_timeout_s):
            proc.kill()
            raise WorkerFailed(f"the flowgrad worker did not start within {s.worker_start_timeout_s:g} s "
                               "(limit worker_start_timeout_s)")
        msg = parent.recv()
        if msg[0] != "ready":
            proc.join(1)
            raise WorkerFailed(f"the flowgrad worker could not start: {msg[2] if len(msg) > 2 else msg}")
        self.proc, self.conn = proc, parent

    def alive(self) -> bool:
        return self.proc is not None and self.proc.is_alive()

    def run(self, source: str, values: str = "full") -> bytes:
        """The answer's JSON bytes, exactly as ``POST /api/run`` with ``{"source", "values"}`` answers them."""
        with self.lock:
            if not self.alive():
                self.close()
                self._start()
            job = next(self.ids)
            self.conn.send(("run", job, source, {"stream": False, "values": values, "passes": ()}))
            s = self.settings
            # the worker kills the run at hard_kill_s and answers; past this grace it is itself stuck
            deadline = time.monotonic() + s.hard_kill_s + s.supervisor_grace_s + s.answer_time_s
            try:
                return self._wait(job, deadline)
            except KeyboardInterrupt:  # the kernel's interrupt: stop the run, keep the worker
                self.conn.send(("cancel", job))
                with contextlib.suppress(Exception):
                    self._wait(job, time.monotonic() + s.supervisor_grace_s)
                raise

    def _wait(self, job: int, deadline: float) -> bytes:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self.conn.poll(min(left, 0.2)):
                if left <= 0 or not self.proc.is_alive():
                    self.close()
                    why = "the worker stopped answering" if left <= 0 else "the worker died"
                    return orjson.dumps(empty_trace(problem("WorkerError", why)))
                continue
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                self.close()
                return orjson.dumps(empty_trace(problem("WorkerError", "the worker died")))
            if msg[0] == "done" and msg[1] == job:
                return msg[2]
            # stream pieces of no one's stream, an old job's answer: dropped

    def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):
                self.conn.send(("stop",))
            with contextlib.suppress(Exception):
                self.conn.close()
        if self.proc is not None:
            self.proc.join(1)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(1)
        self.proc = self.conn = None


_client: WorkerClient | None = None


def client() -> WorkerClient:
    """The session's worker (started on first run, stopped at exit)."""
    global _client
    if _client is None:
        _client = WorkerClient()
        atexit.register(_client.close)
    return _client
