// The minimap: the drawn graph in a corner (nodes as dots coloured as on the page, collapsed groups as
// stacks) with the part on screen as a rectangle; click or drag on it (or focus it and use the arrow keys)
// to move the view there. Faint until hovered or focused; the camera keeps the step clear of it.
import { NAVIGATION, ROLE_COLORS, THEMES } from "./config.js";
import { elementBox } from "./graphapi.js";
import { $ } from "./dom.js";
import { state } from "./store.js";

const M = NAVIGATION.minimap;
let base = null;          // the graph drawn once per fg:graph-drawn / fg:graph-changed (offscreen canvas)
let fit = null;           // graph box -> map: { x0, y0, s, w, h }
let userChoice = null;    // null: shown when useful; true / false: the toggle button's choice
let frame = null;

// What is drawn now: node records (centre, size, kind, role) with the offset of the group they sit in.
function drawnNodes(view) {
  const out = [];
  const vp = view.viewport.getCTM();
  const inv = vp ? vp.inverse() : null;
  const offsets = new Map();
  for (const [id, rec] of view.nodeEls || []) {
    const g = rec.g;
    // a record culled off screen (not in the document) still belongs on the map, at its own coordinates
    if (g.style.display === "none" || (view.hidden && view.hidden.has(id))) continue;
    let off = g.parentNode ? offsets.get(g.parentNode) : null;
    if (off === undefined) {
      const m = inv && g.isConnected && g.parentNode.getCTM ? g.parentNode.getCTM() : null;
      off = m ? inv.multiply(m) : null;
      offsets.set(g.parentNode, off);
    }
    const n = rec.n;
    const x = off ? off.a * n.x + off.e : n.x, y = off ? off.d * n.y + off.f : n.y;
    out.push({ x, y, w: n.w * (off ? off.a : 1), h: n.h * (off ? off.d : 1), kind: rec.kind || n.kind, role: n.role });
  }
  return out;
}

// Collapsed groups (the folds' stacked nodes, today's collapsed module boxes), from their elements.
function drawnGroups(view, box) {
  const out = [];
  for (const elm of view.svg.querySelectorAll(".fg-group-node[data-node-id], .fg-cluster.collapsed[data-node-id]")) {
    const b = box(view, elm);
    if (b) out.push(b);
  }
  return out;
}

function shouldShow(view, count) {
  if (userChoice !== null) return userChoice;
  if (!view.model || !count) return false;
  if (count >= M.minNodes) return true;
  return view.fitScale() < view.minZoom();  // does not fit the view readable: the map shows the way
}

function setShown(on) {
  $("minimap").hidden = !on;
  const b = $("minimap-toggle");
  b.setAttribute("aria-pressed", String(on));
  b.setAttribute("aria-label", on ? "Hide minimap" : "Show minimap");
}

function redraw() {
  const view = state.graph;
  const wasHidden = $("minimap").hidden;
  drawMap(view);
  // the camera keeps the step clear of the map: frame again when it comes or goes (unless the user moved the view)
  if (view && view.model && $("minimap").hidden !== wasHidden && !view.userZoomed) {
    view.forceWhole = view.wholeView;
    view.fit(false);
  }
}

function drawMap(view) {
  if (!view || !view.model || !state.model) {
    $("minimap").hidden = true;  // a run that built no graph: no map of the last one
    base = null;
    return;
  }
  const groups = drawnGroups(view, elementBox);
  const shown = shouldShow(view, (view.nodeEls ? view.nodeEls.size : 0) + groups.length);
  setShown(shown);
  if (!shown) {
    base = null;  // nothing to draw for a map nobody sees (most tutorial graphs)
    return;
  }
  const nodes = drawnNodes(view);
  const count = nodes.length + groups.length;
  // above the legend (bottom left, it can span the pane when the pane is narrow), below the search panel
  const room = placeAboveLegend();
  if (room < M.minRoomH) {
    setShown(false);
    base = null;
    return;
  }
  const maxH = Math.min(M.maxH, room);
  const gb = view.visibleBox();
  const s = Math.min((M.maxW - 2 * M.pad) / Math.max(gb.w, 1), (maxH - 2 * M.pad) / Math.max(gb.h, 1));
  const w = Math.max(24, Math.round(gb.w * s + 2 * M.pad)), h = Math.max(24, Math.round(gb.h * s + 2 * M.pad));
  fit = { x0: gb.x, y0: gb.y, s, w, h };
  const dpr = window.devicePixelRatio || 1;
  const canvas = $("minimap-canvas");
  canvas.width = w * dpr;
  canvas.height = h * dpr;
  canvas.style.width = w + "px";
  canvas.style.height = h + "px";
  base = document.createElement("canvas");
  base.width = w * dpr;
  base.height = h * dpr;
  const c = base.getContext("2d");
  c.scale(dpr, dpr);
  const T = THEMES[state.theme] || THEMES.light;
  c.fillStyle = T.graphBg;
  c.fillRect(0, 0, w, h);
  const px = (x) => M.pad + (x - gb.x) * s, py = (y) => M.pad + (y - gb.y) * s;
  // module boxes first, faint, so the shape of the program shows
  c.strokeStyle = T.clusterStroke;
  c.lineWidth = 1;
  for (const cl of view.clusters || []) {
    if (!cl._el || !cl._el.isConnected || (view.collapsed && view.collapsed.has(cl.id))) continue;
    c.strokeRect(px(cl.x - cl.w / 2), py(cl.y - cl.h / 2), cl.w * s, cl.h * s);
  }
  for (const n of nodes) {
    const w0 = Math.max(M.dotMin, n.w * s), h0 = Math.max(M.dotMin, n.h * s);
    c.fillStyle = n.kind === "op" ? T.nodeStroke : ROLE_COLORS[n.role] || ROLE_COLORS.intermediate;
    c.fillRect(px(n.x) - w0 / 2, py(n.y) - h0 / 2, w0, h0);
  }
  // a collapsed group: a small stack of cards, as the graph draws it
  for (const g of groups) {
    const o = M.stackOffset;
    for (let i = M.stackCards - 1; i >= 0; i--) {
      c.fillStyle = T.cluster;
      c.strokeStyle = T.clusterStroke;
      const x = px(g.x) + i * o, y = py(g.y) - i * o, gw = Math.max(M.dotMin * 2, g.w * s - (M.stackCards - 1) * o);
      const gh = Math.max(M.dotMin * 2, g.h * s - (M.stackCards - 1) * o);
      c.fillRect(x, y, gw, gh);
      c.strokeRect(x, y, gw, gh);
    }
  }
  $("minimap").dataset.nodes = String(count);
  paint();
}

// Puts the map above the legend; returns the px of height it may take without reaching the search panel,
// the tools or the caption above it (whichever of them reaches down over the map's columns).
function placeAboveLegend() {
  const mm = $("minimap"), legend = $("legend"), wrap = mm.offsetParent || mm.parentElement;
  const lh = legend && !legend.hidden ? legend.offsetHeight : 0;
  mm.style.bottom = lh ? `calc(${lh}px + 1rem)` : "";
  if (!wrap) return M.maxH;
  const wrapR = wrap.getBoundingClientRect();
  const mapLeft = wrapR.right - M.maxW - M.gap;
  let above = wrapR.top;
  for (const el of wrap.querySelectorAll(".nav-panel, .graph-tools, .nav-search, #caption, .breadcrumbs:not([hidden])")) {
    const r = el.getBoundingClientRect();
    if (r.height && r.right > mapLeft) above = Math.max(above, r.bottom);
  }
  const bottomPx = parseFloat(getComputedStyle(mm).bottom) || 0;
  return wrapR.bottom - bottomPx - above - M.gap;
}

// The base image and the part of the graph on screen.
function paint() {
  frame = null;
  const view = state.graph;
  if (!base || !fit || $("minimap").hidden || !view || !view.model) return;
  const canvas = $("minimap-canvas");
  const c = canvas.getContext("2d");
  const dpr = window.devicePixelRatio || 1;
  c.setTransform(1, 0, 0, 1, 0, 0);
  c.drawImage(base, 0, 0);
  c.scale(dpr, dpr);
  const v = view.viewBox();
  const x = M.pad + (v.x - fit.x0) * fit.s, y = M.pad + (v.y - fit.y0) * fit.s;
  const T = THEMES[state.theme] || THEMES.light;
  c.fillStyle = T.accent + Math.round(M.viewFillAlpha * 255).toString(16).padStart(2, "0");
  c.strokeStyle = T.accent;
  c.lineWidth = M.viewStroke;
  c.fillRect(x, y, v.w * fit.s, v.h * fit.s);
  c.strokeRect(x, y, v.w * fit.s, v.h * fit.s);
  const mm = $("minimap");
  mm.dataset.view = [v.x, v.y, v.w, v.h].map((n) => n.toFixed(1)).join(",");
}

function schedulePaint() {
  if (!frame) frame = requestAnimationFrame(paint);
}

// map px -> graph point, and move the view there
function panFromEvent(e, animate) {
  if (!fit || !state.graph) return;
  const r = $("minimap-canvas").getBoundingClientRect();
  const x = fit.x0 + (e.clientX - r.left - M.pad) / fit.s, y = fit.y0 + (e.clientY - r.top - M.pad) / fit.s;
  state.graph.panTo(x, y, animate);
}

// arrow keys pan by a part of the view (Shift: a whole view); Home fits the graph
function onKey(e) {
  const view = state.graph;
  if (!view || !view.model || !view.panTo) return;
  const v = view.viewBox(), f = e.shiftKey ? 1 : M.keyPanFraction;
  const d = { ArrowLeft: [-v.w * f, 0], ArrowRight: [v.w * f, 0], ArrowUp: [0, -v.h * f], ArrowDown: [0, v.h * f] }[e.key];
  if (e.key === "Home" && view.fit) view.fit();
  else if (!d) return;
  else view.panTo(v.x + v.w / 2 + d[0], v.y + v.h / 2 + d[1], false);
  // the player's keys (← → step) must not act while the map has focus
  e.preventDefault();
  e.stopPropagation();
}

export function bindMinimap() {
  const canvas = $("minimap-canvas");
  canvas.tabIndex = 0;
  canvas.setAttribute("role", "application");
  canvas.setAttribute("aria-roledescription", "minimap");
  canvas.setAttribute("aria-label", "Minimap: click, drag or use the arrow keys to move the view");
  canvas.addEventListener("keydown", onKey);
  let dragging = false;
  canvas.addEventListener("pointerdown", (e) => {
    e.preventDefault();
    dragging = true;
    canvas.setPointerCapture(e.pointerId);
    panFromEvent(e, true);
  });
  canvas.addEventListener("pointermove", (e) => dragging && panFromEvent(e, false));
  const stop = (e) => {
    dragging = false;
    if (canvas.hasPointerCapture(e.pointerId)) canvas.releasePointerCapture(e.pointerId);
  };
  canvas.addEventListener("pointerup", stop);
  canvas.addEventListener("pointercancel", stop);
  $("minimap-toggle").addEventListener("click", () => {
    userChoice = $("minimap").hidden;
    setShown(userChoice);
    redraw();
  });
  // after the frame that shows the new graph: the map never delays the first frame
  const later = () => requestAnimationFrame(() => setTimeout(redraw, 0));
  document.addEventListener("fg:graph-drawn", later);
  document.addEventListener("fg:graph-changed", later);
  document.addEventListener("fg:camera", schedulePaint);
  // the theme's colours, and a run that built no graph (the page shows its "empty" note)
  new MutationObserver(redraw).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  new MutationObserver(redraw).observe($("empty"), { attributes: true, attributeFilter: ["hidden"] });
}

bindMinimap();
