"""The run service: how the server runs a program (``RunService``, over the worker pool); the routes call it and
nothing else of the runner. The notebook's counterpart is ``app.runner.local.LocalRunService`` (one worker,
synchronous); both take a program through ``run_options`` and ``clean_source``.

* ``run``: the whole answer (``POST /api/run``); ``record_pass``: the same with one pass kept in full (a
  training run's middle pass, run again: runs are deterministic);
* ``open_stream``: the answer's events as they come (``/api/stream``), admitted before the first event is sent
  (a full queue is a 429, not an event);
* ``cancel``: a tab's current run.

Every call names its ``Identity`` (app/core/identity.py): the pool admits runs by it (one running, a short queue,
round robin between identities).

A run that could not finish answers its error (``app.core.answer.failed_answer``); a full queue is ``busy``
(nothing ran); a client that went away cancels its run.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass

from app.core.answer import failed_answer
from app.core.identity import Identity
from app.core.problems import problem
from app.runner.pool import Job, Pool, PoolBusy
from app.runner.protocol import Done, JobFailed, Piece, RunOptions

POLL_S = 0.25  # how often a waiting run checks that its client is still there


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
    busy: str | None = None
    retry_after: int = 1  # with ``busy``: seconds until trying again makes sense


@dataclass(frozen=True)
class OpenedStream:
    """``open_stream``'s answer: ``events`` to iterate, or ``busy`` (nothing ran) with its ``retry_after``."""

    events: AsyncIterator[bytes] | None = None
    busy: str | None = None
    retry_after: int = 1


class RunService:
    def __init__(self, pool: Pool):
        self.pool = pool

    async def run(self, source: str, *, client: Identity, passes: Iterable[int] = (), values: str = "full",
                  disconnected: Callable[[], Awaitable[bool]] | None = None) -> RunResult:
        """Run ``source`` and wait for its answer; ``disconnected`` (the request's) is asked every POLL_S, and when
        the client has gone the run is cancelled and the result is empty."""
        try:
            job = self.pool.submit(clean_source(source), run_options(passes=passes, values=values),
                                   client=client.run_slot, identity=client.key)
        except PoolBusy as e:
            return RunResult(busy=str(e), retry_after=e.retry_after)
        outcome = await self._wait(job, disconnected)
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

    def open_stream(self, source: str, *, client: Identity, values: str = "full") -> OpenedStream:
        """Admit the run now; its stream events (JSON, ``"type"`` first) come from ``events``, ``done`` last (a
        run that could not finish ends with a ``done`` carrying its error). Leaving the iteration early cancels
        the run; so does never starting it (close ``events``)."""
        try:
            job = self.pool.submit(clean_source(source), run_options(stream=True, values=values),
                                   client=client.run_slot, identity=client.key)
        except PoolBusy as e:
            return OpenedStream(busy=str(e), retry_after=e.retry_after)
        return OpenedStream(self._events(job))

    async def stream(self, source: str, *, client: Identity, values: str = "full") -> AsyncIterator[bytes]:
        """``open_stream`` as one iteration: a full queue is a ``done`` carrying the ``Busy`` error."""
        opened = self.open_stream(source, client=client, values=values)
        if opened.events is None:
            yield failed_answer(problem("Busy", opened.busy or ""), stream=True)
            return
        async for data in opened.events:
            yield data

    async def _events(self, job: Job) -> AsyncIterator[bytes]:
        try:
            while True:
                item = await job.queue.get()
                if isinstance(item, JobFailed):
                    yield failed_answer(_problem(item.error), stream=True)
                    return
                yield item.data
                if isinstance(item, Done):
                    return
        finally:
            # the client went away (or we finished): make sure the run does not go on
            self.pool.cancel(job)

    def cancel(self, client: Identity) -> bool:
        """Cancel the tab's current run; whether it had one."""
        slot = client.run_slot
        job = self.pool.clients.get(slot) if slot else None
        if job is not None:
            with contextlib.suppress(Exception):
                self.pool.cancel(job)
        return job is not None

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
