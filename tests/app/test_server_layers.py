"""The server's layers point one way: routes use the run service, not each other; the HTTP process loads no
part of the engine's torch surface (the workers do)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROUTES = ROOT / "app" / "api" / "routes"
PYTHON = sys.executable


def _imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth of its code (``from x import y``: x and x.y)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            out.add(base)
            out.update(f"{base}.{alias.name}" if base else alias.name for alias in node.names)
    return out


def test_routes_import_nothing_from_other_routes():
    routes = sorted(p for p in ROUTES.glob("*.py") if p.name != "__init__.py")
    assert len(routes) >= 8
    crossing = {p.name: sorted(m for m in _imported_modules(p)
                               if m.startswith(("app.api.routes", ".")) and m != "app.api.routes")
                for p in routes}
    assert not any(crossing.values()), f"routes importing routes: { {k: v for k, v in crossing.items() if v} }"


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([PYTHON, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    return set(out.stdout.split())


TORCH_SURFACE = ("engine.nn", "engine.optim")


def _surface(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m in TORCH_SURFACE or m.startswith(tuple(p + "." for p in TORCH_SURFACE)))


def test_the_http_process_loads_no_torch_surface():
    """``import app.main`` (what uvicorn does) loads neither ``engine.nn`` nor ``engine.optim``: the workers
    import the engine (app/runner/entry.py), the server needs only the trace contract."""
    loaded = _loaded_after("import app.main")
    assert not _surface(loaded), _surface(loaded)


def test_the_server_takes_only_the_trace_contract_from_the_engine():
    """Whatever ``engine/__init__`` loads, what the server's own modules import of the engine is the trace
    contract alone (checked with the package's ``__init__`` not run)."""
    stub = ("import types\npkg = types.ModuleType('engine')\npkg.__path__ = ['engine']\n"
            "sys.modules['engine'] = pkg\nimport app.main")
    loaded = _loaded_after(stub)
    assert sorted(m for m in loaded if m.split(".")[0] == "engine") == ["engine", "engine.trace_events"]
    worker_side = {"app.runner.worker", "app.runner.runproc", "app.runner.session", "app.runner.capture",
                   "app.trace.build"}
    assert not worker_side & loaded, sorted(worker_side & loaded)  # the workers' part stays in the workers
