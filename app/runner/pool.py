"""Server side of isolation: the worker pool, its queue and its supervisor.

* ``workers`` processes (one per core by default), started with the ``forkserver`` context so
  no worker is forked from the threaded server; each is warm (engine + numpy imported, ``dot``
  running) before it takes work. No user code runs in the server process: it only moves bytes.
* Fair between identities (app/core/identity.py: a key the server minted, which a client cannot
  switch off): each identity has its own queue of at most ``identity_queue_limit`` waiting runs and at
  most one running run; an idle worker takes the next identity's run in turn (round robin), so one
  client's 24 runs wait behind each other, not in front of everyone else. A run's turn lasts until its worker
  is ready again (below), so one client never holds two workers. At most ``queue_limit`` runs
  wait in all; beyond either limit, or after ``queue_timeout_s``, the answer is "busy" (HTTP 429 with
  ``Retry-After``) instead of a pile-up.
* One run per tab: a tab's new run (same identity and ``client_id``) cancels its previous one
  (queued: dropped; running: the worker kills the run's process).
* A worker takes a run only once it said it is ready again (``WorkerReady``, sent after each run's housekeeping:
  freeing a big trace, forking its payload process, recycling), and an idle worker with no payloads building
  goes first: a small run never waits behind the housekeeping of someone's big one.
* The supervisor (every ``supervisor_interval_s``) replaces workers that died and kills a
  worker whose run is past ``max_wall_s`` + ``supervisor_grace_s`` (the worker itself SIGKILLs a
  run's process past ``hard_kill_s`` of CPU time or ``max_wall_s`` of wall time; the supervisor is the net under that).
* Workers run the ``dot`` found by the app's one startup check (``dot``: its absolute path).
* A job's queue gets the worker's ``Piece``s and ``Done``; a run that cannot finish ends with ``JobFailed``
  (``app.runner.protocol``: every message on the pipes and the queue).
* One reader thread per worker turns its pipe into events on the asyncio loop, so a slow or
  dying worker never blocks the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import multiprocessing as mp
import os
import pickle
import signal
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from app.core.config import Settings
from app.core.problems import problem
from app.runner.admission import WaitEstimate
from app.runner.entry import worker_main
from app.runner.protocol import (
    CancelJob,
    Done,
    JobFailed,
    Piece,
    RunJob,
    RunOptions,
    RunPending,
    RunStored,
    StopWorker,
    WorkerFailed,
    WorkerReady,
    WorkerRecycled,
)

BUSY_MESSAGE = "the server is busy; try again in a moment"
BIG_MESSAGE = 1 << 20  # bytes: a message this big (a folded run's payloads) is unpickled with the GC paused
SETTLE_LIMIT = 3  # a worker not ready again this many (max_wall_s + grace) after its answer is stuck: replaced


class PoolBusy(Exception):
    """Nothing ran: the queue (everyone's, or this identity's) is full; try again in ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: int = 1):
        super().__init__(message)
        self.retry_after = retry_after


_gc_paused = threading.Lock()


def unpickle(data: bytes):
    """A worker's message. NOTE: unpickling a folded run's payloads (~270,000 objects) holds the GIL, so the
    event loop waits for it; with the GC paused it takes ~40% less (no collections over the growing heap)."""
    if len(data) < BIG_MESSAGE:
        return pickle.loads(data)
    with _gc_paused:
        was = gc.isenabled()
        gc.disable()
        try:
            return pickle.loads(data)
        finally:
            if was:
                gc.enable()


def process_context():
    """Where worker processes come from: a fork server (no worker is forked from a threaded server), else spawn."""
    methods = mp.get_all_start_methods()
    return mp.get_context("forkserver" if "forkserver" in methods else "spawn")


@dataclass
class Job:
    id: int
    source: str
    options: RunOptions
    client: str | None  # the tab's run slot (identity + client_id): its next run cancels this one
    identity: str | None = None  # whom fairness counts (None: a job of its own, e.g. a direct caller)
    queue: asyncio.Queue = field(default_factory=asyncio.Queue)  # Piece…, then Done or JobFailed
    worker: WorkerHandle | None = None
    started: float = 0.0
    enqueued: float = field(default_factory=time.monotonic)
    finished: bool = False
    cancelled: bool = False

    def put(self, item: Piece | Done | JobFailed) -> None:
        if not self.finished:
            if not isinstance(item, Piece):
                self.finished = True
            self.queue.put_nowait(item)

    def fail(self, error: dict) -> None:
        self.put(JobFailed(self.id, error))


@dataclass
class WorkerHandle:
    slot: int
    proc: mp.process.BaseProcess
    conn: object
    pid: int | None = None
    ready: bool = False
    job: Job | None = None
    started: float = field(default_factory=time.monotonic)
    dead: bool = False
    runs: int = 0
    idle_since: float = field(default_factory=time.monotonic)
    ever_ready: bool = False
    replacing: bool = False
    recycled: bool = False  # it said it exits because it grew (WorkerRecycled)
    settling: Job | None = None  # its answered run, while its housekeeping goes on (until its next WorkerReady)
    storing: set[str] = field(default_factory=set)  # runs whose payloads its children build (it takes runs meanwhile)

    @property
    def idle(self) -> bool:
        return self.ready and not self.dead and self.settling is None and self.job is None


class Pool:
    def __init__(self, settings: Settings, *, dot: str, run_store=None):
        self.settings = settings
        self.run_store = run_store  # app.runs.store.RunStore: folded passes' payloads from the workers
        self.dot = dot  # the Graphviz binary the workers run (app.layout.dot.check_dot's path)
        self.ctx = process_context()
        self.workers: list[WorkerHandle] = []
        self.queues: OrderedDict[str, deque[Job]] = OrderedDict()  # identity → its waiting runs; order = whose turn
        self.running: dict[str, Job] = {}  # identity → its running run
        self.clients: dict[str, Job] = {}
        self.ids = itertools.count(1)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._supervisor: asyncio.Task | None = None
        self.restarts = 0
        self.recycled = 0  # workers that grew past worker_max_rss_mb and were replaced between runs
        self.slot_failures: dict[int, int] = {}
        self.completed = 0
        self.rejected = 0
        self.closing = False
        self._settings_dict = settings.model_dump(exclude={"identity_secret"})  # run processes never see the key
        self.wait_estimate = WaitEstimate()  # issue 25: a run that would wait past queue_timeout_s is refused at once

    # ------------------------------------------------------------------ lifecycle
    async def start(self, wait_ready: bool = True) -> None:
        self.loop = asyncio.get_running_loop()
        for slot in range(self.settings.workers):
            self.workers.append(self._spawn(slot))
        self._supervisor = asyncio.create_task(self._supervise())
        if wait_ready:
            deadline = time.monotonic() + self.settings.worker_start_timeout_s
            while not all(w.ready for w in self.workers) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)

    def _spawn(self, slot: int) -> WorkerHandle:
        parent, child = self.ctx.Pipe(duplex=True)
        proc = self.ctx.Process(target=worker_main, args=(child, self._settings_dict, self.dot), daemon=True,
                                name=f"flowgrad-worker-{slot}")
        proc.start()
        child.close()
        h = WorkerHandle(slot, proc, parent, pid=proc.pid)
        threading.Thread(target=self._reader, args=(h,), daemon=True, name=f"flowgrad-reader-{slot}").start()
        return h

    async def stop(self) -> None:
        self.closing = True
        if self._supervisor:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._supervisor
        for job in self.waiting_jobs():
            job.fail(problem("Unavailable", "the server is stopping"))
        self.queues.clear()
        for w in self.workers:
            with contextlib.suppress(Exception):
                w.conn.send(StopWorker())
        deadline = time.monotonic() + 2.0
        for w in self.workers:
            while w.proc.is_alive() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            if w.proc.is_alive():
                self._kill(w)
            with contextlib.suppress(Exception):
                w.proc.join(0.1)

    # ------------------------------------------------------------------ reading
    def _reader(self, h: WorkerHandle) -> None:
        """Thread: block on the worker's pipe, hand every message to the loop."""
        loop = self.loop
        assert loop is not None
        while True:
            try:
                msg = unpickle(h.conn.recv_bytes())
            except (EOFError, OSError, Exception):  # noqa: B014
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(self._on_dead, h)
                return
            try:
                loop.call_soon_threadsafe(self._on_message, h, msg)
            except RuntimeError:  # loop closed
                return

    def _on_message(self, h: WorkerHandle, msg) -> None:
        match msg:
            case WorkerReady(pid):
                h.pid = pid
                h.ready = True
                h.ever_ready = True
                self.slot_failures[h.slot] = 0
                self._settled(h)
            case WorkerFailed():
                h.dead = True
            case WorkerRecycled():  # it grew past worker_max_rss_mb and exits: a fresh one, not a failure
                h.recycled, h.ready = True, False
                self._settled(h)
                job, h.job = h.job, None
                if job is not None:  # given to it after its last answer: it exits without reading it
                    job.worker = None
                    self._release(job)
                    self._queue_of(job).appendleft(job)
                    self.queues.move_to_end(job.identity if job.identity is not None else f"job:{job.id}", last=False)
                    self._dispatch()
            case RunPending(run_id):  # a folded answer is coming; its payloads follow it
                h.storing.add(run_id)
                if self.run_store is not None:
                    self.run_store.expect(run_id, h.job.identity if h.job is not None else None)  # its owner
            case RunStored(run_id, passes):
                h.storing.discard(run_id)
                if self.run_store is not None:
                    if passes:
                        self.run_store.put(run_id, passes)
                    else:
                        self.run_store.abandon(run_id)
                self._dispatch()
            case Piece(job_id) | Done(job_id):
                job = h.job
                if job is None or job.id != job_id:
                    return
                if isinstance(msg, Done):
                    self.wait_estimate.finished(time.monotonic() - job.started)
                    h.job = None
                    h.idle_since = time.monotonic()
                    h.runs += 1
                    self.completed += 1
                    job.put(msg)
                    # the identity's turn lasts until the worker's housekeeping after its run is done
                    h.settling = job
                    if job.client is not None and self.clients.get(job.client) is job:
                        del self.clients[job.client]
                else:
                    job.put(msg)

    def _settled(self, h: WorkerHandle) -> None:
        """The worker's housekeeping after its last run is over: that run's identity may run again."""
        job, h.settling = h.settling, None
        if job is not None:
            self._release(job)
        self._dispatch()

    def _on_dead(self, h: WorkerHandle) -> None:
        if h.dead and h not in self.workers:
            return
        h.dead = True
        job, h.job = h.job, None
        if job is not None:
            job.fail(problem("WorkerError", "the run's worker stopped unexpectedly and was replaced; try again"))
            self._forget(job)
        self._replace(h)

    def _replace(self, h: WorkerHandle) -> None:
        """Kill ``h`` and start a fresh worker in its slot; a worker that died before it was ever
        ready (a broken install) is restarted with exponential backoff, not in a tight loop."""
        if self.closing or h not in self.workers or h.replacing:
            return
        h.replacing = True
        self._kill(h)
        for run_id in h.storing:  # its payload processes die with it: their groups will not come
            if self.run_store is not None:
                self.run_store.abandon(run_id)
        h.storing.clear()
        self._settled(h)
        with contextlib.suppress(Exception):
            h.conn.close()
        if h.recycled:
            self.recycled += 1
        else:
            self.restarts += 1
        failures = 0 if h.ever_ready else self.slot_failures.get(h.slot, 0) + 1
        self.slot_failures[h.slot] = failures
        delay = 0.0 if failures <= 1 else min(30.0, 0.5 * 2 ** (failures - 2))

        def respawn() -> None:
            if self.closing or h not in self.workers:
                return
            self.workers[self.workers.index(h)] = self._spawn(h.slot)

        if delay and self.loop is not None:
            self.loop.call_later(delay, respawn)
        else:
            respawn()

    @staticmethod
    def _kill(h: WorkerHandle) -> None:
        with contextlib.suppress(Exception):
            if h.proc.pid is not None and h.proc.is_alive():
                os.kill(h.proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            h.proc.join(0.5)

    # ------------------------------------------------------------------ supervisor
    async def _supervise(self) -> None:
        s = self.settings
        while True:
            await asyncio.sleep(s.supervisor_interval_s)
            now = time.monotonic()
            for h in list(self.workers):
                if h.dead or not h.proc.is_alive():
                    self._on_dead(h)
                elif h.job is not None and now - h.job.started > s.max_wall_s + s.supervisor_grace_s:
                    job, h.job = h.job, None
                    job.fail(problem("TimeoutError", f"the program ran longer than {s.max_wall_s:g} s and its worker "
                                                     f"was replaced (limit max_wall_s = {s.max_wall_s:g})"))
                    self._forget(job)
                    h.dead = True
                    self._replace(h)
                elif h.settling is not None and now - h.idle_since > SETTLE_LIMIT * (s.max_wall_s + s.supervisor_grace_s):
                    h.dead = True  # its housekeeping waits for payload processes that are themselves bounded
                    self._replace(h)
                elif not h.ready and now - h.started > s.worker_start_timeout_s:
                    h.dead = True
                    self._replace(h)
            # queue timeouts
            for key, jobs in list(self.queues.items()):
                while jobs and now - jobs[0].enqueued > s.queue_timeout_s:
                    job = jobs.popleft()
                    self.rejected += 1
                    job.fail(problem("Busy", BUSY_MESSAGE))
                    self._forget(job)
                if not jobs:
                    del self.queues[key]
            self._dispatch()

    # ------------------------------------------------------------------ scheduling
    @property
    def queued(self) -> int:
        return sum(len(jobs) for jobs in self.queues.values())

    def waiting_jobs(self) -> list[Job]:
        return [job for jobs in self.queues.values() for job in jobs]

    def _next_job(self) -> Job | None:
        """The next run in turn: the first identity (in round-robin order) with a waiting run and none running
        (or settling: see ``_settled``); that identity goes to the back of the order."""
        for key, jobs in list(self.queues.items()):
            while jobs and jobs[0].cancelled:
                jobs.popleft()
            if not jobs:
                del self.queues[key]
                continue
            if key in self.running:
                continue
            job = jobs.popleft()
            if jobs:
                self.queues.move_to_end(key)
            else:
                del self.queues[key]
            return job
        return None

    def _dispatch(self) -> None:
        """Give waiting runs to idle workers: one with no payloads building first, then the longest idle (its
        next run process is surely warm)."""
        if self.closing:
            return
        while self.queues:
            idle = [h for h in self.workers if h.idle]
            if not idle:
                return
            job = self._next_job()
            if job is None:
                return
            self._assign(min(idle, key=lambda w: (len(w.storing), w.idle_since)), job)

    def _assign(self, h: WorkerHandle, job: Job) -> None:
        if job.identity is not None:
            self.running[job.identity] = job
        h.job = job
        job.worker = h
        job.started = time.monotonic()
        try:
            h.conn.send(RunJob(job.id, job.source, job.options, backlog=bool(self.queues)))
        except Exception:  # noqa: BLE001 - a broken pipe: the reader thread reports the death
            h.job = None
            job.worker = None
            self._release(job)
            self._queue_of(job).appendleft(job)
            h.dead = True

    def _queue_of(self, job: Job) -> deque[Job]:
        key = job.identity if job.identity is not None else f"job:{job.id}"
        jobs = self.queues.get(key)
        if jobs is None:
            jobs = self.queues[key] = deque()
        return jobs

    def _release(self, job: Job) -> None:
        if job.identity is not None and self.running.get(job.identity) is job:
            del self.running[job.identity]

    def _forget(self, job: Job) -> None:
        self._release(job)
        if job.client is not None and self.clients.get(job.client) is job:
            del self.clients[job.client]

    def submit(self, source: str, options: RunOptions, *, client: str | None = None,
               identity: str | None = None) -> Job:
        """Queue a run for ``identity`` (cancelling the tab ``client``'s previous one); raises PoolBusy when the
        queue, or this identity's share of it, is full."""
        s = self.settings
        if self.closing:
            raise PoolBusy("the server is stopping")
        if client is not None:
            old = self.clients.get(client)
            if old is not None:
                self.cancel(old)
        mine = self.queues.get(identity) if identity is not None else None
        waiting_mine = sum(1 for j in mine if not j.cancelled) if mine else 0
        # NOTE: counted whether or not one of them runs yet: behind a full queue, a client sending 20 runs at once
        # would otherwise queue all 20
        held = waiting_mine + (identity in self.running)
        if identity is not None and held >= 1 + s.identity_queue_limit:
            self.rejected += 1
            raise PoolBusy(f"you already have {held} runs going or waiting (identity_queue_limit = "
                           f"{s.identity_queue_limit}); wait for them to finish", s.busy_retry_after_s)
        # a worker still settling after its last answer counts as free: it is ready again in moments
        free = any(h.ready and h.job is None and not h.dead for h in self.workers)
        mine_running = self.running.get(identity) if identity is not None else None
        if self.queued >= s.queue_limit and not (free and (mine_running is None or mine_running.finished)):
            self.rejected += 1
            raise PoolBusy(BUSY_MESSAGE, s.busy_retry_after_s)
        ready = sum(1 for h in self.workers if h.ready and not h.dead)
        if not free and self.wait_estimate.expected_wait(self.queued, ready) > s.queue_timeout_s:
            self.rejected += 1
            raise PoolBusy(BUSY_MESSAGE, self.wait_estimate.retry_after(self.queued, ready, s.queue_timeout_s,
                                                                        s.busy_retry_after_s))
        job = Job(next(self.ids), source, options, client, identity)
        if client is not None:
            self.clients[client] = job
        self._queue_of(job).append(job)
        self._dispatch()
        return job

    def cancel(self, job: Job) -> None:
        if job.finished or job.cancelled:
            return
        job.cancelled = True
        self._forget(job)
        if job.worker is None:
            for jobs in self.queues.values():
                with contextlib.suppress(ValueError):
                    jobs.remove(job)
            job.fail(problem("Cancelled", "the run was cancelled by a newer run"))
        else:
            with contextlib.suppress(Exception):
                job.worker.conn.send(CancelJob(job.id))

    # ------------------------------------------------------------------ state
    def state(self) -> dict:
        """What ``/healthz`` shows: counts only (no process ids: nothing about the host)."""
        return {
            "size": len(self.workers),
            "ready": sum(1 for h in self.workers if h.ready and not h.dead),
            "busy": sum(1 for h in self.workers if h.job is not None),
            "queued": self.queued,
            "identities": len(self.queues.keys() | self.running.keys()),
            "queue_limit": self.settings.queue_limit,
            "restarts": self.restarts,
            "recycled": self.recycled,
            "completed": self.completed,
            "rejected": self.rejected,
        }

    def workers_info(self) -> list[dict]:
        """Each worker process, with its pid: for operators and tests, never served over HTTP."""
        return [{"slot": h.slot, "pid": h.pid, "ready": h.ready, "busy": h.job is not None, "runs": h.runs,
                 "alive": (not h.dead) and h.proc.is_alive()} for h in self.workers]
