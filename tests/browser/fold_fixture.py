"""Folded answers in the issue-11 contract's format, built without the engine or the server.

The page's fold tests run against these (served by Playwright's `page.route`), so they stay independent
of the server's folding. Values are computed here (numpy), not hand-written: a 3,300-iteration chain
`y = y + sin(y) * 0.001` and a 200-step RNN `h = tanh(x[t] @ U + h @ W)` with W and U shared, each as
`(trace, payloads)`: the POST /api/run answer and `{gid: GET …/groups/{gid} answer}`.
"""

from __future__ import annotations

import copy
import math

import numpy as np

TENSOR_W, TENSOR_H, OP_W, OP_H = 115.0, 52.0, 62.0, 40.0
CARD_W, CARD_H, CARD_GAP = 170.0, 78.0, 46.0
FOLD_MAX_CHILDREN = 40
GROUP_PAYLOAD_NODES = 2_000
VALUE_KEYS = ("value", "upstream", "upstream_parts", "incoming", "before", "after", "gradient", "grad")
RUN_ID = "0123456789abcdef0123456789abcdef"


def _num(x):
    return float(x) if np.ndim(x) == 0 else np.asarray(x, dtype=float).round(6).tolist()


def _summary(v):
    a = np.asarray(v, dtype=float)
    return float(a) if a.ndim == 0 else {"min": float(a.min()), "max": float(a.max()), "mean": float(a.mean()), "shape": list(a.shape)}


class Pass:
    """One pass being written: node records (un-laid-out), edges, frames, and which iteration owns what."""

    def __init__(self):
        self.nodes: dict[str, dict] = {}
        self.edges: dict[str, dict] = {}
        self.frames: list[dict] = []
        self.owner: dict[str, int | None] = {}  # node id -> iteration index (None: top level)
        self.n_t = self.n_n = self.n_e = 0
        self.values: dict[str, object] = {}
        self.grads: dict[str, object] = {}
        self.ins: dict[str, list] = {}
        self.outs: dict[str, list] = {}

    def tensor(self, value, *, name=None, role="intermediate", leaf=False, rg=True, op=None, grad_fn=None, it=None, line=None):
        self.n_t += 1
        tid = f"t{self.n_t}"
        shape = list(np.shape(value))
        self.nodes[tid] = {"id": tid, "kind": "tensor", "label": name or tid, "role": role, "name": name, "shape": shape,
                           "dtype": "float32", "requires_grad": rg, "is_leaf": leaf, "grad_fn": grad_fn, "module": None,
                           "op": op, "w": TENSOR_W, "h": TENSOR_H}
        self.owner[tid] = it
        self.values[tid] = value
        self.frames.append({"kind": "tensor", "id": tid, "shape": shape, "dtype": "float32", "requires_grad": rg, "is_leaf": leaf,
                            "value": _num(value), "origin": "leaf" if leaf else ("const" if role == "constant" else "op"),
                            "op": op, "module": None, "line": line, "phase": "forward", "edges": [], "node": tid, "_it": it})
        if name:
            self.frames.append({"kind": "name", "tensor": tid, "name": name, "phase": "forward", "edges": [], "node": tid,
                                "_it": it})
        return tid

    def edge(self, src, dst):
        self.n_e += 1
        eid = f"e{self.n_e}"
        self.edges[eid] = {"id": eid, "source": src, "target": dst, "cut": None}
        self.ins.setdefault(dst, []).append(eid)
        self.outs.setdefault(src, []).append(dst)
        return eid

    def op(self, name, label, grad_fn, inputs, value, *, it=None, line=None, out_name=None):
        self.n_n += 1
        nid = f"n{self.n_n}"
        self.nodes[nid] = {"id": nid, "kind": "op", "label": label, "op": name, "grad_fn": grad_fn, "module": None,
                           "params": [], "w": OP_W, "h": OP_H, "role": None}
        self.owner[nid] = it
        in_edges = [self.edge(i, nid) for i in inputs]
        out = self.tensor(value, name=out_name, op=nid, grad_fn=grad_fn, it=it, line=line)
        out_edge = self.edge(nid, out)
        self.frames[-1 if not out_name else -2]["edges"] = [out_edge]
        self.frames.append({"kind": "op", "id": nid, "op": name, "label": label, "grad_fn": grad_fn, "inputs": list(inputs),
                            "output": out, "module": None, "line": line, "grad_enabled": True, "params": [], "phase": "forward",
                            "edges": in_edges, "node": nid, "_it": it})
        return nid, out

    def backward_step(self, nid, upstream, contribs, *, it=None, parts=None):
        node = self.nodes[nid]
        out, ins = self.outs[nid][0], self.ins[nid]
        f = {"kind": "backward_step", "id": "b1", "node": nid, "grad_fn": node["grad_fn"], "output": out, "upstream": _num(upstream),
             "contributions": [{"input": t, "index": i, "grad": _num(g), "local": "1", "unbroadcast_from": None} for i, t, g in contribs],
             "phase": "backward", "edges": ins, "_it": it}
        if parts and len(parts) > 1:
            f["upstream_parts"] = [_num(p) for p in parts]
        self.frames.append(f)


def _label(var, lo, hi=None):
    if var is None:  # not a `for` loop of the source (repeated sibling modules): "#17", "#0 … #9"
        return f"#{lo:,}" if hi is None else f"#{lo:,} … #{hi:,}"
    return f"{var} = {lo:,}" if hi is None else f"{var} = {lo:,} … {hi:,}"


def _tree(p: Pass, count: int, var: str, summaries):
    """The fold and its chunks over iterations 0..count-1: {gid: group} (sizes and frames filled in later)."""
    tree = {}

    def make(lo, hi, parent, depth):
        n = hi - lo
        gid = "g" + (f"{lo}_{hi}" if n > 1 else f"i{lo}")
        kind = "iter" if n == 1 else ("fold" if parent is None else "chunk")
        label = _label(var, lo) if n == 1 else f"× {n:,}" if var is None and parent is None else _label(var, lo, hi - 1)
        g = {"id": gid, "kind": kind, "label": label, "parent": parent, "children": [],
             "count": n, "range": [lo, hi - 1], "size": 0, "ops": 0, "signature": n * 8 + len(kind), "output": None,
             "summary": summaries(lo, hi), "w": CARD_W, "h": CARD_H, "first_frame": None, "last_frame": None}
        tree[gid] = g
        if n > 1:
            step = 1
            while math.ceil(n / step) > FOLD_MAX_CHILDREN:
                step *= 10
            for a in range(lo, hi, step):
                g["children"].append(make(a, min(hi, a + step), gid, depth + 1))
        return gid

    root = make(0, count, None, 0)
    return root, tree


def _iter_of(gid, tree):
    g = tree[gid]
    return g["range"][0] if g["kind"] == "iter" else None


def _row(cards, gap=CARD_GAP, y=None, x0=0.0):
    """Lay records out left to right: {id: (cx, cy)}."""
    out, x = {}, x0
    for cid, w, h in cards:
        out[cid] = (x + w / 2, (y if y is not None else h / 2))
        x += w + gap
    return out


def _straight(a, b):
    (ax, ay, aw, ah), (bx, by, bw, bh) = a, b
    if bx - bw / 2 >= ax + aw / 2:
        return [[ax + aw / 2, ay], [bx - bw / 2, by]]
    if by >= ay:
        return [[ax, ay + ah / 2], [bx, by - bh / 2]]
    return [[ax, ay - ah / 2], [bx, by + bh / 2]]


def _group_node(g, x, y, module=None):
    return {"id": g["id"], "kind": "group", "group": g["id"], "label": g["label"], "count": g["count"], "x": x, "y": y,
            "w": g["w"], "h": g["h"], "role": "group", "summary": g["summary"], "module": module}


def _bundle(edges, visible_of, placed, members):
    """Edges among `members` (hidden endpoints mapped to their visible stand-in), bundled per pair."""
    pairs: dict[tuple, list] = {}
    for e in edges:
        s, t = visible_of(e["source"]), visible_of(e["target"])
        if s is None or t is None or s == t or s not in members or t not in members:
            continue
        pairs.setdefault((s, t), []).append(e)
    out = []
    for (s, t), es in pairs.items():
        pts = _straight(placed[s], placed[t])
        if len(es) == 1 and es[0]["source"] == s and es[0]["target"] == t:
            out.append({**es[0], "points": pts})
        else:
            out.append({"id": f"b{s}_{t}", "source": s, "target": t, "points": pts, "count": len(es), "cut": None})
    return out


def _finish(p: Pass, source: str, top_layout, body_layout, count, var, summaries, loss_id):
    """Tree, first answer (lazy frames inside the fold) and every group's payload."""
    root, tree = _tree(p, count, var, summaries)
    iter_gid = {tree[g]["range"][0]: g for g in tree if tree[g]["kind"] == "iter"}
    # final values and grads on the node records
    for tid, v in p.values.items():
        p.nodes[tid]["value"] = _num(v)
        p.nodes[tid]["grad"] = _num(p.grads[tid]) if tid in p.grads and p.nodes[tid]["is_leaf"] else None
    for n in p.nodes.values():
        n.setdefault("value", None)
        n.setdefault("grad", None)
    frames = []
    for f in p.frames:
        it = f.pop("_it")
        f["_group"] = iter_gid[it] if it is not None else None
        frames.append(f)
    # group bookkeeping: members, sizes, frame ranges
    def ancestors(gid):
        while gid:
            yield gid
            gid = tree[gid]["parent"]
    for nid, it in p.owner.items():
        if it is None:
            continue
        for a in ancestors(iter_gid[it]):
            tree[a]["size"] += 1
            tree[a]["ops"] += p.nodes[nid]["kind"] == "op"
    for i, f in enumerate(frames):
        if f["_group"]:
            for a in ancestors(f["_group"]):
                g = tree[a]
                g["first_frame"] = i if g["first_frame"] is None else g["first_frame"]
                g["last_frame"] = i
    by_iter: dict[int, list] = {}
    for nid, it in p.owner.items():
        by_iter.setdefault(it, []).append(nid)
    for g in tree.values():
        last = [n for n in by_iter[g["range"][1]] if p.nodes[n]["kind"] == "tensor"]
        g["output"] = last[-1] if last else None
    edges_from: dict[int, list] = {}  # edges by the iteration of their source
    for e in p.edges.values():
        edges_from.setdefault(p.owner[e["source"]], []).append(e)
    frames_of: dict[int, list] = {}
    for i, f in enumerate(frames):
        if f["_group"]:
            frames_of.setdefault(tree[f["_group"]]["range"][0], []).append(i)
    subtree: dict[str, list] = {gid: [] for gid in tree}
    for c in tree:
        for a in ancestors(tree[c]["parent"]):
            subtree[a].append(c)

    def visible_at(gid):
        """Maps a node id to what stands for it inside group gid's contents (None: outside)."""
        def f(nid):
            it = p.owner.get(nid)
            if gid is None:
                return nid if it is None else root
            if it is None:
                return None
            g = tree[gid]
            if not (g["range"][0] <= it <= g["range"][1]):
                return None
            if g["kind"] == "iter":
                return nid
            return next(c for c in g["children"] if tree[c]["range"][0] <= it <= tree[c]["range"][1])
        return f

    payloads = {}
    for gid, g in tree.items():
        if g["kind"] == "iter":
            it = g["range"][0]
            ids = by_iter[it]
            pos = body_layout(p, ids)
            nodes = [{**copy.deepcopy(p.nodes[n]), "x": pos[n][0], "y": pos[n][1]} for n in ids]
        else:
            cards = [(c, tree[c]["w"], tree[c]["h"]) for c in g["children"]]
            pos = _row(cards, x0=20.0, y=CARD_H / 2 + 20)
            nodes = [_group_node(tree[c], *pos[c]) for c in g["children"]]
        placed = {n["id"]: (n["x"], n["y"], n["w"], n["h"]) for n in nodes}
        lo, hi = g["range"]
        mine = [e for it in range(lo, hi + 1) for e in edges_from.get(it, ())]
        edges = _bundle(mine, visible_at(gid), placed, set(placed))
        width = max(n["x"] + n["w"] / 2 for n in nodes) + 20
        height = max(n["y"] + n["h"] / 2 for n in nodes) + 24
        sub = {c: tree[c] for c in [gid, *subtree[gid]]}
        fr = {str(i): _public(frames[i]) for it in range(lo, hi + 1) for i in frames_of[it]}
        payloads[gid] = {"id": gid, "width": width, "height": height, "nodes": nodes, "edges": edges, "clusters": [],
                         "groups": sub, "frames": fr}
    for gid, g in tree.items():
        if g["size"] <= GROUP_PAYLOAD_NODES and g["kind"] != "iter":
            payloads[gid] = {**payloads[gid], "descendants": {
                c: {k: v for k, v in payloads[c].items() if k != "frames"} for c in subtree[gid]}}
    # the visible level: top-level nodes and the fold as one card
    top_ids = by_iter[None]
    pos = top_layout(p, top_ids, tree[root])
    nodes = [{**copy.deepcopy(p.nodes[n]), "x": pos[n][0], "y": pos[n][1]} for n in top_ids]
    nodes.append(_group_node(tree[root], *pos[root]))
    placed = {n["id"]: (n["x"], n["y"], n["w"], n["h"]) for n in nodes}
    edges = _bundle(list(p.edges.values()), visible_at(None), placed, set(placed))
    lazy = []
    for f in frames:
        if f["_group"]:
            lf = {k: v for k, v in _public(f).items() if k not in VALUE_KEYS}
            if "contributions" in lf:
                lf["contributions"] = [{k: v for k, v in c.items() if k != "grad"} for c in lf["contributions"]]
            lf.update(lazy=True, group=f["_group"])
            lazy.append(lf)
        else:
            lazy.append(_public(f))
    graph = {"folded": True, "run": RUN_ID, "pass_index": 0, "tree": tree, "nodes": nodes, "edges": edges, "clusters": [],
             "width": max(n["x"] + n["w"] / 2 for n in nodes) + 20, "height": max(n["y"] + n["h"] / 2 for n in nodes) + 30}
    loss = p.values[loss_id]
    ops = {"sin": _entry("sin", "SinBackward0"), "mul": _entry("×", "MulBackward0"), "add": _entry("+", "AddBackward0"),
           "pow": _entry("**", "PowBackward0"), "matmul": _entry("@", "MmBackward0"), "tanh": _entry("tanh", "TanhBackward0"),
           "select": _entry("[]", "SelectBackward0"), "sum": _entry("sum", "SumBackward0"), "mean": _entry("mean", "MeanBackward0")}
    trace = {"stdout": "", "error": None, "variables": {}, "ops": ops, "steps": [], "truncated": False, "truncated_reason": None,
             "passes": [{"index": 0, "loss": float(np.asarray(loss).sum()), "graph": graph, "frames": lazy, "ops": ops}],
             "_source": source}
    return trace, payloads


def _public(f):
    return {k: v for k, v in f.items() if not k.startswith("_")}


def _entry(label, grad_fn):
    return {"label": label, "grad_fn": grad_fn, "latex": ["1", "1"], "saves": False, "params": {"format": "args", "names": [], "symbol": None}}


CHAIN_SOURCE = """import torch
x = torch.tensor(0.5, requires_grad=True)
y = x
for i in range({n}):
    y = y + torch.sin(y) * 0.001
loss = y ** 2
loss.backward()
"""


def chain(n: int = 3300):
    """`for i in range(n): y = y + torch.sin(y) * 0.001`, then loss = y ** 2."""
    p = Pass()
    x = p.tensor(0.5, name="x", role="input", leaf=True, line=2)
    y, yv, trail = x, 0.5, []
    for i in range(n):
        sn, s = p.op("sin", "sin", "SinBackward0", [y], math.sin(yv), it=i, line=5)
        c = p.tensor(0.001, role="constant", rg=False, leaf=True, it=i, line=5)
        p.frames[-1]["origin"] = "const"
        mn, m = p.op("mul", "×", "MulBackward0", [s, c], math.sin(yv) * 0.001, it=i, line=5)
        an, y2 = p.op("add", "+", "AddBackward0", [y, m], yv + math.sin(yv) * 0.001, it=i, line=5, out_name="y")
        trail.append((y, yv, sn, mn, an, m, s))
        y, yv = y2, yv + math.sin(yv) * 0.001
    pn, loss = p.op("pow", "** 2", "PowBackward0", [y], yv * yv, line=6, out_name="loss")
    p.nodes[loss]["role"] = "loss"
    p.frames.append({"kind": "backward_begin", "id": "b1", "root": loss, "gradient": 1.0, "retain_graph": False, "line": 7,
                     "phase": "backward", "edges": [], "node": loss, "_it": None})
    g = 2 * yv
    p.backward_step(pn, 1.0, [(0, y, g)])
    for i in range(n - 1, -1, -1):
        yp, ypv, sn, mn, an, m, s = trail[i]
        p.backward_step(an, g, [(0, yp, g), (1, m, g)], it=i)
        p.backward_step(mn, g, [(0, s, g * 0.001)], it=i)
        gs = g * 0.001 * math.cos(ypv)
        p.backward_step(sn, g * 0.001, [(0, yp, gs)], it=i)
        g = g + gs
    p.frames.append({"kind": "accumulate", "id": "b1", "tensor": x, "incoming": g, "before": None, "after": g,
                     "phase": "backward", "edges": [], "node": x, "_it": None})
    p.frames.append({"kind": "backward_end", "id": "b1", "freed": True, "phase": "backward", "edges": [], "node": None,
                     "_it": None})
    p.grads[x] = g

    def body(p, ids):
        sn, s, c, mn, m, an, y2 = ids  # order of creation
        spots = {sn: (50, 50), s: (170, 50), c: (170, 130), mn: (290, 90), m: (410, 90), an: (530, 90), y2: (650, 90)}
        return spots

    def top(p, ids, fold):
        x, pn, loss = ids
        return {x: (80, 80), fold["id"]: (330, 80), pn: (540, 80), loss: (680, 80)}

    def summaries(lo, hi):
        vals = [trail[i + 1][1] if i + 1 < n else yv for i in range(lo, hi)]
        return {"min": min(vals), "max": max(vals), "mean": sum(vals) / len(vals), "shape": []}

    return _finish(p, CHAIN_SOURCE.format(n=n), top, body, n, "i", summaries, loss)


RNN_SOURCE = """import torch
torch.manual_seed(0)
x = torch.randn({T}, 1, 4)
U = torch.randn(4, 8, requires_grad=True)
W = torch.randn(8, 8, requires_grad=True)
h = torch.zeros(1, 8)
for t in range({T}):
    h = torch.tanh(x[t] @ U + h @ W * 0.3)
loss = h.sum()
loss.backward()
"""


def rnn(T: int = 200):
    """A hand-written RNN; W and U are read by every step, so they are drawn beside the fold."""
    rs = np.random.RandomState(0)
    xv, Uv, Wv = rs.randn(T, 1, 4), rs.randn(4, 8) * 0.5, rs.randn(8, 8) * 0.3
    p = Pass()
    x = p.tensor(xv, name="x", role="input", leaf=True, rg=False, line=3)
    U = p.tensor(Uv, name="U", role="parameter", leaf=True, line=4)
    W = p.tensor(Wv, name="W", role="parameter", leaf=True, line=5)
    h = p.tensor(np.zeros((1, 8)), name="h", role="input", leaf=True, rg=False, line=6)
    hv, trail = np.zeros((1, 8)), []
    for t in range(T):
        sn, xt = p.op("select", "[]", "SelectBackward0", [x], xv[t], it=t, line=8)
        p.nodes[sn]["grad_fn"] = None
        an, a = p.op("matmul", "@", "MmBackward0", [xt, U], xv[t] @ Uv, it=t, line=8)
        bn, b = p.op("matmul", "@", "MmBackward0", [h, W], hv @ Wv, it=t, line=8)
        cn, c = p.op("add", "+", "AddBackward0", [a, b], xv[t] @ Uv + hv @ Wv, it=t, line=8)
        hn2 = np.tanh(xv[t] @ Uv + hv @ Wv)
        tn, h2 = p.op("tanh", "tanh", "TanhBackward0", [c], hn2, it=t, line=8, out_name="h")
        trail.append((h, hv, xt, an, bn, cn, tn, a, b, c, hn2))
        h, hv = h2, hn2
    sn, loss = p.op("sum", "sum", "SumBackward0", [h], hv.sum(), line=9, out_name="loss")
    p.nodes[loss]["role"] = "loss"
    p.frames.append({"kind": "backward_begin", "id": "b1", "root": loss, "gradient": 1.0, "retain_graph": False, "line": 10,
                     "phase": "backward", "edges": [], "node": loss, "_it": None})
    g = np.ones((1, 8))
    p.backward_step(sn, 1.0, [(0, h, g)])
    dU, dW = np.zeros_like(Uv), np.zeros_like(Wv)
    for t in range(T - 1, -1, -1):
        hp, hpv, xt, an, bn, cn, tn, a, b, c, hn2 = trail[t]
        dc = g * (1 - hn2 ** 2)
        p.backward_step(tn, g, [(0, c, dc)], it=t)
        p.backward_step(cn, dc, [(0, a, dc), (1, b, dc)], it=t)
        p.backward_step(bn, dc, [(0, hp, dc @ Wv.T), (1, W, hpv.T @ dc)], it=t)
        p.backward_step(an, dc, [(0, xt, dc @ Uv.T), (1, U, xv[t].T @ dc)], it=t)
        dW += hpv.T @ dc
        dU += xv[t].T @ dc
        g = dc @ Wv.T
    for tid, gv in ((U, dU), (W, dW)):
        p.frames.append({"kind": "accumulate", "id": "b1", "tensor": tid, "incoming": _num(gv), "before": None, "after": _num(gv),
                         "phase": "backward", "edges": [], "node": tid, "_it": None})
        p.grads[tid] = gv
    p.frames.append({"kind": "backward_end", "id": "b1", "freed": True, "phase": "backward", "edges": [], "node": None,
                     "_it": None})

    def body(p, ids):
        sn, xt, an, a, bn, b, cn, c, tn, h2 = ids
        return {sn: (50, 50), xt: (170, 50), an: (290, 50), a: (410, 50), bn: (290, 140), b: (410, 140),
                cn: (530, 95), c: (650, 95), tn: (770, 95), h2: (890, 95)}

    def top(p, ids, fold):
        x, U, W, h, sn, loss = ids
        return {x: (80, 60), h: (80, 150), U: (330, 250), W: (520, 250), fold["id"]: (420, 110), sn: (640, 110), loss: (780, 110)}

    def summaries(lo, hi):
        vals = np.concatenate([trail[i][10].ravel() for i in range(lo, hi)])
        return {"min": float(vals.min()), "max": float(vals.max()), "mean": float(vals.mean()), "shape": [1, 8]}

    return _finish(p, RNN_SOURCE.format(T=T), top, body, T, "t", summaries, loss)


MLP_SOURCE = """import torch
from torch import nn
torch.manual_seed(0)
layers = []
for _ in range({L}):
    layers += [nn.Linear(8, 8), nn.Tanh()]
model = nn.Sequential(*layers)
x = torch.randn(4, 8)
loss = model(x).pow(2).mean()
loss.backward()
"""


def mlp(L: int = 150):
    """150 × (Linear(8, 8), Tanh): repeated sibling modules fold to "× 150"; each layer's parameters are its own."""
    rs = np.random.RandomState(0)
    xv = rs.randn(4, 8)
    p = Pass()
    x = p.tensor(xv, name="x", role="input", leaf=True, rg=False, line=8)
    h, hv, trail = x, xv, []
    for i in range(L):
        Wv, bv = rs.randn(8, 8) * 0.4, rs.randn(8) * 0.1
        W = p.tensor(Wv, name=f"model.{2 * i}.weight", role="parameter", leaf=True, it=i, line=9)
        b = p.tensor(bv, name=f"model.{2 * i}.bias", role="parameter", leaf=True, it=i, line=9)
        mn, a = p.op("matmul", "@", "MmBackward0", [h, W], hv @ Wv.T, it=i, line=9)
        an, z = p.op("add", "+", "AddBackward0", [a, b], hv @ Wv.T + bv, it=i, line=9)
        h2v = np.tanh(hv @ Wv.T + bv)
        tn, h2 = p.op("tanh", "tanh", "TanhBackward0", [z], h2v, it=i, line=9)
        for nid in (mn, an, tn, a, z, h2):
            p.nodes[nid]["module"] = f"model.{2 * i + (nid == tn or nid == h2)}"
        trail.append((h, hv, W, Wv, b, mn, an, tn, a, z, h2v))
        h, hv = h2, h2v
    pn, sq = p.op("pow", "** 2", "PowBackward0", [h], hv ** 2, line=9)
    sn, loss = p.op("mean", "mean", "MeanBackward0", [sq], (hv ** 2).mean(), line=9, out_name="loss")
    p.nodes[loss]["role"] = "loss"
    p.frames.append({"kind": "backward_begin", "id": "b1", "root": loss, "gradient": 1.0, "retain_graph": False, "line": 10,
                     "phase": "backward", "edges": [], "node": loss, "_it": None})
    g = np.full_like(hv, 1 / hv.size)
    p.backward_step(sn, 1.0, [(0, sq, g)])
    p.backward_step(pn, g, [(0, h, 2 * hv * g)])
    g = 2 * hv * g
    for i in range(L - 1, -1, -1):
        hp, hpv, W, Wv, b, mn, an, tn, a, z, h2v = trail[i]
        dz = g * (1 - h2v ** 2)
        p.backward_step(tn, g, [(0, z, dz)], it=i)
        p.backward_step(an, dz, [(0, a, dz), (1, b, dz.sum(0))], it=i)
        p.frames[-1]["contributions"][1]["unbroadcast_from"] = [4, 8]
        p.backward_step(mn, dz, [(0, hp, dz @ Wv), (1, W, dz.T @ hpv)], it=i)
        for tid, gv in ((b, dz.sum(0)), (W, dz.T @ hpv)):
            p.frames.append({"kind": "accumulate", "id": "b1", "tensor": tid, "incoming": _num(gv), "before": None, "after": _num(gv),
                             "phase": "backward", "edges": [], "node": tid, "_it": i})
            p.grads[tid] = gv
        g = dz @ Wv
    p.frames.append({"kind": "backward_end", "id": "b1", "freed": True, "phase": "backward", "edges": [], "node": None,
                     "_it": None})

    def body(p, ids):
        W, b, mn, a, an, z, tn, h2 = ids
        return {W: (70, 40), b: (300, 140), mn: (200, 80), a: (310, 60), an: (430, 90), z: (550, 90), tn: (670, 90), h2: (790, 90)}

    def top(p, ids, fold):
        x, pn, sq, sn, loss = ids
        return {x: (80, 80), fold["id"]: (330, 80), pn: (520, 80), sq: (650, 80), sn: (780, 80), loss: (910, 80)}

    def summaries(lo, hi):
        vals = np.concatenate([trail[i][10].ravel() for i in range(lo, hi)])
        return {"min": float(vals.min()), "max": float(vals.max()), "mean": float(vals.mean()), "shape": [4, 8]}

    return _finish(p, MLP_SOURCE.format(L=L), top, body, L, None, summaries, loss)


if __name__ == "__main__":
    import json
    import sys
    import time

    t0 = time.time()
    for make in (chain, rnn, mlp):
        trace, payloads = make()
        g = trace["passes"][0]["graph"]
        print(make.__name__, f"{time.time() - t0:.2f} s", "answer", len(json.dumps(trace)), "bytes;", len(g["tree"]), "groups;",
              len(g["nodes"]), "visible nodes;", len(trace["passes"][0]["frames"]), "frames;", "edges", [e["id"] for e in g["edges"]],
              file=sys.stderr)
