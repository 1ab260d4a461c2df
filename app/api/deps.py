"""``Annotated`` dependency aliases: the routes' only way to the app's settings and resources.

``create_app`` puts what it built at startup on ``app.state`` (the Graphviz check, templates,
examples folder; the pool and its run service in the lifespan); only this module reads ``app.state``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import Depends, Request
from fastapi.templating import Jinja2Templates

from app.classroom.service import Classroom
from app.core.config import Settings, get_settings
from app.layout.dot import Graphviz
from app.runner.pool import Pool
from app.runner.service import RunService
from app.runs.store import RunStore

SettingsDep = Annotated[Settings, Depends(get_settings)]


def get_pool(request: Request) -> Pool:
    """The worker pool itself: for its state (``/healthz``); runs go through ``get_runs``."""
    return request.app.state.pool


def get_runs(request: Request) -> RunService:
    return request.app.state.runs


def get_graphviz(request: Request) -> Graphviz:
    """What the startup ``dot`` check found (path, version)."""
    return request.app.state.graphviz


def get_templates(request: Request) -> Jinja2Templates:
    return request.app.state.templates


def get_classroom(request: Request) -> Classroom:
    return request.app.state.classroom


def get_run_store(request: Request) -> RunStore:
    return request.app.state.run_store


def get_examples_dir(request: Request) -> Path:
    return request.app.state.examples_dir


def get_client_id(request: Request, settings: SettingsDep) -> str | None:
    """Who is asking, for 'one run per client': the X-Client-Id header, else the page's cookie."""
    cid = request.headers.get("x-client-id") or request.cookies.get(settings.client_cookie)
    if cid:
        return cid[:128]
    return None


PoolDep = Annotated[Pool, Depends(get_pool)]
RunsDep = Annotated[RunService, Depends(get_runs)]
GraphvizDep = Annotated[Graphviz, Depends(get_graphviz)]
TemplatesDep = Annotated[Jinja2Templates, Depends(get_templates)]
ExamplesDirDep = Annotated[Path, Depends(get_examples_dir)]
ClientDep = Annotated[str | None, Depends(get_client_id)]
ClassroomDep = Annotated[Classroom, Depends(get_classroom)]
RunStoreDep = Annotated[RunStore, Depends(get_run_store)]
