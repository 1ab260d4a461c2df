"""app.trace.hierarchy on small hand-made graphs: folds, chunks, labels, shared leaves, modules, frames."""

from __future__ import annotations

from app.trace.hierarchy import build_hierarchy, loop_lines, summarize_value


def _chain_graph(iters: int, body=("sin", "mul", "add"), shared: str | None = None):
    """x -> iters × body, each op a node plus its output tensor (execution order: output, op)."""
    nodes = [{"id": "t0", "kind": "tensor", "role": "input", "shape": [], "value": 1.0, "line": 2}]
    edges = []
    if shared:
        nodes.append({"id": "tw", "kind": "tensor", "role": "parameter", "shape": [2], "value": [1.0, 2.0], "line": 3})
    prev, k = "t0", 0
    for _ in range(iters):
        for op in body:
            k += 1
            t, n = f"t{k}", f"n{k}"
            nodes += [{"id": t, "kind": "tensor", "role": "intermediate", "shape": [], "value": float(k), "line": 5},
                      {"id": n, "kind": "op", "op": op, "role": "op", "shape": [], "line": 5}]
            edges += [(f"e{k}_0", prev, n, None), (f"e{k}_o", n, t, None)]
            if shared and op == body[0]:
                edges.append((f"e{k}_1", "tw", n, None))
            prev = t
    return nodes, edges


def _frames(nodes):
    return [{"kind": n["kind"], "id": n["id"], "node": n["id"]} for n in nodes]


def test_a_loop_body_folds_with_the_loop_variable_and_chunks():
    nodes, edges = _chain_graph(250)
    source = "import torch\nx = 1\nfor step in range(250):\n    y = x\n    y = y\n"
    h = build_hierarchy(nodes, edges, {}, [], _frames(nodes), source, threshold=40, max_children=40)
    folds = [h.groups[u] for u in h.top if u[0] == "g"]
    assert len(folds) == 1 and h.top[0] == "t0"
    fold = folds[0]
    assert fold.kind == "fold" and fold.count == 250 and fold.label == "step = 0 … 249" and fold.range == [0, 249]
    assert len(fold.children) == 25 and all(h.groups[c].kind == "chunk" for c in fold.children)
    chunk = h.groups[fold.children[3]]
    assert chunk.label == "step = 30 … 39" and chunk.count == 10 and len(chunk.children) == 10
    it = h.groups[chunk.children[2]]
    assert it.kind == "iter" and it.label == "step = 32" and it.count == 1 and it.size == 6 and it.ops == 3
    assert len({h.groups[c].signature for c in chunk.children}) == 1
    assert fold.size == 1500 and fold.ops == 750
    assert all(len(g.children) <= 40 for g in h.groups.values())
    # the output of an iteration is the tensor it hands on; frames map to their innermost group
    assert it.output == f"t{3 * 32 + 3}" and it.summary == float(3 * 32 + 3)
    i = [f["id"] for f in _frames(nodes)].index(f"n{3 * 32 + 2}")
    assert h.frame_group[i] == it.id and it.first_frame <= i <= it.last_frame
    assert fold.first_frame == 1 and fold.last_frame == len(nodes) - 1


def test_without_a_for_loop_the_label_counts_with_thousands():
    nodes, edges = _chain_graph(1200, body=("sin",))
    h = build_hierarchy(nodes, edges, {}, [], [], "y = 1\n", threshold=40, max_children=40)
    fold = next(h.groups[u] for u in h.top if u[0] == "g")
    assert fold.label == "× 1,200" and fold.count == 1200
    assert h.groups[fold.children[0]].label == "#0 … #99"
    first_iter = h.groups[h.groups[h.groups[fold.children[0]].children[0]].children[0]]
    assert first_iter.label == "#0"


def test_a_shared_leaf_stays_outside_the_fold():
    nodes, edges = _chain_graph(50, shared="tw")
    h = build_hierarchy(nodes, edges, {}, [], [], "", threshold=40, max_children=40)
    assert "tw" in h.top and "tw" not in h.node_group
    fold = next(h.groups[u] for u in h.top if u[0] == "g")
    assert fold.count == 50


def test_two_repeats_do_not_fold_and_many_distinct_ops_are_chunked():
    nodes, edges = _chain_graph(2)
    h = build_hierarchy(nodes, edges, {}, [], [], "", threshold=40, max_children=40)
    assert not h.groups and len(h.top) == len(nodes)
    ops = [f"op{i}" for i in range(300)]
    nodes, edges = _chain_graph(1, body=tuple(ops))
    h = build_hierarchy(nodes, edges, {}, [], [], "", threshold=40, max_children=40)
    assert len(h.top) <= 40 and all(len(g.units) <= 40 for g in h.groups.values())
    assert all(g.kind == "chunk" and g.count is None for g in h.groups.values())
    assert sum(h.groups[u].size for u in h.top if u[0] == "g") + sum(u[0] != "g" for u in h.top) == len(nodes)


def test_repeated_sibling_modules_fold_inside_their_parent():
    nodes, edges = [], []
    clusters = [("m0", None, "model (Sequential)")]
    node_cluster = {}
    prev = None
    for i in range(12):
        mid = f"m{i + 1}"
        clusters.append((mid, "m0", f"model.{i} (Linear)" if i % 2 == 0 else f"model.{i} (Tanh)"))
        kinds = ["linear"] if i % 2 == 0 else ["tanh"]
        for op in kinds:
            t, n = f"t{i}", f"n{i}"
            nodes += [{"id": t, "kind": "tensor", "role": "intermediate", "shape": [4], "line": 9},
                      {"id": n, "kind": "op", "op": op, "shape": [4], "line": 9}]
            node_cluster[t] = node_cluster[n] = mid
            if prev:
                edges.append((f"e{i}_0", prev, n, None))
            edges.append((f"e{i}_o", n, t, None))
            prev = t
    h = build_hierarchy(nodes, edges, node_cluster, clusters, [], "", threshold=10, max_children=40)
    (model,) = [h.groups[u] for u in h.top]
    assert model.kind == "module" and model.label == "model (Sequential)" and not model.expanded  # 24 nodes > 10
    (fold,) = [h.groups[c] for c in model.children]
    assert fold.kind == "fold" and fold.count == 6 and fold.label == "× 6"
    it = h.groups[fold.children[0]]
    assert [h.groups[c].label for c in it.children] == ["model.0 (Linear)", "model.1 (Tanh)"]
    assert it.module == "model"


def test_loop_lines_parse_only_and_read_range_literals():
    src = "for t in range(3, 10, 2):\n    y = t\n    for j in x:\n        z = j\n"
    loops = loop_lines(src)
    assert (2, 4, "t", (3, 10, 2)) in loops and (4, 4, "j", None) in loops
    assert loop_lines("for (:\n") == []


def test_value_summaries():
    assert summarize_value(2.5) == 2.5
    assert summarize_value([[1.0, 3.0], [2.0, "nan"]])["shape"] == [2, 2]
    assert summarize_value([[1.0, 3.0], [2.0, 6.0]]) == {"min": 1.0, "max": 6.0, "mean": 3.0, "shape": [2, 2]}
    assert summarize_value({"summary": True, "min": 0, "max": 1, "mean": 0.5, "shape": [9]})["max"] == 1


def test_a_fold_chunk_of_one_iteration_is_the_iteration_itself():
    # 151 iterations in chunks of 10: the last range holds #150 alone, a level that adds nothing (issue 23 §4)
    nodes, edges = _chain_graph(151, body=("sin",))
    h = build_hierarchy(nodes, edges, {}, [], [], "y = 1\n", threshold=40, max_children=40)
    fold = next(h.groups[u] for u in h.top if u[0] == "g")
    last = h.groups[fold.children[-1]]
    assert last.kind == "iter" and last.label == "#150", last
    assert [h.groups[c].kind for c in fold.children[:-1]] == ["chunk"] * 15
    assert not [g for g in h.groups.values() if g.kind == "chunk" and len(g.units) == 1]
