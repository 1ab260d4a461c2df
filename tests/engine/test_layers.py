"""The engine is a stack of layers that import only downward (issue 20): no import cycle among its modules, no
imports hidden inside functions, and importing it (or only its trace contract and op table) loads no more than
it needs and changes no process state."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine"
# Imports inside functions that are allowed: optional third-party dependencies (none today). Engine modules
# and the standard library are imported at the top of the module that uses them.
OPTIONAL_DEPENDENCIES: frozenset[str] = frozenset()
MAX_IMPORTS_IN_FUNCTIONS = 10


def _modules() -> dict[str, Path]:
    out = {}
    for path in ENGINE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _targets(module: str, node: ast.ImportFrom | ast.Import, is_package: bool) -> list[str]:
    """The engine modules an import statement loads (a `from pkg import name` of a non-module loads pkg)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in MODULES]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
    if target in MODULES and len(subs) < len(node.names):
        subs.append(target)
    return subs


def _walk(tree: ast.AST):
    """(import node, inside a function?) for every import of a module."""
    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, inside
            yield from visit(child, inside)
    yield from visit(tree, False)


def _graph():
    """module -> engine modules it imports (every import, at module level or in a function), and the imports
    made inside functions."""
    graph, in_functions = {}, []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[module] = set()
        for node, inside in _walk(tree):
            graph[module].update(_targets(module, node, path.name == "__init__.py"))
            if inside:
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or "."]
                if not all(n.split(".")[0] in OPTIONAL_DEPENDENCIES for n in names):
                    in_functions.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return graph, in_functions


def _cycles(graph):
    """Strongly connected components with more than one module, or a module importing itself (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def connect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return out


def test_no_import_cycle_in_engine():
    graph, _ = _graph()
    assert _cycles(graph) == []


def test_cycle_finder_finds_one():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"a"}}) == [["a"]]


def test_few_imports_inside_functions():
    _, in_functions = _graph()
    assert len(in_functions) < MAX_IMPORTS_IN_FUNCTIONS, "\n".join(in_functions)


def _run(code: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


_LOADED = """
import json, sys
import {module}
print(json.dumps(sorted(m for m in sys.modules if m.startswith("engine"))))
"""


def test_trace_contract_and_op_table_load_no_nn_or_optim():
    for module in ("engine.trace_events", "engine.ops"):
        loaded = _run(_LOADED.format(module=module))
        heavy = [m for m in loaded if m.split(".")[:2] in (["engine", "nn"], ["engine", "optim"], ["engine", "utils"])]
        assert heavy == [], (module, heavy)


def test_the_torch_surface_is_still_there():
    code = """
import json
import engine as torch
from engine import nn
names = dir(torch)
print(json.dumps([torch.nn.Linear.__name__, nn.ReLU.__name__, torch.optim.SGD.__name__,
                  torch.optim.lr_scheduler.StepLR.__name__, torch.utils.data.DataLoader.__name__,
                  all(n in names for n in ("nn", "optim", "utils", "autograd", "linalg"))]))
"""
    assert _run(code) == ["Linear", "ReLU", "SGD", "StepLR", "DataLoader", True]


def test_importing_engine_changes_no_process_state():
    """No mallopt at import (the worker's process setup calls allocator.tune_malloc), no environment writes."""
    code = """
import ctypes, ctypes.util, json, os
calls = []
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
real = type(libc).__getattr__
def spy(self, name):
    if name == "mallopt":
        calls.append(name)
    return real(self, name)
type(libc).__getattr__ = spy  # any CDLL's mallopt looked up by name
env_before = dict(os.environ)
import engine
import engine.nn, engine.optim, engine.utils.data
print(json.dumps({"mallopt": calls, "env_changed": dict(os.environ) != env_before,
                  "tune_malloc": callable(__import__("engine.allocator", fromlist=["x"]).tune_malloc)}))
"""
    assert _run(code) == {"mallopt": [], "env_changed": False, "tune_malloc": True}


def test_the_registry_is_filled_by_importing_engine():
    """engine/registry.py: every entry a lower layer reads is set once the engine is imported (nn.Module once nn is)."""
    code = """
import json
import engine
from engine import registry
before = registry.Module is None
import engine.nn
print(json.dumps([before, registry.Tensor is engine.Tensor, registry.new_tensor is engine.creation.tensor,
                  registry.apply is engine.dispatch.apply, registry.grad is engine.autograd.grad,
                  registry.Module is engine.nn.Module]))
"""
    assert _run(code) == [True, True, True, True, True, True]


def test_no_engine_file_over_800_lines():
    long = {str(p.relative_to(ROOT)): n for p in MODULES.values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 800}
    assert long == {}
