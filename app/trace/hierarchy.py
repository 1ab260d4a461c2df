"""The group tree of a big pass (issue 11, docs/trace.md §5): modules, folds of repeated structure,
chunks, iterations. Pure: nodes, edges, module clusters and the source text in, a ``Hierarchy`` out.

* **Modules** come from the module stack: a cluster is a ``module`` group of its direct members.
* **Folds**: inside each container (the pass, a module), units (nodes and child groups, in
  execution order) are keyed by structure (tensor: leaf or computed + shape; op: op + shape;
  group: its signature). A run of ≥ 3 consecutive repetitions of the same key sequence whose
  internal edges also repeat is a ``fold`` of ``iter`` groups (a loop body; 150 × (Linear, Tanh)).
* A leaf tensor that ≥ 2 iterations read (an RNN's ``W``) stays outside the fold, before it.
* **Chunks**: a fold of more than ``max_children`` iterations is split into ``chunk``s of a power
  of 10 iterations (3,300 → 33 × 100 → 10 × 10 → 10 iters); a container with more than
  ``max_children`` loose units gets sequence chunks (``count`` null), so no group has more.
* **Labels**: a fold's ops on lines inside ``for NAME in …`` (``ast.parse``, never executed) read
  "t = 0 … 199"; otherwise "× 3,300", and an iteration "#17".
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import numpy as np

from app.trace.values import flat_floats, num, to_float
from engine.trace_events import BACKWARD_BEGIN, BACKWARD_ERROR
from sandbox.checks import parse_python

MIN_REPEATS = 3  # a fold is at least this many repetitions
MAX_PERIOD = 400  # longest loop body (units) looked for
MAX_CANDIDATES = 6  # periods tried at each position (the ones covering most)
GROUP_H = 46.0  # a collapsed group's card (points): the page draws it as a stack with its count
GROUP_CHAR_W = 7.4
GROUP_PAD = 44.0


@dataclass
class Group:
    id: str
    kind: str  # module | fold | chunk | iter
    label: str
    parent: str | None
    units: list[str] = field(default_factory=list)  # direct contents in order: node ids and child gids
    count: int | None = None
    range: list[int] | None = None
    module: str | None = None  # the owning module's name (the page's cluster title)
    signature: int = 0
    size: int = 0
    ops: int = 0
    output: str | None = None
    summary: object = None
    first_frame: int | None = None
    last_frame: int | None = None
    expanded: bool = False  # starts expanded on the page (a first-level module that is not too big)

    @property
    def children(self) -> list[str]:
        return [u for u in self.units if u[0] == "g"]

    def size_wh(self) -> tuple[float, float]:
        return (round(max(96.0, GROUP_PAD + GROUP_CHAR_W * len(self.label)), 1), GROUP_H)

    def record(self) -> dict:
        w, h = self.size_wh()
        return {"id": self.id, "kind": self.kind, "label": self.label, "parent": self.parent,
                "children": self.children, "count": self.count, "range": self.range, "size": self.size,
                "ops": self.ops, "signature": self.signature, "output": self.output, "summary": self.summary,
                "w": w, "h": h, "first_frame": self.first_frame, "last_frame": self.last_frame,
                "expanded": self.expanded, "module": self.module}


@dataclass
class Hierarchy:
    groups: dict[str, Group]
    top: list[str]  # the pass's own units: node ids and top-level gids
    node_group: dict[str, str]  # node id → innermost gid (absent: top level)
    frame_group: list[str | None]  # per frame: innermost gid of its node (None: top level / no node)

    def chain(self, gid: str | None) -> list[str]:
        """Groups from the outermost to ``gid``."""
        out = []
        while gid is not None:
            out.append(gid)
            gid = self.groups[gid].parent
        return out[::-1]

    def visible(self, nid: str) -> bool:
        return all(self.groups[g].expanded for g in self.chain(self.node_group.get(nid)))

    def subtree(self, gid: str) -> list[str]:
        out, stack = [], [gid]
        while stack:
            g = stack.pop()
            out.append(g)
            stack.extend(reversed(self.groups[g].children))
        return out


# a backward's start and failure belong to the whole pass, not to the group of its root: their frames stay
# whole at the top level, so the page has the root and the seed gradient without opening a group
PASS_LEVEL_KINDS = frozenset({BACKWARD_BEGIN, BACKWARD_ERROR})


def grouped_node(f: dict) -> str | None:
    """The node whose group a frame goes with (its ``node``; None for a pass-level frame)."""
    return None if f["kind"] in PASS_LEVEL_KINDS else f.get("node")


def loop_lines(source: str) -> list[tuple[int, int, str, tuple | None]]:
    """``for NAME in …`` loops of the source: (first body line, last line, NAME, range args or None),
    innermost last. Parsed only, never executed; a source that does not parse has none."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError, RecursionError, SystemError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and node.body:
            args = None
            it = node.iter
            if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                    and not it.keywords and 1 <= len(it.args) <= 3
                    and all(isinstance(a, ast.Constant) and type(a.value) is int for a in it.args)):
                vals = [a.value for a in it.args]
                args = (0, vals[0], 1) if len(vals) == 1 else (vals[0], vals[1], vals[2] if len(vals) == 3 else 1)
            out.append((node.body[0].lineno, node.end_lineno or node.lineno, node.target.id, args))
    out.sort(key=lambda x: (x[0], -x[1]))
    return out


def _thousands(n: int) -> str:
    return f"{n:,}"


def summarize_value(v):
    """A scalar, or {min, max, mean, shape} of a nested list / a recorder summary; None when unknown."""
    if v is None:
        return None
    if isinstance(v, dict):
        return {k: v.get(k) for k in ("min", "max", "mean", "shape")}
    f = to_float(v)
    if f is not None and not isinstance(v, list):
        return v
    if isinstance(v, list):
        shape: list[int] = []
        x = v
        while isinstance(x, list):
            shape.append(len(x))
            x = x[0] if x else None
        flat = flat_floats(v)
        if flat is None:
            return None
        if not flat:
            return {"min": None, "max": None, "mean": None, "shape": shape}
        a = np.asarray(flat)
        with np.errstate(all="ignore"):
            return {"min": num(float(a.min())), "max": num(float(a.max())), "mean": num(float(a.mean())), "shape": shape}
    return None


class _Builder:
    def __init__(self, nodes, edges, node_cluster, clusters, source, threshold, max_children):
        self.nodes = nodes
        self.pos = {n["id"]: i for i, n in enumerate(nodes)}
        self.by_id = {n["id"]: n for n in nodes}
        self.edges = edges
        self.node_cluster = node_cluster
        self.clusters = clusters  # cid → (parent, label, name)
        self.threshold = threshold
        self.max_children = max(2, max_children)
        self.base = max(2, min(10, self.max_children))
        self.loops = loop_lines(source)
        self.groups: dict[str, Group] = {}
        self.sig_table: dict[tuple, int] = {}
        self.unit_key: dict[str, int] = {}  # node id / gid → structural key code
        self.key_table: dict[object, int] = {}
        self.parent_of: dict[str, str] = {}  # node id / gid → gid containing it directly
        self.out_adj: dict[str, list[str]] = {}
        for _eid, s, d, _cut in edges:
            self.out_adj.setdefault(s, []).append(d)
        self.first_pos: dict[str, int] = {}
        self._n = 0

    # ------------------------------------------------------------- ids, keys
    def new_group(self, kind: str, label: str, units: list[str], **kw) -> Group:
        self._n += 1
        g = Group(f"g{self._n}", kind, label, None, units, **kw)
        self.groups[g.id] = g
        for u in units:
            self.parent_of[u] = g.id
            if u[0] == "g":
                self.groups[u].parent = g.id
        # where a group sits among its siblings: its first computation (a Linear's weight was made with
        # the model, long before the Linear ran)
        computed = [self.first_pos[u] if u[0] == "g" else self.pos[u] for u in units
                    if u[0] == "g" or self.by_id[u]["kind"] == "op"
                    or self.by_id[u].get("role") not in ("parameter", "input", "constant")]
        self.first_pos[g.id] = min(computed) if computed else \
            min((self.first_pos[u] if u[0] == "g" else self.pos[u]) for u in units)
        return g

    def code(self, key) -> int:
        return self.key_table.setdefault(key, len(self.key_table))

    def node_key(self, nid: str) -> int:
        n = self.by_id[nid]
        if n["kind"] == "op":
            key = ("op", n.get("op"), _shape(n.get("shape")))
        else:
            leaf = n.get("role") in ("parameter", "input", "constant")
            key = ("tensor", leaf, _shape(n.get("shape")))
        return self.code(key)

    def key_of(self, u: str) -> int:
        k = self.unit_key.get(u)
        if k is None:
            k = self.unit_key[u] = self.node_key(u)
        return k

    def leaves(self, u: str) -> list[str]:
        """The nodes inside unit ``u`` (itself when a node)."""
        if u[0] != "g":
            return [u]
        out: list[str] = []
        stack = [u]
        while stack:
            x = stack.pop()
            if x[0] == "g":
                stack.extend(self.groups[x].units)
            else:
                out.append(x)
        return out

    def signature(self, kind: str, extra, units: list[str]) -> int:
        index: dict[str, int] = {}
        for i, u in enumerate(units):
            for nid in self.leaves(u):
                index[nid] = i
        pattern = sorted({(index[s], index[d]) for s in index for d in self.out_adj.get(s, ())
                          if d in index and index[s] != index[d]})
        return self.sig_table.setdefault((kind, extra, tuple(self.key_of(u) for u in units), tuple(pattern)),
                                         len(self.sig_table))

    # ------------------------------------------------------------- containers
    def container(self, members: list[str]) -> list[str]:
        """Units of a container (its direct nodes and child module gids) folded and chunked."""
        units = sorted(members, key=lambda u: self.first_pos[u] if u[0] == "g" else self.pos[u])
        units = self.fold(units)
        return self.chunk_sequence(units)

    def fold(self, units: list[str]) -> list[str]:
        n = len(units)
        if n < MIN_REPEATS:
            return units
        codes = np.fromiter((self.key_of(u) for u in units), dtype=np.int64, count=n)
        max_p = min(MAX_PERIOD, n // MIN_REPEATS)
        # run[p][i]: how many consecutive j >= i have codes[j] == codes[j + p]
        cands: list[tuple[int, np.ndarray]] = []
        matches = []
        for p in range(1, max_p + 1):
            eq = codes[:-p] == codes[p:]
            hits = int(np.count_nonzero(eq))
            if hits >= (MIN_REPEATS - 1) * p:
                matches.append((hits + p, p, eq))
        # the periods that repeat most (a loop body and its multiples): only they get their runs measured
        matches.sort(key=lambda m: (-m[0], m[1]))
        for _, p, eq in matches[:2 * MAX_CANDIDATES]:
            run = _runs(eq)
            best = int(run.max())
            if best >= (MIN_REPEATS - 1) * p:
                cands.append((best + p, p, run))
        if not cands:
            return units
        cands.sort(key=lambda c: (-c[0], c[1]))
        cands = cands[:MAX_CANDIDATES]
        out: list[str] = []
        i = 0
        while i < n:
            best = None
            for _, p, run in cands:
                if i >= len(run):
                    continue
                reps = (int(run[i]) + p) // p
                if reps >= MIN_REPEATS and (best is None or reps * p > best[0] * best[1]):
                    best = (reps, p)
            if best is None:
                out.append(units[i])
                i += 1
                continue
            reps, p = best
            out.extend(self.make_folds(units[i:i + reps * p], p))
            i += reps * p
        return out

    def make_folds(self, units: list[str], p: int) -> list[str]:
        """Iterations of ``p`` units; consecutive ones with the same inner edges fold (≥ 3)."""
        iters = [units[k:k + p] for k in range(0, len(units), p)]
        sigs = [self.signature("iter", None, it) for it in iters]
        out: list[str] = []
        k = 0
        while k < len(iters):
            j = k
            while j < len(iters) and sigs[j] == sigs[k]:
                j += 1
            if j - k >= MIN_REPEATS:
                out.extend(self.make_fold(iters[k:j], sigs[k]))
            else:
                for it in iters[k:j]:
                    out.extend(it)
            k = j
        return out

    def make_fold(self, iters: list[list[str]], iter_sig: int) -> list[str]:
        # a leaf read by >= 2 iterations (a weight shared by every step) stays outside, before the fold
        shared: list[str] = []
        where: dict[str, int] = {}
        for k, it in enumerate(iters):
            for u in it:
                for nid in self.leaves(u):
                    where[nid] = k
        for it in iters:
            for u in list(it):
                if u[0] != "g" and self.by_id[u]["kind"] == "tensor" and \
                        self.by_id[u].get("role") in ("parameter", "input", "constant"):
                    readers = {where.get(d) for d in self.out_adj.get(u, ())}
                    if len(readers - {None}) >= 2:
                        it.remove(u)
                        shared.append(u)
        name, args = self.loop_of(iters)
        count = len(iters)

        def it_label(k: int) -> str:
            if name is None:
                return f"#{k}"
            return f"{name} = {args[0] + k * args[2]}" if args else f"{name} = {k}"

        def range_label(a: int, b: int) -> str:
            if name is None:
                return f"#{a} … #{b}"
            if args:
                return f"{name} = {args[0] + a * args[2]} … {args[0] + b * args[2]}"
            return f"{name} = {a} … {b}"

        iter_groups = []
        for k, it in enumerate(iters):
            it = self.chunk_sequence(it)
            g = self.new_group("iter", it_label(k), it, count=1, range=[k, k])
            g.signature = iter_sig
            self.unit_key[g.id] = self.code(("iter", iter_sig))
            iter_groups.append(g.id)

        def build(lo: int, hi: int, kind: str) -> str:
            """A fold / chunk over iterations lo..hi-1, chunked to <= max_children children."""
            n = hi - lo
            step = 1
            while -(-n // step) > self.max_children:
                step *= self.base
            if step == 1:
                children = iter_groups[lo:hi]
            else:
                # a range of one iteration ("#150 … #150") would be a chunk adding nothing: the iteration itself
                children = [build(a, min(a + step, hi), "chunk") if min(a + step, hi) - a > 1 else iter_groups[a]
                            for a in range(lo, hi, step)]
            label = (f"× {_thousands(n)}" if name is None else range_label(lo, hi - 1)) if kind == "fold" \
                else range_label(lo, hi - 1)
            g = self.new_group(kind, label, children, count=n, range=[lo, hi - 1])
            g.signature = self.sig_table.setdefault(("rep", iter_sig, n, step), len(self.sig_table))
            self.unit_key[g.id] = self.code(("rep", g.signature))
            return g.id

        return [*shared, build(0, count, "fold")]

    def loop_of(self, iters: list[list[str]]) -> tuple[str | None, tuple | None]:
        """The innermost ``for`` loop holding the lines of the fold's ops (NAME, range args)."""
        lines = set()
        for it in iters[:2]:
            for u in it:
                for nid in self.leaves(u):
                    line = self.by_id[nid].get("line")
                    if self.by_id[nid]["kind"] == "op" and isinstance(line, int):
                        lines.add(line)
        if not lines:
            return None, None
        best = None
        for a, b, name, args in self.loops:
            if all(a <= ln <= b for ln in lines):
                if best is None or a >= best[0]:
                    best = (a, b, name, args)
        if best is None:
            return None, None
        args = best[3]
        if args is not None:
            start, stop, step = args
            if step == 0 or len(range(start, stop, step)) < len(iters):
                args = None
        return best[2], args

    def chunk_sequence(self, units: list[str]) -> list[str]:
        """More than max_children loose units: consecutive ones go in sequence chunks (nested)."""
        mc = self.max_children
        while len(units) > mc:
            # bottom-up, mc units a chunk: every chunk (and then the level above) stays within mc
            size = mc if len(units) > mc * mc else max(2, -(-len(units) // mc))
            grouped = []
            for a in range(0, len(units), size):
                part = units[a:a + size]
                if len(part) == 1:
                    grouped.append(part[0])
                    continue
                lines = [ln for u in part for nid in self.leaves(u)
                         if isinstance(ln := self.by_id[nid].get("line"), int)]
                n_ops = sum(1 for u in part for nid in self.leaves(u) if self.by_id[nid]["kind"] == "op")
                where = (f" · line {min(lines)}" + (f"–{max(lines)}" if max(lines) != min(lines) else "")) if lines else ""
                # a chunk of leaves only (a loop's inputs) says what it holds, never "0 ops"
                what = f"{_thousands(n_ops)} ops" if n_ops else f"{_thousands(len(part))} tensors"
                g = self.new_group("chunk", f"{what}{where}", part)
                g.signature = self.signature("seq", None, part)
                self.unit_key[g.id] = self.code(("seq", g.signature))
                grouped.append(g.id)
            units = grouped
        return units


def _shape(s) -> tuple:
    return tuple(s) if isinstance(s, list) else ()


def _runs(eq: np.ndarray) -> np.ndarray:
    """For each i, the number of consecutive True values of ``eq`` starting at i."""
    n = len(eq)
    # NOTE: computed from the right with cumulative sums: position of the next False after i
    idx = np.arange(n)
    false_pos = np.where(~eq, idx, n)
    next_false = np.minimum.accumulate(false_pos[::-1])[::-1]
    return next_false - idx


def build_hierarchy(nodes: list[dict], edges: list[tuple], node_cluster: dict[str, str],
                    clusters: list[tuple[str, str | None, str]], frames: list[dict], source: str, *,
                    threshold: int, max_children: int) -> Hierarchy:
    """``nodes`` in execution order (``id``, ``kind``, ``op``, ``shape``, ``role``, ``line``, ``value``);
    ``edges`` (id, source, target, cut); ``node_cluster``: node → innermost module cluster;
    ``clusters``: (cid, parent cid, label "model.3 (Linear)") outer before inner."""
    b = _Builder(nodes, edges, node_cluster, clusters, source, threshold, max_children)
    # modules, innermost first: each becomes a group of its direct nodes and child modules
    direct: dict[str | None, list[str]] = {}
    for n in nodes:
        direct.setdefault(node_cluster.get(n["id"]), []).append(n["id"])
    parent = {cid: par for cid, par, _ in clusters}
    label = {cid: lab for cid, _, lab in clusters}
    depth = {}
    for cid, _, _ in clusters:
        d, p = 0, parent.get(cid)
        while p is not None and d < 256:
            d += 1
            p = parent.get(p)
        depth[cid] = d
    child_mods: dict[str | None, list[str]] = {}
    for cid, _, _ in clusters:
        child_mods.setdefault(parent.get(cid) if parent.get(cid) in parent else None, []).append(cid)
    gid_of_cluster: dict[str, str] = {}
    for cid in sorted(parent, key=lambda c: -depth[c]):
        members = list(direct.get(cid, [])) + [gid_of_cluster[c] for c in child_mods.get(cid, []) if c in gid_of_cluster]
        if not members:
            continue
        units = b.container(members)
        g = b.new_group("module", label[cid], units, module=label[cid].split(" (")[0])
        g.signature = b.signature("module", label[cid].split(" (")[-1], units)
        b.unit_key[g.id] = b.code(("module", g.signature))
        gid_of_cluster[cid] = g.id
    top_members = list(direct.get(None, [])) + [gid_of_cluster[c] for c in child_mods.get(None, []) if c in gid_of_cluster]
    top = b.container(top_members) if top_members else []
    groups = b.groups
    for u in top:
        if u[0] == "g":
            groups[u].parent = None
    # innermost group of each node; sizes, ops, owning module
    node_group: dict[str, str] = {}
    for g in groups.values():
        for u in g.units:
            if u[0] != "g":
                node_group[u] = g.id
    level = {g.id: len(_chain(groups, g.id)) for g in groups.values()}
    order = sorted(groups.values(), key=lambda g: -level[g.id])  # deepest first: children before parents
    by_id = b.by_id
    for g in order:
        g.size = sum(1 if u[0] != "g" else groups[u].size for u in g.units)
        g.ops = sum((1 if by_id[u]["kind"] == "op" else 0) if u[0] != "g" else groups[u].ops for u in g.units)
    for g in reversed(order):
        if g.kind != "module":
            g.module = groups[g.parent].module if g.parent else None
    # first-level modules start expanded unless big; everything else starts collapsed
    for u in top:
        if u[0] == "g" and groups[u].kind == "module" and groups[u].size <= threshold:
            groups[u].expanded = True
    # frames: innermost group of each frame's node; first and last frame of every group (then up the tree)
    frame_group: list[str | None] = []
    get = node_group.get
    for i, f in enumerate(frames):
        nid = grouped_node(f)
        gid = get(nid) if nid is not None else None
        frame_group.append(gid)
        if gid is not None:
            g = groups[gid]
            if g.first_frame is None:
                g.first_frame = i
            g.last_frame = i
    for g in order:
        for c in g.children:
            cg = groups[c]
            if cg.first_frame is not None:
                g.first_frame = cg.first_frame if g.first_frame is None else min(g.first_frame, cg.first_frame)
                g.last_frame = cg.last_frame if g.last_frame is None else max(g.last_frame, cg.last_frame)
    # output: the last tensor of the group read outside it (else its last tensor), and its value summary
    chain_set: dict[str, frozenset] = {}
    best: dict[str, int] = {}
    pos = b.pos
    for _eid, s, d, _cut in edges:
        gs = get(s)
        if gs is None or by_id.get(s, {}).get("kind") != "tensor":
            continue
        gd = get(d)
        inside = chain_set.get(gd) if gd is not None else frozenset()
        if inside is None:
            inside = chain_set[gd] = frozenset(_chain(groups, gd))
        ps = pos[s]
        while gs is not None and gs not in inside:
            if best.get(gs, -1) < ps:
                best[gs] = ps
            gs = groups[gs].parent
    for g in groups.values():
        if g.id in best:
            g.output = nodes[best[g.id]]["id"]
    for g in order:
        if g.output is None:
            for u in reversed(g.units):
                if u[0] == "g":
                    if groups[u].output is not None:
                        g.output = groups[u].output
                        break
                elif by_id[u]["kind"] == "tensor":
                    g.output = u
                    break
        if g.output is not None:
            g.summary = summarize_value(by_id[g.output].get("value"))
    return Hierarchy(groups, top, node_group, frame_group)


def _chain(groups: dict[str, Group], gid: str | None) -> list[str]:
    out = []
    while gid is not None:
        out.append(gid)
        gid = groups[gid].parent
    return out
