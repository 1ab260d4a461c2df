"""Group labels say what a group holds (issue 23 §4): a chunk of leaves only is never "0 ops"."""

from __future__ import annotations

from app.trace.hierarchy import build_hierarchy


def test_a_chunk_of_leaves_counts_tensors_not_zero_ops():
    # 120 distinct inputs made on line 3 (no repeats: nothing folds), then one op reading them all
    nodes = [{"id": f"t{i}", "kind": "tensor", "role": "input", "shape": [i + 1], "value": None, "line": 3}
             for i in range(120)]
    nodes += [{"id": "n1", "kind": "op", "op": "stack", "role": "op", "shape": [120], "line": 4},
              {"id": "t999", "kind": "tensor", "role": "intermediate", "shape": [120], "value": None, "line": 4}]
    edges = [(f"e1_{i}", f"t{i}", "n1", None) for i in range(120)] + [("e1_o", "n1", "t999", None)]
    h = build_hierarchy(nodes, edges, {}, [], [], "", threshold=40, max_children=40)
    labels = [g.label for g in h.groups.values()]
    assert labels and not any(lab.startswith("0 ops") for lab in labels), labels
    assert any(lab.endswith("tensors · line 3") for lab in labels), labels
