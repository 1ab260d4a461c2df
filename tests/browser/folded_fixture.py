"""A folded pass in the issue-11 contract's format (/tmp contract: "The folded pass in the answer"),
hand-built for the page tests until the server sends it: a 200-step RNN-shaped loop
`h = tanh(x[t] @ U + h @ W)` folded into one group "t = 0 … 199" (5 chunks of 40 iterations), the
shared parameters U and W drawn beside the fold, the search answer and the group payloads.

Coordinates are plausible Graphviz-like points (left to right); values are small lists. Frames inside
the fold are lazy (no values) in the pass and full in the group payloads.
"""

from __future__ import annotations

STEPS = 200
CHUNK = 40
RUN_ID = "0f" * 16
REC_W, REC_H, OP_W, OP_H = 110.0, 50.0, 64.0, 30.0


def _tensor(tid, name, x, y, role="intermediate", shape=(8,), leaf=False, grad_fn="TanhBackward0", value=0.25,
            module=None):
    return {"id": tid, "kind": "tensor", "label": name, "name": name, "x": x, "y": y, "w": REC_W, "h": REC_H,
            "role": role, "shape": list(shape), "dtype": "float32", "requires_grad": True, "is_leaf": leaf,
            "grad_fn": None if leaf else grad_fn, "module": module, "op": None, "value": value, "grad": None}


def _op(nid, op, label, x, y, grad_fn):
    return {"id": nid, "kind": "op", "label": label, "op": op, "x": x, "y": y, "w": OP_W, "h": OP_H,
            "role": "intermediate", "name": None, "shape": [], "dtype": "float32", "requires_grad": True,
            "is_leaf": False, "grad_fn": grad_fn, "module": None, "value": None, "grad": None}


def _edge(eid, s, t, p0, p1, count=None):
    e = {"id": eid, "source": s, "target": t, "points": [list(p0), list(p1)], "cut": None}
    if count is not None:
        e["count"] = count
    return e


def _group_node(gid, label, count, x, y, w, h, summary=None):
    return {"id": gid, "kind": "group", "group": gid, "label": label, "count": count, "x": x, "y": y, "w": w, "h": h,
            "role": "group", "summary": summary, "module": None}


def iteration(t: int):
    """The nodes, edges and frames of one iteration, laid out on their own (top-left corner at 0, 0)."""
    p = f"{t}"
    nodes = [
        _op(f"n_idx{p}", "select", f"[{t}]", 40, 30, None),
        _tensor(f"t_x{p}", f"x[{t}]", 150, 30, shape=(4,), grad_fn=None),
        _op(f"n_mu{p}", "matmul", "@", 270, 30, "MvBackward0"),
        _op(f"n_mw{p}", "matmul", "@", 270, 110, "MvBackward0"),
        _tensor(f"t_a{p}", "x[t] @ U", 390, 30, grad_fn="MvBackward0"),
        _tensor(f"t_b{p}", "h @ W", 390, 110, grad_fn="MvBackward0"),
        _op(f"n_add{p}", "add", "+", 510, 70, "AddBackward0"),
        _tensor(f"t_s{p}", "x[t] @ U + h @ W", 630, 70, grad_fn="AddBackward0"),
        _op(f"n_tanh{p}", "tanh", "tanh", 750, 70, "TanhBackward0"),
        _tensor(f"t_h{p}", "h", 870, 70, grad_fn="TanhBackward0"),
    ]
    chain = [(f"n_idx{p}", f"t_x{p}"), (f"t_x{p}", f"n_mu{p}"), (f"n_mu{p}", f"t_a{p}"), (f"n_mw{p}", f"t_b{p}"),
             (f"t_a{p}", f"n_add{p}"), (f"t_b{p}", f"n_add{p}"), (f"n_add{p}", f"t_s{p}"), (f"t_s{p}", f"n_tanh{p}"),
             (f"n_tanh{p}", f"t_h{p}")]
    at = {n["id"]: (n["x"], n["y"]) for n in nodes}
    edges = [_edge(f"e{p}_{i}", s, d, at[s], at[d]) for i, (s, d) in enumerate(chain)]
    return nodes, edges


def _frames_of_iteration(t: int, gid: str, lazy: bool):
    p = f"{t}"
    seq = [("n_idx", "select", "t_x", None), ("n_mu", "matmul", "t_a", "MvBackward0"),
           ("n_mw", "matmul", "t_b", "MvBackward0"), ("n_add", "add", "t_s", "AddBackward0"),
           ("n_tanh", "tanh", "t_h", "TanhBackward0")]
    out = []
    for op_id, op, tid, grad_fn in seq:
        f_op = {"phase": "forward", "kind": "op", "id": op_id + p, "op": op, "label": op, "grad_fn": grad_fn,
                "inputs": [], "output": tid + p, "edges": [], "line": 8, "node": op_id + p}
        f_t = {"phase": "forward", "kind": "tensor", "id": tid + p, "op": op_id + p, "edges": [], "line": 8,
               "value": [0.1 * (t % 7)] * 4, "node": tid + p}
        if lazy:
            for f in (f_op, f_t):
                f["lazy"] = True
                f["group"] = gid
            del f_t["value"]
        out += [f_op, f_t]
    return out


def folded_pass() -> dict:
    """pass.graph, pass.frames, the tree, plus what the endpoints answer: (pass, payloads, search)."""
    chunks = [f"gc{c}" for c in range(STEPS // CHUNK)]
    tree = {"g1": {"id": "g1", "kind": "fold", "label": f"t = 0 … {STEPS - 1}", "parent": None, "children": chunks,
                   "count": STEPS, "range": [0, STEPS - 1], "size": STEPS * 10, "ops": STEPS * 5, "signature": 7,
                   "output": f"t_h{STEPS - 1}", "summary": {"min": -0.9, "max": 0.95, "mean": 0.1, "shape": [8]},
                   "w": 260, "h": 120, "first_frame": 0, "last_frame": 0}}
    for c, cid in enumerate(chunks):
        lo, hi = c * CHUNK, c * CHUNK + CHUNK - 1
        tree[cid] = {"id": cid, "kind": "chunk", "label": f"t = {lo} … {hi}", "parent": "g1",
                     "children": [f"gi{t}" for t in range(lo, hi + 1)], "count": CHUNK, "range": [lo, hi],
                     "size": CHUNK * 10, "ops": CHUNK * 5, "signature": 8, "output": f"t_h{hi}", "summary": None,
                     "w": 200, "h": 100, "first_frame": 0, "last_frame": 0}
        for t in range(lo, hi + 1):
            tree[f"gi{t}"] = {"id": f"gi{t}", "kind": "iter", "label": f"t = {t}", "parent": cid, "children": [],
                              "count": 1, "range": [t, t], "size": 10, "ops": 5, "signature": 9, "output": f"t_h{t}",
                              "summary": None, "w": 160, "h": 80, "first_frame": 0, "last_frame": 0}
    # the visible level: x, U, W, h0 | the fold | sum -> loss
    nodes = [
        _tensor("t_xin", "x", 70, 60, role="input", shape=(STEPS, 4), leaf=True, value={"min": -3.1, "max": 4.1, "mean": 0.06, "shape": [STEPS, 4]}),
        _tensor("t_U", "U", 70, 160, role="parameter", shape=(4, 8), leaf=True, value=[[0.1] * 8] * 4),
        _tensor("t_W", "W", 70, 260, role="parameter", shape=(8, 8), leaf=True, value=[[0.2] * 8] * 8),
        _tensor("t_h0", "h", 70, 360, role="constant", shape=(8,), leaf=True, value=[0.0] * 8),
        _group_node("g1", f"t = 0 … {STEPS - 1}", STEPS, 330, 210, 260, 120, tree["g1"]["summary"]),
        _op("n_sum", "sum", "sum", 560, 210, "SumBackward0"),
        _tensor("t_loss", "loss", 690, 210, role="loss", shape=(), grad_fn="SumBackward0", value=1.6684),
    ]
    at = {n["id"]: (n["x"], n["y"]) for n in nodes}
    edges = [_edge(f"bt_{s}_g1", s, "g1", at[s], at["g1"], count=STEPS if s != "t_h0" else 1)
             for s in ("t_xin", "t_U", "t_W", "t_h0")]
    edges += [_edge("b_g1_n_sum", "g1", "n_sum", at["g1"], at["n_sum"], count=1),
              _edge("e_sum_loss", "n_sum", "t_loss", at["n_sum"], at["t_loss"])]
    frames = [{"phase": "forward", "kind": "tensor", "id": tid, "value": next(n["value"] for n in nodes if n["id"] == tid),
               "edges": [], "line": 3, "node": tid} for tid in ("t_xin", "t_U", "t_W", "t_h0")]
    for t in range(STEPS):
        first = len(frames)
        frames += _frames_of_iteration(t, f"gi{t}", lazy=True)
        tree[f"gi{t}"]["first_frame"], tree[f"gi{t}"]["last_frame"] = first, len(frames) - 1
    for g in tree.values():
        if g["kind"] != "iter":
            lo, hi = g["range"]
            g["first_frame"], g["last_frame"] = tree[f"gi{lo}"]["first_frame"], tree[f"gi{hi}"]["last_frame"]
    frames += [{"phase": "forward", "kind": "op", "id": "n_sum", "op": "sum", "label": "sum", "grad_fn": "SumBackward0",
                "inputs": [f"t_h{STEPS - 1}"], "output": "t_loss", "edges": ["b_g1_n_sum"], "line": 9, "node": "n_sum"},
               {"phase": "forward", "kind": "tensor", "id": "t_loss", "op": "n_sum", "value": 1.6684,
                "edges": ["e_sum_loss"], "line": 9, "node": "t_loss"}]
    graph = {"width": 780.0, "height": 420.0, "nodes": nodes, "edges": edges, "clusters": [], "groups": [],
             "folded": True, "run": RUN_ID, "pass_index": 0, "tree": tree}
    the_pass = {"index": 0, "loss": 1.6684, "graph": graph, "frames": frames, "ops": {}}
    return the_pass


def group_payload(the_pass: dict, gid: str) -> dict | None:
    """GET /api/runs/{run}/passes/0/groups/{gid}: the group's contents on their own, child groups collapsed."""
    tree = the_pass["graph"]["tree"]
    g = tree.get(gid)
    if g is None:
        return None
    full = {}
    for t in range(g["range"][0], g["range"][1] + 1):
        first = tree[f"gi{t}"]["first_frame"]
        for i, f in enumerate(_frames_of_iteration(t, f"gi{t}", lazy=False)):
            full[str(first + i)] = f
    if g["kind"] == "iter":
        nodes, edges = iteration(g["range"][0])
        width, height = 920.0, 140.0
    else:
        nodes = [_group_node(c, tree[c]["label"], tree[c]["count"], 20 + tree[c]["w"] / 2 + i * (tree[c]["w"] + 40),
                             20 + tree[c]["h"] / 2, tree[c]["w"], tree[c]["h"]) for i, c in enumerate(g["children"])]
        edges = [_edge(f"b_{a['id']}_{b['id']}", a["id"], b["id"], (a["x"] + a["w"] / 2, a["y"]), (b["x"] - b["w"] / 2, b["y"]),
                       count=1) for a, b in zip(nodes, nodes[1:])]
        width = 40 + len(nodes) * (tree[g["children"][0]]["w"] + 40)
        height = 40 + tree[g["children"][0]]["h"]
    sub = {gid: g}
    stack = list(g["children"])
    while stack:
        c = stack.pop()
        sub[c] = tree[c]
        stack += tree[c]["children"]
    return {"id": gid, "width": width, "height": height, "nodes": nodes, "edges": edges, "clusters": [], "groups": sub,
            "frames": full}


def search_answer(the_pass: dict, q: str, limit: int = 50) -> dict:
    """GET …/search?q=: tensors named or ops matching q, with the groups that hide them."""
    q = q.lower()
    out = []
    for n in the_pass["graph"]["nodes"]:
        if n["kind"] != "group" and q in " ".join(str(n.get(k) or "") for k in ("name", "label", "op", "grad_fn")).lower():
            out.append({"id": n["id"], "label": n["label"], "kind": n["kind"], "op": n.get("op"), "name": n.get("name"), "path": []})
    for t in range(STEPS):
        nodes, _ = iteration(t)
        for n in nodes:
            if q in " ".join(str(n.get(k) or "") for k in ("name", "label", "op", "grad_fn")).lower():
                out.append({"id": n["id"], "label": n["label"], "kind": n["kind"], "op": n.get("op"), "name": n.get("name"),
                            "path": ["g1", f"gc{t // CHUNK}", f"gi{t}"]})
    return {"results": out[:limit], "total": len(out)}
