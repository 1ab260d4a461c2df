"""The FastAPI application: ``app = create_app()``; ``uvicorn app.main:app`` or ``python -m app``."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from app.api.routes import examples, export, health, pages, run, runs, sessions, stream
from app.api.send_guard import SendGuard
from app.api.stream_gzip import StreamGzip
from app.classroom.service import make_classroom
from app.cluster import link, solo
from app.cluster.process import ProcessHeader
from app.cluster.runs import ClusterRuns
from app.core import errors
from app.core.config import Settings, get_settings
from app.core.errors import problem_response
from app.core.identity import IdentityCookie
from app.core.responses import OrjsonResponse
from app.layout.dot import DotMissing, check_dot
from app.runner.pool import Pool
from app.runner.service import RunService
from app.runs.answer_cache import SharedAnswers
from app.runs.cluster_store import ClusterRunStore
from app.runs.store import RunStore

ROOT = Path(__file__).resolve().parent.parent
GZIP_MIN_BYTES = 65_536  # smaller answers (every tutorial program) go as they are: no compression on their path
log = logging.getLogger("flowgrad")


class BodyLimit:
    """Pure ASGI middleware (not BaseHTTPMiddleware, which hides client disconnects from the routes):
    the request body is counted as it arrives, chunked or not, and past ``limit`` bytes the answer
    is 413 at once (a declared Content-Length above the limit: before any of it is read). The body
    is held, at most ``limit`` bytes of it, and handed to the app whole when complete; after it the
    app reads the client's own messages (a disconnect)."""

    def __init__(self, app, limit: int):
        self.app = app
        self.limit = limit

    def _too_big(self):
        # "Connection: close": the server stops reading the rest of an upload it refused
        return problem_response(413, "RequestError", f"request body larger than {self.limit} bytes "
                                                     f"(limit max_request_bytes = {self.limit})",
                                headers={"Connection": "close"})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers") or []:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = self.limit + 1
                if declared > self.limit:
                    await self._too_big()(scope, receive, send)
                    return
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # http.disconnect: nobody to answer
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                parts.clear()
                await self._too_big()(scope, receive, send)
                return
            if chunk:
                parts.append(chunk)
            if not message.get("more_body", False):
                break
        body: bytes | None = b"".join(parts)
        parts.clear()

        async def replay():
            nonlocal body
            if body is not None:
                message = {"type": "http.request", "body": body, "more_body": False}
                body = None
                return message
            return await receive()

        await self.app(scope, replay, send)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app. With explicit ``settings`` (tests), ``get_settings`` is overridden to match.

    Startup checks happen here, once: Graphviz's ``dot`` (``DotMissing`` without it; its path goes
    to the workers, its version to ``/healthz``)."""
    explicit = settings is not None
    settings = settings or get_settings()
    graphviz = check_dot(settings.dot_binary)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        claim = None
        if not settings.broker_url:  # siblings without a broker would split runs and sessions: refuse (app/cluster)
            claim = solo.claim(settings.port, allowed=settings.allow_unshared_processes)
        redis = app.state.redis = link.connect(settings.broker_url) if settings.broker_url else None
        if redis is not None:  # any process serves any run: payloads go through Redis too (app/runs/cluster_store.py)
            app.state.run_store = ClusterRunStore(app.state.run_store, redis)
        pool = Pool(settings, dot=graphviz.path, run_store=app.state.run_store)
        app.state.pool = pool
        app.state.answers = SharedAnswers.from_settings(settings, redis)
        runs = app.state.runs = RunService(pool, app.state.answers)
        if redis is not None:  # cancels and identities' shares cross processes (app/cluster/runs.py)
            runs.cluster = ClusterRuns(redis, settings, runs.cancel_slot)
            runs.cluster.start()
        await pool.start()
        await app.state.classroom.broker.start()
        try:
            yield
        finally:
            await app.state.classroom.broker.stop()
            if runs.cluster is not None:
                await runs.cluster.stop()
            await pool.stop()
            if redis is not None:
                await link.close(redis)
            if claim is not None:
                claim.close()

    app = FastAPI(
        title="flowgrad",
        version="0.1.0",
        summary="Type a PyTorch program, watch values flow forward and gradients flow back.",
        default_response_class=OrjsonResponse,
        lifespan=lifespan,
    )
    # read by the dependencies in app.api.deps, never by the routes themselves
    app.state.graphviz = graphviz
    app.state.examples_dir = ROOT / "examples"
    app.state.templates = Jinja2Templates(directory=str(ROOT / "templates"))
    app.state.classroom = make_classroom(settings)
    app.state.run_store = RunStore.from_settings(settings)  # folded passes' group payloads (app/runs)
    if explicit:
        app.dependency_overrides[get_settings] = lambda: settings
    errors.install(app)
    sessions.install_errors(app)

    app.add_middleware(BodyLimit, limit=settings.max_request_bytes)
    for module in (run, stream, sessions, examples, health, pages):
        app.include_router(module.router)
    app.include_router(export.router)  # the page as one offline file (app/export)
    app.include_router(runs.router)  # a folded pass's groups and search (app/runs)
    # big answers (a folded 10,000-op pass: 6 MB of JSON) go gzipped, compressed off the event loop
    app.add_middleware(GZipMiddleware, minimum_size=GZIP_MIN_BYTES, compresslevel=1)
    app.add_middleware(StreamGzip)  # ... and the run stream, event by event (app/api/stream_gzip.py)
    app.add_middleware(IdentityCookie, settings=settings)  # who is asking: every fairness limit counts by it
    app.add_middleware(ProcessHeader)  # which process answered: the page tells a run elsewhere from expired
    # outermost: answers go out in pieces, each waiting send_timeout_s at most (a client that never reads)
    app.add_middleware(SendGuard, timeout_s=settings.send_timeout_s, chunk_bytes=settings.send_chunk_bytes)
    static = ROOT / "static"
    app.mount("/static", StaticFiles(directory=str(static), check_dir=False), name="static")
    return app


try:
    app = create_app()
except DotMissing as e:  # `uvicorn app.main:app` (or `python -m app`) without Graphviz: a message, no traceback
    raise SystemExit(f"error: {e}") from None
