// The graph view: SVG drawn once per pass from the server's Graphviz layout, then only text,
// colours and classes change per step. Pan/zoom with d3-zoom; pulses animated by the player.
import { select, zoom, zoomIdentity } from "../vendor/d3.js";
import { DURATIONS, GRAPH, LAYOUT, SIZES, divergingColor, graphCss, inkOn } from "./config.js";
import { cellText, describe, flat, fmt, isSummary, shapeText } from "./values.js";
import { nodeName } from "./replay.js";
import { opNodeText } from "./oplabels.js";

const SVGNS = "http://www.w3.org/2000/svg";

function el(tag, attrs = {}, parent = null) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v != null) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function pathD(points) {
  if (!points || points.length < 2) return "";
  const p = points.map(([x, y]) => `${+x.toFixed(2)},${+y.toFixed(2)}`);
  if (points.length >= 4 && (points.length - 1) % 3 === 0) {
    let d = `M${p[0]}`;
    for (let i = 1; i < p.length; i += 3) d += `C${p[i]} ${p[i + 1]} ${p[i + 2]}`;
    return d;
  }
  return "M" + p.join("L");
}

// Dotted names lose their leading parts first: "model.layer1.weight" -> "layer1.weight" -> "weight".
function shortName(text, maxChars) {
  text = String(text);
  let parts = text.split(".");
  while (text.length > maxChars && parts.length > 1) {
    parts = parts.slice(1);
    text = parts.join(".");
  }
  return truncate(text, maxChars);
}

function truncate(text, maxChars) {
  text = String(text);
  if (text.length <= maxChars) return text;
  return maxChars <= 1 ? "…" : text.slice(0, maxChars - 1) + "…";
}

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
      if (this.model && !this.userZoomed) this.fit(false);
      else this.checkInView();
    }).observe(container);
    this.zoomer = zoom()
      .scaleExtent([GRAPH.minZoom, GRAPH.maxZoom])
      .on("zoom", (ev) => {
        this.viewport.setAttribute("transform", ev.transform.toString());
        this.overlayVp.setAttribute("transform", ev.transform.toString());
        this.transform = ev.transform;
        if (ev.sourceEvent) this.userZoomed = true;
        this.checkInView();
      });
    select(this.svg).call(this.zoomer).on("dblclick.zoom", null);
    this.transform = zoomIdentity;
    this.nodeEls = new Map();
    this.edgeEls = new Map();
    this.sig = new Map();
    this.applyStyle();
    this.buildDefs();
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
    this.theme = theme;
    this.projector = projector;
    this.applyStyle();
    if (this.model) {
      this.sig.clear();
      if (this.lastState) this.update(this.lastState, this.selected);
    }
  }

  applyStyle() {
    this.style.textContent = graphCss(this.theme, this.projector);
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
    this.clusters = [...(g.clusters || []), ...groupsAsClusters(g.groups)];
    for (const c of this.clusters) this.renderCluster(c);
    for (const e of g.edges) this.renderEdge(e);
    this.cutLabelled = new Set();
    for (const e of g.edges) if (e.cut) this.renderCut(e);
    for (const n of g.nodes) (n.kind === "op" ? this.renderOp(n) : this.renderTensor(n));
    this.pulseEls = [];
    this.applyCollapsed();
  }

  renderCluster(c) {
    const grp = el("g", { class: "fg-cluster", "data-cluster-id": c.id }, this.layers.clusters);
    const x0 = c.x - c.w / 2, y0 = c.y - c.h / 2;
    const C = GRAPH.cluster, T = C.toggle;
    el("rect", { class: "fg-cbox", x: x0, y: y0, width: c.w, height: c.h, rx: C.radius }, grp);
    const t = el("text", { x: x0 + C.titleX, y: y0 + C.titleY }, grp);
    const title = `${c.name || c.id}${c.cls ? " · " + c.cls : ""}`;
    // within the box (the server keeps a band above the members free for it)
    t.textContent = truncate(title, Math.max(3, Math.floor((c.w - C.titleRoom) / (GRAPH.fonts.cluster * LAYOUT.glyphW))));
    el("title", {}, t).textContent = title;
    const tog = el("g", { class: "fg-ctoggle", role: "button", tabindex: 0, "aria-label": `Collapse ${c.name || c.id}` }, grp);
    el("rect", { x: x0 + T.x, y: y0 + T.y, width: T.w, height: T.h, rx: T.radius, fill: "transparent", stroke: "currentColor" }, tog);
    const sym = el("text", { x: x0 + T.symX, y: y0 + T.symY, "text-anchor": "middle" }, tog);
    sym.textContent = "−";
    const toggle = (ev) => {
      ev.stopPropagation();
      if (this.collapsed.has(c.id)) this.collapsed.delete(c.id);
      else this.collapsed.add(c.id);
      this.applyCollapsed();
    };
    tog.addEventListener("click", toggle);
    tog.addEventListener("keydown", (ev) => (ev.key === "Enter" || ev.key === " ") && toggle(ev));
    c._el = grp;
    c._sym = sym;
    c._tog = tog;
  }

  applyCollapsed() {
    const g = this.model.graph;
    const hidden = new Set();
    this.layers.collapsed.replaceChildren();
    const C = GRAPH.cluster;
    for (const c of this.clusters || []) {
      const on = this.collapsed.has(c.id);
      c._el.classList.toggle("collapsed", on);
      c._sym.textContent = on ? "+" : "−";
      c._tog.setAttribute("aria-label", `${on ? "Expand" : "Collapse"} ${c.name || c.id}`);
      if (!on) continue;
      for (const id of c.nodes || []) hidden.add(id);
      // one node standing for the whole module, drawn above its members
      const box = el("g", { class: "fg-cluster collapsed", "data-node-id": c.id, role: "button", tabindex: 0,
        "aria-label": `${c.name} (${c.cls}), collapsed: ${(c.nodes || []).length} nodes. Press Enter to expand` }, this.layers.collapsed);
      el("rect", { class: "fg-cbox", x: c.x - c.w / 2, y: c.y - c.h / 2, width: c.w, height: c.h, rx: C.radius }, box);
      const [minFs, maxFs] = C.collapsedFont;
      const fs = Math.max(minFs, Math.min(maxFs, c.h / C.collapsedFontPerH, c.w / ((c.name || "").length + C.collapsedPadChars)));
      const t = el("text", { x: c.x, y: c.y, "text-anchor": "middle", "dominant-baseline": "middle", "font-size": fs }, box);
      t.textContent = `+ ${c.name || c.id}`;
      const t2 = el("text", { x: c.x, y: c.y + fs * C.collapsedLine, "text-anchor": "middle", "dominant-baseline": "middle",
        "font-size": fs * C.collapsedSubFont }, box);
      t2.textContent = `${c.cls || ""} · ${(c.nodes || []).length} nodes`;
      const expand = (ev) => {
        ev.stopPropagation();
        this.collapsed.delete(c.id);
        this.applyCollapsed();
      };
      box.addEventListener("click", expand);
      box.addEventListener("keydown", (ev) => (ev.key === "Enter" || ev.key === " ") && expand(ev));
    }
    for (const [id, e] of this.nodeEls) e.g.style.display = hidden.has(id) ? "none" : "";
    for (const e of g.edges) {
      const ee = this.edgeEls.get(e.id);
      if (ee) ee.g.style.display = hidden.has(e.source) && hidden.has(e.target) ? "none" : "";
    }
    this.hidden = hidden;
  }

  renderEdge(e) {
    const grp = el("g", { class: "fg-edge" + (e.cut ? " cut" : ""), "data-edge-id": e.id }, this.layers.edges);
    const path = el("path", { d: pathD(e.points), "marker-end": `url(#fg-arrow${e.cut ? "-cut" : ""})` }, grp);
    const rec = { g: grp, path, e, len: null };
    this.edgeEls.set(e.id, rec);
  }

  // A cut edge: a break (two bars across the line) and what cut it, drawn above the nodes.
  renderCut(e) {
    const rec = this.edgeEls.get(e.id);
    const K = GRAPH.cut, [from, mid, to] = K.at;
    const a = this.pointAt(rec, from), b = this.pointAt(rec, to), m = this.pointAt(rec, mid);
    const ang = (Math.atan2(b.y - a.y, b.x - a.x) * 180) / Math.PI;
    const g = el("g", { class: "fg-cut", transform: `translate(${m.x},${m.y}) rotate(${ang})` }, this.layers.cuts);
    const gx = K.gap.w / 2, gy = K.gap.h / 2;
    el("rect", { x: -gx, y: -gy, width: K.gap.w, height: K.gap.h, class: "fg-cut-gap" }, g);
    el("line", { x1: -gx, y1: -gy, x2: -gx, y2: gy, class: "fg-cut-bar" }, g);
    el("line", { x1: gx, y1: -gy, x2: gx, y2: gy, class: "fg-cut-bar" }, g);
    el("title", {}, g).textContent = e.cut === "no_grad"
      ? "Computed under torch.no_grad(): no gradient flows back along this edge"
      : ".detach(): the result shares the value but gradients stop here";
    // no_grad is a property of the op (it ran with grad off): one word above the op, not one per input
    // edge (two short input edges put two words on top of each other and of the input records)
    const op = e.cut === "no_grad" ? this.model.nodes.get(e.target) : null;
    if (op && this.cutLabelled.has(op.id)) return;
    let at = { x: m.x, y: m.y - K.labelRise };
    const src = this.model.nodes.get(e.source), dst = this.model.nodes.get(e.target);
    if (!op && src && dst && (rec.len || 0) < K.shortEdge) {
      // a short edge: the word would sit on the records at both ends; put it above them
      at = { x: m.x, y: Math.min(src.y - src.h / 2, dst.y - dst.h / 2) - K.labelGap };
    }
    if (op && op.kind === "op") {
      this.cutLabelled.add(op.id);
      at = { x: op.x, y: op.y - op.h / 2 - K.labelGap };
    }
    const t = el("text", { class: "fg-cutmark", x: at.x, y: at.y, "text-anchor": "middle" }, this.layers.cuts);
    t.textContent = e.cut === "no_grad" ? "no_grad" : "detach";
  }

  pointAt(rec, t) {
    if (rec.len == null) rec.len = rec.path.getTotalLength();
    const p = rec.path.getPointAtLength(Math.max(0, Math.min(1, t)) * rec.len);
    return { x: p.x, y: p.y };
  }

  renderOp(n) {
    const grp = el("g", {
      class: "fg-op" + (n.grad_fn ? "" : " nograd"), "data-node-id": n.id, tabindex: 0, role: "button",
      transform: `translate(${n.x},${n.y})`,
    }, this.layers.nodes);
    const rx = n.w / 2, ry = n.h / 2;
    el("ellipse", { class: "fg-opshape", rx, ry }, grp);
    const label = opNodeText(n, this.model.opParams(n.op));
    // the server sized the ellipse for this text (app/layout/sizes.py): ~14 pt, less when squeezed
    const fs = Math.max(GRAPH.fonts.min, Math.min(ry * GRAPH.op.fontFill, (n.w - GRAPH.op.textInset) / (Math.max(1, label.length) * LAYOUT.glyphW)));
    const t = el("text", { class: "fg-optext", "text-anchor": "middle", "dominant-baseline": "central", "font-size": fs.toFixed(1) }, grp);
    t.textContent = label;
    el("title", {}, grp).textContent = `${label}${label !== n.op ? " (" + (n.op || "op") + ")" : ""}${n.grad_fn ? " · grad_fn=" + n.grad_fn : " · no grad_fn (grad disabled)"}`;
    this.bindNode(grp, n);
    this.nodeEls.set(n.id, { g: grp, n, kind: "op" });
  }

  renderTensor(n) {
    const cls = ["fg-node", "role-" + (n.role || "intermediate")];
    if (n.is_leaf) cls.push("leaf");
    if (!n.requires_grad) cls.push("nograd");
    const grp = el("g", { class: cls.join(" "), "data-node-id": n.id, tabindex: 0, role: "button",
      transform: `translate(${n.x - n.w / 2},${n.y - n.h / 2})` }, this.layers.nodes);
    const w = n.w, h = n.h;
    const R = GRAPH.record, glyph = LAYOUT.glyphW;
    const headH = h * LAYOUT.headerFrac;
    const rowH = (h - headH) / 2;
    const fs = Math.max(GRAPH.fonts.min, Math.min(rowH * LAYOUT.textFill, headH * LAYOUT.textFill, w / R.fontPerW));
    const r = R.radius;
    el("rect", { class: "fg-frame", width: w, height: h, rx: r }, grp);
    el("path", { class: "fg-head", d: `M0,${headH}V${r}Q0,0 ${r},0H${w - r}Q${w},0 ${w},${r}V${headH}Z` }, grp);
    const charW = fs * glyph;
    const shape = (n.shape || []).join("×"); // compact: "2×3"; nothing for a scalar
    const shapeChars = Math.min(shape.length, Math.floor((w * R.shapeMaxW) / charW));
    const name = el("text", { class: "fg-head-text", x: R.inset, y: headH / 2, "dominant-baseline": "central", "font-size": fs.toFixed(1) }, grp);
    const full = nodeName(n);
    const maxChars = Math.max(2, Math.floor((w - LAYOUT.recordTextPad) / charW) - shapeChars - 1);
    name.textContent = /^[A-Za-z_][\w.]*$/.test(full) ? shortName(full, maxChars) : truncate(full, maxChars);
    const sh = el("text", { class: "fg-shape-text", x: w - R.inset, y: headH / 2, "text-anchor": "end", "dominant-baseline": "central",
      "font-size": (fs * R.shapeFont).toFixed(1) }, grp);
    sh.textContent = truncate(shape, shapeChars);
    const labelFs = fs * R.rowLabelFont;
    const labelW = Math.min(w * R.rowLabelMaxW, R.rowLabelChars * glyph * labelFs + R.rowLabelPad);
    const rows = {};
    ["value", "grad"].forEach((which, i) => {
      const y = headH + i * rowH;
      const lab = el("text", { class: "fg-rowlabel", x: R.rowLabelX, y: y + rowH / 2, "dominant-baseline": "central", "font-size": labelFs.toFixed(1) }, grp);
      lab.textContent = which === "value" ? "data" : n.is_leaf || !n.requires_grad ? "grad" : "∂L";
      const cellG = el("g", { class: "fg-cellg", transform: `translate(${labelW},${y + R.cellGap / 2})` }, grp);
      rows[which] = { g: cellG, w: w - labelW - R.cellGap, h: rowH - R.cellGap, fs, label: lab };
    });
    let caption = null;
    if (!n.is_leaf && n.grad_fn) caption = w >= R.longCaptionW ? `grad_fn=<${n.grad_fn}>` : n.grad_fn;
    else if (n.is_leaf && n.requires_grad) caption = w >= R.leafCaptionW ? "leaf · requires_grad" : "leaf";
    if (caption) {
      // as wide as the record at most: shrink a long grad_fn name, down to the smallest caption font, then cut it
      const room = w * R.captionOverhang;
      const cfs = Math.max(GRAPH.fonts.captionMin, Math.min(GRAPH.fonts.caption, room / (caption.length * glyph)));
      const cap = el("text", { class: "fg-caption", x: w / 2, y: h + cfs + R.captionGap, "text-anchor": "middle", "font-size": cfs.toFixed(1) }, grp);
      cap.textContent = truncate(caption, Math.floor(room / (cfs * glyph)));
      if (cap.textContent !== caption) el("title", {}, cap).textContent = caption;
    }
    const title = el("title", {}, grp);
    this.bindNode(grp, n);
    this.nodeEls.set(n.id, { g: grp, n, kind: "tensor", rows, title });
  }

  bindNode(grp, n) {
    grp.addEventListener("click", (ev) => {
      ev.stopPropagation();
      this.onSelect(n.id);
    });
    grp.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") {
        ev.preventDefault();
        this.onSelect(n.id);
      }
    });
  }

  drawCell(row, v, state) {
    // state: "value" | "pending" | "none" | "nograd"
    const g = row.g;
    g.replaceChildren();
    const { w, h, fs } = row;
    const R = GRAPH.record, C = GRAPH.cell;
    if (state !== "value") {
      el("rect", { class: "fg-cell" + (state === "pending" ? " pending" : ""), width: w, height: h, rx: R.cellRadius,
        fill: state === "pending" ? null : "transparent" }, g);
      const t = el("text", { class: "fg-celltext " + (state === "pending" ? "pending" : "none"), x: w / 2, y: h / 2,
        "text-anchor": "middle", "dominant-baseline": "central", "font-size": (fs * R.pendingFont).toFixed(1) }, g);
      t.textContent = state === "pending" ? "not yet" : state === "nograd" ? "no grad" : "None";
      return;
    }
    const f = flat(v);
    const theme = this.theme;
    if (f.shape.length === 0 && !f.summary) {
      const x = f.data[0];
      el("rect", { class: "fg-cell", width: w, height: h, rx: R.cellRadius, fill: divergingColor(x, this.maxAbs, theme) }, g);
      const t = el("text", { class: "fg-celltext", x: w / 2, y: h / 2, "text-anchor": "middle", "dominant-baseline": "central",
        "font-size": fs.toFixed(1), fill: inkOn(x, this.maxAbs, theme), style: `fill:${inkOn(x, this.maxAbs, theme)}` }, g);
      t.textContent = truncate(fmt(x), Math.floor(w / (fs * LAYOUT.glyphW)));
      return;
    }
    // mini heatmap: rows × cols from the last two dims
    const data = f.data.slice(0, C.maxElems);
    let cols = f.shape.length ? f.shape[f.shape.length - 1] : data.length;
    if (f.summary || cols > data.length) cols = Math.min(data.length, C.maxCols);
    cols = Math.max(1, Math.min(cols, data.length));
    const rowsN = Math.ceil(data.length / cols);
    const cw = w / cols, ch = h / rowsN;
    data.forEach((x, i) => {
      el("rect", { class: "fg-cell", x: (i % cols) * cw, y: Math.floor(i / cols) * ch, width: Math.max(C.minSize, cw - C.spacing),
        height: Math.max(C.minSize, ch - C.spacing), fill: divergingColor(x, this.maxAbs, theme) }, g);
    });
    if (data.length <= C.numbersUpTo && cw > fs * C.numberMinW) {
      data.forEach((x, i) => {
        const t = el("text", { class: "fg-celltext", x: (i % cols) * cw + cw / 2, y: Math.floor(i / cols) * ch + ch / 2,
          "text-anchor": "middle", "dominant-baseline": "central", "font-size": (Math.min(fs, ch * C.numberFill)).toFixed(1),
          style: `fill:${inkOn(x, this.maxAbs, theme)}` }, g);
        t.textContent = truncate(fmt(x), Math.floor(cw / (fs * C.glyphW)));
      });
    }
  }

  // ---- per step ---------------------------------------------------------------------------
  update(state, selected) {
    this.lastState = state;
    this.selected = selected;
    const fx = state.effects || { pulses: [], edgeLabels: [], active: {}, badges: [] };
    for (const [id, rec] of this.nodeEls) {
      const s = state.nodes.get(id) || {};
      const active = fx.active[id] || "";
      if (rec.kind === "op") {
        const sig = `${s.value !== undefined}|${s.freed}|${active}|${selected === id}`;
        if (this.sig.get(id) === sig) continue;
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
        continue;
      }
      const n = rec.n;
      const retained = state.retained && state.retained.has(id);
      const gradSlot = n.is_leaf || retained;
      const gradV = !n.requires_grad ? undefined : gradSlot ? s.grad : s.flow;
      const sig = `${s.value === undefined ? "u" : JSON.stringify(s.value)}|${gradV === undefined ? "u" : JSON.stringify(gradV)}|${active}|${selected === id}|${s.error}|${retained}|${state.backward}`;
      if (this.sig.get(id) === sig) continue;
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
      ? [...this.nodeEls.values()].filter((r) => !(this.hidden && this.hidden.has(r.n.id)))
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

  // The page's overlays (step caption on top, legend at the bottom) as px to keep the graph out of.
  insets() {
    const got = this.getInsets ? this.getInsets() : null;
    const H = this.svg.clientHeight || 500;
    let top = Math.max(0, (got && got.top) || 0), bottom = Math.max(0, (got && got.bottom) || 0);
    // never give the overlays more than half the view: a short window keeps a usable graph
    const k = Math.min(1, (H * GRAPH.maxInsets) / Math.max(1, top + bottom));
    top *= k;
    bottom *= k;
    return { top, bottom };
  }

  fitScale() {
    const g = this.model.graph;
    const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500, pad = GRAPH.fitPadding;
    const { top, bottom } = this.insets();
    return Math.min((W - 2 * pad) / Math.max(g.width, 1), (H - top - bottom - 2 * pad) / (Math.max(g.height, 1) + GRAPH.bottomRoom));
  }

  // ---- view --------------------------------------------------------------------------------
  fit(animate = true) {
    if (!this.model) return;
    this.userZoomed = false;
    const g = this.model.graph;
    const W = this.svg.clientWidth || 800, H0 = this.svg.clientHeight || 500;
    const pad = GRAPH.fitPadding;
    const { top, bottom } = this.insets();
    const H = H0 - top - bottom;
    const mode = this.projector ? "projector" : "normal";
    const gw = Math.max(g.width, 1), gh = Math.max(g.height, 1) + GRAPH.bottomRoom;
    let k = Math.min((W - 2 * pad) / gw, (H - 2 * pad) / gh, GRAPH.maxFitZoom[mode]);
    let t = zoomIdentity.translate((W - gw * k) / 2, top + (H - gh * k) / 2 + (GRAPH.bottomRoom / 2) * k).scale(k);
    this.lastFitWasReadable = false;
    if (k < GRAPH.minReadableZoom && !this.forceWhole) {
      this.lastFitWasReadable = true;
      // too big to read whole: start readable at the graph's beginning; follow() pans along
      k = GRAPH.readableZoom[mode];
      const first = g.nodes[0];
      const cy = first ? first.y : gh / 2;
      t = zoomIdentity.translate(pad, top + H / 2 - cy * k).scale(k);
    }
    this.forceWhole = false;
    const sel = select(this.svg);
    if (animate) sel.transition().duration(DURATIONS.zoom).call(this.zoomer.transform, t);
    else sel.call(this.zoomer.transform, t);
  }

  // Keep the nodes of the current step in view: pan (same zoom) when they are outside.
  follow(ids, phase = "forward", animate = true) {
    if (!this.model || !ids.length) return;
    const W = this.svg.clientWidth, H = this.svg.clientHeight, t = this.transform;
    const g = this.model.graph;
    const whole = t.applyX(0) >= -2 && t.applyY(0) >= -2 && t.applyX(g.width) <= W + 2 && t.applyY(g.height) <= H + 2;
    if (whole) return;
    if (!this.userZoomed && this.fitScale() >= GRAPH.minReadableZoom) {
      this.fit(false);
      return;
    }
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const id of ids) {
      const rec = this.nodeEls.get(id);
      if (!rec || (this.hidden && this.hidden.has(id))) continue;
      const n = rec.n;
      x0 = Math.min(x0, n.x - n.w / 2);
      x1 = Math.max(x1, n.x + n.w / 2);
      y0 = Math.min(y0, n.y - n.h / 2);
      y1 = Math.max(y1, n.y + n.h / 2);
    }
    if (!isFinite(x0)) return;
    const m = GRAPH.followMargin;
    const inView = t.applyX(x0) >= m && t.applyX(x1) <= W - m && t.applyY(y0) >= m && t.applyY(y1) <= H - m;
    if (inView) return;
    // lead the way: forward goes left to right, backward right to left, so put the step near
    // the side it comes from and the next steps stay in view longer (fewer pans)
    const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
    const lead = GRAPH.followLead;
    const fx = x1 - x0 < W * GRAPH.followNarrow ? (phase === "backward" ? 1 - lead : lead) : 0.5;
    const nt = zoomIdentity.translate(W * fx - cx * t.k, H / 2 - cy * t.k).scale(t.k);
    const user = this.userZoomed;
    // a pan repaints the whole graph every frame: at fast playback jump instead of gliding
    if (animate) select(this.svg).transition().duration(DURATIONS.pan).call(this.zoomer.transform, nt).on("end", () => (this.userZoomed = user));
    else {
      select(this.svg).call(this.zoomer.transform, nt);
      this.userZoomed = user;
    }
  }

  zoomBy(f) {
    select(this.svg).transition().duration(DURATIONS.zoomStep).call(this.zoomer.scaleBy, f);
  }

  checkInView() {
    if (!this.model || !this.onViewChange) return;
    const g = this.model.graph, t = this.transform;
    const W = this.svg.clientWidth, H = this.svg.clientHeight;
    const x0 = t.applyX(0), y0 = t.applyY(0), x1 = t.applyX(g.width), y1 = t.applyY(g.height);
    this.onViewChange(x0 < -2 || y0 < -2 || x1 > W + 2 || y1 > H + 2);
  }

  focusNode(id) {
    const rec = this.nodeEls.get(id);
    if (rec) rec.g.focus();
  }

  // ---- export ------------------------------------------------------------------------------
  exportSvg() {
    const g = this.model ? this.model.graph : { width: 100, height: 100 };
    const clone = this.svg.cloneNode(true);
    const pad = GRAPH.exportPad, W = g.width + 2 * pad, H = g.height + 2 * pad + GRAPH.bottomRoom;
    clone.setAttribute("xmlns", SVGNS);
    clone.setAttribute("viewBox", `${-pad} ${-pad} ${W} ${H}`);
    clone.setAttribute("width", W);
    clone.setAttribute("height", H);
    const vp = clone.querySelector(".fg-viewport");
    vp.removeAttribute("transform");
    const pulses = clone.querySelector(".fg-layer-pulses");
    if (pulses) pulses.replaceChildren();
    const bg = document.createElementNS(SVGNS, "rect");
    bg.setAttribute("x", -pad);
    bg.setAttribute("y", -pad);
    bg.setAttribute("width", W);
    bg.setAttribute("height", H);
    bg.setAttribute("class", "fg-export-bg");
    bg.setAttribute("fill", getComputedStyle(this.svg).backgroundColor || "#fff");
    vp.insertBefore(bg, vp.firstChild);
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(clone);
  }

  async exportPng(scale = GRAPH.pngScale) {
    const text = this.exportSvg();
    const g = this.model.graph, pad = GRAPH.exportPad;
    const w = Math.ceil((g.width + 2 * pad) * scale), h = Math.ceil((g.height + 2 * pad + GRAPH.bottomRoom) * scale);
    const img = new Image();
    const url = URL.createObjectURL(new Blob([text], { type: "image/svg+xml" }));
    try {
      await new Promise((res, rej) => {
        img.onload = res;
        img.onerror = rej;
        img.src = url;
      });
      const canvas = document.createElement("canvas");
      canvas.width = w;
      canvas.height = h;
      canvas.getContext("2d").drawImage(img, 0, 0, w, h);
      return await new Promise((res) => canvas.toBlob(res, "image/png"));
    } finally {
      URL.revokeObjectURL(url);
    }
  }
}

export { isSummary };
