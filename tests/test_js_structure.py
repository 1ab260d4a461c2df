"""The page's modules point one way and share one state store and one way to the server (issue 20 §5).

Read from the sources, no browser: static/js (not static/vendor) has no import cycle; the network is
reached from one place (one ``fetch(`` and one ``new EventSource(``, both in api.js's TraceSource); every
field written with the store's ``set({...})`` is declared in store.js, and no module assigns to ``state``.
"""

from __future__ import annotations

import re
from pathlib import Path

JS = Path(__file__).resolve().parents[1] / "static" / "js"

# `import … from "./x.js"`, `import "./x.js"`, `export … from "./x.js"` (static imports of the page's own modules)
IMPORT = re.compile(r"""^\s*(?:import|export)\b[^;]*?\bfrom\s*["']\./([\w.-]+\.js)["']|^\s*import\s*["']\./([\w.-]+\.js)["']""",
                    re.M | re.S)
FETCH = re.compile(r"(?<![\w.$])fetch\s*\(")
EVENT_SOURCE = re.compile(r"\bnew\s+EventSource\s*\(")
STORE_SET = re.compile(r"(?<![\w.$])set\(\s*")
STATE_ASSIGN = re.compile(r"(?<![\w.$])state\.(\w+)\s*(?:[-+*/%&|^]|\*\*|<<|>>>?|&&|\|\||\?\?)?=(?!=)")


def sources() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(JS.glob("*.js"))}


def code_only(text: str) -> str:
    """The text with comments blanked (strings kept): a word in a comment is not a call."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def import_graph() -> dict[str, set[str]]:
    return {name: {a or b for a, b in IMPORT.findall(text)} for name, text in sources().items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1 or v in graph.get(v, ()):
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def object_keys(text: str, start: int) -> tuple[list[str], int]:
    """The top-level keys of the object literal opening at text[start] == "{", and the index after it.
    A computed (`[k]: v`) or spread (`...x`) entry is returned as itself, so the caller can refuse it."""
    assert text[start] == "{"
    depth, i, entry_start, entries = 0, start, start + 1, []
    while True:
        c = text[i]
        if c in "\"'`":
            j = i + 1
            while text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                entries.append(text[entry_start:i])
                break
        elif c == "," and depth == 1:
            entries.append(text[entry_start:i])
            entry_start = i + 1
        i += 1
    keys = []
    for entry in entries:
        entry = entry.strip()
        if not entry:
            continue
        m = re.match(r"([A-Za-z_$][\w$]*)\s*(?::|$)", entry)
        keys.append(m.group(1) if m else entry)
    return keys, i + 1


def declared_fields() -> list[str]:
    text = code_only((JS / "store.js").read_text(encoding="utf-8"))
    start = text.index("const FIELDS = {") + len("const FIELDS = ")
    keys, _ = object_keys(text, start)
    return keys


def store_writes() -> list[tuple[str, str]]:
    """(module, key) for every key of every `set({...})` outside store.js (which checks its own at run time)."""
    out = []
    for name, text in sources().items():
        if name == "store.js" or not re.search(r"\bimport\s*\{[^}]*\bset\b[^}]*\}\s*from\s*[\"']\./store\.js", text):
            continue
        code = code_only(text)
        for m in STORE_SET.finditer(code):
            at = m.end()
            assert code[at] == "{", f"{name}: set() is called with {code[at:at + 30]!r}, not an object literal the test can read"
            keys, _ = object_keys(code, at)
            out.extend((name, k) for k in keys)
    return out


def test_the_page_modules_have_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 30 and "main.js" in graph and "store.js" in graph["main.js"]
    missing = {(m, t) for m, ts in graph.items() for t in ts if t not in graph}
    assert not missing, f"imports of modules that do not exist: {sorted(missing)}"
    assert cycles(graph) == [], f"import cycles in static/js: {cycles(graph)}"


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a.js": {"b.js"}, "b.js": {"c.js"}, "c.js": {"a.js"}, "d.js": {"a.js"}}) == [["a.js", "b.js", "c.js"]]
    assert cycles({"a.js": {"a.js"}}) == [["a.js"]]
    assert cycles({"a.js": {"b.js"}, "b.js": set()}) == []


def test_the_bottom_modules_import_nothing_above_them():
    graph = import_graph()
    assert graph["store.js"] == set() and graph["config.js"] == set() and graph["dom.js"] == set()
    assert graph["api.js"] <= {"offline.js", "graphsearch.js"}, graph["api.js"]
    assert not any("main.js" in targets for targets in graph.values())


def test_the_network_is_reached_from_one_place():
    fetches = {name: len(FETCH.findall(code_only(text))) for name, text in sources().items()}
    event_sources = {name: len(EVENT_SOURCE.findall(code_only(text))) for name, text in sources().items()}
    assert {k: v for k, v in fetches.items() if v} == {"api.js": 1}
    assert {k: v for k, v in event_sources.items() if v} == {"api.js": 1}


def test_every_field_the_page_sets_is_declared_in_the_store():
    fields = declared_fields()
    assert len(fields) == len(set(fields)) and {"trace", "model", "step", "selected", "graph"} <= set(fields)
    writes = store_writes()
    assert {name for name, _ in writes} >= {"player.js", "run.js", "selection.js", "look.js", "main.js"}
    undeclared = sorted({(name, key) for name, key in writes if key not in fields})
    assert not undeclared, f"set() writes fields store.js does not declare: {undeclared}"


def test_no_module_assigns_to_the_state():
    assigned = sorted({(name, m.group(1)) for name, text in sources().items()
                       for m in STATE_ASSIGN.finditer(code_only(text))})
    assert not assigned, f"state fields assigned instead of set(): {assigned}"


def test_the_readers_of_this_test_see_real_javascript():
    assert object_keys("{ a: 1, b, c: f(x, y), d: { e: 2 } }", 0)[0] == ["a", "b", "c", "d"]
    assert object_keys("{ [k]: v, ...rest }", 0)[0] == ["[k]: v", "...rest"]
    assert FETCH.findall(code_only('x.prefetch(a); // fetch(b)\nfetch("/c")')) == ["fetch("]
    assert STATE_ASSIGN.findall("state.step = 1; state.step === 2; state.editor.text = 3; state.x += 1") == ["step", "x"]


def test_the_page_reads_the_node_each_frame_names():
    # the server writes `node` on every frame (docs/trace.md): no page module works it out again
    derived = [name for name, text in sources().items() if re.search(r"\bframeNode\b", text)]
    assert not derived, f"modules deriving a frame's node instead of reading frame.node: {derived}"
