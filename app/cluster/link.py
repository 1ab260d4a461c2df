"""The process's one Redis client for what is not a class session (answer cache, readiness ping).

Made only when ``broker_url`` is set (``redis`` is then needed); class sessions keep their own client
(app/classroom/redis_broker.py), so a slow session broadcast never holds up a run.
"""

from __future__ import annotations

import asyncio
import contextlib

import redis.asyncio as aioredis
from redis.exceptions import RedisError


def connect(url: str):
    """A bounded client: at most 32 connections, each call given up after 5 s (a lecture hall's 200 requests queue)."""
    pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=32, timeout=10, socket_timeout=5,
                                                    socket_connect_timeout=2, health_check_interval=10)
    return aioredis.Redis(connection_pool=pool)


async def reachable(client, timeout_s: float) -> bool:
    """Whether Redis answers PING within ``timeout_s``."""
    try:
        return bool(await asyncio.wait_for(client.ping(), timeout_s))
    except (RedisError, OSError, TimeoutError):
        return False


async def close(client) -> None:
    with contextlib.suppress(RedisError, OSError):
        await client.aclose()
