"""``GET /``: the page. Sets the client cookie that makes 'one run per client' work for browsers."""

from __future__ import annotations

import logging
import secrets

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.api.deps import SettingsDep, TemplatesDep

router = APIRouter(tags=["pages"])
log = logging.getLogger("flowgrad")


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def index(request: Request, templates: TemplatesDep, settings: SettingsDep) -> HTMLResponse:
    try:
        response = templates.TemplateResponse(request, "index.html", {"request": request})
    except Exception:  # noqa: BLE001 - template missing or broken: a plain page, not a 500 (but logged)
        log.exception("the page template could not be rendered; serving a placeholder")
        response = HTMLResponse("<!doctype html><title>flowgrad</title><p>The page is not built yet.</p>",
                                status_code=200)
    if not request.cookies.get(settings.client_cookie):
        response.set_cookie(settings.client_cookie, secrets.token_urlsafe(16), httponly=True, samesite="lax")
    return response
