"""What the server benchmarks share: the app started in a process of its own (ready when every sandbox worker is),
and percentiles of a sample."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(env: dict[str, str] | None = None, *, root: Path = ROOT, log: Path | str | None = None,
                 timeout_s: float = 60.0) -> tuple[subprocess.Popen, str]:
    """``python -m app`` on a free port with ``env`` added; returns once /readyz answers and all workers are ready.
    ``log`` (the server's stdout and stderr) may name the port as ``{port}``."""
    port = free_port()
    log = str(log).format(port=port) if log else None
    full_env = {**os.environ, "FLOWGRAD_PORT": str(port), **(env or {})}
    out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 - the server's whole life
    proc = subprocess.Popen([sys.executable, "-m", "app"], cwd=root, env=full_env, stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode} before it was ready")
        try:
            pool = httpx.get(url + "/healthz", timeout=3).json()["pool"]
            if pool["ready"] == pool["size"] and httpx.get(url + "/readyz", timeout=3).status_code == 200:
                return proc, url
        except (httpx.HTTPError, KeyError, ValueError):
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not become ready")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def pct(xs: list[float], p: float) -> float:
    """The ``p``-th percentile of ``xs`` (nearest rank; nan for none)."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, max(0, int(round(p / 100 * (len(xs) - 1)))))]
