"""``POST /api/run``: run a program, answer the whole trace (see docs/trace.md §2)."""

from __future__ import annotations

import asyncio
import contextlib

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.api.deps import ClientDep, PoolDep
from app.api.schemas import Problem, RunRequest, Trace
from app.core.errors import problem_response
from app.core.problems import empty_trace, problem
from app.core.responses import OrjsonResponse
from app.runner.pool import Job, Pool, PoolBusy

router = APIRouter(prefix="/api", tags=["run"])


def safe_source(source: str) -> str:
    """Lone surrogates cannot be encoded; replace them so the parser reports a clean error."""
    try:
        source.encode("utf-8")
        return source
    except UnicodeEncodeError:
        return source.encode("utf-8", "replace").decode("utf-8")


BUSY_HEADERS = {"Retry-After": "1"}


def pool_problem(payload: object) -> dict:
    """The error a pool job ended with (``("error", problem(...))``) as a clean ``problem()``."""
    err = payload if isinstance(payload, dict) else {}
    return problem(str(err.get("type") or "WorkerError"), str(err.get("message") or "the run failed"))


async def wait_job(pool: Pool, job: Job, request: Request | None = None,
                   poll_s: float = 0.25) -> tuple[str, object] | None:
    """The job's final ("done", bytes) or ("error", dict). If the client goes away first (its
    fetch was aborted), the run is cancelled and None returned."""
    getter = asyncio.ensure_future(job.queue.get())
    try:
        while True:
            done, _ = await asyncio.wait({getter}, timeout=poll_s if request is not None else None)
            if done:
                kind, payload = getter.result()
                if kind in ("done", "error"):
                    return kind, payload
                getter = asyncio.ensure_future(job.queue.get())
                continue
            if request is not None and await request.is_disconnected():
                pool.cancel(job)
                return None
    finally:
        if not getter.done():
            getter.cancel()
        if not job.finished:
            pool.cancel(job)


@router.post(
    "/run",
    response_model=Trace,
    responses={422: {"model": Problem, "description": "malformed request"},
               429: {"model": Problem, "description": "busy: the run queue is full"}},
    summary="Run a program and return its whole trace",
)
async def run(body: RunRequest, request: Request, pool: PoolDep, client: ClientDep) -> Response:
    """Runs the program in an isolated worker. Run-time errors are part of the 200 answer
    (`error`), with everything that ran before them; non-finite numbers are `"nan"`, `"inf"`,
    `"-inf"`. The answer is at most `max_answer_bytes`: past it passes are folded and
    `truncated_reason` says why."""
    try:
        job = pool.submit(safe_source(body.source), stream=False, client=body.client_id or client,
                          passes=tuple(sorted(set(body.passes))))
    except PoolBusy as e:
        return problem_response(429, "Busy", str(e), headers=BUSY_HEADERS)
    got = await wait_job(pool, job, request)
    if got is None:  # the client left; nobody reads this
        return Response(status_code=204)
    kind, payload = got
    if kind == "done":
        return Response(content=payload, media_type="application/json")
    err = pool_problem(payload)
    if err["type"] == "Busy":
        return problem_response(429, err["type"], err["message"], headers=BUSY_HEADERS)
    return Response(content=orjson.dumps(empty_trace(err)), media_type="application/json")


@router.post("/cancel", summary="Cancel this client's current run", responses={200: {"model": dict}})
async def cancel(pool: PoolDep, client: ClientDep) -> OrjsonResponse:
    job = pool.clients.get(client) if client else None
    if job is not None:
        with contextlib.suppress(Exception):
            pool.cancel(job)
    return OrjsonResponse({"cancelled": job is not None})
