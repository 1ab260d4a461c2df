// Breadcrumbs: the groups holding the current step's node, outermost first ("model › model.3 (Linear)",
// "t = 0 … 199 › #17"), each a button that shows its group; and "Fit to screen" (the whole graph).
import { NAVIGATION } from "./config.js";
import { drawnElement, elementBox, stepNode, withoutEmptyChunks } from "./graphapi.js";
import { $ } from "./dom.js";
import { state } from "./store.js";

let frame = null;
let shownKey = "";
let shownHeight = 0;

// Show a group: the view's own reveal for a collapsed one, else frame its drawn box (camera.frameGroup:
// readable, a box too big to read whole from its start).
async function focusGroup(path, i) {
  const view = state.graph;
  const gid = path[i].id;
  const elm = drawnElement(view, gid);
  const collapsed = elm && (elm.classList.contains("fg-group-node") || elm.matches("[data-node-id]"));
  // the groups holding it, with the chunk levels the trail leaves out
  const holding = view.model.folded && view.model.groupPath ? view.model.groupPath(gid).slice(0, -1) : path.slice(0, i).map((p) => p.id);
  if (!elm || collapsed) return view.reveal(gid, holding);
  const box = elementBox(view, elm);
  if (box) view.frameGroup(box);
}

// The node the crumbs describe: the step's node while it is drawn in view, else the drawn record nearest
// the centre of the view (a search or a pan took the view elsewhere: the crumbs follow what is centred).
function centredNode(view) {
  const id = stepNode();
  if (!id || !view.viewBox || !view.nodeEls) return id;  // before the first step: the root only
  const vb = view.viewBox();
  const drawn = (i) => i && view.nodeEls.has(i) && !(view.hidden && view.hidden.has(i));
  // a step inside a collapsed group is where that group's card is
  const card = !drawn(id) && view.fold ? [...(view.fold.path || [])].reverse().find(drawn) : null;
  const mark = drawn(id) ? id : card;
  const at = mark ? view.nodeEls.get(mark).n : null;
  if (at && at.x >= vb.x && at.x <= vb.x + vb.w && at.y >= vb.y && at.y <= vb.y + vb.h) return id;
  const cx = vb.x + vb.w / 2, cy = vb.y + vb.h / 2;
  let best = id, bestD = Infinity;
  for (const [i, rec] of view.nodeEls) {
    const n = rec.n;
    if ((view.hidden && view.hidden.has(i)) || !Number.isFinite(n.x)) continue;
    // distance to the record's box, not its centre: a big card under the centre is what is centred
    const dx = Math.max(0, Math.abs(n.x - cx) - (n.w || 0) / 2), dy = Math.max(0, Math.abs(n.y - cy) - (n.h || 0) / 2);
    const d = dx * dx + dy * dy;
    if (d < bestD) [best, bestD] = [i, d];
  }
  return best;
}

// A folded pass: the groups holding the centred record (a collapsed group's card names its own group last).
function foldPath(view) {
  const id = centredNode(view), model = view.model;
  if (!id || id === stepNode()) return view.currentPath();
  const rec = view.nodeEls.get(id);
  const gid = rec && rec.kind === "group" ? rec.n.group || id : model.nodeGroup && model.nodeGroup.get(id);
  return (gid ? model.groupPath(gid) : []).map((g) => ({ id: g, label: (view.groupOf(g) || {}).label || g }));
}

// The module boxes holding a node, outermost first.
function modulesHolding(view, id) {
  if (!id) return [];
  return (view.clusters || []).filter((c) => (c.nodes || []).includes(id))
    .sort((a, b) => (b.nodes || []).length - (a.nodes || []).length)
    .map((c) => ({ id: c.id, label: c.cls && !String(c.name).includes(c.cls) ? `${c.name} (${c.cls})` : c.name || c.id }));
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
  const folded = shown && !!(view.model.graph && view.model.graph.folded);
  let path = shown && view.currentPath ? (folded ? foldPath(view) : view.currentPath()) : [];
  // a view whose path names only folds: an unfolded pass still has its module boxes
  if (shown && !path.length && !folded) path = modulesHolding(view, centredNode(view));
  if (shown && view.model.tree) {
    const keep = new Set(withoutEmptyChunks(view.model.tree, path.map((p) => p.id)));
    path = path.filter((p) => keep.has(p.id));
  }
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
  // a trail of another height moves the band the overview was framed in: frame it again
  const height = nav.offsetHeight;
  if (shown && view.wholeView && height !== shownHeight) view.overview(false);
  shownHeight = height;
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
