"""A folded pass's groups (docs/trace.md §5): ``GET /api/runs/{run}/passes/{k}/groups/{gid}`` (the group's
contents laid out on their own, values, frames) and ``GET /api/runs/{run}/passes/{k}/search?q=`` (tensors
and ops by name, with the groups to expand to reveal them). Answered from the run store (app/runs):
a run that left it is 404 ``RunExpired`` (``reason`` "expired") and the page runs the program again; a run this process
never had (several processes without a broker: another one ran it) is ``reason`` "elsewhere", and the page says so."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from app.api.deps import RunStoreDep, SettingsDep
from app.api.schemas import Problem
from app.cluster.process import PROCESS_ID
from app.core.errors import problem_response
from app.core.problems import problem_body
from app.core.responses import OrjsonResponse
from app.runs.store import ELSEWHERE, PENDING_FORGET_S

router = APIRouter(prefix="/api/runs", tags=["runs"])

EXPIRED = "this run is no longer on the server; run the program again"
ELSEWHERE_MESSAGE = ("this run is on another server process, which this request did not reach (several processes "
                     "without FLOWGRAD_BROKER_URL need sticky routing); run the program again here")
# a run whose answer is out waits for its payloads while they are built: their builder is bounded by its own CPU
# time and the pool ends the wait if the worker dies, so only a loaded machine makes it long (15 s failed at load 20)
PENDING_WAIT_S = PENDING_FORGET_S
BIG_PAYLOAD = 256_000  # assembled in a thread above this many bytes (the event loop keeps serving)

RunId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[0-9a-f]+$")]
PassIndex = Annotated[int, Path(ge=0, le=1_000_000)]
GroupId = Annotated[str, Path(min_length=2, max_length=16, pattern=r"^g[0-9]+$")]
RESPONSES = {404: {"model": Problem, "description": "RunExpired: the run is not in the server's store; `reason` says "
                                                   "why: \"expired\" (it left the store, or never was) or "
                                                   "\"elsewhere\" (another server process ran it and this one cannot "
                                                   "reach its store: several processes without a broker); `process` "
                                                   "names the process that answered"}}


def _expired(store, run: str) -> Response:
    reason = store.missing(run)
    body = problem_body("RunExpired", ELSEWHERE_MESSAGE if reason == ELSEWHERE else EXPIRED)
    return OrjsonResponse(status_code=404, content={**body, "reason": reason, "process": PROCESS_ID})


@router.get("/{run}/passes/{k}/groups/{gid}", responses=RESPONSES, summary="A folded pass's group, laid out")
async def group(run: RunId, k: PassIndex, gid: GroupId, store: RunStoreDep, settings: SettingsDep) -> Response:
    """The group's contents laid out on their own (coordinates from the group box's top-left), its direct
    child groups collapsed, values and gradients, the frames inside it, and (for a subtree of at most
    `group_payload_nodes` nodes) every descendant's payload."""
    payloads = await store.wait(run, k, PENDING_WAIT_S)
    if payloads is None or gid not in payloads.cores:
        return _expired(store, run) if payloads is None else problem_response(404, "NoSuchGroup", f"no group {gid} in pass {k}")
    size = payloads.sizes.get(gid, 0)
    if size > BIG_PAYLOAD // 64:
        body = await run_in_threadpool(payloads.payload, gid, settings.group_payload_nodes)
    else:
        body = payloads.payload(gid, settings.group_payload_nodes)
    return Response(content=body, media_type="application/json")


@router.get("/{run}/passes/{k}/search", responses=RESPONSES, summary="Find tensors and ops in a folded pass")
async def search(run: RunId, k: PassIndex, store: RunStoreDep,
                 q: Annotated[str, Query(min_length=1, max_length=100, description="case-insensitive substring")],
                 limit: Annotated[int, Query(ge=1, le=500)] = 50) -> Response:
    """Tensor names, op names and labels, grad_fn names containing `q`; `path` lists the groups to
    expand (outermost first) to reveal each one, `[]` when it is visible."""
    payloads = await store.wait(run, k, PENDING_WAIT_S)
    if payloads is None:
        return _expired(store, run)
    return OrjsonResponse(payloads.find(q, limit))
