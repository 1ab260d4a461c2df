// Breadcrumbs: the groups holding the current step's node, outermost first ("model › model.3 (Linear)",
// "t = 0 … 199 › #17"), each a button that shows its group; and "Fit to screen" (the whole graph).
import { NAVIGATION } from "./config.js";
import { drawnElement, elementBox, modulePath } from "./graphapi.js";
import { $ } from "./dom.js";
import { state } from "./store.js";

let frame = null;
let shownKey = "";

// Show a group: the view's own reveal for a collapsed one, else frame its drawn box.
async function focusGroup(path, i) {
  const view = state.graph;
  const gid = path[i].id;
  const elm = drawnElement(view, gid);
  const collapsed = elm && (elm.classList.contains("fg-group-node") || elm.matches("[data-node-id]"));
  if (!elm || collapsed) return view.reveal(gid, path.slice(0, i).map((p) => p.id));
  const box = elementBox(view, elm);
  if (box) view.frameBox(box);
}

export function fitToScreen() {
  const view = state.graph;
  if (!view || !view.model) return;
  view.forceWhole = true;  // the whole graph, even when it is too big to read (F keeps a readable start)
  view.fit();
}

function render() {
  frame = null;
  const view = state.graph;
  const nav = $("breadcrumbs");
  const shown = !!(view && view.model && state.model);
  let path = shown && view.currentPath ? view.currentPath() : [];
  // a view whose path names only folds: an unfolded pass still has its module boxes
  if (shown && !path.length && !(view.model.graph && view.model.graph.folded)) path = modulePath(view);
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
  for (const name of ["fg:step", "fg:graph-changed", "fg:graph-drawn"]) document.addEventListener(name, schedule);
  // a run that built no graph: no crumbs of the last one
  new MutationObserver(schedule).observe($("empty"), { attributes: true, attributeFilter: ["hidden"] });
}

bindBreadcrumbs();
