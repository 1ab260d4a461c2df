"""Layout: positions for every node and edge, a cache keyed by structure, grouping of big graphs."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.layout import LayoutEngine, LayoutInput
from app.layout.layout import chunk_bounds, find_period


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
    e = LayoutEngine(group_threshold=150, group_chunk=120)
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
    t = time.perf_counter()
    res = engine.layout(g)
    first = time.perf_counter() - t
    check_complete(g, res)
    assert res.method == "grouped" and len(res.groups) > 3
    sigs = [gr["signature"] for gr in res.groups]
    assert len(set(sigs)) <= 4, "repeated loop bodies share a representative"
    assert sum(len(gr["nodes"]) for gr in res.groups) == len(g.nodes)
    t = time.perf_counter()
    engine.layout(g)
    assert time.perf_counter() - t < max(first, 0.05) + 0.2
    assert first < 2.0


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
    e = LayoutEngine(dot_timeout=1e-6, cache_size=8)
    try:
        g = chain(10)
        res = e.layout(g)
        check_complete(g, res)
        assert res.method == "fallback"
    finally:
        e.close()


@pytest.mark.slow
def test_layout_sizes_timing(engine):
    for n_iter in (17, 67, 333, 1667):  # ~50, 200, 1,000, 5,000 nodes
        g = chain(n_iter)
        t = time.perf_counter()
        res = engine.layout(g)
        check_complete(g, res)
        assert time.perf_counter() - t < 3.0


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
    e = _ENGINES.setdefault(threshold, LayoutEngine(group_threshold=threshold, group_chunk=30))
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
