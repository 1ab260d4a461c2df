"""``Annotated`` dependency aliases: the routes' only way to the app's settings and resources.

Every one is ``async def``: FastAPI runs a plain ``def`` dependency in its thread pool, a thread hop per
request for what is an attribute read (a lecture hall's 200 requests at once feel it).

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
from app.core.identity import Identity
from app.layout.dot import Graphviz
from app.runner.pool import Pool
from app.runner.service import RunService
from app.runs.store import RunStore

SettingsDep = Annotated[Settings, Depends(get_settings)]


async def get_pool(request: Request) -> Pool:
    """The worker pool itself: for its state (``/healthz``); runs go through ``get_runs``."""
    return request.app.state.pool


async def get_runs(request: Request) -> RunService:
    return request.app.state.runs


async def get_graphviz(request: Request) -> Graphviz:
    """What the startup ``dot`` check found (path, version)."""
    return request.app.state.graphviz


async def get_templates(request: Request) -> Jinja2Templates:
    return request.app.state.templates


async def get_classroom(request: Request) -> Classroom:
    return request.app.state.classroom


async def get_run_store(request: Request) -> RunStore:
    return request.app.state.run_store


async def get_redis(request: Request):
    """The process's Redis client (app/cluster/link.py) when ``broker_url`` is set, else None."""
    return getattr(request.app.state, "redis", None)


async def get_answers(request: Request):
    """The shared answers (app/runs/answer_cache.py), or None when sharing is off."""
    return getattr(request.app.state, "answers", None)


async def get_examples_dir(request: Request) -> Path:
    return request.app.state.examples_dir


async def get_identity(request: Request, settings: SettingsDep) -> Identity:
    """Who is asking (app/core/identity.py): the server's signed cookie, else the client address; the tab's
    own X-Client-Id header (or the page's client cookie) refines it, for 'one run per tab', and never escapes it."""
    identity = getattr(request.state, "identity", None)
    if identity is None:  # an app built without the middleware (never create_app's): the address
        identity = Identity("a:" + (request.client.host if request.client else "unknown"))
    return identity.refined(request.headers.get("x-client-id") or request.cookies.get(settings.client_cookie))


PoolDep = Annotated[Pool, Depends(get_pool)]
RunsDep = Annotated[RunService, Depends(get_runs)]
GraphvizDep = Annotated[Graphviz, Depends(get_graphviz)]
TemplatesDep = Annotated[Jinja2Templates, Depends(get_templates)]
ExamplesDirDep = Annotated[Path, Depends(get_examples_dir)]
IdentityDep = Annotated[Identity, Depends(get_identity)]
ClassroomDep = Annotated[Classroom, Depends(get_classroom)]
RunStoreDep = Annotated[RunStore, Depends(get_run_store)]
RedisDep = Annotated[object | None, Depends(get_redis)]
AnswersDep = Annotated[object | None, Depends(get_answers)]
