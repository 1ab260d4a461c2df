"""This server process's name in a cluster: the same across its restarts (host name and port), so the page tells
"another process ran this run" from "this process restarted and lost it" (both are a run it does not have).

Siblings on one port (``uvicorn --workers N``, only with ``allow_unshared_processes``) share the name.
"""

from __future__ import annotations

import hashlib
import socket

from app.core.config import get_settings

PROCESS_ID = hashlib.sha256(f"{socket.gethostname()}:{get_settings().port}".encode()).hexdigest()[:12]
HEADER = (b"x-flowgrad-process", PROCESS_ID.encode())


class ProcessHeader:
    """Pure ASGI middleware: every HTTP answer says which process gave it (``X-Flowgrad-Process``)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def named(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), HEADER]
            await send(message)

        return await self.app(scope, receive, named)
