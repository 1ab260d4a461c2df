"""A tiny stand-in for the app, used only when app/main.py cannot serve yet.

Serves templates/index.html at `/`, `static/` at `/static`, `GET /api/examples` from
`examples/*.py`, and `POST /api/run` from the hand-written traces in `fixtures/*.json`
(matched on their `_source`; anything else gets the first fixture, or a SyntaxError trace
when the program does not parse as Python).
"""

from __future__ import annotations

import ast
import json
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))
try:  # live traces from the engine (no app needed) when the engine imports
    import make_fixtures

    make_fixtures.trace_for("import torch\n")
    LIVE = True
except Exception:  # noqa: BLE001
    LIVE = False
FIXTURES = Path(__file__).resolve().parent / "fixtures"
ENGINE_LOCK = threading.Lock()
TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".woff2": "font/woff2",
         ".json": "application/json", ".html": "text/html; charset=utf-8", ".png": "image/png"}


def load_fixtures() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(FIXTURES.glob("*.json"))]


def examples() -> list[dict]:
    out = []
    for p in sorted((ROOT / "examples").glob("*.py")):
        src = p.read_text()
        first = src.splitlines()[0] if src else ""
        out.append({"id": p.stem, "title": first.lstrip("# ").strip() or p.stem, "source": src})
    return out


def error_trace(exc: SyntaxError) -> dict:
    return {"stdout": "", "error": {"type": "SyntaxError", "message": exc.msg, "line": exc.lineno, "column": (exc.offset or 1) - 1},
            "variables": {}, "ops": {}, "passes": [], "steps": [], "truncated": False}


class Handler(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def send_body(self, body: bytes, ctype: str, status: int = 200):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802
        path = self.path.split("?")[0].split("#")[0]
        if path == "/":
            return self.send_body((ROOT / "templates" / "index.html").read_bytes(), TYPES[".html"])
        if path == "/api/examples":
            return self.send_body(json.dumps(examples()).encode(), TYPES[".json"])
        if path.startswith("/static/"):
            f = (ROOT / path.lstrip("/")).resolve()
            if ROOT / "static" in f.parents and f.is_file():
                return self.send_body(f.read_bytes(), TYPES.get(f.suffix, "application/octet-stream"))
        return self.send_body(b"not found", "text/plain", 404)

    def do_POST(self):  # noqa: N802
        if self.path not in ("/api/run", "/api/stream"):
            return self.send_body(b"not found", "text/plain", 404)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        trace = self.trace_for(body.get("source", ""))
        if self.path == "/api/run":
            return self.send_body(json.dumps(trace).encode(), TYPES[".json"])
        # the same trace as Server-Sent Events, like app/api/routes/stream.py
        events = [("stdout", {"type": "stdout", "text": trace.get("stdout", "")})]
        events += [("pass", {"type": "pass", "pass": p}) for p in trace.get("passes", [])]
        rest = {k: v for k, v in trace.items() if k not in ("passes", "_source")}
        events.append(("done", {"type": "done", **rest}))
        text = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
        return self.send_body(text.encode(), "text/event-stream")

    def trace_for(self, source: str) -> dict:
        try:
            ast.parse(source)
        except SyntaxError as exc:
            return error_trace(exc)
        fixtures = load_fixtures()
        match = next((f for f in fixtures if f.get("_source", "").strip() == source.strip()), None)
        if match is None and LIVE:
            try:
                with ENGINE_LOCK:  # the engine's grad mode is process-global: one run at a time
                    match = make_fixtures.trace_for(source)
            except Exception:  # noqa: BLE001 — fall back to a canned trace
                match = None
        match = match or fixtures[0]
        return make_fixtures.add_ops(match) if LIVE else match


def start(port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


if __name__ == "__main__":
    srv, url = start(int(sys.argv[1]) if len(sys.argv) > 1 else 8765)
    print(url, flush=True)
    threading.Event().wait()
