"""``Annotated`` dependency aliases used by the routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.core.config import Settings, get_settings
from app.runner.pool import Pool


def get_pool(request: Request) -> Pool:
    return request.app.state.pool


def get_client_id(request: Request) -> str | None:
    """Who is asking, for 'one run per client': the X-Client-Id header, else the page's cookie."""
    settings: Settings = request.app.state.settings
    cid = request.headers.get("x-client-id") or request.cookies.get(settings.client_cookie)
    if cid:
        return cid[:128]
    return None


SettingsDep = Annotated[Settings, Depends(get_settings)]
PoolDep = Annotated[Pool, Depends(get_pool)]
ClientDep = Annotated[str | None, Depends(get_client_id)]
