"""Helpers shared by the tests/app suite (a unique module name: tests/ is not a package)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


def strict_json(text: str):
    def bad(c):
        raise ValueError(f"non-standard JSON constant {c}")

    return json.loads(text, parse_constant=bad)


def canonical_ids(x) -> str:
    """``x`` as JSON with a run's ids (t12, n7, m2, b3, e5_0, dt12) renamed in order of first appearance: runs whose
    middle passes ran quietly (app/runner/quiet.py) number what they record after them from where they stopped."""
    text = json.dumps(x, sort_keys=True, default=str)
    names: dict[str, str] = {}

    def rename(m):
        return names.setdefault(m.group(0), f"{m.group(0)[0]}#{len(names)}")
    return re.sub(r"(?<=\bd)[tnmbe]\d+(?![0-9])|\b[tnmbe]\d+(?![0-9])", rename, text)


def built(source: str, *, policy, max_nodes: int, stream: bool = False, **capture) -> tuple:
    """What a run ships, fed to a trace builder (node limit ``max_nodes``) as the worker feeds it: the finished
    builder, the run's end and the number of events shipped. ``capture``: run_capture's budgets (value_budget,
    max_pass_nodes, quiet_passes); the limits and the rest are the default settings'."""
    from app.core.config import Settings
    from app.runner.capture import run_capture
    from app.runner.protocol import End, Events
    from app.runner.worker import sandbox_limits
    from app.trace.build import TraceBuilder

    s = Settings()
    b = TraceBuilder(None, policy=policy, max_nodes=max_nodes)
    ends: list = []
    shipped = [0]

    def send(m):
        if isinstance(m, Events):
            shipped[0] += len(m.events)
            b.feed_all(m.events)
        elif isinstance(m, End):
            ends.append(m)

    run_capture(source, sandbox_limits(s), s.value_limit, s.max_events, send, stream=stream, policy=policy, **capture)
    b.finish()
    (end,) = ends
    return b, end, shipped[0]


def close(a, b, rel=1e-4, abs_=1e-5) -> bool:
    return isinstance(a, (int, float)) and math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


@contextlib.contextmanager
def real_server(**env_overrides):
    """Start `python -m app` (one worker) on a free port; yield (port, url) once its pool is ready.
    ``env_overrides``: settings for this server (``FLOWGRAD_BROKER_URL="redis://…"``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "FLOWGRAD_WORKERS": "1", "FLOWGRAD_PORT": str(port), **env_overrides}
    proc = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90  # a loaded 2-core machine (several test runs at once) starts slowly
        while True:
            try:
                if httpx.get(url + "/healthz", timeout=1).json()["pool"]["ready"] == 1:
                    break
            except (httpx.HTTPError, KeyError, ValueError):
                pass
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)
        yield port, url
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def identity_headers(settings) -> dict[str, str]:
    """A fresh identity, as a browser that kept the server's cookie would send it (app/core/identity.py)."""
    from app.core.identity import cookie_value, new_id, secret_of

    return {"cookie": f"{settings.identity_cookie}={cookie_value(secret_of(settings), new_id())}"}
