// Breadcrumbs: the groups holding the current step's node, outermost first ("model › model.3 (Linear)",
// "t = 0 … 199 › #17"), each a button that shows its group; and "Fit to screen" (the whole graph).
import { GRAPH, NAVIGATION } from "./config.js";
import { drawnElement, elementBox, stepNode } from "./graphapi.js";
import { $ } from "./dom.js";
import { state } from "./store.js";

let frame = null;
let shownKey = "";

// Show a group: the view's own reveal for a collapsed one, else frame its drawn box; a box too big to read
// whole (150 layers at ~3 px) is shown from its start at the readable zoom instead.
async function focusGroup(path, i) {
  const view = state.graph;
  const gid = path[i].id;
  const elm = drawnElement(view, gid);
  const collapsed = elm && (elm.classList.contains("fg-group-node") || elm.matches("[data-node-id]"));
  if (!elm || collapsed) return view.reveal(gid, path.slice(0, i).map((p) => p.id));
  const box = elementBox(view, elm);
  if (!box) return;
  const W = view.svg.clientWidth || 800, H = view.svg.clientHeight || 500;
  const readable = GRAPH.minReadableZoom;
  const fit = Math.min(1, W / Math.max(box.w, 1), H / Math.max(box.h, 1));
  if (fit >= readable) return view.frameBox(box);
  // the part of the box that fits at the readable zoom, from its top left (where the group starts)
  const w = Math.min(box.w, W / readable), h = Math.min(box.h, H / readable);
  view.frameBox({ x: box.x, y: box.y, w, h });
}

// The node the crumbs describe: the step's node while it is in view, else the drawn node nearest the
// centre of the view (a search or a pan took the view elsewhere: the crumbs follow what is centred).
function centredNode(view) {
  const id = stepNode();
  if (!id || !view.viewBox) return id;
  const vb = view.viewBox();
  const at = view.model.nodes.get(id);
  const inView = (n) => n && n.x >= vb.x && n.x <= vb.x + vb.w && n.y >= vb.y && n.y <= vb.y + vb.h;
  if (inView(at)) return id;
  const cx = vb.x + vb.w / 2, cy = vb.y + vb.h / 2;
  let best = id, bestD = Infinity;
  for (const n of view.model.graph.nodes) {
    if ((view.hidden && view.hidden.has(n.id)) || !Number.isFinite(n.x)) continue;
    const d = (n.x - cx) ** 2 + (n.y - cy) ** 2;
    if (d < bestD) [best, bestD] = [n.id, d];
  }
  return best;
}

// The module boxes holding a node, outermost first.
function modulesHolding(view, id) {
  if (!id) return [];
  return (view.clusters || []).filter((c) => (c.nodes || []).includes(id))
    .sort((a, b) => (b.nodes || []).length - (a.nodes || []).length)
    .map((c) => ({ id: c.id, label: c.cls && !String(c.name).includes(c.cls) ? `${c.name} (${c.cls})` : c.name || c.id }));
}

// A chunk that holds one group only adds a level with nothing in it: its crumb is left out.
function withoutEmptyChunks(view, path) {
  const adds = (p) => {
    const g = view.groupOf ? view.groupOf(p.id) : null;
    return !g || g.kind !== "chunk" || !Array.isArray(g.children) || g.children.length !== 1;
  };
  return path.filter((p, i) => i === path.length - 1 || adds(p));
}

export function fitToScreen() {
  const view = state.graph;
  if (!view || !view.model) return;
  view.overview();  // the whole graph, even when it is too big to read
}

function render() {
  frame = null;
  const view = state.graph;
  const nav = $("breadcrumbs");
  const shown = !!(view && view.model && state.model);
  let path = shown && view.currentPath ? view.currentPath() : [];
  // a view whose path names only folds: an unfolded pass still has its module boxes
  if (shown && !path.length && !(view.model.graph && view.model.graph.folded)) path = modulesHolding(view, centredNode(view));
  if (shown) path = withoutEmptyChunks(view, path);
  const key = path.map((p) => p.id).join("/");
  nav.hidden = !shown;
  if (key === shownKey && nav.dataset.path !== undefined) return;
  shownKey = key;
  nav.dataset.path = key;
  const ol = $("crumbs");
  ol.replaceChildren();
  const items = [{ id: null, label: "graph" }, ...path];
  items.forEach((p, i) => {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.className = "crumb";
    b.textContent = p.label;
    b.dataset.groupId = p.id || "";
    if (i === items.length - 1) b.setAttribute("aria-current", "location");
    b.setAttribute("aria-label", p.id ? `Show group ${p.label}` : "Show the whole graph");
    b.addEventListener("click", () => (p.id ? focusGroup(path, i - 1) : fitToScreen()));
    li.appendChild(b);
    ol.appendChild(li);
  });
}

function schedule() {
  if (!frame) frame = requestAnimationFrame(render);
}

export function bindBreadcrumbs() {
  $("fit-screen").addEventListener("click", fitToScreen);
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.key !== NAVIGATION.fitWholeKey) return;
    const t = e.target, tag = (t.tagName || "").toLowerCase();
    if ((t.closest && t.closest(".cm-editor")) || tag === "input" || tag === "select" || tag === "textarea") return;
    fitToScreen();
  });
  for (const name of ["fg:step", "fg:graph-changed", "fg:graph-drawn", "fg:camera"]) document.addEventListener(name, schedule);
  // a run that built no graph: no crumbs of the last one
  new MutationObserver(schedule).observe($("empty"), { attributes: true, attributeFilter: ["hidden"] });
}

bindBreadcrumbs();
