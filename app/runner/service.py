"""The run service: how the server runs a program (``RunService``, over the worker pool); the routes call it and
nothing else of the runner. The notebook's counterpart is ``app.runner.local.LocalRunService`` (one worker,
synchronous); both take a program through ``run_options`` and ``clean_source``.

* ``run``: the whole answer (``POST /api/run``); ``record_pass``: the same with one pass kept in full (a
  training run's middle pass, run again: runs are deterministic);
* ``open_stream``: the answer's events as they come (``/api/stream``), admitted before the first event is sent
  (a full queue is a 429, not an event), in chunks: each chunk holds one or more events, separated by
  ``EVENT_SEPARATOR`` (what the worker made of one message of the run process; a shared answer in one);
* ``cancel``: a tab's current run.

Every call names its ``Identity`` (app/core/identity.py): the pool admits runs by it (one running, a short queue,
round robin between identities).

A run that could not finish answers its error (``app.core.answer.failed_answer``); a full queue is ``busy``
(nothing ran); a client that went away cancels its run.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, replace

from app.core.answer import EVENT_SEPARATOR, failed_answer
from app.core.identity import Identity
from app.core.problems import problem
from app.runner.pool import BUSY_MESSAGE, Job, Pool, PoolBusy
from app.runner.protocol import Done, JobFailed, Piece, RunOptions

POLL_S = 0.25  # how often a waiting run checks that its client is still there
LEFT = object()  # a request waiting for an identical run saw its client go


def clean_source(source: str) -> str:
    """Lone surrogates cannot be encoded; replace them so the parser reports a clean error."""
    try:
        source.encode("utf-8")
        return source
    except UnicodeEncodeError:
        return source.encode("utf-8", "replace").decode("utf-8")


def run_options(*, stream: bool = False, passes: Iterable[int] = (), values: str = "full") -> RunOptions:
    """A run's options; ``passes`` (middle passes to keep in full) in order, once each."""
    return RunOptions(stream, tuple(sorted(set(passes))), values)


def _problem(error: object) -> dict:
    """A failed job's error as a clean ``problem()``."""
    err = error if isinstance(error, dict) else {}
    return problem(str(err.get("type") or "WorkerError"), str(err.get("message") or "the run failed"))


@dataclass(frozen=True)
class RunResult:
    """What a run came to: ``answer``, its JSON (the worker's when ``complete``; else an answer with only the
    error that stopped it); or ``busy``, why nothing ran (the queue is full); or neither: the client left."""

    answer: bytes | None = None
    complete: bool = False
    gzipped: bytes | None = None  # a shared answer: ``answer`` gzipped once for everyone it answers
    busy: str | None = None
    retry_after: int = 1  # with ``busy``: seconds until trying again makes sense


@dataclass(frozen=True)
class OpenedStream:
    """``open_stream``'s answer: ``events`` (chunks of events) to iterate, or ``busy`` (nothing ran) with its ``retry_after``."""

    events: AsyncIterator[bytes] | None = None
    busy: str | None = None
    retry_after: int = 1


class RunService:
    def __init__(self, pool: Pool, answers=None, cluster=None):
        self.pool = pool
        self.answers = answers  # app.runs.answer_cache.SharedAnswers: deterministic runs share one execution
        self.cluster = cluster  # app.cluster.runs.ClusterRuns (broker_url): tabs' runs and shares across processes
        self.followers: dict[str, int] = {}  # identity → its requests waiting for an identical run
        self.turn_waits: dict[str, asyncio.Event] = {}  # tab slot → its run waiting for the identity's turn (cancel: set)

    async def run(self, source: str, *, client: Identity, passes: Iterable[int] = (), values: str = "full",
                  disconnected: Callable[[], Awaitable[bool]] | None = None) -> RunResult:
        """Run ``source`` and wait for its answer; ``disconnected`` (the request's) is asked every POLL_S, and when
        the client has gone the run is cancelled and the result is empty. A deterministic program's answer comes
        from the answer cache, or from the identical run under way, when there is one."""
        source, options = clean_source(source), run_options(passes=passes, values=values)
        shared = self.answers
        key = shared.key(source, options) if shared is not None else None
        if key is not None:
            self._cancel_previous(client)  # one run per tab, whoever computes this one
        while key is not None:
            answer = await shared.get(key)
            if answer is not None:
                return RunResult(answer[0], complete=True, gzipped=answer[1])
            flight = shared.flights.get(key)
            if flight is None:
                break
            if client.key is not None and shared.flights.led_by(key) == client.key:
                # its own identity's run: this one queues behind it as its own (one running, a short queue)
                return await self._run_own(source, options, client, disconnected)
            busy = self._over_share(client)
            if busy is not None:
                return busy
            answer = await self._follow_as(client, flight, disconnected)
            if isinstance(answer, RunResult):
                return answer
            if answer is LEFT:
                return RunResult()
            if answer is not None:
                return RunResult(answer[0], complete=True, gzipped=answer[1])
            key = shared.key(source, options)  # the leader gave nothing to share: refused now, or try again
        if key is None:
            return await self._run_own(source, options, client, disconnected)
        flight = shared.flights.lead(key, client.key)
        result = None
        try:
            result = await self._run_own(source, options, client, disconnected)
        finally:
            packed = shared.settle(key, flight, result.answer if result is not None else None,
                                   result is not None and result.complete)
        # the leader's answer goes as the bytes compressed for sharing: no second compression on its way out
        return result if packed is None else replace(result, gzipped=packed)

    async def _run_own(self, source: str, options: RunOptions, client: Identity,
                       disconnected: Callable[[], Awaitable[bool]] | None) -> RunResult:
        started = await self._start(source, options, client, disconnected)
        if isinstance(started, RunResult):
            return started
        job, mark = started
        try:
            outcome = await self._wait(job, disconnected)
        finally:
            self._leave_cluster(client, mark)
        if outcome is None:
            return RunResult()
        if isinstance(outcome, Done):
            return RunResult(outcome.data, complete=True)
        error = _problem(outcome.error)
        if error["type"] == "Busy":  # waited in the queue past queue_timeout_s
            return RunResult(busy=error["message"])
        return RunResult(failed_answer(error))

    async def record_pass(self, source: str, index: int | None, *, client: Identity, values: str = "summary",
                          disconnected: Callable[[], Awaitable[bool]] | None = None) -> RunResult:
        """``run`` with pass ``index`` kept in full even when it is a training run's middle pass (None: only the
        first and last ones); values as the page takes them (summaries past value_limit) unless asked."""
        return await self.run(source, client=client, passes=() if index is None else (index,), values=values,
                              disconnected=disconnected)

    async def open_stream(self, source: str, *, client: Identity, values: str = "full") -> OpenedStream:
        """Admit the run now; its stream events (JSON, ``"type"`` first) come from ``events``, ``done`` last (a
        run that could not finish ends with a ``done`` carrying its error). Leaving the iteration early cancels
        the run; so does never starting it (close ``events``). A deterministic program's events come from the
        answer cache, or (all at once, when it ends) from the identical run under way."""
        source, options = clean_source(source), run_options(stream=True, values=values)
        shared = self.answers
        key = shared.key(source, options) if shared is not None else None
        if key is not None:
            self._cancel_previous(client)
        while key is not None:
            events = await shared.get(key)
            if events is None and (flight := shared.flights.get(key)) is not None:
                if client.key is not None and shared.flights.led_by(key) == client.key:
                    key = None  # its own identity's run: this one queues behind it as its own
                    break
                busy = self._over_share(client)
                if busy is not None:
                    return OpenedStream(busy=busy.busy, retry_after=busy.retry_after)
                events = await self._follow_as(client, flight, None)
                if isinstance(events, RunResult):
                    return OpenedStream(busy=events.busy, retry_after=events.retry_after)
                if events is None:
                    key = shared.key(source, options)
                    continue
            if events is not None:
                return OpenedStream(_replay(events[0]))
            break
        started = await self._start(source, options, client)
        if isinstance(started, RunResult):
            return OpenedStream(busy=started.busy, retry_after=started.retry_after)
        job, mark = started
        if key is None:
            return OpenedStream(self._events(job, client=client, mark=mark))
        return OpenedStream(self._events(job, shared, key, shared.flights.lead(key, client.key), client=client,
                                         mark=mark))

    async def stream(self, source: str, *, client: Identity, values: str = "full") -> AsyncIterator[bytes]:
        """``open_stream`` as one iteration: a full queue is a ``done`` carrying the ``Busy`` error."""
        opened = await self.open_stream(source, client=client, values=values)
        if opened.events is None:
            yield failed_answer(problem("Busy", opened.busy or ""), stream=True)
            return
        async for chunk in opened.events:
            for data in chunk.split(EVENT_SEPARATOR):
                yield data

    async def _events(self, job: Job, shared=None, key: str = "", flight=None, *,
                      client: Identity | None = None, mark: tuple | None = None) -> AsyncIterator[bytes]:
        """The job's events; with ``shared``, recorded and settled as ``key``'s shared answer when the run ends
        (``Done``), or settled empty when it does not (failed, or the client left)."""
        recorded: list[bytes] | None = [] if shared is not None else None
        complete = False
        try:
            while True:
                item = await job.queue.get()
                if isinstance(item, JobFailed):
                    yield failed_answer(_problem(item.error), stream=True)
                    return
                if recorded is not None:
                    recorded.append(item.data)
                complete = isinstance(item, Done)
                yield item.data
                if complete:
                    return
        finally:
            # the client went away (or we finished): make sure the run does not go on
            self.pool.cancel(job)
            if client is not None:
                self._leave_cluster(client, mark)
            if shared is not None:
                shared.settle(key, flight, EVENT_SEPARATOR.join(recorded) if complete else None, complete)

    def _over_share(self, client: Identity) -> RunResult | None:
        """Waiting for an identical run counts as one of the identity's runs: past one running and
        ``identity_queue_limit`` waiting (its own and those it follows), busy as ``submit`` says it."""
        pool, key = self.pool, client.key
        if key is None:
            return None
        limit = pool.settings.identity_queue_limit
        held = (key in pool.running) + sum(1 for j in pool.queues.get(key, ()) if not j.cancelled)
        held += self.followers.get(key, 0)
        if held < 1 + limit:
            return None
        pool.rejected += 1
        return RunResult(busy=f"you already have {held} runs going or waiting (identity_queue_limit = {limit}); "
                              "wait for them to finish", retry_after=pool.settings.busy_retry_after_s)

    async def _follow_as(self, client: Identity, flight, disconnected):
        """Wait for another request's identical run, counted in ``client``'s share while it waits (with a broker,
        in its share of the whole cluster too: a busy RunResult past it)."""
        if self.cluster is not None and not await self.cluster.admit(client.key):
            return self._cluster_busy()
        self.answers.shared_waits += 1
        self._following(client, 1)
        try:
            return await _follow(flight, disconnected, self.answers.flights.stale_s)
        finally:
            self._following(client, -1)
            if self.cluster is not None:
                self.cluster.leave(client.key)

    def _following(self, client: Identity, step: int) -> None:
        if client.key is not None:
            count = self.followers.get(client.key, 0) + step
            if count > 0:
                self.followers[client.key] = count
            else:
                self.followers.pop(client.key, None)

    async def _start(self, source: str, options: RunOptions, client: Identity,
                     disconnected: Callable[[], Awaitable[bool]] | None = None) -> tuple[Job, tuple | None] | RunResult:
        """The run queued for ``client`` and, with a broker, counted, marked and given its identity's turn across the
        cluster: (job, marks), or a RunResult (busy; cancelled or left while waiting for the turn). The caller
        leaves the cluster (``_leave_cluster(client, marks)``) when the run ends."""
        busy = await self._enter_cluster(client)
        if busy is not None:
            return busy
        marks = None
        if self.cluster is not None:
            try:
                marks = (await self.cluster.mark(client.run_slot), None)  # first: a cancel elsewhere finds it waiting
                turn = await self._take_turn(client, disconnected)
            except BaseException:
                self._leave_cluster(client, marks)
                raise
            if isinstance(turn, RunResult):
                self._leave_cluster(client, marks)
                return turn
            marks = (marks[0], turn)
        try:
            job = self.pool.submit(source, options, client=client.run_slot, identity=client.key)
        except PoolBusy as e:
            self._leave_cluster(client, marks)
            return RunResult(busy=str(e), retry_after=e.retry_after)
        return job, marks

    async def _take_turn(self, client: Identity, disconnected: Callable[[], Awaitable[bool]] | None):
        """The identity's turn in the cluster (its mark, or None: nothing held), or the RunResult of a wait that
        ended first: the tab's newer run or a cancel (Cancelled), the client gone (empty), ``queue_timeout_s`` (busy)."""
        slot = client.run_slot
        cancelled, left = asyncio.Event(), []
        self._cancel_previous(client)  # the tab's older run (waiting, or holding the turn) gives way to this one
        if slot:
            self.turn_waits[slot] = cancelled

        async def given_up() -> bool:
            if not cancelled.is_set() and disconnected is not None and await disconnected():
                left.append(True)
            return cancelled.is_set() or bool(left)

        try:
            turn = await self.cluster.take_turn(client.key, given_up)
        finally:
            if slot and self.turn_waits.get(slot) is cancelled:
                del self.turn_waits[slot]
        if turn is not False:
            return turn
        if left:
            return RunResult()
        if cancelled.is_set():
            return RunResult(failed_answer(problem("Cancelled", "the run was cancelled by a newer run")))
        self.pool.rejected += 1
        return RunResult(busy=BUSY_MESSAGE, retry_after=self.pool.settings.busy_retry_after_s)

    async def _enter_cluster(self, client: Identity) -> RunResult | None:
        """With a broker: the tab's run on another process cancelled, and this run counted in the identity's share
        of the whole cluster (busy past it)."""
        cluster = self.cluster
        if cluster is None:
            return None
        await cluster.cancel_elsewhere(client.run_slot)
        if await cluster.admit(client.key):
            return None
        return self._cluster_busy()

    def _cluster_busy(self) -> RunResult:
        self.pool.rejected += 1
        limit = self.pool.settings.identity_queue_limit
        return RunResult(busy=f"you already have runs going or waiting on this server's processes "
                              f"(identity_queue_limit = {limit}); wait for them to finish",
                         retry_after=self.pool.settings.busy_retry_after_s)

    def _leave_cluster(self, client: Identity, marks: tuple | None = None) -> None:
        """The run ended (or never started): uncounted, and its tab's mark and its identity's turn given back."""
        if self.cluster is not None:
            self.cluster.leave(client.key)
            if marks is not None:
                self.cluster.unmark(client.run_slot, marks[0])
                self.cluster.give_turn(client.key, marks[1])

    def cancel_slot(self, slot: str) -> bool:
        """Cancel this process's run of the tab ``slot`` (a cancel another process received); whether it had one."""
        job = self.pool.clients.get(slot)
        if job is not None:
            self.pool.cancel(job)
        return self._cancel_turn_wait(slot) or job is not None

    def _cancel_turn_wait(self, slot: str | None) -> bool:
        """The tab's run waiting for its identity's turn, cancelled; whether there was one."""
        waiting = self.turn_waits.pop(slot, None) if slot else None
        if waiting is not None:
            waiting.set()
        return waiting is not None

    async def cancel_anywhere(self, client: Identity) -> bool:
        """``cancel``, reaching the process that runs the tab's run when it is another one (a broker)."""
        if self.cancel(client):
            return True
        return self.cluster is not None and await self.cluster.cancel_elsewhere(client.run_slot)

    def _cancel_previous(self, client: Identity) -> None:
        """The tab's run under way, cancelled (``submit`` does it for a run of its own)."""
        self._cancel_turn_wait(client.run_slot)
        job = self.pool.clients.get(client.run_slot) if client.run_slot else None
        if job is not None:
            self.pool.cancel(job)

    def cancel(self, client: Identity) -> bool:
        """Cancel the tab's current run; whether it had one."""
        slot = client.run_slot
        job = self.pool.clients.get(slot) if slot else None
        if job is not None:
            with contextlib.suppress(Exception):
                self.pool.cancel(job)
        return self._cancel_turn_wait(slot) or job is not None

    async def _wait(self, job: Job, disconnected: Callable[[], Awaitable[bool]] | None) -> Done | JobFailed | None:
        """The job's ``Done`` or ``JobFailed``; None when the client went away first (the run is cancelled)."""
        pool = self.pool
        getter = asyncio.ensure_future(job.queue.get())
        try:
            while True:
                done, _ = await asyncio.wait({getter}, timeout=POLL_S if disconnected is not None else None)
                if done:
                    item = getter.result()
                    if not isinstance(item, Piece):
                        return item
                    getter = asyncio.ensure_future(job.queue.get())
                    continue
                if disconnected is not None and await disconnected():
                    pool.cancel(job)
                    return None
        finally:
            if not getter.done():
                getter.cancel()
            if not job.finished:
                pool.cancel(job)


async def _follow(flight: asyncio.Future, disconnected: Callable[[], Awaitable[bool]] | None, stale_s: float):
    """The identical run's answer (None: it gave none to share, or none came within ``stale_s``), or LEFT when this
    request's client went first."""
    deadline = time.monotonic() + stale_s
    while time.monotonic() < deadline:
        done, _ = await asyncio.wait({flight}, timeout=POLL_S if disconnected is not None else stale_s)
        if done:
            return flight.result()
        if disconnected is not None and await disconnected():
            return LEFT
    return None


async def _replay(events: bytes) -> AsyncIterator[bytes]:
    yield events  # one chunk: a hall asking for one program gets its stream in one write each
