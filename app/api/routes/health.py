"""``GET /healthz``: Graphviz's version and the pool's state."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import GraphvizDep, PoolDep
from app.api.schemas import Health
from app.core.responses import OrjsonResponse

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health)
async def healthz(pool: PoolDep, graphviz: GraphvizDep) -> OrjsonResponse:
    state = pool.state()
    ok = state["ready"] > 0
    return OrjsonResponse(status_code=200, content={"status": "ok" if ok else "starting",
                                                    "graphviz": graphviz.version,
                                                    "pool": state})
