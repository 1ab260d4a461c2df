// The look: theme, projector mode, the legend, and the room the overlays (caption, legend) take from the graph.
import { DURATIONS, PAGE, ROLE_COLORS, ROLE_NAMES, cssVars } from "./config.js";
import { scaleLegend } from "./heatmap.js";
import { $ } from "./dom.js";
import { nodeName } from "./naming.js";
import { refreshInspector } from "./selection.js";
import { set, state } from "./store.js";

let codeBeforeProjector;  // whether the code pane was shown when projector mode folded it away

// Projector mode gives the graph the room: the code pane collapses (the caption keeps the current
// line, the Code button brings it back); leaving projector mode restores what was there.
export function projectorRoom() {
  const layout = $("layout");
  if (state.projector) {
    codeBeforeProjector = !layout.classList.contains("no-editor");
    layout.classList.add("no-editor");
  } else if (codeBeforeProjector !== undefined) {
    layout.classList.toggle("no-editor", !codeBeforeProjector);
  }
  const shown = !layout.classList.contains("no-editor");
  $("toggle-editor").setAttribute("aria-pressed", String(shown));
  $("toggle-editor").setAttribute("aria-label", shown ? "Hide program editor" : "Show program editor");
}

export function applyLook() {
  const vars = cssVars(state.theme, state.projector);
  for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(k, v);
  document.documentElement.dataset.theme = state.theme;
  document.body.classList.toggle("projector", state.projector);
  $("projector").setAttribute("aria-pressed", String(state.projector));
  $("theme").setAttribute("aria-pressed", String(state.theme === "dark"));
  if (state.graph) state.graph.setTheme(state.theme, state.projector);
  if (state.editor) state.editor.setTheme(state.theme);
  if (state.lossChart) state.lossChart.setTheme(state.theme);
  renderLegend();
  if (state.model) refreshInspector();
}

export function renderLegend() {
  const lg = $("legend");
  if (!lg) return;
  lg.replaceChildren();
  const chip = (html) => {
    const s = document.createElement("span");
    s.className = "chip";
    s.innerHTML = html;
    lg.appendChild(s);
  };
  // the roles this graph has (output and loss share a colour: one chip)
  const g = state.model ? state.model.graph : null;
  const roles = new Set(g ? g.nodes.filter((n) => n.kind === "tensor").map((n) => n.role) : ["input", "parameter", "intermediate", "loss"]);
  for (const r of ["input", "parameter", "constant", "intermediate", "output", "loss"]) {
    if (!roles.has(r) || (r === "output" && roles.has("loss"))) continue;
    const name = r === "loss" && roles.has("output") ? "output / loss" : ROLE_NAMES[r];
    chip(`<span class="sw" style="background:${ROLE_COLORS[r]}"></span>${name}`);
  }
  chip(`<span class="sw pending"></span>not computed yet`);
  // the ∂L row: what L is, the tensor backward() was called on (issue 23 §2)
  const seed = state.model ? state.model.frames.find((f) => f.kind === "backward_begin") : null;
  if (seed) {
    const s = document.createElement("span");
    s.className = "chip legend-l";
    s.textContent = `∂L = gradient of L = ${nodeName(state.model.nodes.get(seed.root))}, the tensor backward() was called on`;
    lg.appendChild(s);
  }
  chip(`<span class="line" style="background:var(--forward)"></span>forward`);
  chip(`<span class="line" style="background:var(--backward)"></span>backward`);
  const cuts = g ? g.edges.some((e) => e.cut) : true;
  if (cuts) chip(`<span class="line cut"></span>no_grad / detach`);
  chip(`<span class="sw freed"></span>op freed by backward`);
  const maxAbs = state.model ? state.graph.maxAbs : 1;
  lg.appendChild(scaleLegend(maxAbs || 1, state.theme));
}

// Zoom-to-fit keeps the graph clear of the step caption (top left), the zoom tools, search and
// crumbs (top right) and the legend: the graph is framed below the lower of the two top overlays.
export function graphInsets() {
  const cap = $("caption"), lg = $("legend");
  const cs = getComputedStyle(cap);
  const line = parseFloat(cs.lineHeight) || parseFloat(cs.fontSize) * PAGE.captionLineHeight || PAGE.captionLinePx;
  const captionBottom = cap.offsetTop + PAGE.captionLines * line + (parseFloat(cs.paddingTop) || 0) + (parseFloat(cs.paddingBottom) || 0);
  // the top-right tools (zoom buttons, search, crumbs) and the minimap are per-side overlays: the graph may
  // rise to the caption left of the tools and reach the legend left of the map
  const wrap = $("graph").getBoundingClientRect();
  let tools = null;
  for (const el of document.querySelectorAll(".graph-tools, .nav-search, .breadcrumbs:not([hidden])")) {
    const r = el.getBoundingClientRect();
    if (!r.height) continue;
    tools = tools || { left: Infinity, bottom: 0 };
    tools.left = Math.min(tools.left, r.left - wrap.left - PAGE.captionGap);
    tools.bottom = Math.max(tools.bottom, r.bottom - wrap.top + PAGE.captionGap);
  }
  const mm = $("minimap");
  const mr = mm && !mm.hidden ? mm.getBoundingClientRect() : null;
  const map = mr && mr.height ? { left: mr.left - wrap.left - PAGE.captionGap, top: mr.top - wrap.top - PAGE.captionGap } : null;
  const top = captionBottom + PAGE.captionGap;
  const bottom = lg.hidden ? 0 : lg.offsetHeight + PAGE.legendGap;
  return { top, bottom, tools, map };
}

// The legend: shown by default when the graph has room; the user's choice sticks (localStorage).
function legendPref() {
  try {
    return localStorage.getItem("fg-legend");
  } catch (_) {
    return null;
  }
}

function applyLegend() {
  const pref = legendPref();
  // by default only where it leaves the graph room: a wide pane, and not a short one (projector
  // mode over a loss chart on a 720-pixel screen)
  const show = pref === "1" || (pref == null && $("graph").clientWidth >= PAGE.legendMinW && $("graph").clientHeight >= PAGE.legendMinH);
  const changed = $("legend").hidden === show;
  $("legend").hidden = !show;
  if (changed && state.graph.model && !state.graph.userZoomed) state.graph.fit(false);
  $("legend-toggle").setAttribute("aria-pressed", String(show));
}

export function bindLook() {
  $("legend-toggle").addEventListener("click", () => {
    const show = $("legend").hidden;
    try {
      localStorage.setItem("fg-legend", show ? "1" : "0");
    } catch (_) { /* private mode */ }
    applyLegend();
  });
  new ResizeObserver(applyLegend).observe($("graph"));
  applyLegend();
  $("projector").addEventListener("click", () => {
    set({ projector: !state.projector });
    projectorRoom();
    applyLook();
    setTimeout(() => state.graph.fit(), DURATIONS.refit);
  });
  $("theme").addEventListener("click", () => {
    set({ theme: state.theme === "dark" ? "light" : "dark", themeFromUrl: true });
    applyLook();
  });
}
