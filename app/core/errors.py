"""Exception handlers: every failure is a JSON answer (``problem_response``); no traceback or host
detail ever leaves. A bug (an exception nothing handled) is a 500 and a logged traceback."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.core.problems import problem_body
from app.core.responses import OrjsonResponse

log = logging.getLogger("flowgrad")

REQUEST_MESSAGE = "the request body must be JSON like {\"source\": \"...\"}"
INTERNAL_MESSAGE = "the server failed to handle the request"


def problem_response(status: int, type_: str, message: str, *, detail: Any = None,
                     headers: Mapping[str, str] | None = None) -> OrjsonResponse:
    """An HTTP error answer: ``status`` with ``{"detail", "error": {"type", "message", "line", "column"}}``."""
    return OrjsonResponse(status_code=status, content=problem_body(type_, message, detail=detail),
                          headers=dict(headers) if headers else None)


def busy_response(message: str, retry_after: int = 1) -> OrjsonResponse:
    """429 ``Busy``: the run queue (or this client's share of it) is full, or a run waited in it too long; the
    client may try again in ``retry_after`` seconds."""
    return problem_response(429, "Busy", message, headers={"Retry-After": str(max(1, int(retry_after)))})


def status_type(status: int) -> str:
    """An error type for an HTTP status: 404 → "NotFound", 405 → "MethodNotAllowed"."""
    try:
        return re.sub(r"[^A-Za-z0-9]", "", HTTPStatus(status).phrase.title())
    except ValueError:
        return "HTTPError"


def _clean_errors(errors) -> list[dict]:
    out = []
    for e in errors:
        out.append({"loc": list(e.get("loc", [])), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))})
    return out


def install(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError):
        return problem_response(422, "RequestError", REQUEST_MESSAGE, detail=_clean_errors(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        headers = getattr(exc, "headers", None)
        if exc.status_code in (204, 304):  # no body allowed
            return Response(status_code=exc.status_code, headers=headers)
        return problem_response(exc.status_code, status_type(exc.status_code), str(exc.detail), detail=exc.detail,
                                headers=headers)

    @app.exception_handler(Exception)
    async def _unhandled(request: Request, exc: Exception):
        # a bug of ours: 500 (never a 4xx that blames the request), logged with its traceback
        log.exception("unhandled %s on %s %s", type(exc).__name__, request.method, request.url.path)
        return problem_response(500, "InternalServerError", INTERNAL_MESSAGE)
