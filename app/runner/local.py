"""The run service of a Python process or notebook kernel (``flowgrad.trace``): one of the server's own workers
(``app.runner.worker``), driven synchronously, with no pool and no HTTP.

The worker forks a rlimited process per run, runs the program in the sandbox (``app.runner.capture``),
builds the trace (``app.trace``) and answers the bytes ``POST /api/run`` answers. So a notebook gets the
server's sandbox, limits and trace, and the kernel never runs the program's text. The worker is started on
first use and kept (a run costs milliseconds, a start ~1 s).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time

from app.core.answer import failed_answer
from app.core.config import Settings
from app.core.problems import problem
from app.layout.dot import check_dot
from app.runner.entry import worker_main
from app.runner.pool import process_context
from app.runner.protocol import CancelJob, Done, RunJob, StopWorker, WorkerFailed, WorkerReady, WorkerRecycled
from app.runner.service import clean_source, run_options


class WorkerUnavailable(RuntimeError):
    """The worker process could not start (no Graphviz ``dot``, a broken install)."""


class LocalRunService:
    """A worker process and its pipe; ``run`` sends one program and waits for its answer."""

    def __init__(self, settings: Settings | None = None):
        self.settings = settings or Settings()
        self.proc = None
        self.conn = None
        self.ids = itertools.count(1)
        self.lock = threading.Lock()  # one run at a time: the worker serves one job at a time

    def _start(self) -> None:
        s = self.settings
        dot = check_dot(s.dot_binary).path
        ctx = process_context()
        parent, child = ctx.Pipe(duplex=True)
        proc = ctx.Process(target=worker_main, args=(child, s.model_dump(), dot), daemon=True, name="flowgrad-worker")
        proc.start()
        child.close()
        if not parent.poll(s.worker_start_timeout_s):
            proc.kill()
            raise WorkerUnavailable(f"the flowgrad worker did not start within {s.worker_start_timeout_s:g} s "
                                    "(limit worker_start_timeout_s)")
        msg = parent.recv()
        if not isinstance(msg, WorkerReady):
            proc.join(1)
            reason = msg.reason if isinstance(msg, WorkerFailed) else repr(msg)
            raise WorkerUnavailable(f"the flowgrad worker could not start: {reason}")
        self.proc, self.conn = proc, parent

    def _recycled(self) -> bool:
        """The worker said, after its last run, that it grew and exits (``WorkerRecycled``)."""
        try:
            while self.conn.poll(0):
                if isinstance(self.conn.recv(), WorkerRecycled):
                    return True
        except (EOFError, OSError):
            return True
        return False

    def alive(self) -> bool:
        return self.proc is not None and self.proc.is_alive()

    def run(self, source: str, values: str = "full") -> bytes:
        """The answer's JSON bytes, exactly as ``POST /api/run`` with ``{"source", "values"}`` answers them."""
        source = clean_source(source)
        with self.lock:
            if not self.alive() or self._recycled():
                self.close()
                self._start()
            job = next(self.ids)
            self.conn.send(RunJob(job, source, run_options(values=values)))
            s = self.settings
            # the worker kills the run at max_wall_s at the latest and answers; past this grace it is itself stuck
            deadline = time.monotonic() + s.max_wall_s + s.supervisor_grace_s + s.answer_time_s
            try:
                return self._wait(job, deadline)
            except KeyboardInterrupt:  # the kernel's interrupt: stop the run, keep the worker
                self.conn.send(CancelJob(job))
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
                    return failed_answer(problem("WorkerError", why))
                continue
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                self.close()
                return failed_answer(problem("WorkerError", "the worker died"))
            if isinstance(msg, Done) and msg.job_id == job:
                return msg.data
            # stream pieces of no one's stream, an old job's answer: dropped

    def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):
                self.conn.send(StopWorker())
            with contextlib.suppress(Exception):
                self.conn.close()
        if self.proc is not None:
            self.proc.join(1)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(1)
        self.proc = self.conn = None
