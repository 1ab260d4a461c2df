"""Exception handlers: every failure is a JSON answer; no traceback or host detail ever leaves."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.core.responses import OrjsonResponse

log = logging.getLogger("flowgrad")


def _clean_errors(errors) -> list[dict]:
    out = []
    for e in errors:
        out.append({"loc": list(e.get("loc", [])), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))})
    return out


def install(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError):
        return OrjsonResponse(status_code=422, content={
            "detail": _clean_errors(exc.errors()),
            "error": {"type": "RequestError", "message": "the request body must be JSON like {\"source\": \"...\"}",
                      "line": None, "column": None}})

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        return OrjsonResponse(status_code=exc.status_code, content={"detail": exc.detail},
                              headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _any(request: Request, exc: Exception):  # pragma: no cover - last resort
        log.exception("unhandled error on %s", request.url.path)
        return OrjsonResponse(status_code=400, content={
            "detail": "the request could not be handled",
            "error": {"type": "ServerError", "message": "the request could not be handled", "line": None,
                      "column": None}})
