"""Every message that crosses a pipe of the runner, one typed definition each (pickled NamedTuples).

Three pipes (and the job queue the pool fills for a route):

* server (``app.runner.pool``, the notebook's ``app.runner.local``) → worker (``app.runner.worker``):
  ``RunJob``, ``CancelJob``, ``StopWorker``;
* worker → server: ``WorkerReady``, ``WorkerFailed``, ``WorkerRecycled``, ``RunPending``, ``RunStored``, ``Piece``,
  ``Done``;
* worker → its run process: ``Program``; run process (``app.runner.capture``) → worker: ``Events``,
  ``Stdout``, ``Figure``, ``End``;
* pool → the route waiting for a job (an asyncio queue): ``Piece``, ``Done``, ``JobFailed``.

Plain data only: this module imports nothing of the engine, so the server process loads it cheaply.
Receivers dispatch with ``match``; a message of another type is ignored where noted.
"""

from __future__ import annotations

from typing import Any, NamedTuple


# ----- server → worker -----
class RunOptions(NamedTuple):
    stream: bool = False  # answer as stream pieces then ``done`` (``/api/stream``), else one answer
    passes: tuple[int, ...] = ()  # middle passes to record in full (app.trace.policy.RunPolicy.asked)
    values: str = "full"  # the request's ``values``: "full" or "summary" (docs/trace.md §2)


class RunJob(NamedTuple):
    job_id: int
    source: str
    options: RunOptions
    # runs wait behind this one: the worker's next run process skips its warm-up (a burst keeps every core busy,
    # so warming ahead only adds the warm-up's CPU time to each run instead of overlapping idle time)
    backlog: bool = False


class CancelJob(NamedTuple):
    job_id: int


class StopWorker(NamedTuple):
    pass


# ----- worker → server -----
class WorkerReady(NamedTuple):
    pid: int


class WorkerFailed(NamedTuple):
    """The worker could not start (no Graphviz, a broken install); it exits after sending this."""

    pid: int
    reason: str


class WorkerRecycled(NamedTuple):
    """The worker grew past ``worker_max_rss_mb`` after a run and exits; a fresh one takes its slot (not a
    failure: the pool does not count it as a restart)."""

    rss_mb: int


class RunPending(NamedTuple):
    """A folded answer is on its way: the run store expects this run's payloads (``RunStored`` follows)."""

    run_id: str


class RunStored(NamedTuple):
    """A folded run's group payloads, ``{pass index: app.trace.payloads.PassPayloads}``; None when they could
    not be built (the run's groups then answer ``RunExpired``)."""

    run_id: str
    passes: dict[int, Any] | None


class Piece(NamedTuple):
    """Stream events' JSON (``{"type": ...}`` first), one or more (``app.core.answer.EVENT_SEPARATOR`` between
    them); also what the pool queues for the route."""

    job_id: int
    data: bytes


class Done(NamedTuple):
    """The whole answer's JSON (the stream's ``done`` event when streaming); the job's last message."""

    job_id: int
    data: bytes


# ----- pool → route (the job's queue) -----
class JobFailed(NamedTuple):
    """The run could not finish (busy, cancelled, its worker died): ``error`` is ``app.core.problems.problem``."""

    job_id: int
    error: dict


# ----- worker → its run process -----
class Program(NamedTuple):
    source: str
    options: RunOptions


# ----- run process → worker -----
class Events(NamedTuple):
    """Recorder events, exported (docs/trace.md §1), in order."""

    events: list[dict]


class Stdout(NamedTuple):
    text: str


class Figure(NamedTuple):
    """A figure shown by the program (``{"svg", "at"}``), sent when streaming, after the text printed before it."""

    figure: dict


class End(NamedTuple):
    """The run's last message: the whole stdout, the error (``problem`` shape) or None, the variables, every
    figure, and whether (and why) the capture cut something."""

    stdout: str
    error: dict | None
    variables: dict
    figures: list
    truncated: bool
    reasons: list[str]
