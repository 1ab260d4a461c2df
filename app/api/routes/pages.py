"""``GET /``: the page. Sets the client cookie that makes 'one run per client' work for browsers."""

from __future__ import annotations

import logging
import secrets

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.api.deps import SettingsDep, TemplatesDep
from app.classroom.codes import normalise_code

router = APIRouter(tags=["pages"])
log = logging.getLogger("flowgrad")


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def index(request: Request, templates: TemplatesDep, settings: SettingsDep) -> HTMLResponse:
    return _page(request, templates, settings, None)


@router.get("/s/{code}", response_class=HTMLResponse, include_in_schema=False)
async def follow(code: str, request: Request, templates: TemplatesDep, settings: SettingsDep) -> HTMLResponse:
    """A follower's page: the same page, driven by class session ``code``'s presenter."""
    canonical = normalise_code(code)
    if canonical is None:
        return HTMLResponse("<!doctype html><title>flowgrad</title><p>That is not a class code.</p>", status_code=404)
    return _page(request, templates, settings, canonical)


def _page(request: Request, templates, settings, follow_code: str | None) -> HTMLResponse:
    try:
        response = templates.TemplateResponse(request, "index.html", {"request": request, "follow_code": follow_code})
    except Exception:  # noqa: BLE001 - template missing or broken: a plain page, not a 500 (but logged)
        log.exception("the page template could not be rendered; serving a placeholder")
        response = HTMLResponse("<!doctype html><title>flowgrad</title><p>The page is not built yet.</p>",
                                status_code=200)
    if not request.cookies.get(settings.client_cookie):
        response.set_cookie(settings.client_cookie, secrets.token_urlsafe(16), httponly=True, samesite="lax")
    return response
