"""What the server benchmarks share: the app started in a process of its own (ready when every sandbox worker is),
and percentiles of a sample."""

from __future__ import annotations

import asyncio
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


def host_port(url: str) -> tuple[str, int]:
    host, _, port = url.rpartition("//")[2].partition(":")
    return host, int(port)


async def read_head(reader) -> tuple[int, dict[str, str]]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:] if line)}
    return int(head[0].split()[1]), headers


async def chunks(reader, headers: dict):
    """The body as it arrives (chunked transfer-encoding, or up to Content-Length / the end)."""
    if headers.get("transfer-encoding") == "chunked":
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            if size == 0:
                return
            yield (await reader.readexactly(size + 2))[:-2]
    elif "content-length" in headers:
        yield await reader.readexactly(int(headers["content-length"]))
    else:
        yield await reader.read()


async def request(url: str, method: str, path: str, body: bytes | None = None,
                  headers: dict | None = None) -> tuple[int, dict, bytes]:
    """One HTTP/1.1 request on its own connection. Benchmarks with hundreds of clients speak HTTP over raw
    asyncio streams: httpx's pool, with hundreds of connections busy at once, took seconds per request on the
    client (300 GETs of the shared run: p50 9.3 s through one httpx client, 1.2 s raw, on the same server)."""
    host, port = host_port(url)
    reader, writer = await asyncio.open_connection(host, port)
    try:
        head = f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        writer.write(head.encode() + b"\r\n" + (body or b""))
        status, got = await read_head(reader)
        return status, got, b"".join([c async for c in chunks(reader, got)])
    finally:
        writer.close()
