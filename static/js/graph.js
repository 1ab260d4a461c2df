// The graph view: SVG drawn once per pass from the server's Graphviz layout, then only text,
// colours and classes change per step. Pan/zoom with d3-zoom; pulses animated by the player.
import { select, zoom, zoomIdentity } from "../vendor/d3.js";
import { FOLD, GRAPH, LAYOUT, SIZES, foldCss, graphCss } from "./config.js";
import { camera } from "./camera.js";
import { culling } from "./cull.js";
import { folds } from "./folds.js";
import { drawing } from "./graphdraw.js";
import { SVGNS, el, truncate } from "./svg.js";
import { describe, isSummary, shapeText } from "./values.js";
import { nodeName } from "./replay.js";
import { opNodeText } from "./oplabels.js";

// Big graphs come with `groups` (repeated loop bodies laid out once): drawn like module clusters,
// collapsible, labelled with how many blocks share their structure.
function groupsAsClusters(groups) {
  if (!Array.isArray(groups) || !groups.length) return [];
  const count = {};
  for (const gr of groups) if (gr.signature != null) count[gr.signature] = (count[gr.signature] || 0) + 1;
  return groups.map((gr, i) => {
    const b = gr.box || gr;
    const [x, y, w, h] = Array.isArray(b) ? b : [b.x, b.y, b.w, b.h];
    const reps = gr.signature != null ? count[gr.signature] : 1;
    return { id: gr.id || `g${i}`, name: `block ${i + 1}`, cls: reps > 1 ? `same as ${reps - 1} other${reps > 2 ? "s" : ""}` : "", x, y, w, h, nodes: gr.nodes || [] };
  }).filter((c) => [c.x, c.y, c.w, c.h].every(Number.isFinite));
}

export class GraphView {
  constructor(container, { onSelect } = {}) {
    this.container = container;
    this.onSelect = onSelect || (() => {});
    this.theme = "light";
    this.projector = false;
    this.collapsed = new Set();
    this.svg = el("svg", { class: "fg-graph", role: "group", "aria-label": "Computation graph", xmlns: SVGNS });
    container.appendChild(this.svg);
    this.style = el("style", {}, this.svg);
    this.defs = el("defs", {}, this.svg);
    this.viewport = el("g", { class: "fg-viewport" }, this.svg);
    // pulses move every frame: they live in their own composited SVG so the big graph is not repainted
    this.overlay = el("svg", { class: "fg-overlay", "aria-hidden": "true", xmlns: SVGNS });
    container.appendChild(this.overlay);
    this.overlayStyle = el("style", {}, this.overlay);
    this.overlayVp = el("g", { class: "fg-viewport" }, this.overlay);
    // pixel sizes, not 100%: a percentage makes every layout change elsewhere on the page
    // re-lay out thousands of SVG texts (measured: 80 ms per timeline tick at 500 nodes)
    this.sizeToContainer();
    new ResizeObserver(() => {
      this.sizeToContainer();
      if (this.model && !this.userZoomed) {
        this.forceWhole = this.wholeView;  // an overview stays whole
        this.fit(false);
      } else this.checkInView();
    }).observe(container);
    this.zoomer = zoom()
      .scaleExtent([GRAPH.minZoom, GRAPH.maxZoom])
      .on("zoom", (ev) => {
        this.viewport.setAttribute("transform", ev.transform.toString());
        this.overlayVp.setAttribute("transform", ev.transform.toString());
        const zoomed = !this.transform || this.transform.k !== ev.transform.k;
        this.transform = ev.transform;
        if (ev.sourceEvent) this.userZoomed = true;
        this.checkInView();
        if (zoomed) this.showNumbers();
        this.cullSoon();
        this.cameraMoved();
      });
    select(this.svg).call(this.zoomer).on("dblclick.zoom", null);
    this.transform = zoomIdentity;
    this.nodeEls = new Map();
    this.edgeEls = new Map();
    this.sig = new Map();
    this.applyStyle();
    this.buildDefs();
  }

  // fg:camera for the navigation controls, once per animation frame at most
  cameraMoved() {
    if (this.model && this.model.folded) {
      // a big folded graph paints faster while it moves (software rasteriser): crisp again once it rests
      this.svg.classList.add("fg-moving");
      clearTimeout(this.movingTimer);
      this.movingTimer = setTimeout(() => this.svg.classList.remove("fg-moving"), FOLD.restMs);
    }
    if (this.cameraFrame) return;
    this.cameraFrame = requestAnimationFrame(() => {
      this.cameraFrame = null;
      document.dispatchEvent(new CustomEvent("fg:camera", { detail: { transform: this.transform } }));
    });
  }

  // Level of detail: the numbers on the cells show while they read (GRAPH.cell.numberMinPx) at this zoom.
  showNumbers() {
    if (this.lodFrame) return;
    this.lodFrame = requestAnimationFrame(() => {
      this.lodFrame = null;
      const k = this.transform.k, min = this.projector ? GRAPH.projectorMinTextPx : GRAPH.cell.numberMinPx;
      for (const t of this.viewport.querySelectorAll(".fg-num")) {
        const show = parseFloat(t.dataset.fs) * k >= min;
        if (show === t.hasAttribute("display")) show ? t.removeAttribute("display") : t.setAttribute("display", "none");
      }
    });
  }

  sizeToContainer() {
    const w = Math.max(1, Math.floor(this.container.clientWidth));
    const h = Math.max(1, Math.floor(this.container.clientHeight));
    for (const s of [this.svg, this.overlay]) {
      if (!s) continue;
      s.setAttribute("width", w);
      s.setAttribute("height", h);
    }
  }

  setTheme(theme, projector) {
    this._textSize = null;  // projector mode hides some text: measured again
    this.theme = theme;
    this.projector = projector;
    this.applyStyle();
    if (this.model) {
      this.sig.clear();
      if (this.lastState) this.update(this.lastState, this.selected);
    }
  }

  applyStyle() {
    this.style.textContent = graphCss(this.theme, this.projector) + foldCss(this.theme);
    if (this.overlayStyle) this.overlayStyle.textContent = graphCss(this.theme, this.projector);
  }

  buildDefs() {
    const hp = GRAPH.hatch;
    const hatch = el("pattern", { id: "fg-hatch", width: hp, height: hp, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, this.defs);
    el("rect", { width: hp, height: hp, class: "fg-hatch-bg" }, hatch);
    el("line", { x1: 0, y1: 0, x2: 0, y2: hp, class: "fg-hatch-line" }, hatch);
    for (const kind of ["", "-forward", "-backward", "-cut"]) {
      const m = el("marker", {
        id: "fg-arrow" + kind, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: GRAPH.arrow, markerHeight: GRAPH.arrow,
        orient: "auto-start-reverse", markerUnits: "userSpaceOnUse",
      }, this.defs);
      el("path", { d: "M0,0L10,5L0,10z", class: "fg-arrow" + kind }, m);
    }
  }

  // ---- build once per pass ---------------------------------------------------------------
  render(model) {
    this.model = model;
    this.viewport.replaceChildren();
    this.nodeEls.clear();
    this.edgeEls.clear();
    this.sig.clear();
    this.selected = null;
    this.maxAbs = model.maxAbs();
    // badges and edge labels scale with the nodes the server laid out (its records may be small)
    const hs = model.graph.nodes.filter((n) => n.kind === "tensor").map((n) => n.h).sort((a, b) => a - b);
    const [minScale, maxScale] = GRAPH.labelScale;
    this.labelScale = Math.max(minScale, Math.min(maxScale, (hs.length ? hs[hs.length >> 1] : LAYOUT.recordH) / LAYOUT.recordH));
    const g = model.graph;
    this.layers = {};
    for (const name of ["clusters", "edges", "nodes", "cuts", "collapsed", "labels", "badges"]) {
      this.layers[name] = el("g", { class: "fg-layer-" + name }, this.viewport);
    }
    this.overlayVp.replaceChildren();
    this.layers.pulses = el("g", { class: "fg-layer-pulses" }, this.overlayVp);
    try {
      this.clusters = [...(g.clusters || []), ...groupsAsClusters(g.groups)];
      this.initFolded();
      this.culling = false;
      for (const c of this.clusters) this.renderCluster(c);
      for (const e of g.edges) this.drawEdge(e);
      this.cutLabelled = new Set();
      for (const e of g.edges) if (e.cut) this.renderCut(e);
      for (const n of g.nodes) this.drawRecord(n);
      this.pulseEls = [];
      this.applyCollapsed();
    } catch (err) {
      // a half-drawn graph (or the previous program's) must not pass for this one: clear it and say why
      this.renderFailed(err);
      throw err;
    }
    this.cullSoon();
    document.dispatchEvent(new CustomEvent("fg:graph-drawn", { detail: { pass: model.passIndex, folded: !!model.folded } }));
  }

  renderFailed(err) {
    this.viewport.replaceChildren();
    this.overlayVp.replaceChildren();
    this.nodeEls.clear();
    this.edgeEls.clear();
    const msg = el("text", { x: 24, y: 48, class: "fg-draw-failed", role: "alert" }, this.viewport);
    msg.textContent = `This graph could not be drawn (${String((err && err.message) || err).slice(0, 160)}).`;
    document.dispatchEvent(new CustomEvent("fg:graph-failed", { detail: { pass: this.model ? this.model.passIndex : null, message: String(err) } }));
  }

  // NOTE: an edge with fewer than two points has an empty path, and getPointAtLength throws on it ("path is
  // empty": a long RNN's folded bundles): such an edge is the straight line between its ends' centres.
  pointAt(rec, t) {
    t = Math.max(0, Math.min(1, t));
    if (rec.path.getAttribute("d")) {
      if (rec.len == null) rec.len = rec.path.getTotalLength();
      const p = rec.path.getPointAtLength(t * rec.len);
      return { x: p.x, y: p.y };
    }
    const pts = (rec.e && rec.e.points) || [];
    const centre = (id) => {
      const n = this.model && this.model.nodes.get(id);
      return n && Number.isFinite(n.x) ? [n.x, n.y] : null;
    };
    const a = pts[0] || centre(rec.e && rec.e.source) || [0, 0];
    const b = pts[pts.length - 1] !== a && pts.length > 1 ? pts[pts.length - 1] : centre(rec.e && rec.e.target) || a;
    return { x: a[0] + (b[0] - a[0]) * t, y: a[1] + (b[1] - a[1]) * t };
  }

  // ---- per step ---------------------------------------------------------------------------
  update(state, selected) {
    this.lastState = state;
    this.selected = selected;
    const fx = state.effects || { pulses: [], edgeLabels: [], active: {}, badges: [] };
    for (const [id, rec] of this.nodeEls) if (!rec.culled) this.paintNode(id, rec, state, selected);
    // edges lit by this step
    const lit = new Map();
    for (const p of fx.pulses) lit.set(p.edge, p.dir);
    for (const [id, rec] of this.edgeEls) {
      const dir = lit.get(id) || "";
      if (rec.dir === dir) continue;
      rec.dir = dir;
      rec.g.classList.toggle("lit-forward", dir === "forward");
      rec.g.classList.toggle("lit-backward", dir === "backward");
      rec.path.setAttribute("marker-end", `url(#fg-arrow${dir ? "-" + dir : rec.e.cut ? "-cut" : ""})`);
    }
    // edge labels (contributions) and badges (sums, accumulation, errors)
    this.layers.labels.replaceChildren();
    this.layers.badges.replaceChildren();
    const placed = [];
    for (const b of fx.badges) {
      const rec = this.nodeEls.get(b.node);
      if (!rec) continue;
      const n = rec.n;
      this.labelBox(this.layers.badges, n.x, n.y - n.h / 2 - GRAPH.label.badgeRise * (this.labelScale || 1), b.text, "fg-badge" + (b.kind === "err" ? " err" : b.kind === "fwd" ? " fwd" : ""), placed, -1);
    }
    // a contribution label sits on its edge, nudged up or down off the records it would cover
    // (edges between neighbouring ranks are shorter than a label)
    const L = GRAPH.label;
    const nodeBoxes = fx.edgeLabels.length
      ? [...this.nodeEls.values()].filter((r) => !r.culled && r.kind !== "group" && !(this.hidden && this.hidden.has(r.n.id)))
        .map(({ n, kind }) => (kind === "op" ? { x: n.x, y: n.y, w: n.w + L.nodePad, h: n.h + L.nodePad }
          : { x: n.x, y: n.y + L.captionDrop, w: n.w + L.nodePad, h: n.h + L.captionH })) // a record's caption hangs below it
      : [];
    for (const lab of fx.edgeLabels) {
      const rec = this.edgeEls.get(lab.edge);
      if (!rec) continue;
      const p = this.pointAt(rec, 0.5);
      this.labelBox(this.layers.labels, p.x, p.y, lab.text, "fg-elabel" + (lab.dir === "forward" ? " fwd" : ""), placed, 1, nodeBoxes);
    }
    // pulses: created now, moved by animate()
    this.layers.pulses.replaceChildren();
    const r = SIZES[this.projector ? "projector" : "normal"].pulseRadius * (this.labelScale || 1);
    this.pulseEls = fx.pulses.filter((p) => this.edgeEls.has(p.edge)).map((p) => ({
      ...p,
      rec: this.edgeEls.get(p.edge),
      c: el("circle", { r, class: "fg-pulse-" + p.dir, cx: 0, cy: 0, opacity: 0 }, this.layers.pulses),
    }));
  }

  // one record at the state shown (skipped while culled: painted when it comes back into view)
  paintNode(id, rec, state, selected) {
    if (rec.kind === "group") return;
    const fx = state.effects || { active: {} };
    const s = state.nodes.get(id) || {};
    const active = fx.active[id] || "";
    if (rec.kind === "op") {
      const sig = `${s.value !== undefined}|${s.freed}|${active}|${selected === id}`;
      if (this.sig.get(id) === sig) return;
      this.sig.set(id, sig);
      const c = rec.g.classList;
      c.toggle("freed", !!s.freed);
      c.toggle("pending", s.value === undefined);
      c.toggle("active-forward", active === "forward");
      c.toggle("active-backward", active === "backward");
      c.toggle("selected", selected === id);
      const n = rec.n;
      rec.g.setAttribute("aria-label", `${opNodeText(n, this.model.opParams(n.op))} operation (${n.op || ""}), ${n.grad_fn ? "grad_fn " + n.grad_fn : "no grad_fn"}` +
        (s.value === undefined ? ", not run yet" : s.freed ? ", graph freed" : ", ran"));
      return;
    }
    const n = rec.n;
    const retained = state.retained && state.retained.has(id);
    const gradSlot = n.is_leaf || retained;
    const gradV = !n.requires_grad ? undefined : gradSlot ? s.grad : s.flow;
    const sig = `${s.value === undefined ? "u" : JSON.stringify(s.value)}|${gradV === undefined ? "u" : JSON.stringify(gradV)}|${active}|${selected === id}|${s.error}|${retained}|${state.backward}`;
    if (this.sig.get(id) === sig) return;
    this.sig.set(id, sig);
    const c = rec.g.classList;
    c.toggle("pending", s.value === undefined);
    c.toggle("active-forward", active === "forward");
    c.toggle("active-backward", active === "backward");
    c.toggle("selected", selected === id);
    c.toggle("error", !!s.error);
    this.drawCell(rec.rows.value, s.value, s.value === undefined ? "pending" : "value");
    let gstate;
    if (!n.requires_grad) gstate = "nograd";
    else if (gradV === undefined) gstate = gradSlot && s.grad === null ? "none" : "pending";
    else if (gradV === null) gstate = "none";
    else gstate = "value";
    this.drawCell(rec.rows.grad, gradV, gstate);
    rec.rows.grad.label.textContent = gradSlot || !n.requires_grad ? "grad" : "∂L";
    const valueText = describe(s.value, 12);
    const gradText = !n.requires_grad ? "no gradient (requires_grad=False)"
      : gstate === "pending" ? "gradient not computed yet" : gstate === "none" ? "grad None" : (gradSlot ? "grad " : "dL/d" + nodeName(n) + " ") + describe(gradV, 12);
    const label = `${nodeName(n)} ${shapeText(n.shape)}: value ${valueText}; ${gradText}; ${n.is_leaf ? "leaf" : "grad_fn " + (n.grad_fn || "None")}; role ${n.role}`;
    rec.g.setAttribute("aria-label", label);
    rec.title.textContent = label;
  }

  // a rounded label; moved (dir: down 1 / up -1) until it overlaps no label already placed and, when
  // `avoid` boxes are given, tried a few steps above and below first to keep off them too
  labelBox(layer, x, y, text, cls, placed = null, dir = 1, avoid = null) {
    const L = GRAPH.label;
    text = truncate(text, L.maxChars);
    const k = this.labelScale || 1;
    const w = (text.length * GRAPH.fonts.edgeLabel * LAYOUT.glyphW + L.padX) * k;
    const hh = L.h * k;
    if (placed) {
      const clash = (list, yy) => list.some((b) => Math.abs(b.x - x) < (b.w + w) / 2 && Math.abs(b.y - yy) < ((b.h ?? hh) + hh) / 2);
      let free = null;
      if (avoid && avoid.length) {
        for (let j = 0; j <= 2 * L.avoidSteps; j++) {
          const i = j % 2 ? -(j + 1) / 2 : j / 2; // 0, -1, 1, -2, 2, …
          const yy = y + i * (hh + 1);
          if (!clash(placed, yy) && !clash(avoid, yy)) {
            free = yy;
            break;
          }
        }
      }
      if (free == null) for (let i = 0; i < L.tries && clash(placed, y); i++) y += (hh + 1) * dir;
      else y = free;
      placed.push({ x, y, w, h: hh });
    }
    const g = el("g", { class: cls, transform: `translate(${x},${y}) scale(${k.toFixed(3)})` }, layer);
    el("rect", { x: -w / k / 2, y: -L.h / 2, width: w / k, height: L.h, rx: L.radius }, g);
    const t = el("text", { "text-anchor": "middle", "dominant-baseline": "central" }, g);
    t.textContent = text;
    return g;
  }

  // progress in [0, 1] through the current step
  animate(progress) {
    for (const p of this.pulseEls || []) {
      const local = (progress - p.t0) / (p.t1 - p.t0);
      if (local < 0 || local > 1) {
        if (p.shown !== false) p.c.setAttribute("opacity", 0);
        p.shown = false;
        continue;
      }
      const t = p.dir === "backward" ? 1 - local : local;
      const pt = this.pointAt(p.rec, t);
      p.c.setAttribute("transform", `translate(${pt.x.toFixed(1)},${pt.y.toFixed(1)})`);
      if (!p.shown) {
        p.c.setAttribute("opacity", 1);
        p.shown = true;
      }
    }
  }

  focusNode(id) {
    const rec = this.nodeEls.get(id);
    if (rec) rec.g.focus();
  }
}

Object.assign(GraphView.prototype, drawing, camera, folds, culling);

export { isSummary };
