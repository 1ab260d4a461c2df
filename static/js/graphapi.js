// The graph view's navigation API (issue 11 contract: viewBox, visibleBox, panTo, reveal, currentPath
// and the fg:* events), installed on GraphView only where the view does not bring its own, so the
// folds' implementation wins cleanly wherever it exists. Minimap, search and breadcrumbs call these.
import { select, zoomIdentity } from "../vendor/d3.js";
import { DURATIONS, NAVIGATION } from "./config.js";
import { GraphView } from "./graph.js";
import { app } from "./state.js";

const P = GraphView.prototype;
const SOURCE = "graphapi";
// an event seen from someone else (the graph view itself) means it emits it: this module stops
const native = new Set();
for (const name of ["fg:graph-drawn", "fg:graph-changed", "fg:camera", "fg:step"]) {
  document.addEventListener(name, (e) => {
    if (!e.detail || e.detail.source !== SOURCE) native.add(name);
  });
}

function emit(name, detail = {}) {
  if (native.has(name)) return;
  document.dispatchEvent(new CustomEvent(name, { detail: { ...detail, source: SOURCE } }));
}

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
  const m = app.model;
  if (!m || !app.step) return null;
  const f = m.steps[app.step - 1] && m.steps[app.step - 1].main;
  return f ? f.node || f.id || null : null;
}

// The step's frame that names a group: its main frame, else (a timeline that steps over lazy frames
// without drawing them) the last of its frames inside a group.
function stepFrame() {
  const m = app.model;
  const s = m && app.step ? m.steps[app.step - 1] : null;
  if (!s) return null;
  if (!s.main || s.main.group) return s.main || null;
  for (let i = s.frames.length - 1; i >= 0; i--) if (s.frames[i].group) return s.frames[i];
  return s.main;
}

if (!P.viewBox) {
  P.viewBox = function viewBox() {
    const t = this.transform || zoomIdentity, W = this.svg.clientWidth || 1, H = this.svg.clientHeight || 1;
    return { x: -t.x / t.k, y: -t.y / t.k, w: W / t.k, h: H / t.k };
  };
}

if (!P.visibleBox) {
  P.visibleBox = function visibleBox() {
    const g = this.model && this.model.graph;
    return g ? { x: 0, y: 0, w: g.width || 0, h: g.height || 0 } : { x: 0, y: 0, w: 0, h: 0 };
  };
}

if (!P.panTo) {
  P.panTo = function panTo(x, y, animate = true) {
    if (!this.model) return;
    this.userZoomed = true;  // the user moved the view: a resize must not snap it back to the fit
    const sel = select(this.svg);
    sel.interrupt();
    if (animate) sel.transition().duration(DURATIONS.pan).call(this.zoomer.translateTo, x, y);
    else sel.call(this.zoomer.translateTo, x, y);
  };
}

// Zoom and pan so that a box (graph coordinates) fills the view with a margin; never zoom in past 1:1.
if (!P.frameBox) {
  P.frameBox = function frameBox(box, animate = true) {
    const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500, pad = 40;
    const k = Math.min(1, (W - 2 * pad) / Math.max(box.w, 1), (H - 2 * pad) / Math.max(box.h, 1));
    const t = zoomIdentity.translate(W / 2 - (box.x + box.w / 2) * k, H / 2 - (box.y + box.h / 2) * k).scale(k);
    this.userZoomed = true;
    const sel = select(this.svg);
    sel.interrupt();
    if (animate) sel.transition().duration(DURATIONS.zoom).call(this.zoomer.transform, t);
    else sel.call(this.zoomer.transform, t);
  };
}

if (!P.currentPath) {
  // Folded pass: the tree from the step's group up; unfolded: the module boxes holding the step's node.
  P.currentPath = function currentPath() {
    const g = this.model && this.model.graph;
    if (!g) return [];
    const f = stepFrame(), id = stepNode();
    if (g.tree) {
      const rec = id && this.model.nodes.get(id);
      let gid = (f && f.group) || (rec && rec.group !== rec.id ? rec.group : null) || this.focusedGroup || null;
      const path = [];
      while (gid && g.tree[gid] && path.length < 64) {
        path.unshift({ id: gid, label: g.tree[gid].label });
        gid = g.tree[gid].parent;
      }
      return path;
    }
    return modulePath(this);
  };
}

// An unfolded pass: the module boxes holding the step's node, outermost first.
export function modulePath(view) {
  const id = stepNode();
  if (!id) return [];
  return (view.clusters || []).filter((c) => (c.nodes || []).includes(id))
    .sort((a, b) => (b.nodes || []).length - (a.nodes || []).length)
    .map((c) => ({ id: c.id, label: c.cls && !String(c.name).includes(c.cls) ? `${c.name} (${c.cls})` : c.name || c.id }));
}

if (!P.reveal) {
  // Expand what hides the node (the view's own expand when it has one, a collapsed module box today),
  // centre it at a readable zoom and highlight it; a node inside a fold the view cannot open shows
  // the innermost group on its path that is drawn.
  P.reveal = async function reveal(nodeId, path = []) {
    if (!this.model) return;
    if (this.expand) {
      for (const gid of path || []) if (!(this.isExpanded && this.isExpanded(gid))) await this.expand(gid);
    }
    let changed = false;
    for (const c of this.clusters || []) {
      if (this.collapsed && this.collapsed.has(c.id) && (c.nodes || []).includes(nodeId)) {
        this.collapsed.delete(c.id);
        changed = true;
      }
    }
    if (changed) this.applyCollapsed();
    let elm = drawnElement(this, nodeId);
    for (const gid of [...(path || [])].reverse()) {
      if (elm) break;
      elm = drawnElement(this, gid);
    }
    const box = elementBox(this, elm);
    if (!box) return;
    const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500;
    const k = Math.max(this.transform.k, NAVIGATION.reveal.minZoom);
    const t = zoomIdentity.translate(W / 2 - (box.x + box.w / 2) * k, H / 2 - (box.y + box.h / 2) * k).scale(k);
    this.userZoomed = true;
    const sel = select(this.svg);
    sel.interrupt();
    sel.transition().duration(DURATIONS.zoom).call(this.zoomer.transform, t);
    for (const old of this.svg.querySelectorAll(".fg-found")) old.classList.remove("fg-found");
    elm.classList.add("fg-found");
    clearTimeout(this._foundTimer);
    this._foundTimer = setTimeout(() => elm.classList.remove("fg-found"), NAVIGATION.reveal.foundMs);
    if (elm.focus) elm.focus({ preventScroll: true });
  };
}

// ---- events, emitted here until the view emits them itself ---------------------------------
function wrap(name, after) {
  const orig = P[name];
  if (!orig) return;
  P[name] = function wrapped(...args) {
    const out = orig.apply(this, args);
    after.call(this, args);
    return out;
  };
}

function watchCamera(view) {
  if (view._navCamera || !view.zoomer || typeof view.zoomer.on !== "function") return;
  view._navCamera = true;
  let frame = null;
  // a namespaced listener: the view's own zoom handler stays as it is
  view.zoomer.on("zoom.navigation", () => {
    if (frame || native.has("fg:camera")) return;
    frame = requestAnimationFrame(() => {
      frame = null;
      emit("fg:camera", { view: view.viewBox() });
    });
  });
}

const drawPass = P.render;
P.render = function render(...args) {
  this._navRendering = true;
  try {
    return drawPass.apply(this, args);
  } finally {
    this._navRendering = false;
    watchCamera(this);
    // after the caller's fit and first step (showPass is synchronous): the view is where it will be
    queueMicrotask(() => emit("fg:graph-drawn", { graph: this.model && this.model.graph }));
  }
};
wrap("applyCollapsed", function afterCollapse() {
  if (!this._navRendering) emit("fg:graph-changed", {});
});
wrap("update", function afterUpdate() {
  if (!native.has("fg:step")) emit("fg:step", { node: stepNode(), path: this.currentPath() });
});
