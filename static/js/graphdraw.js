// Drawing the graph's pieces once per pass (GraphView methods): module boxes (collapsible), edges,
// cuts, op ellipses, tensor records and the value cells in them.
import { GRAPH, LAYOUT, divergingColor, inkOn } from "./config.js";
import { nodeName } from "./replay.js";
import { opNodeText } from "./oplabels.js";
import { el, truncate } from "./svg.js";
import { flat, fmt, num, shortNum } from "./values.js";

// An edge as an SVG path: cubic Bézier pieces as dot gives them, else a polyline.
export function pathD(points) {
  if (!points || points.length < 2) return "";
  const p = points.map(([x, y]) => `${+x.toFixed(2)},${+y.toFixed(2)}`);
  if (points.length >= 4 && (points.length - 1) % 3 === 0) {
    let d = `M${p[0]}`;
    for (let i = 1; i < p.length; i += 3) d += `C${p[i]} ${p[i + 1]} ${p[i + 2]}`;
    return d;
  }
  return "M" + p.join("L");
}

// The numbers on a small tensor's cells (w × h of its value row): one font for all of them, fitted to a
// short number (GRAPH.cell.numberChars); null when they would not read (the colours and the hover tell).
export function cellNumbers(shape, w, h, fs) {
  const C = GRAPH.cell;
  const numel = (shape || []).reduce((a, b) => a * b, 1);
  if (!shape || !shape.length || numel < 1 || numel > C.numbersUpTo) return null;
  const cols = Math.max(1, Math.min(shape[shape.length - 1], numel)), rows = Math.ceil(numel / cols);
  const nfs = Math.min(fs, (h / rows) * C.numberFill, w / cols / ((C.numberChars + C.numberGap) * C.glyphW));
  // one decimal, as written in font-size: the camera reads the graph by this very size
  return nfs >= fs * C.numberMinFont ? { cols, rows, nfs: Math.floor(nfs * 10) / 10, numel } : null;
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

export const drawing = {
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
      this.collapsedChanged();
    };
    tog.addEventListener("click", toggle);
    tog.addEventListener("keydown", (ev) => (ev.key === "Enter" || ev.key === " ") && toggle(ev));
    c._el = grp;
    c._sym = sym;
    c._tog = tog;
  },

  // a module box opened or closed by the user: redrawn, and the navigation controls (minimap) told
  collapsedChanged() {
    this.applyCollapsed();
    document.dispatchEvent(new CustomEvent("fg:graph-changed", { detail: { collapsed: [...this.collapsed] } }));
  },

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
        this.collapsedChanged();
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
  },

  renderEdge(e) {
    const grp = el("g", { class: "fg-edge" + (e.cut ? " cut" : ""), "data-edge-id": e.id }, this.layers.edges);
    const path = el("path", { d: pathD(e.points), "marker-end": `url(#fg-arrow${e.cut ? "-cut" : ""})` }, grp);
    const rec = { g: grp, path, e, len: null };
    this.edgeEls.set(e.id, rec);
  },

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
  },

  renderOp(n) {
    const grp = el("g", {
      class: "fg-op" + (n.error ? " failed" : n.grad_fn ? "" : " nograd"), "data-node-id": n.id, tabindex: 0, role: "button",
      transform: `translate(${n.x},${n.y})`,
    }, this.layers.nodes);
    const rx = n.w / 2, ry = n.h / 2;
    el("ellipse", { class: "fg-opshape", rx, ry }, grp);
    const label = opNodeText(n, this.model.opParams(n.op));
    // the server sized the ellipse for this text (app/layout/sizes.py): ~14 pt, less when squeezed
    const fs = Math.max(GRAPH.fonts.min, Math.min(ry * GRAPH.op.fontFill, (n.w - GRAPH.op.textInset) / (Math.max(1, label.length) * LAYOUT.glyphW)));
    const t = el("text", { class: "fg-optext", "text-anchor": "middle", "dominant-baseline": "central", "font-size": fs.toFixed(1) }, grp);
    t.textContent = label;
    el("title", {}, grp).textContent = `${label}${label !== n.op ? " (" + (n.op || "op") + ")" : ""}${n.error ? ` · failed: ${n.error.message}` : n.grad_fn ? " · grad_fn=" + n.grad_fn : " · no grad_fn (grad disabled)"}`;
    if (n.error) {  // the op that failed: the shapes it was given, under it, where grad_fn names go
      const shapes = (n.input_shapes || []).filter((s) => s != null).map((s) => (s.length ? s.join("×") : "scalar"));
      const cap = el("text", { class: "fg-fail-shapes", y: ry + GRAPH.fonts.caption * 1.4, "text-anchor": "middle", "font-size": GRAPH.fonts.caption * 1.2 }, grp);
      cap.textContent = `✗ ${shapes.join(", ")}`;
    }
    this.bindNode(grp, n);
    this.nodeEls.set(n.id, { g: grp, n, kind: "op" });
  },

  renderTensor(n) {
    const cls = ["fg-node", "role-" + (n.role || "intermediate")];
    if (n.is_leaf) cls.push("leaf");
    if (!n.requires_grad) cls.push("nograd");
    const grp = el("g", { class: cls.join(" "), "data-node-id": n.id, tabindex: 0, role: "button",
      transform: `translate(${n.x - n.w / 2},${n.y - n.h / 2})` }, this.layers.nodes);
    const w = n.w, h = n.h;
    const R = GRAPH.record, glyph = LAYOUT.glyphW;
    // a small tensor's record is taller than recordH (app/layout/sizes.py numbers_size): its rows grow for its
    // numbers, its header and font stay those of every record
    const base = Math.min(h, LAYOUT.recordH), headH = base * LAYOUT.headerFrac;
    const rowH = (h - headH) / 2;
    const fs = Math.max(GRAPH.fonts.min, Math.min(((base - headH) / 2) * LAYOUT.textFill, headH * LAYOUT.textFill, w / R.fontPerW));
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
    // the size its numbers will have, known before they are computed: the camera reads the graph by it
    const nums = cellNumbers(n.shape, rows.value.w, rows.value.h, fs);
    if (nums) grp.setAttribute("data-num-fs", nums.nfs.toFixed(2) + " " + nums.numel * (n.requires_grad ? 2 : 1));
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
  },

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
  },

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
    const index = (i) => (cols === f.shape[f.shape.length - 1] && f.shape.length > 1 ? `[${Math.floor(i / cols)}, ${i % cols}]` : `[${i}]`);
    // tensors too big for numbers on their cells tell their range with each cell's number on hover
    const range = data.length > C.numbersUpTo || f.summary ? ` (min ${fmt(f.summary ? num(v.min) : Math.min(...data))}, ` +
      `max ${fmt(f.summary ? num(v.max) : Math.max(...data))})` : "";
    data.forEach((x, i) => {
      const r = el("rect", { class: "fg-cell", x: (i % cols) * cw, y: Math.floor(i / cols) * ch, width: Math.max(C.minSize, cw - C.spacing),
        height: Math.max(C.minSize, ch - C.spacing), fill: divergingColor(x, this.maxAbs, theme) }, g);
      el("title", {}, r).textContent = (f.summary ? `sample: ${fmt(x)}` : `${index(i)} = ${fmt(x)}`) + range;  // the number on hover
    });
    // numbers on the cells of small tensors: written when they fit the cell, shown when readable at this zoom
    const nums = f.summary ? null : cellNumbers(f.shape.length ? f.shape : [data.length], w, h, fs);
    if (nums && nums.cols === cols) {
      const k = this.transform ? this.transform.k : 1, nfs = nums.nfs;
      data.forEach((x, i) => {
        const t = el("text", { class: "fg-celltext fg-num", x: (i % cols) * cw + cw / 2, y: Math.floor(i / cols) * ch + ch / 2,
          "text-anchor": "middle", "dominant-baseline": "central", "font-size": nfs.toFixed(1), "data-fs": nfs.toFixed(2),
          style: `fill:${inkOn(x, this.maxAbs, theme)}` }, g);
        t.textContent = shortNum(x);  // whole: the font was fitted to it, never "1.…"
        if (nfs * k < (this.projector ? GRAPH.projectorMinTextPx : C.numberMinPx)) t.setAttribute("display", "none");
      });
    }
  },
};
