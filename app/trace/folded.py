"""A folded pass (issue 11, docs/trace.md §5): the visible level laid out by dot, lazy frames, and the
payload of every group (its contents laid out on their own, by signature through the layout cache,
values, full frames), encoded once here and kept by the server's run store (``app.runs``).

Each edge belongs to one place: the deepest group holding both its ends (or the pass's top level);
there its ends are mapped to that group's direct units, and edges between the same two units are
bundled (``b<src>_<dst>``, ``count``). So an RNN's ``W`` at the top level has one edge into the fold
with ``count`` 200, and no edge is lost: every one is drawn when its group is expanded.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time

import orjson

from app.layout import LayoutEngine, LayoutInput
from app.trace.hierarchy import Hierarchy
from app.trace.payloads import PassPayloads, pack

# what a lazy frame keeps (the timeline walks it; its values come with its group's payload)
LAZY_KEEP = ("kind", "id", "node", "tensor", "op", "output", "phase", "grad_fn", "line", "edges")


# a bundled edge spans this many ranks: room along it for its "× n" badge (a parameter beside its fold is
# otherwise one rank away, and the badge covered the parameter's card)
BUNDLE_MINLEN = 2


def _chain_of(h: Hierarchy, cache: dict, gid: str | None) -> tuple[str, ...]:
    got = cache.get(gid)
    if got is None:
        got = cache[gid] = tuple(h.chain(gid)) if gid is not None else ()
    return got


def _group_node(h: Hierarchy, gid: str) -> dict:
    g = h.groups[gid]
    w, hh = g.size_wh()
    return {"id": gid, "kind": "group", "group": gid, "label": g.label, "count": g.count, "x": 0.0, "y": 0.0,
            "w": w, "h": hh, "role": "group", "summary": g.summary, "module": g.module}


def _layout_key(n: dict, op_text) -> str:
    if n["kind"] == "group":
        return f'group|{n["label"]}|{n.get("count")}'
    return f'{n["kind"]}|{n["op"] or n["role"]}|{op_text(n) if n["kind"] == "op" else ""}'


def _place(layout: LayoutEngine | None, nodes: list[dict], edges: list[dict], clusters: list[tuple],
           op_text, aspect: float) -> tuple[float, float, dict]:
    """Lay ``nodes``/``edges`` out (dot, by signature through the cache); positions written in place."""
    if layout is None:
        for e in edges:
            e.setdefault("points", [])
        return 0.0, 0.0, {}
    lin = LayoutInput([(n["id"], _layout_key(n, op_text), n["w"], n["h"]) for n in nodes],
                      [(e["id"], e["source"], e["target"], BUNDLE_MINLEN if e.get("count", 1) > 1 else 1)
                       for e in edges], clusters)
    res = layout.layout(lin, aspect)
    for n in nodes:
        n["x"], n["y"] = res.nodes.get(n["id"], (0.0, 0.0))
    for e in edges:
        e["points"] = res.edges.get(e["id"], [])
    return res.width, res.height, res.clusters


def _edge(eid: str, s: str, d: str, cut) -> dict:
    return {"id": eid, "source": s, "target": d, "points": [], "cut": cut}


BUDGET_RETRY_S = 0.01  # CPU seconds between two reminders of a spent budget


class FoldTooSlow(Exception):
    """Folding a pass used up its CPU budget (``cpu_budget``)."""


def _over_budget(signum, frame):
    raise FoldTooSlow


@contextlib.contextmanager
def cpu_budget(seconds: float | None):
    """Raise ``FoldTooSlow`` inside the block once this process has used ``seconds`` more CPU time (a profiling
    timer: load on the machine never moves it). Only for pure computation: nothing outside the process (dot's
    pipe) may be left half-done. None, or off the main thread (where signals cannot land): no budget."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGPROF, _over_budget)
    # NOTE: an exception raised while a finalizer or weakref callback runs is swallowed ("Exception ignored"):
    # the timer repeats every BUDGET_RETRY_S of CPU time until the block is left
    signal.setitimer(signal.ITIMER_PROF, max(seconds, 0.001), BUDGET_RETRY_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


class PayloadsTooBig(Exception):
    """A folded pass's group payloads passed their byte budget while being built."""


class FoldedPass:
    """One folded pass: ``first()`` is what its answer carries (the visible level, the tree, lazy
    frames); ``payloads()`` the store's part, built after the answer is sent (off its critical path)."""

    def __init__(self, h: Hierarchy, nodes: list[dict], edges: list[tuple], frames: list[dict], *,
                 layout: LayoutEngine | None, op_text, cluster_title, aspect: float, run: str, pass_index: int):
        self.h, self.nodes, self.frames = h, nodes, frames
        self.layout, self.op_text, self.cluster_title, self.aspect = layout, op_text, cluster_title, aspect
        self.run, self.pass_index = run, pass_index
        self.by_id = {n["id"]: n for n in nodes}
        self.cache: dict = {}
        self.node_chain = {nid: _chain_of(h, self.cache, gid) for nid, gid in h.node_group.items()}
        # each edge's owner: the deepest group holding both ends; there, its ends' units
        own: dict[str | None, list[tuple[str, str, str, object]]] = {}
        node_chain = self.node_chain
        node_group = h.node_group
        empty = ()
        for eid, s, d, cut in edges:
            gs = node_group.get(s)
            if gs is not None and gs == node_group.get(d):  # most edges: both ends direct members of one group
                own.setdefault(gs, []).append((eid, s, d, cut))
                continue
            cs, cd = node_chain.get(s, empty), node_chain.get(d, empty)
            k = 0
            while k < len(cs) and k < len(cd) and cs[k] == cd[k]:
                k += 1
            us = cs[k] if len(cs) > k else s
            ud = cd[k] if len(cd) > k else d
            if us != ud:
                own.setdefault(cs[k - 1] if k else None, []).append((eid, us, ud, cut))
        self.own = own

    @staticmethod
    def level_edges(items, rep=None) -> list[dict]:
        out: list[dict] = []
        bundles: dict[tuple[str, str], dict] = {}
        for eid, us, ud, cut in items:
            if rep is not None:
                us, ud = rep(us), rep(ud)
                if us == ud:
                    continue
            if us[0] != "g" and ud[0] != "g":
                out.append(_edge(eid, us, ud, cut))
                continue
            b = bundles.get((us, ud))
            if b is None:
                b = bundles[(us, ud)] = _edge(f"b{us}_{ud}", us, ud, None)
                b["count"] = 0
                out.append(b)
            b["count"] += 1
        return out

    # ------------------------------------------------------------- the answer
    def first(self) -> tuple[dict, list[dict]]:
        h, groups, by_id, node_chain = self.h, self.h.groups, self.by_id, self.node_chain

        def rep(u: str) -> str:
            chain = node_chain.get(u, ()) if u[0] != "g" else _chain_of(h, self.cache, u)
            for gid in chain:
                if not groups[gid].expanded:
                    return gid
            return u

        vis_nodes: list[dict] = []
        vis_clusters: list[tuple] = []

        def walk(units: list[str], cluster_stack: list[list[str]]) -> None:
            for u in units:
                if u[0] != "g":
                    vis_nodes.append(dict(by_id[u]))
                    for m in cluster_stack:
                        m.append(u)
                    continue
                g = groups[u]
                if g.expanded:
                    members: list[str] = []
                    vis_clusters.append((u, g.parent if g.parent and groups[g.parent].expanded else None, members,
                                         self.cluster_title(g.label)))
                    walk(g.units, [*cluster_stack, members])
                else:
                    vis_nodes.append(_group_node(h, u))
                    for m in cluster_stack:
                        m.append(u)

        walk(h.top, [])
        vis_items = [e for owner, items in self.own.items() if owner is None or groups[owner].expanded for e in items]
        vis_edges = self.level_edges(vis_items, rep)
        width, height, cboxes = _place(self.layout, vis_nodes, vis_edges, vis_clusters, self.op_text, self.aspect)
        clusters = []
        for cid, parent, members, _title in vis_clusters:
            x, y, w, hh = cboxes.get(cid, (0.0, 0.0, 0.0, 0.0))
            name, _, cls = groups[cid].label.partition(" (")
            clusters.append({"id": cid, "group": cid, "name": name, "cls": cls.rstrip(")") or None,
                             "parent": parent, "x": x, "y": y, "w": w, "h": hh, "nodes": members})
        graph = {"width": width, "height": height, "nodes": vis_nodes, "edges": vis_edges, "clusters": clusters,
                 "groups": [], "layout": "folded", "folded": True, "run": self.run, "pass_index": self.pass_index,
                 "tree": {gid: g.record() for gid, g in groups.items()}}
        visible = {n["id"] for n in vis_nodes}
        out_frames: list[dict] = []
        frame_group = h.frame_group
        append = out_frames.append
        for f, gid in zip(self.frames, frame_group):
            if gid is None or (groups[gid].expanded and f["node"] in visible):
                append(f)
                continue
            lazy = {k: f[k] for k in LAZY_KEEP if k in f}
            lazy["lazy"] = True
            lazy["group"] = gid
            append(lazy)
        return graph, out_frames

    # ------------------------------------------------------------- the run store's part
    def payloads(self, deadline: float | None = None, max_bytes: int | None = None) -> PassPayloads:
        """Past ``deadline`` (``time.monotonic()``): ``TimeoutError``; past ``max_bytes`` of encoded pieces
        (counted as they are built): ``PayloadsTooBig`` (the worker then stores nothing)."""
        h, groups, by_id = self.h, self.h.groups, self.by_id
        store = PassPayloads()
        dumps = orjson.dumps
        for gid, g in groups.items():
            store.children[gid] = g.children
            store.sizes[gid] = g.size
            store.entries[gid] = dumps(g.record())
        frame_parts: dict[str, list[bytes]] = {}
        for i, f in enumerate(self.frames):
            gid = h.frame_group[i]
            if gid is not None:
                frame_parts.setdefault(gid, []).append(b'"%d":' % i + dumps(f))
        used = 0
        for gid, parts in frame_parts.items():
            joined = b",".join(parts)
            store.frames[gid] = packed = pack(joined)
            store.raw[gid] = len(joined)
            used += len(packed)
            if max_bytes is not None and used > max_bytes:
                raise PayloadsTooBig(max_bytes)
        del frame_parts
        own = self.own
        for k, (gid, g) in enumerate(groups.items()):
            if deadline is not None and k % 64 == 0 and time.monotonic() > deadline:
                raise TimeoutError("group payloads took too long")
            if max_bytes is not None and used > max_bytes:
                raise PayloadsTooBig(max_bytes)
            pnodes = [dict(by_id[u]) if u[0] != "g" else _group_node(h, u) for u in g.units]
            pedges = self.level_edges(own.get(gid, ()))
            w, hh, _ = _place(self.layout, pnodes, pedges, [], self.op_text, self.aspect)
            core = dumps({"id": gid, "width": w, "height": hh, "nodes": pnodes, "edges": pedges, "clusters": []})
            store.cores[gid] = packed = pack(core)
            store.raw[gid] = store.raw.get(gid, 0) + len(core)
            used += len(packed)
        for n in self.nodes:
            nid = n["id"]
            path = [g for g in self.node_chain.get(nid, ()) if not groups[g].expanded]
            text = " ".join(str(x) for x in (n.get("label"), n.get("name"), n.get("op"), n.get("grad_fn")) if x)
            # NOTE: a result as JSON bytes: a dict and a path list per node held ~3x as much memory, read on match only
            store.search.append((text.lower(), dumps({"id": nid, "label": n.get("label"), "kind": n["kind"],
                                                      "op": n.get("op"), "name": n.get("name"), "path": path})))
        store.measure()  # here in the worker, not on the server's event loop
        return store
