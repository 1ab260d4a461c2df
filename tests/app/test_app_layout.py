"""Layout: positions for every node and edge, a cache keyed by structure, grouping of big graphs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.config import Settings
from app.layout import LayoutEngine, LayoutInput
from app.layout.layout import chunk_bounds, find_period


def layout_engine(wrap: bool = True, **settings) -> LayoutEngine:
    """An engine with the default settings, but ``settings`` (Settings field names)."""
    return LayoutEngine.from_settings(Settings(**settings), wrap=wrap)


def chain(n_iter: int, params: int = 3, prefix: str = "") -> LayoutInput:
    nodes = [(f"{prefix}w{k}", "tensor|parameter|", 64.0, 40.0) for k in range(params)]
    edges = []
    prev = f"{prefix}w0"
    for i in range(n_iter):
        c, op, t = f"{prefix}c{i}", f"{prefix}n{i}", f"{prefix}t{i}"
        nodes += [(c, "tensor|constant|", 64.0, 40.0), (op, "op|mul|×", 30.0, 30.0), (t, "tensor|intermediate|", 64.0, 40.0)]
        edges += [(f"{prefix}e{i}a", prev, op), (f"{prefix}e{i}b", c, op), (f"{prefix}e{i}o", op, t),
                  (f"{prefix}e{i}w", f"{prefix}w{i % params}", op)]
        prev = t
    return LayoutInput(nodes, edges, [])


@pytest.fixture(scope="module")
def engine():
    e = layout_engine(group_threshold=150, group_chunk=120)
    yield e
    e.close()


def check_complete(g: LayoutInput, res):
    assert set(res.nodes) == {n[0] for n in g.nodes}
    assert set(res.edges) == {e[0] for e in g.edges}
    for pts in res.edges.values():
        assert len(pts) >= 2
    for x, y in res.nodes.values():
        assert -1 <= x <= res.width + 1 and -1 <= y <= res.height + 1


def test_small_graph_with_clusters(engine):
    g = LayoutInput(
        [("t1", "tensor|input|", 64, 40), ("n1", "op|mul|×", 30, 30), ("t2", "tensor|output|", 64, 40)],
        [("e1_0", "t1", "n1"), ("e1_o", "n1", "t2")],
        [("m1", None, ["n1", "t2"]), ("m2", "m1", ["n1"])],
    )
    res = engine.layout(g)
    check_complete(g, res)
    assert res.method in ("dot", "cache")
    assert res.nodes["t1"][0] < res.nodes["n1"][0] < res.nodes["t2"][0]  # left to right
    (_, _, cw, ch), (_, _, iw, ih) = res.clusters["m1"], res.clusters["m2"]
    assert cw >= iw and ch >= ih  # the parent box holds the child's


def test_cache_by_structure_not_ids(engine):
    a = chain(5, prefix="a")
    b = chain(5, prefix="b")
    ra = engine.layout(a)
    hits = engine.hits
    rb = engine.layout(b)
    assert engine.hits == hits + 1 and rb.method == "cache"
    assert list(ra.nodes.values()) == list(rb.nodes.values())


def test_big_graph_is_grouped_by_period(engine):
    g = chain(400)  # 1,203 nodes
    misses = engine.misses
    res = engine.layout(g)
    check_complete(g, res)
    assert res.method == "grouped" and len(res.groups) > 3
    sigs = [gr["signature"] for gr in res.groups]
    assert len(set(sigs)) <= 4, "repeated loop bodies share a representative"
    assert sum(len(gr["nodes"]) for gr in res.groups) == len(g.nodes)
    assert engine.misses - misses <= len(set(sigs)) + 1, "one dot layout per distinct group (and the overview)"
    misses = engine.misses
    again = engine.layout(g)
    assert engine.misses == misses, "the same graph again is served from the cache, without dot"
    assert again.nodes == res.nodes


def test_period_detection():
    keys = ["p", "p"] + ["a", "b", "c"] * 50
    import numpy as np

    table = {}
    codes = np.array([table.setdefault(k, len(table)) for k in keys])
    assert find_period(codes) == 3
    bounds = chunk_bounds(keys, 30)
    assert bounds[0] == (0, 2) and all((b - a) % 3 == 0 for a, b in bounds[1:-1])
    assert bounds[-1][1] == len(keys)


def test_dot_timeout_falls_back():
    e = layout_engine(dot_timeout_s=1e-6, layout_cache_size=8)
    try:
        g = chain(10)
        res = e.layout(g)
        check_complete(g, res)
        assert res.method == "fallback"
    finally:
        e.close()


@pytest.mark.slow
def test_layout_sizes_finish_with_dot(engine):
    for n_iter in (17, 67, 333, 1667):  # ~50, 200, 1,000, 5,000 nodes
        g = chain(n_iter)
        res = engine.layout(g)
        check_complete(g, res)
        assert res.method != "fallback", "dot finished within its timeout"  # speed itself: bench/


@st.composite
def dags(draw):
    """Random computation-graph-like DAGs: tensors and ops in execution order, edges forward only."""
    n_ops = draw(st.integers(1, 60))
    nodes = [("t0", "tensor|input|", 64.0, 40.0)]
    edges = []
    tensors = ["t0"]
    for i in range(n_ops):
        op = f"n{i}"
        nodes.append((op, f"op|{draw(st.sampled_from(['add', 'mul', 'tanh']))}|", 30.0, 30.0))
        for k, src in enumerate(draw(st.lists(st.sampled_from(tensors), min_size=1, max_size=3))):
            edges.append((f"e{i}_{k}", src, op))
        out = f"t{i + 1}"
        nodes.append((out, "tensor|intermediate|", draw(st.sampled_from([64.0, 90.0])), 40.0))
        edges.append((f"e{i}_o", op, out))
        tensors.append(out)
    return LayoutInput(nodes, edges, [])


@settings(max_examples=20, deadline=None)
@given(g=dags(), threshold=st.sampled_from([40, 150]))
def test_random_graphs_are_laid_out_completely_without_overlap(g, threshold):
    e = _ENGINES.setdefault(threshold, layout_engine(group_threshold=threshold, group_chunk=30))
    res = e.layout(g)
    check_complete(g, res)
    boxes = sorted((x - w / 2, y - h / 2, x + w / 2, y + h / 2)
                   for (nid, _, w, h), (x, y) in ((nd, res.nodes[nd[0]]) for nd in g.nodes))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if b[0] >= a[2] - 0.5:
                break
            assert not (b[1] < a[3] - 0.5 and a[1] < b[3] - 0.5), (a, b, res.method)


_ENGINES: dict[int, LayoutEngine] = {}


# ---------------------------------------------------------------- sizes, cluster titles, rows


def test_node_sizes_read_well():
    from app.layout.sizes import TENSOR_FONT, op_size, tensor_size

    assert TENSOR_FONT >= 10, "record text of ~10 pt or more"
    for label, shape in [("x", []), ("w", [30]), ("model.0.weight", [16, 3]), ("a_very_long_variable_name", [128, 256])]:
        w, h = tensor_size(label, shape)
        assert 96 <= w <= 130 and h == 54
    assert tensor_size("model.0.weight", [16, 3])[0] > tensor_size("x", [])[0]
    assert op_size("+")[0] < op_size("** 2")[0] < op_size("clamp(min=0)")[0]
    assert op_size("+")[1] == op_size("log_softmax(1)")[1]


def test_small_tensors_get_records_for_their_numbers():
    """Issue 23 §1: a 2×3 tensor's rows hold 2 lines of numbers and its width 3 of them, each 6 characters
    ("-0.339") at the record font, as static/js/graphdraw.js cellNumbers fits them."""
    from app.layout.sizes import LAYOUT, TENSOR_FONT, numbers_size, tensor_size

    cell = LAYOUT["numberW"] * TENSOR_FONT
    for shape, rows, cols in [([2, 3], 2, 3), ([3], 1, 3), ([4, 3], 4, 3), ([3, 1], 3, 1), ([2, 2, 2], 2, 2)]:
        w, h = tensor_size("x", shape)
        cells_w = w - LAYOUT["rowLabelW"] - LAYOUT["cellGap"]
        row_h = (h - 54 * LAYOUT["headerFrac"]) / 2 - LAYOUT["cellGap"]
        assert cells_w >= cols * cell - 0.1 and cells_w >= cols * 4.08 * TENSOR_FONT, (shape, w)
        assert row_h / rows >= TENSOR_FONT, (shape, h)
        assert h >= 54 and w <= LAYOUT["numbersMaxW"]
    assert tensor_size("x", [2, 3])[1] > 54 == tensor_size("x", [3])[1]
    # too many numbers or too wide a row: the record stays as it was (numbers smaller, or on hover)
    for shape in ([25], [5, 5], [1, 6], [6, 1], [0, 3], [128, 256]):
        assert numbers_size(shape) is None, shape
    assert numbers_size([]) is None and numbers_size(None) is None


def long_chain(n: int, cluster: tuple[int, int] | None = None) -> LayoutInput:
    """x → op → t1 → op → t2 …: a long strip (an MLP's forward and loss)."""
    nodes = [("t0", "tensor|input|", 110.0, 54.0)]
    edges = []
    for i in range(n):
        nodes += [(f"n{i}", "op|mul|×", 40.0, 32.0), (f"t{i + 1}", "tensor|intermediate|", 110.0, 54.0)]
        edges += [(f"e{i}_0", f"t{i}", f"n{i}"), (f"e{i}_o", f"n{i}", f"t{i + 1}")]
    clusters = []
    if cluster:
        a, b = cluster
        clusters = [("m1", None, [f"n{i}" for i in range(a, b)] + [f"t{i + 1}" for i in range(a, b)], "    model · Linear")]
    return LayoutInput(nodes, edges, clusters)


def no_overlap(g: LayoutInput, res):
    boxes = [(res.nodes[i][0] - w / 2, res.nodes[i][1] - h / 2, res.nodes[i][0] + w / 2, res.nodes[i][1] + h / 2)
             for i, _, w, h in g.nodes]
    for k, a in enumerate(boxes):
        for b in boxes[k + 1:]:
            assert not (a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5), (a, b)


def test_long_strip_is_folded_into_rows():
    g = long_chain(9)
    flat = layout_engine(wrap=False)
    folded = layout_engine()
    try:
        a, b = flat.layout(g), folded.layout(g)
    finally:
        flat.close()
        folded.close()
    assert a.width > 900 and a.width / a.height > 4
    check_complete(g, b)
    no_overlap(g, b)
    assert b.width < a.width * 0.7, "folded"
    scale = lambda r: min(1.8 / r.width, 1 / (r.height + 14))  # noqa: E731 - fit into the graph pane
    assert scale(b) > 1.2 * scale(a)
    ys = sorted({round(y) for _, y in b.nodes.values()})
    assert ys[-1] - ys[0] > 54, "more than one row"
    # every edge still ends at its target's left side, also the ones returning to the next row
    for eid, s, t in g.edges:
        pts = b.edges[eid]
        tx, ty = b.nodes[t]
        w = next(n[2] for n in g.nodes if n[0] == t)
        if b.nodes[s][1] != ty and len(pts) == 6:
            assert abs(pts[-1][0] - (tx - w / 2)) < 1 and abs(pts[-1][1] - ty) < 1
            assert pts[0][0] <= pts[1][0] and pts[2][1] == pts[3][1], "out to the right, then a lane between rows"


def test_short_graphs_are_not_folded(engine):
    g = long_chain(3)
    res = engine.layout(g)
    assert len({round(y) for _, y in res.nodes.values()}) == 1, "one row"


def test_rows_never_cut_a_module_box():
    g = long_chain(9, cluster=(2, 7))
    e = layout_engine()
    try:
        res = e.layout(g)
    finally:
        e.close()
    check_complete(g, res)
    no_overlap(g, res)
    cx, cy, cw, ch = res.clusters["m1"]
    members = g.clusters[0][2]
    ys = {round(res.nodes[m][1]) for m in members}
    assert max(ys) - min(ys) < 60, "the module's members stay in one row"
    for m in members:
        x, y = res.nodes[m]
        assert cx - cw / 2 < x < cx + cw / 2 and cy - ch / 2 < y < cy + ch / 2
    # a band above the members for the page's title
    top_member = min(res.nodes[m][1] - 27 for m in members if m.startswith("t"))
    assert top_member - (cy - ch / 2) >= 14
    # and no node outside the module sits in its box
    for nid, (x, y) in res.nodes.items():
        if nid not in members:
            assert not (cx - cw / 2 < x < cx + cw / 2 and cy - ch / 2 < y < cy + ch / 2), nid


def test_cluster_labels_accepted_with_or_without_text(engine):
    base = [("t1", "tensor|input|", 96, 54), ("n1", "op|mul|×", 34, 32), ("t2", "tensor|output|", 96, 54)]
    edges = [("e1_0", "t1", "n1"), ("e1_o", "n1", "t2")]
    a = engine.layout(LayoutInput(base, edges, [("m1", None, ["n1", "t2"])]))
    b = engine.layout(LayoutInput(base, edges, [("m1", None, ["n1", "t2"], "    a_long_module_name.layer · Linear")]))
    assert a.clusters["m1"][2] > 0 and b.clusters["m1"][2] > 0


def test_an_edge_minlen_leaves_room_along_it_and_keys_the_cache(engine):
    # a folded pass's bundled edge ("× 200") asks dot for two ranks, so its badge fits between the cards
    nodes = [("w", "tensor|parameter|", 64.0, 40.0), ("x", "tensor|input|", 64.0, 40.0), ("f", "group|t|200", 120.0, 50.0)]
    plain = LayoutInput(nodes, [("e1", "w", "f"), ("e2", "x", "f")], [])
    roomy = LayoutInput(nodes, [("e1", "w", "f", 2), ("e2", "x", "f", 1)], [])
    ones = LayoutInput(nodes, [("e1", "w", "f", 1), ("e2", "x", "f", 1)], [])
    rp, rr = engine.layout(plain), engine.layout(roomy)
    check_complete(roomy, rr)
    gap = lambda r: (r.nodes["f"][0] - 60) - (r.nodes["w"][0] + 32)  # noqa: E731  (card edge to card edge)
    assert gap(rr) >= gap(rp) + 20, (gap(rp), gap(rr))
    assert rr.method != "cache"  # not the plain graph's layout
    hits = engine.hits
    assert engine.layout(ones).nodes == rp.nodes and engine.hits == hits + 1  # minlen 1 everywhere: the same key
