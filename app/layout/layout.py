"""Server-side layout of one pass's graph: positions, sizes and edge paths, cached by structure.

Policy
------
* **Cache.** A graph's *signature* is its structure with ids replaced by positions in execution
  order: per node (kind, op, size), edges as index pairs, clusters as index sets. Layouts are
  stored by signature in an LRU cache that lives as long as the worker process, so 100 identical
  training steps (or 100 runs of the same example) are laid out once; a hit costs a dict lookup.
* **Small graphs** (≤ ``group_threshold`` nodes, a setting) go to Graphviz ``dot`` whole,
  with module clusters, through a long-lived ``dot`` process (``app.layout.dot``).
* **Big graphs are grouped; dot never sees a whole big graph.** Nodes are taken in execution
  order; the period of their (kind, op, shape) sequence is detected (a loop body repeats), and
  the sequence is cut into groups of about ``group_chunk`` nodes whose boundaries fall on
  iteration boundaries, after any preamble (parameters, inputs). Each group's induced subgraph is
  laid out by dot *by signature*, so every repetition of the loop body shares one dot call (the
  representative). Groups are then placed in columns by dependency rank (a group's column is one
  past the furthest group it reads from), stacked and centred within a column; edges between
  groups are straight segments; a strip much wider than tall (a long chain) is wrapped into rows
  towards a 16:9 box. The whole grouped result is cached by signature too (``grouped-cache``).
  The answer lists the groups (``graph.groups``: id, box, nodes,
  ``signature`` shared by identical groups) so the page can collapse repeated blocks.
* **Long strips are folded into rows.** A whole-graph layout much wider than the page's graph pane
  (a two-layer MLP: ~1,500 × 360 pt) is cut at free vertical strips (no node, no module box) into
  2 or 3 rows read like lines of text, when that draws it bigger (``wrap_rows``); edges into the next
  row are routed like a line return. The pane's shape is a parameter: a training step is shown
  above the loss chart, in a much wider pane, so it is folded less often.
* **Module boxes** get a title band above their members; dot keeps it free (every DOT cluster has
  a label), and node sizes come from ``app.layout.sizes``.
* **Fallback.** When dot fails or exceeds ``dot_timeout_s``, a plain layered layout
  (longest-path ranks, nodes stacked in execution order) is used, so a layout never hangs a run.

Coordinates are points with y pointing down; nodes and clusters give centre (x, y) and size.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from app.layout.dot import DotProcess, LayoutTimeout, digraph_source

if TYPE_CHECKING:
    from app.core.config import Settings

PAD = 8.0  # points around cluster members
GAP = 36.0  # points between groups
ASPECT = 16 / 9  # wrapped grouped layouts aim at this width:height
ASPECT_WRAP = 4.0  # wrap only strips wider than this many heights
LABEL_BAND = 15.0  # points above a cluster's members for its title
# folding long whole-graph layouts into rows (wrap_rows)
WRAP_MIN_W = 900.0  # narrower layouts already read well fitted into a laptop's graph pane
# the graph pane, less the step caption and the legend, is about this wide for its height (1280×720);
# above the loss chart of a training run it is much wider than high
VIEW_ASPECT = 1.8
VIEW_ASPECT_TRAINING = 3.5
WRAP_GAIN = 1.2  # fold only when the fitted scale grows by this factor
CAPTION = 14.0  # the page writes grad_fn / leaf captions under tensor records
ROW_GAP = 34.0  # between rows: the return lanes run here
LANE = 6.0  # between two return lanes in one gap
ROW_MARGIN = 14.0  # left of each row: room for a return lane into a row's first node
CUT_SLACK = 0.12  # a row may end this fraction of the width away from an even split


@dataclass
class LayoutInput:
    """Nodes in execution order: (id, key, w, h); edges (id, source, target) or (id, source, target, minlen):
    dot puts the ends at least minlen ranks apart (room along the edge for what the page draws on it);
    clusters (id, parent, members) or (id, parent, members, label): dot keeps room for the label above the
    members."""

    nodes: list[tuple[str, str, float, float]]
    edges: list[tuple]
    clusters: list[tuple[str, str | None, list[str]]] = field(default_factory=list)


@dataclass
class LayoutResult:
    width: float
    height: float
    nodes: dict[str, tuple[float, float]]  # centre
    edges: dict[str, list[list[float]]]
    clusters: dict[str, tuple[float, float, float, float]]  # centre + size
    groups: list[dict] = field(default_factory=list)
    method: str = "dot"  # "dot" | "cache" | "grouped" | "grouped-cache" | "fallback" (cache: within the run)


@dataclass
class _Canon:
    """A layout in index space: node centres, edge points, cluster boxes, size."""

    width: float
    height: float
    nodes: list[tuple[float, float]]
    edges: list[list[list[float]]]
    clusters: list[tuple[float, float, float, float]]
    fallback: bool = False
    groups: list[dict] = field(default_factory=list)  # grouped layouts: boxes with index ranges


class LayoutEngine:
    """Every limit is given (``from_settings``): ``Settings`` is the only place one is written."""

    def __init__(self, *, dot_binary: str, dot_timeout: float, cache_size: int, group_threshold: int,
                 group_chunk: int, wrap: bool = True):
        self.dot = DotProcess(dot_binary, dot_timeout)
        self.cache: OrderedDict[tuple, _Canon] = OrderedDict()
        self.cache_size = cache_size
        self.group_threshold = group_threshold
        self.group_chunk = group_chunk
        self.wrap = wrap
        self.hits = 0
        self.misses = 0
        self._run_seen: set | None = None  # signatures laid out for the current run (begin_run)
        self.costs: dict[tuple, float] = {}  # signature → seconds its layout took when it was computed
        self.spared_s = 0.0  # this run's layout time served from other runs' entries (begin_run)

    @classmethod
    def from_settings(cls, settings: Settings, *, dot_binary: str | None = None, wrap: bool = True) -> LayoutEngine:
        """The engine ``settings`` describe; ``dot_binary`` (the path the startup check found)
        replaces ``settings.dot_binary``."""
        return cls(dot_binary=dot_binary or settings.dot_binary, dot_timeout=settings.dot_timeout_s,
                   cache_size=settings.layout_cache_size, group_threshold=settings.group_threshold,
                   group_chunk=settings.group_chunk, wrap=wrap)

    def close(self) -> None:
        self.dot.close()

    # ---------------------------------------------------------------- cache
    def begin_run(self) -> None:
        """A new run (one client's program) starts: from now on a layout is reported as a cache hit
        (``cache``, ``grouped-cache``) only when this run laid out the same structure before. The cache
        is shared by every client of the worker, and its status must not tell one client what another
        ran; a hit from another run is still served (fast), and reported as freshly laid out."""
        self._run_seen = set()
        self.spared_s = 0.0

    def _cached(self, sig: tuple, compute) -> tuple[_Canon, bool]:
        got = self.cache.get(sig)
        seen = self._run_seen
        if got is not None:
            self.cache.move_to_end(sig)
            self.hits += 1
            if seen is not None and sig not in seen:
                seen.add(sig)
                self.spared_s += self.costs.get(sig, 0.0)  # timings report it as laid out: no side channel
                return got, False
            return got, True
        if seen is not None:
            seen.add(sig)
        self.misses += 1
        started = time.monotonic()
        canon = compute()
        if self.cache_size and not canon.fallback:
            self.cache[sig] = canon
            self.costs[sig] = time.monotonic() - started
            while len(self.cache) > self.cache_size:
                self.costs.pop(self.cache.popitem(last=False)[0], None)
        return canon, False

    # ---------------------------------------------------------------- public
    def layout(self, g: LayoutInput, view_aspect: float = VIEW_ASPECT) -> LayoutResult:
        """``view_aspect``: width / height of the pane the page will fit the graph into (a long strip
        is folded into rows only when that draws it bigger there)."""
        if len(g.nodes) <= self.group_threshold:
            return self._layout_whole(g, view_aspect)
        return self._layout_grouped(g)

    # ---------------------------------------------------------------- whole graph
    def _layout_whole(self, g: LayoutInput, view_aspect: float = VIEW_ASPECT) -> LayoutResult:
        index = {n[0]: i for i, n in enumerate(g.nodes)}
        kept = [e for e in g.edges if e[1] in index and e[2] in index]
        edges = [(index[e[1]], index[e[2]]) for e in kept]
        minlens = tuple(e[3] if len(e) > 3 else 1 for e in kept)
        minlens = minlens if any(m != 1 for m in minlens) else ()  # the usual case: signatures as before
        cl_index = {c[0]: i for i, c in enumerate(g.clusters)}
        clusters = [
            (cl_index.get(c[1], -1) if c[1] else -1, tuple(sorted(index[m] for m in c[2] if m in index)))
            for c in g.clusters
        ]
        labels = [c[3] if len(c) > 3 else "" for c in g.clusters]
        sig = ("whole", tuple((k, round(w), round(h)) for _, k, w, h in g.nodes), tuple(edges), tuple(clusters),
               tuple(len(x) for x in labels), self.wrap and round(view_aspect, 2)) + ((minlens,) if minlens else ())
        sizes = [(w, h) for _, _, w, h in g.nodes]

        def compute() -> _Canon:
            canon = self._dot_canon(sizes, edges, clusters, labels, minlens)
            if not self.wrap or canon.fallback:
                return canon
            return wrap_rows(canon, sizes, edges, clusters, [k.startswith("op|") for _, k, _, _ in g.nodes], view_aspect)

        canon, hit = self._cached(sig, compute)
        return self._from_canon(g, canon, "cache" if hit else ("fallback" if canon.fallback else "dot"))

    def _dot_canon(self, sizes, edges, clusters, labels=None, minlens=()) -> _Canon:
        names = [f"v{i}" for i in range(len(sizes))]
        # cluster forest in DOT: (name, members not in a child, children)
        children: dict[int, list[int]] = {}
        for ci, (parent, _) in enumerate(clusters):
            children.setdefault(parent, []).append(ci)
        member_sets = [set(m) for _, m in clusters]

        def forest(parent: int) -> list:
            out = []
            for ci in children.get(parent, []):
                own = set(member_sets[ci])
                for child in children.get(ci, []):
                    own -= member_sets[child]
                out.append((f"c{ci}", [names[i] for i in sorted(own)], forest(ci), (labels or {}) and labels[ci]))
            return out

        cl_forest = forest(-1) if clusters else []
        # a node may only appear in one cluster branch: drop duplicates from later branches
        seen: set[str] = set()

        def dedup(cl):
            name, mem, ch, label = cl
            mem2 = [m for m in mem if m not in seen]
            seen.update(mem2)
            return (name, mem2, [dedup(c) for c in ch], label)

        cl_forest = [dedup(c) for c in cl_forest]
        dot_edges = [(names[a], names[b]) for a, b in edges]
        if minlens:
            dot_edges = [(*e, m) if m != 1 else e for e, m in zip(dot_edges, minlens)]
        src = digraph_source([(names[i], w, h) for i, (w, h) in enumerate(sizes)], dot_edges, cl_forest)
        try:
            plain = self.dot.layout(src)
        except LayoutTimeout:
            return _layered(sizes, edges, clusters)
        pos = []
        for i in range(len(sizes)):
            x, y, _, _ = plain.nodes.get(names[i], (0.0, 0.0, 0.0, 0.0))
            pos.append((round(x, 2), round(y, 2)))
        # edges: match plain's (tail, head) in order of occurrence
        by_pair: dict[tuple[str, str], list[list[list[float]]]] = {}
        for tail, head, pts in plain.edges:
            by_pair.setdefault((tail, head), []).append(pts)
        edge_pts = []
        for a, b in edges:
            lst = by_pair.get((names[a], names[b]))
            edge_pts.append(lst.pop(0) if lst else _straight(pos[a], sizes[a], pos[b], sizes[b]))
        return _Canon(round(plain.width, 2), round(plain.height, 2), pos, edge_pts,
                      _cluster_boxes(pos, sizes, clusters))

    def _from_canon(self, g: LayoutInput, canon: _Canon, method: str) -> LayoutResult:
        index_edges = [e for e in g.edges if e[1] in _ids(g) and e[2] in _ids(g)]
        return LayoutResult(
            canon.width, canon.height,
            {n[0]: canon.nodes[i] for i, n in enumerate(g.nodes)},
            {e[0]: canon.edges[j] for j, e in enumerate(index_edges)},
            {c[0]: canon.clusters[k] for k, c in enumerate(g.clusters)},
            method=method,
        )

    # ---------------------------------------------------------------- grouped
    def _layout_grouped(self, g: LayoutInput) -> LayoutResult:
        n = len(g.nodes)
        index = {nd[0]: i for i, nd in enumerate(g.nodes)}
        sizes = [(w, h) for _, _, w, h in g.nodes]
        keys = [f"{k}|{round(w)}|{round(h)}" for _, k, w, h in g.nodes]
        # (a grouped layout ranks each group on its own: an edge's minlen is not kept)
        all_edges = [(e[0], index[e[1]], index[e[2]]) for e in g.edges if e[1] in index and e[2] in index]
        idx_edges = [(a, b) for _, a, b in all_edges]
        cl_index = {c[0]: i for i, c in enumerate(g.clusters)}
        clusters = [(cl_index.get(c[1], -1) if c[1] else -1, [index[x] for x in c[2] if x in index])
                    for c in g.clusters]
        sig = ("grouped", self.group_chunk, tuple(keys), tuple(idx_edges),
               tuple((p, tuple(m)) for p, m in clusters))
        canon, hit = self._cached(sig, lambda: self._grouped_canon(sizes, keys, idx_edges, clusters))
        ids = [nd[0] for nd in g.nodes]
        groups = [{"id": gr["id"], "x": gr["x"], "y": gr["y"], "w": gr["w"], "h": gr["h"],
                   "signature": gr["signature"], "nodes": ids[gr["range"][0]:gr["range"][1]]}
                  for gr in canon.groups]
        return LayoutResult(
            canon.width, canon.height,
            {ids[i]: canon.nodes[i] for i in range(n)},
            {all_edges[j][0]: canon.edges[j] for j in range(len(all_edges))},
            {c[0]: canon.clusters[k] for k, c in enumerate(g.clusters)},
            groups=groups,
            method="fallback" if canon.fallback else ("grouped-cache" if hit else "grouped"),
        )

    def _grouped_canon(self, sizes, keys, idx_edges, clusters) -> _Canon:
        n = len(sizes)
        bounds = chunk_bounds(keys, self.group_chunk)
        group_of = np.empty(n, dtype=np.int64)
        for gi, (a, b) in enumerate(bounds):
            group_of[a:b] = gi
        all_edges = [(j, a, b) for j, (a, b) in enumerate(idx_edges)]
        internal: dict[int, list[tuple[int, int, int]]] = {}
        cross: list[tuple[int, int, int]] = []
        for j, (_, a, b) in enumerate(all_edges):
            if group_of[a] == group_of[b]:
                internal.setdefault(int(group_of[a]), []).append((j, a, b))
            else:
                cross.append((j, a, b))
        # lay out each group by signature
        group_canon: list[_Canon] = []
        sigs: dict[tuple, int] = {}
        group_sig: list[int] = []
        any_fallback = False
        for gi, (a, b) in enumerate(bounds):
            local = [(x - a, y - a) for _, x, y in internal.get(gi, [])]
            sig = ("group", tuple(keys[a:b]), tuple(local))
            local_sizes = sizes[a:b]
            canon, _ = self._cached(sig, lambda ls=local_sizes, le=local: self._dot_canon(ls, le, []))
            any_fallback |= canon.fallback
            group_canon.append(canon)
            group_sig.append(sigs.setdefault(sig, len(sigs)))
        # place groups: column = 1 + furthest predecessor column
        m = len(bounds)
        col = [0] * m
        preds: list[set[int]] = [set() for _ in range(m)]
        for _, a, b in cross:
            ga, gb = int(group_of[a]), int(group_of[b])
            if ga < gb:
                preds[gb].add(ga)
        for gi in range(m):
            col[gi] = 1 + max((col[p] for p in preds[gi]), default=-1)
        ncol = max(col) + 1
        col_w = [0.0] * ncol
        col_h = [0.0] * ncol
        for gi in range(m):
            c = col[gi]
            col_w[c] = max(col_w[c], group_canon[gi].width)
            col_h[c] += group_canon[gi].height + (GAP if col_h[c] else 0.0)
        # columns left to right; a long strip (a 1,000-step chain) is wrapped into rows, snake-free,
        # so the whole graph keeps a screen-like aspect ratio
        total_w = sum(col_w) + GAP * (ncol - 1)
        max_h = max(col_h)
        target_w = total_w
        if max_h > 0 and total_w / max_h > ASPECT_WRAP:
            target_w = max(max(col_w), (total_w * max_h * ASPECT) ** 0.5)
        col_x = [0.0] * ncol
        row_h: list[float] = []
        x = 0.0
        row = 0
        row_of = [0] * ncol
        for c in range(ncol):
            if x > 0 and x + col_w[c] > target_w:
                row += 1
                x = 0.0
            col_x[c] = x
            row_of[c] = row
            x += col_w[c] + GAP
            if len(row_h) <= row:
                row_h.append(0.0)
            row_h[row] = max(row_h[row], col_h[c])
        row_top = [0.0] * len(row_h)
        for r in range(1, len(row_h)):
            row_top[r] = row_top[r - 1] + row_h[r - 1] + 2 * GAP
        width = max(col_x[c] + col_w[c] for c in range(ncol))
        height = row_top[-1] + row_h[-1]
        y_next = [row_top[row_of[c]] + (row_h[row_of[c]] - col_h[c]) / 2 for c in range(ncol)]
        origin: list[tuple[float, float]] = [(0.0, 0.0)] * m
        for gi in range(m):
            c = col[gi]
            cw = group_canon[gi].width
            origin[gi] = (col_x[c] + (col_w[c] - cw) / 2, y_next[c])
            y_next[c] += group_canon[gi].height + GAP
        pos: list[tuple[float, float]] = [(0.0, 0.0)] * n
        for gi, (a, _b) in enumerate(bounds):
            ox, oy = origin[gi]
            for li, (x, y) in enumerate(group_canon[gi].nodes):
                pos[a + li] = (round(x + ox, 2), round(y + oy, 2))
        edge_pts: list[list[list[float]]] = [[] for _ in idx_edges]
        for gi, lst in internal.items():
            ox, oy = origin[gi]
            for li, (j, _, _) in enumerate(lst):
                pts = group_canon[gi].edges[li]
                edge_pts[j] = [[round(px + ox, 2), round(py + oy, 2)] for px, py in pts]
        for j, a, b in cross:
            edge_pts[j] = _straight(pos[a], sizes[a], pos[b], sizes[b])
        groups = []
        for gi, (a, b) in enumerate(bounds):
            ox, oy = origin[gi]
            cw, ch = group_canon[gi].width, group_canon[gi].height
            groups.append({"id": f"g{gi}", "x": round(ox + cw / 2, 2), "y": round(oy + ch / 2, 2),
                           "w": round(cw, 2), "h": round(ch, 2), "signature": group_sig[gi], "range": (a, b)})
        return _Canon(round(width, 2), round(height, 2), pos, edge_pts, _cluster_boxes(pos, sizes, clusters),
                      fallback=any_fallback, groups=groups)


def _ids(g: LayoutInput) -> set[str]:
    return {n[0] for n in g.nodes}


def _straight(pa, sa, pb, sb) -> list[list[float]]:
    (ax, ay), (bx, by) = pa, pb
    return [[round(ax + sa[0] / 2, 2), round(ay, 2)], [round(bx - sb[0] / 2, 2), round(by, 2)]]


def wrap_rows(canon: _Canon, sizes, edges, clusters, is_op=None, view_aspect: float = VIEW_ASPECT) -> _Canon:
    """Fold a long left-to-right layout into 2 or 3 rows, read like lines of text, when that lets the
    page draw it bigger in a screen-shaped view (a two-layer MLP: about 1.5× bigger).

    Rows are cut at vertical strips that no node and no module box crosses, as near as possible to
    equal widths; each row keeps dot's layout. An edge from one row to the next is routed like a
    line return: right out of its source into the free strip beside it, down into the gap under the
    row (one lane per edge), left along it, down the free strip before its target and into it.
    """
    W, H = canon.width, canon.height
    n = len(sizes)
    if W <= WRAP_MIN_W or n < 4:
        return canon
    pos = canon.nodes
    is_op = is_op or [False] * n
    spans = sorted([(x - w / 2, x + w / 2) for (x, _), (w, _) in zip(pos, sizes)] +
                   [(cx - cw / 2, cx + cw / 2) for cx, _, cw, _ in canon.clusters if cw > 0])
    gaps: list[tuple[float, float]] = []  # free vertical strips, left to right
    reach = spans[0][1]
    for a, b in spans[1:]:
        if a > reach + 2:
            gaps.append((reach, a))
        reach = max(reach, b)
    if not gaps:
        return canon

    def score(w: float, h: float) -> float:  # scale of a fit into a view_aspect × 1 view
        return min(view_aspect / max(w, 1.0), 1.0 / max(h, 1.0))

    def cost(g: tuple[float, float], target: float) -> tuple:
        """Near the target width; among near ones, fewest edges across, and rather not between an op
        and its result (a row then starts with the op that consumes the previous row)."""
        mid = (g[0] + g[1]) / 2
        across = [(a, b) for a, b in edges if pos[a][0] < mid < pos[b][0]]
        op_result = sum(1 for a, _ in across if is_op[a])
        near = abs(mid - target) <= CUT_SLACK * W
        return (not near, len(across) + op_result if near else 0, abs(mid - target))

    best_score, best = score(W, H + CAPTION), None
    for k in (2, 3):
        cuts: list[float] = []
        for i in range(1, k):
            target = W * i / k
            g = min(gaps, key=lambda g, t=target: cost(g, t))
            mid = (g[0] + g[1]) / 2
            if cuts and mid <= cuts[-1] + 1:
                break
            cuts.append(mid)
        if len(cuts) != k - 1:
            continue
        placed = _place_rows(canon, sizes, edges, clusters, cuts, gaps)
        if placed is not None and score(placed.width, placed.height) > best_score * WRAP_GAIN:
            best_score, best = score(placed.width, placed.height), placed
    return best or canon


def _place_rows(canon: _Canon, sizes, edges, clusters, cuts, gaps) -> _Canon | None:
    pos = canon.nodes
    bounds = [-float("inf"), *cuts, float("inf")]
    nrows = len(bounds) - 1
    row_of = [next(r for r in range(nrows) if bounds[r] <= x < bounds[r + 1]) for x, _ in pos]
    rows = [[i for i in range(len(pos)) if row_of[i] == r] for r in range(nrows)]
    if any(not r for r in rows):
        return None
    left = [min(pos[i][0] - sizes[i][0] / 2 for i in r) for r in rows]
    right = [max(pos[i][0] + sizes[i][0] / 2 for i in r) for r in rows]
    top = [min(pos[i][1] - sizes[i][1] / 2 for i in r) for r in rows]
    bottom = [max(pos[i][1] + sizes[i][1] / 2 for i in r) + CAPTION for r in rows]
    for cx, cy, cw, ch in canon.clusters:  # module boxes (and their title band) stay in their row
        if cw > 0:
            r = next(r for r in range(nrows) if bounds[r] <= cx < bounds[r + 1])
            left[r], right[r] = min(left[r], cx - cw / 2), max(right[r], cx + cw / 2)
            top[r], bottom[r] = min(top[r], cy - ch / 2), max(bottom[r], cy + ch / 2)
    crossing = [0] * nrows
    for a, b in edges:
        if row_of[a] < row_of[b]:
            crossing[row_of[a]] += 1
    dx = [ROW_MARGIN - left[r] for r in range(nrows)]
    dy: list[float] = []
    y = 0.0
    for r in range(nrows):
        dy.append(y - top[r])
        y += bottom[r] - top[r] + ROW_GAP + LANE * max(0, crossing[r] - 1)
    height = y - ROW_GAP - LANE * max(0, crossing[-1] - 1)
    width = max(right[r] - left[r] for r in range(nrows)) + 2 * ROW_MARGIN
    new_pos = [(round(x + dx[row_of[i]], 2), round(yy + dy[row_of[i]], 2)) for i, (x, yy) in enumerate(pos)]
    lane_next = [0] * nrows
    new_edges: list[list[list[float]]] = []
    for j, (a, b) in enumerate(edges):
        ra, rb = row_of[a], row_of[b]
        if ra == rb:
            new_edges.append([[round(px + dx[ra], 2), round(py + dy[ra], 2)] for px, py in canon.edges[j]])
            continue
        if ra > rb:
            new_edges.append(_straight(new_pos[a], sizes[a], new_pos[b], sizes[b]))
            continue
        ax, bx = pos[a][0], pos[b][0]
        a_right, b_left = ax + sizes[a][0] / 2, bx - sizes[b][0] / 2
        g1 = next((g for g in gaps if g[0] >= a_right - 0.5), None)
        c1 = min((g1[0] + g1[1]) / 2 if g1 else a_right + 8, bounds[ra + 1]) + dx[ra]
        g2 = next((g for g in reversed(gaps) if g[1] <= b_left + 0.5), None)
        c2 = (g2[0] + g2[1]) / 2 if g2 and g2[1] > bounds[rb] else None
        c2 = c2 + dx[rb] if c2 is not None else ROW_MARGIN / 2
        lane = bottom[ra] + dy[ra] + ROW_GAP / 2 + LANE * lane_next[ra]
        lane_next[ra] += 1
        sx, sy = new_pos[a][0] + sizes[a][0] / 2, new_pos[a][1]
        tx, ty = new_pos[b][0] - sizes[b][0] / 2, new_pos[b][1]
        new_edges.append([[round(px, 2), round(py, 2)] for px, py in
                          [(sx, sy), (c1, sy), (c1, lane), (c2, lane), (c2, ty), (tx, ty)]])
    return _Canon(round(width, 2), round(height, 2), new_pos, new_edges, _cluster_boxes(new_pos, sizes, clusters))


def _cluster_boxes(pos, sizes, clusters) -> list[tuple[float, float, float, float]]:
    """Boxes around members (and, through members, child clusters), padded by depth, with a band on
    top for the page's title (dot keeps it free: app.layout.dot gives every cluster a label)."""
    boxes: list[tuple[float, float, float, float]] = []
    depth = []
    for parent, _ in clusters:
        d, p, guard = 0, parent, 0
        while p is not None and p >= 0 and guard < 64:
            d += 1
            p = clusters[p][0]
            guard += 1
        depth.append(d)
    max_depth = max(depth, default=0)
    for ci, (_, members) in enumerate(clusters):
        if not members:
            boxes.append((0.0, 0.0, 0.0, 0.0))
            continue
        pad = PAD * (1 + max_depth - depth[ci])
        x1 = min(pos[i][0] - sizes[i][0] / 2 for i in members) - pad
        x2 = max(pos[i][0] + sizes[i][0] / 2 for i in members) + pad
        y1 = min(pos[i][1] - sizes[i][1] / 2 for i in members) - pad - LABEL_BAND * (1 + max_depth - depth[ci])
        y2 = max(pos[i][1] + sizes[i][1] / 2 for i in members) + pad
        boxes.append((round((x1 + x2) / 2, 2), round((y1 + y2) / 2, 2), round(x2 - x1, 2), round(y2 - y1, 2)))
    return boxes


def _layered(sizes, edges, clusters) -> _Canon:
    """Fallback: longest-path ranks left to right, nodes stacked in execution order per rank."""
    n = len(sizes)
    rank = [0] * n
    incoming: dict[int, list[int]] = {}
    for a, b in edges:
        incoming.setdefault(b, []).append(a)
    for i in range(n):  # execution order is a topological order
        rank[i] = 1 + max((rank[a] for a in incoming.get(i, []) if a < i), default=-1)
    nr = max(rank, default=-1) + 1
    col_w = [0.0] * nr
    for i in range(n):
        col_w[rank[i]] = max(col_w[rank[i]], sizes[i][0])
    xs = [0.0] * nr
    x = 0.0
    for r in range(nr):
        xs[r] = x + col_w[r] / 2
        x += col_w[r] + 30.0
    y_next = [0.0] * nr
    pos: list[tuple[float, float]] = []
    for i in range(n):
        r = rank[i]
        h = sizes[i][1]
        pos.append((round(xs[r], 2), round(y_next[r] + h / 2, 2)))
        y_next[r] += h + 14.0
    pos = [(px, py + 4.0) for px, py in pos]
    height = max(y_next, default=0.0) + 8.0
    width = max(x - 30.0, 0.0)
    edge_pts = [_straight(pos[a], sizes[a], pos[b], sizes[b]) for a, b in edges]
    return _Canon(round(width, 2), round(height, 2), pos, edge_pts, _cluster_boxes(pos, sizes, clusters),
                  fallback=True)


def find_period(codes: np.ndarray, max_period: int = 600, min_match: float = 0.97) -> int | None:
    """Smallest p such that codes[i] == codes[i + p] for almost every i of the middle half."""
    n = len(codes)
    lo = n // 4
    for p in range(1, min(max_period, n // 3) + 1):
        hi = n - p
        if hi - lo < 2 * p:
            break
        if np.mean(codes[lo:hi] == codes[lo + p : hi + p]) >= min_match:
            return p
    return None


def chunk_bounds(keys: list[str], target: int) -> list[tuple[int, int]]:
    """Cut execution-ordered nodes into groups of ~target, aligned to the loop period if any."""
    n = len(keys)
    table: dict[str, int] = {}
    codes = np.fromiter((table.setdefault(k, len(table)) for k in keys), dtype=np.int64, count=n)
    p = find_period(codes)
    bounds: list[tuple[int, int]] = []
    if p is None:
        return [(a, min(a + target, n)) for a in range(0, n, target)]
    eq = (codes[:-p] == codes[p:]).astype(np.int64)
    run = np.concatenate([[0], np.cumsum(eq)])
    start = 0
    for i in range(0, n - 2 * p + 1):
        if run[i + p] - run[i] == p:
            start = i
            break
    size = p * max(1, round(target / p))
    for a in range(0, start, target):  # preamble
        bounds.append((a, min(a + target, start)))
    a = start
    while a < n:
        b = min(a + size, n)
        bounds.append((a, b))
        a = b
    return bounds
