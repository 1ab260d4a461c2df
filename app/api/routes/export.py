"""``POST /api/export/html``: run a program and answer the page as one self-contained, offline ``.html`` file."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from app.api.deps import IdentityDep, RunsDep, RunStoreDep, SettingsDep
from app.api.schemas import Problem
from app.core.errors import busy_response, problem_response
from app.export.html import build_html
from app.runner.service import clean_source
from app.runs.export import inline_payloads

EXPORT_PAGE_BYTES = 2_000_000  # room kept for the page itself (scripts, styles, fonts: ~1.5 MB)

router = APIRouter(prefix="/api/export", tags=["export"])


class ExportRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    source: str = Field(..., description="the program (a PyTorch subset)")
    client_id: str | None = Field(None, max_length=128, description="one run per client, as for /api/run")
    pass_: int | None = Field(None, alias="pass", ge=0, le=1_000_000,
                              description="the pass the file opens at (recorded in full, as /api/run's `passes`)")
    step: int | None = Field(None, ge=0, le=10_000_000, description="the step it opens at (none: the end)")
    node: str | None = Field(None, max_length=128, description="the node selected in the inspector")
    theme: Literal["light", "dark"] | None = None
    projector: bool = False


def _file_name(view: dict) -> str:
    parts = ["flowgrad"]
    if view.get("pass") is not None:
        parts.append(f"pass{view['pass']}")
    if view.get("step") is not None:
        parts.append(f"step{view['step']}")
    return "-".join(parts) + ".html"


@router.post(
    "/html",
    response_class=Response,
    responses={200: {"content": {"text/html": {}}, "description": "the .html file (an attachment)"},
               413: {"model": Problem, "description": "the file would be larger than max_export_bytes"},
               429: {"model": Problem, "description": "busy: the run queue is full"}},
    summary="Run a program and answer the page as one offline .html file",
)
async def export_html(body: ExportRequest, request: Request, runs: RunsDep, client: IdentityDep,
                      settings: SettingsDep, store: RunStoreDep) -> Response:
    """Runs the program like `POST /api/run` (same pool, limits and answer budget) and answers one
    file: the page's scripts, styles, KaTeX fonts and this trace inline, opening at the given view.
    Opened from disk it replays forward and backward with no network; Run and the gradient check
    are hidden. A run-time error is part of the file, as on the page."""
    source = clean_source(body.source)
    # the pass the file opens at is recorded in full even when it is a training run's middle pass
    # and the variables come as the page takes them (summaries past value_limit): the file draws nothing more
    result = await runs.record_pass(source, body.pass_, client=client.refined(body.client_id),
                                    disconnected=request.is_disconnected)
    if result.busy is not None:
        return busy_response(result.busy, result.retry_after)
    if result.answer is None:  # the client left
        return Response(status_code=204)
    payload = result.answer
    view = {"pass": body.pass_, "step": body.step, "node": body.node, "theme": body.theme, "projector": body.projector}
    if result.complete:  # folded passes carry their groups' payloads, when they fit (app/runs/export.py)
        payload = await inline_payloads(payload, store, settings.max_export_bytes - len(payload) - EXPORT_PAGE_BYTES)
    html = await run_in_threadpool(build_html, payload, source, view)
    if len(html) > settings.max_export_bytes:
        return problem_response(413, "ExportTooLarge", f"the file would be {len(html)} bytes "
                                f"(limit max_export_bytes = {settings.max_export_bytes})")
    return Response(content=html, media_type="text/html; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{_file_name(view)}"'})
