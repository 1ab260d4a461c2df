"""``GET /healthz`` (liveness: the process answers; Graphviz's version and the pool's state) and ``GET /readyz``
(readiness: 503 unless a sandbox worker is ready within ``ready_wait_s`` and, with ``broker_url``, Redis
answers a ping). Orchestrators route to a replica by ``/readyz`` and restart one by ``/healthz``: a replica
whose workers keep dying, or whose broker is away, takes no new runs but is not killed for it."""

from __future__ import annotations

import asyncio
import time

from fastapi import APIRouter

from app.api.deps import AnswersDep, GraphvizDep, PoolDep, RedisDep, RunStoreDep, SettingsDep
from app.api.schemas import Health, Readiness
from app.cluster.link import reachable
from app.cluster.process import PROCESS_ID
from app.core.responses import OrjsonResponse

router = APIRouter(tags=["health"])
READY_POLL_S = 0.05


@router.get("/healthz", response_model=Health)
async def healthz(pool: PoolDep, graphviz: GraphvizDep, answers: AnswersDep, store: RunStoreDep) -> OrjsonResponse:
    state = pool.state()
    ok = state["ready"] > 0
    return OrjsonResponse(status_code=200, content={"status": "ok" if ok else "starting",
                                                    "graphviz": graphviz.version,
                                                    "pool": state,
                                                    "answers": answers.state() if answers is not None else None,
                                                    "runs": store.state(), "process": PROCESS_ID})


@router.get("/readyz", response_model=Readiness, responses={503: {"model": Readiness}})
async def readyz(pool: PoolDep, settings: SettingsDep, redis: RedisDep) -> OrjsonResponse:
    deadline = time.monotonic() + settings.ready_wait_s
    while pool.state()["ready"] == 0 and not pool.closing and time.monotonic() < deadline:
        await asyncio.sleep(READY_POLL_S)
    workers = pool.state()["ready"]
    checks: dict[str, bool] = {"workers": workers > 0 and not pool.closing}
    if redis is not None:
        checks["broker"] = await reachable(redis, settings.broker_ping_timeout_s)
    ready = all(checks.values())
    return OrjsonResponse(status_code=200 if ready else 503,
                          content={"status": "ready" if ready else "unavailable", "checks": checks,
                                   "workers_ready": workers})
