// Navigation helpers over the graph view (issue 11): where a drawn element is, the step's node, the module
// boxes holding it, and frameBox. The view's own API (viewBox, visibleBox, panTo, reveal, currentPath) and
// the fg:* events are the view's (graph.js, folds.js); minimap, search and breadcrumbs use both.
import { select, zoomIdentity } from "../vendor/d3.js";
import { DURATIONS } from "./config.js";
import { GraphView } from "./graph.js";
import { state } from "./store.js";

// The centre of a drawn element in graph coordinates (whatever groups it is nested in).
export function elementBox(view, elm) {
  if (!elm || !elm.getBBox || !elm.isConnected) return null;
  const b = elm.getBBox();
  const vp = view.viewport.getCTM(), m = elm.getCTM();
  if (!vp || !m) return null;
  const rel = vp.inverse().multiply(m);
  const a = new DOMPoint(b.x, b.y).matrixTransform(rel), c = new DOMPoint(b.x + b.width, b.y + b.height).matrixTransform(rel);
  return { x: Math.min(a.x, c.x), y: Math.min(a.y, c.y), w: Math.abs(c.x - a.x), h: Math.abs(c.y - a.y) };
}

// The element drawn for a node or a group (collapsed group node, module box, expanded group box).
export function drawnElement(view, id) {
  const q = CSS.escape(id);
  return view.svg.querySelector(`[data-node-id="${q}"]`) || view.svg.querySelector(`[data-cluster-id="${q}"]`)
    || view.svg.querySelector(`[data-group-id="${q}"]`);
}

// The timeline's current node: what the step ran (an op, a tensor, a backward step's op).
export function stepNode() {
  const m = state.model;
  if (!m || !state.step) return null;
  const f = m.steps[state.step - 1] && m.steps[state.step - 1].main;
  return f ? f.node : null;  // the server names every frame's node (docs/trace.md)
}

// Zoom and pan so that a box (graph coordinates) fills the view with a margin; never zoom in past 1:1.
GraphView.prototype.frameBox = function frameBox(box, animate = true) {
  const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500, pad = 40;
  const k = Math.min(1, (W - 2 * pad) / Math.max(box.w, 1), (H - 2 * pad) / Math.max(box.h, 1));
  const t = zoomIdentity.translate(W / 2 - (box.x + box.w / 2) * k, H / 2 - (box.y + box.h / 2) * k).scale(k);
  this.userZoomed = true;
  const sel = select(this.svg);
  sel.interrupt();
  if (animate) sel.transition().duration(DURATIONS.zoom).call(this.zoomer.transform, t);
  else sel.call(this.zoomer.transform, t);
};

// A trail of groups (ids, outermost first) without the chunk levels that add nothing (issue 23 §4): a chunk
// holding one group, and a fold's chunk ("#60 … #69", × 10) in front of the iteration or chunk it holds,
// whose own label already says where it is. Sequence chunks ("123 ops · line 5–9") say more: they stay.
export function withoutEmptyChunks(tree, ids) {
  const adds = (id, next) => {
    const g = tree && tree[id];
    if (!g || g.kind !== "chunk") return true;
    if (Array.isArray(g.children) && g.children.length === 1) return false;
    const inner = next != null ? tree[next] : null;
    return !(g.count != null && inner && (inner.kind === "iter" || inner.kind === "chunk") && inner.count != null);
  };
  return ids.filter((id, i) => i === ids.length - 1 || adds(id, ids[i + 1]));
}

// An unfolded pass: the module boxes holding the step's node, outermost first.
export function modulePath(view) {
  const id = stepNode();
  if (!id) return [];
  return (view.clusters || []).filter((c) => (c.nodes || []).includes(id))
    .sort((a, b) => (b.nodes || []).length - (a.nodes || []).length)
    .map((c) => ({ id: c.id, label: c.cls && !String(c.name).includes(c.cls) ? `${c.name} (${c.cls})` : c.name || c.id }));
}
