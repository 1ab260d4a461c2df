"""``POST /api/run``: run a program, answer the whole trace (see docs/trace.md §2)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.api.deps import IdentityDep, RunsDep
from app.api.schemas import Problem, RunRequest, Trace
from app.core.errors import busy_response
from app.core.responses import OrjsonResponse

router = APIRouter(prefix="/api", tags=["run"])


@router.post(
    "/run",
    response_model=Trace,
    responses={422: {"model": Problem, "description": "malformed request"},
               429: {"model": Problem, "description": "busy: the run queue (or this client's share) is full; "
                                                      "Retry-After says when to try again"}},
    summary="Run a program and return its whole trace",
)
async def run(body: RunRequest, request: Request, runs: RunsDep, client: IdentityDep) -> Response:
    """Runs the program in an isolated worker. Run-time errors are part of the 200 answer
    (`error`), with everything that ran before them; non-finite numbers are `"nan"`, `"inf"`,
    `"-inf"`. The answer is at most `max_answer_bytes`: past it passes are folded and
    `truncated_reason` says why."""
    result = await runs.run(body.source, client=client.refined(body.client_id), passes=body.passes, values=body.values,
                            disconnected=request.is_disconnected)
    if result.busy is not None:
        return busy_response(result.busy, result.retry_after)
    if result.answer is None:  # the client left; nobody reads this
        return Response(status_code=204)
    if result.gzipped is not None and "gzip" in request.headers.get("accept-encoding", ""):
        # a shared answer, compressed once for the whole lecture hall (app/runs/answer_cache.py)
        return Response(content=result.gzipped, media_type="application/json",
                        headers={"Content-Encoding": "gzip", "Vary": "Accept-Encoding"})
    return Response(content=result.answer, media_type="application/json")


@router.post("/cancel", summary="Cancel this client's current run", responses={200: {"model": dict}})
async def cancel(runs: RunsDep, client: IdentityDep) -> OrjsonResponse:
    return OrjsonResponse({"cancelled": await runs.cancel_anywhere(client)})
