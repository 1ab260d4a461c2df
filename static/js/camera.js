// Where the graph is in view (GraphView methods): zoom-to-fit clear of the overlays, following
// the step through a big graph, the zoom buttons.
import { select, zoomIdentity } from "../vendor/d3.js";
import { DURATIONS, GRAPH, prefersReducedMotion } from "./config.js";

const union = (a, b) => ({ x0: Math.min(a.x0, b.x0), x1: Math.max(a.x1, b.x1), y0: Math.min(a.y0, b.y0), y1: Math.max(a.y1, b.y1) });

// A translation moved as little as needed so that an extent bigger than the band leaves no empty band.
function clampAxis(tr, size, k, lo, hi, pad) {
  if (size * k <= hi - lo - 2 * pad) return tr;
  return Math.min(lo + pad, Math.max(hi - pad - size * k, tr));
}

// Where along [lo, hi] (screen) the span [a, b] (graph units) goes at zoom k: at `f` of the room (0.5:
// centred; a span bigger than the room shows its start), then the graph's ends kept out of the view
// [vlo, vhi], then the span kept inside the room (it wins: the step is never under an overlay).
function placeIn(a, b, size, k, lo, hi, vlo, vhi, pad, f = 0.5) {
  const room = hi - lo - 2 * pad;
  let t = (b - a) * k <= room ? lo + pad + (room - (b - a) * k) * f - a * k : lo + pad - a * k;
  t = clampAxis(t, size, k, vlo, vhi, pad);
  if ((b - a) * k <= room) t = Math.max(lo + pad - a * k, Math.min(hi - pad - b * k, t));
  return t;
}

const overlap = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;

export const camera = {
  // The page's overlays as px to keep the graph out of: the step caption on top and the legend at the
  // bottom (across the width), the top-right tools and the minimap (per side, as boxes).
  insets() {
    if (this.insetsNow) return this.insetsNow;  // one reading of the page's overlays per framing decision
    const got = (this.getInsets ? this.getInsets() : null) || {};
    const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500;
    let top = Math.max(0, got.top || 0), bottom = Math.max(0, got.bottom || 0);
    // never give the overlays more than half the view: a short window keeps a usable graph
    const k = Math.min(1, (H * GRAPH.maxInsets) / Math.max(1, top + bottom));
    top *= k;
    bottom *= k;
    const boxes = [];
    if (got.tools) boxes.push({ x0: Math.max(0, got.tools.left), x1: W, y0: 0, y1: Math.max(top, Math.min(H - bottom, got.tools.bottom * k)) });
    if (got.map) boxes.push({ x0: Math.max(0, got.map.left), x1: W, y0: Math.max(top, H - (H - got.map.top) * k), y1: H });
    return { top, bottom, boxes };
  },

  // The biggest rectangles of the view no overlay covers (screen px): under the tools and above the map
  // across the width, or beside them from the caption to the legend.
  freeRects() {
    const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500;
    const { top, bottom, boxes } = this.insets();
    const lo = top, hi = H - bottom;
    const tools = boxes.filter((b) => b.y0 <= lo), maps = boxes.filter((b) => b.y0 > lo);
    const left = (bs) => Math.min(W, ...bs.map((b) => b.x0));
    const under = Math.max(lo, ...tools.map((b) => b.y1)), above = Math.min(hi, ...maps.map((b) => b.y0));
    const rects = [
      { x0: 0, x1: W, y0: under, y1: above },
      { x0: 0, x1: left(boxes), y0: lo, y1: hi },
      { x0: 0, x1: left(tools), y0: lo, y1: above },
      { x0: 0, x1: left(maps), y0: under, y1: hi },
    ];
    return rects.filter((r) => r.x1 - r.x0 > 2 * GRAPH.fitPadding && r.y1 - r.y0 > 2 * GRAPH.fitPadding);
  },

  // Whether every drawn record is clear of the per-side overlays at transform t.
  nodesClear(t) {
    const { boxes } = this.insets();
    if (!boxes.length) return true;
    for (const [id, rec] of this.nodeEls || []) {
      if (this.hidden && this.hidden.has(id)) continue;
      const n = rec.n;
      const r = { x0: t.applyX(n.x - n.w / 2), x1: t.applyX(n.x + n.w / 2), y0: t.applyY(n.y - n.h / 2), y1: t.applyY(n.y + n.h / 2 + GRAPH.bottomRoom) };
      if (boxes.some((b) => overlap(r, b))) return false;
    }
    return true;
  },

  // The whole graph as big as it fits: between the caption and the legend across the width when its
  // records stay clear of the tools and the map there, else in the free rectangle that lets it be biggest.
  wholeFit(cap = Infinity) {
    const g = this.model.graph, pad = GRAPH.fitPadding;
    const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500;
    const { top, bottom } = this.insets();
    const gw = Math.max(g.width, 1), gh = Math.max(g.height, 1) + GRAPH.bottomRoom;
    const inRect = (r) => {
      const k = Math.min((r.x1 - r.x0 - 2 * pad) / gw, (r.y1 - r.y0 - 2 * pad) / gh, cap);
      const t = zoomIdentity.translate(r.x0 + (r.x1 - r.x0 - gw * k) / 2, r.y0 + (r.y1 - r.y0 - gh * k) / 2 + (GRAPH.bottomRoom / 2) * k).scale(k);
      return { k, t };
    };
    const across = inRect({ x0: 0, x1: W, y0: top, y1: H - bottom });
    if (this.nodesClear(across.t)) return across;
    let best = null;
    for (const r of this.freeRects()) {
      const c = inRect(r);
      if (!best || c.k > best.k) best = c;
    }
    return best || across;
  },

  fitScale() {
    return this.wholeFit().k;
  },
  // The graph's text sizes in graph units (cached per drawn graph): the smallest, and the size that
  // only a few captions go under (normal mode's floor is for that one, so one long caption does not zoom it all).
  textSizes() {
    if (this._textOf === this.model && this._textSize) return this._textSize;
    const sizes = [];
    for (const t of this.viewport.querySelectorAll("text")) {
      if (!t.textContent.trim()) continue;
      const cs = getComputedStyle(t);
      if (cs.display === "none" || cs.visibility === "hidden") continue;
      const f = parseFloat(cs.fontSize);
      if (f > 0) sizes.push(f);
    }
    // the numbers the small tensors' cells will show (written when their values come): read as well
    for (const g of this.viewport.querySelectorAll("[data-num-fs]")) {
      const [f, count] = g.getAttribute("data-num-fs").split(" ").map(Number);
      for (let i = 0; i < count; i++) sizes.push(f);
    }
    sizes.sort((a, b) => a - b);
    this._textOf = this.model;
    this._textSize = sizes.length
      ? { min: sizes[0], small: sizes[Math.floor(GRAPH.normalTextQuantile * (sizes.length - 1))] }
      : { min: 12, small: 12 };
    return this._textSize;
  },

  // The smallest text the graph draws: projector mode zooms so that it reads at GRAPH.projectorMinTextPx.
  smallestText() {
    return this.textSizes().min;
  },

  // Below this zoom the graph is not readable: fit starts on the step and follows it instead. Both
  // modes have a floor in screen px (projector: the back row; normal: a laptop at arm's length).
  minZoom() {
    const need = this.projector ? GRAPH.projectorMinTextPx / this.textSizes().min : GRAPH.normalMinTextPx / this.textSizes().small;
    return Math.max(GRAPH.minReadableZoom, need);
  },

  // "Fit to screen" (button, F, 0): the explicit overview, the whole graph however small it gets.
  // It stays the overview while the pass plays on (folds opening widen the graph) until the user zooms or pans.
  overview(animate = true) {
    this.forceWhole = true;
    this.fit(animate);
  },

  fit(animate = true) {
    if (!this.model) return;
    this.withInsets(() => this.fitNow(animate));
  },

  fitNow(animate) {
    this.userZoomed = false;
    this.wholeView = !!this.forceWhole;  // an overview stays one (follow, a resize) until the user zooms
    const mode = this.projector ? "projector" : "normal";
    let { k, t } = this.wholeFit(GRAPH.maxFitZoom[mode]);
    this.lastFitWasReadable = false;
    const minK = this.minZoom();
    if (k < minK && !this.forceWhole) {
      this.lastFitWasReadable = true;
      // too big to read whole: readable (the floor), no bigger than fitting the graph's height in the band
      // needs; on the step's nodes (a folded graph's step may lie far from its beginning), else from the
      // graph's top left. The graph fills the band: nothing under the caption or the legend while the band
      // has room. follow() pans along.
      const g = this.model.graph, W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500, pad = GRAPH.fitPadding;
      const { top, bottom, boxes } = this.insets();
      const gw = Math.max(g.width, 1), gh = Math.max(g.height, 1) + GRAPH.bottomRoom;
      k = Math.max(minK, Math.min(GRAPH.readableZoom[mode], (H - top - bottom - 2 * pad) / gh));
      // the graph's top left starts under tools that reach over the view's left half (a phone's search row)
      const lo = boxes.filter((b) => b.y0 <= top && b.x0 < W / 2).reduce((y, b) => Math.max(y, b.y1), top);
      t = this.frameStep(k) || zoomIdentity.translate(clampAxis(pad, gw, k, 0, W, pad), clampAxis(lo + pad, gh, k, lo, H - bottom, pad)).scale(k);
    }
    this.forceWhole = false;
    const sel = select(this.svg);
    if (animate && !prefersReducedMotion()) {
      // a step followed while the fit glides is judged against where the fit goes (not a half-way zoom)
      this.panTarget = t;
      sel.transition().duration(DURATIONS.zoom).call(this.zoomer.transform, t)
        .on("end.target interrupt.target", () => this.panTarget === t && (this.panTarget = null));
    } else {
      this.panTarget = null;
      sel.call(this.zoomer.transform, t);
    }
  },

  // The drawn boxes of the last followed step's nodes (graph units), in the step's order.
  stepBoxes() {
    const out = [];
    for (const id of this.stepIds || []) {
      const rec = this.nodeEls.get(id);
      if (!rec || (this.hidden && this.hidden.has(id))) continue;
      const n = rec.n, op = rec.kind === "op";
      // an op record's (x, y) is its centre too: records are placed by their centres
      out.push({ x0: n.x - n.w / 2, x1: n.x + n.w / 2, y0: n.y - n.h / 2, y1: n.y + n.h / 2 + (op ? 0 : GRAPH.bottomRoom) });
    }
    return out;
  },

  // The drawn box of the last followed step's nodes (graph units), or null before any step.
  stepBox() {
    const boxes = this.stepBoxes();
    if (!boxes.length) return null;
    const b = boxes.reduce(union);
    return { ...b, cx: (b.x0 + b.x1) / 2, cy: (b.y0 + b.y1) / 2 };
  },

  // What of the step to frame at zoom k, and where: all its nodes in the free rectangle they fit in; when
  // they cannot all fit (an update spread over a wide graph), as many of them in a row of the step's order
  // (the caption's) as fit, placed so that the step's other nodes are not under an overlay either (off the
  // view or clear) when some placement allows it. Returns { box, rect, t } or null (no step yet).
  stepFrame(k, f = 0.5) {
    return this.withInsets(() => this.pickStepFrame(k, f));
  },

  // Runs fn with the overlays read once (a framing decision reads them dozens of times).
  withInsets(fn) {
    const outer = this.insetsNow;
    this.insetsNow = outer || this.insets();
    try {
      return fn();
    } finally {
      this.insetsNow = outer;
    }
  },

  pickStepFrame(k, f) {
    const all = this.stepBoxes().slice(0, GRAPH.followMaxNodes), pad = GRAPH.fitPadding;
    if (!all.length) return null;
    const covers = this.overlayBoxes();
    const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500;
    const seen = (t, b) => {
      const r = { x0: t.applyX(b.x0), x1: t.applyX(b.x1), y0: t.applyY(b.y0), y1: t.applyY(b.y1) };
      return r.x1 > 0 && r.x0 < W && r.y1 > 0 && r.y0 < H && covers.some((c) => overlap(r, c));
    };
    let best = null;
    for (const rect of this.freeRects()) {
      for (let i = 0; i < all.length; i++) {
        let box = all[i], count = 1;
        for (let j = i + 1; j < all.length; j++) {
          const u = union(box, all[j]);
          if ((u.x1 - u.x0) * k > rect.x1 - rect.x0 - 2 * pad || (u.y1 - u.y0) * k > rect.y1 - rect.y0 - 2 * pad) break;
          box = u;
          count++;
        }
        // all of them fit: one placement; else try the framed ones at the rectangle's sides as well
        const fs = count === all.length ? [[f, 0.5]] : [[f, 0.5], [0, 0], [1, 0], [0, 1], [1, 1], [0.5, 0], [0.5, 1]];
        for (const [fx, fy] of fs) {
          const t = this.placeBox(box, rect, k, fx, fy);
          const clear = !all.some((b) => seen(t, b));
          // ties: the placement that leaves the least empty band beside a graph bigger than the view
          const score = count + (clear ? all.length + 1 : 0) - i * 1e-2 - this.emptyBand(t) * 1e-6;
          if (!best || score > best.score) best = { box, rect, t, score };
        }
        if (count === all.length) break;
      }
    }
    return best;
  },

  // px of view left empty beside a graph bigger than the view at t (between the caption and the legend).
  emptyBand(t) {
    const g = this.model.graph, W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500, pad = GRAPH.fitPadding;
    const { top, bottom } = this.insets();
    const gap = (a, b, lo, hi) => ((b - a) > hi - lo - 2 * pad ? Math.max(0, a - lo - pad) + Math.max(0, hi - pad - b) : 0);
    return gap(t.applyX(0), t.applyX(g.width), 0, W) + gap(t.applyY(0), t.applyY(g.height + GRAPH.bottomRoom), top, H - bottom);
  },

  // The overlays as screen boxes: the caption's and the legend's bands, the tools, the map.
  overlayBoxes() {
    const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500;
    const { top, bottom, boxes } = this.insets();
    return [{ x0: 0, x1: W, y0: -Infinity, y1: top }, { x0: 0, x1: W, y0: H - bottom, y1: Infinity }, ...boxes];
  },

  // The transform at zoom k that puts box (graph units) in rect (screen) at (fx, fy) of its room.
  placeBox(box, rect, k, fx = 0.5, fy = 0.5) {
    const g = this.model.graph, W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500, pad = GRAPH.fitPadding;
    const { top, bottom } = this.insets();
    const gw = Math.max(g.width, 1), gh = Math.max(g.height, 1) + GRAPH.bottomRoom;
    const tx = placeIn(box.x0, box.x1, gw, k, rect.x0, rect.x1, 0, W, pad, fx);
    const ty = placeIn(box.y0, box.y1, gh, k, rect.y0, rect.y1, top, H - bottom, pad, fy);
    return zoomIdentity.translate(tx, ty).scale(k);
  },

  // The transform at zoom k that frames the step (stepFrame), at `f` of its rectangle's width.
  frameStep(k, f = 0.5, at = this.stepFrame(k, f)) {
    return at ? at.t : null;
  },

  // Keep the nodes of the current step in view: pan (same zoom) when they are outside the part of the
  // view the caption, the legend, the tools and the minimap leave free. Judged against where a pan in
  // flight is going (an auto-expanded fold moves the step's node while the view glides).
  follow(ids, phase = "forward", animate = true) {
    if (!this.model || !ids.length) return;
    this.withInsets(() => this.followNow(ids, phase, animate));
  },

  followNow(ids, phase, animate) {
    this.stepIds = ids;
    const W = this.svg.clientWidth, H = this.svg.clientHeight, t = this.panTarget || this.transform;
    const g = this.model.graph, { top, bottom } = this.insets();
    // whole and clear of the caption, the legend, the tools and the map: nothing to do
    const whole = t.applyX(0) >= -2 && t.applyY(0) >= top - 2 && t.applyX(g.width) <= W + 2 && t.applyY(g.height) <= H - bottom + 2 && this.nodesClear(t);
    if (whole) return;
    if (this.userZoomed) this.wholeView = false;
    if (this.wholeView || (!this.userZoomed && this.fitScale() >= this.minZoom())) {
      this.forceWhole = this.wholeView;
      this.fit(false);
      return;
    }
    const at = this.stepFrame(t.k);
    if (!at) return;
    const { box } = at;
    // in view: the framed nodes inside a free rectangle, this far from its edges (less when they nearly fill it)
    const inside = (r) => {
      const mx = Math.max(0, Math.min(GRAPH.followMargin, (r.x1 - r.x0 - (box.x1 - box.x0) * t.k) / 2 - 1));
      const my = Math.max(0, Math.min(GRAPH.followMargin, (r.y1 - r.y0 - (box.y1 - box.y0) * t.k) / 2 - 1));
      return t.applyX(box.x0) >= r.x0 + mx && t.applyX(box.x1) <= r.x1 - mx && t.applyY(box.y0) >= r.y0 + my && t.applyY(box.y1) <= r.y1 - my;
    };
    if (this.freeRects().some(inside)) return;
    // lead the way: forward goes left to right, backward right to left, so put the step near
    // the side it comes from and the next steps stay in view longer (fewer pans)
    const lead = GRAPH.followLead;
    const fx = (box.x1 - box.x0) * t.k < (at.rect.x1 - at.rect.x0) * GRAPH.followNarrow ? (phase === "backward" ? 1 - lead : lead) : 0.5;
    const nt = this.frameStep(t.k, fx);
    const user = this.userZoomed;
    // a pan repaints the whole graph every frame: at fast playback jump instead of gliding
    if (animate && !prefersReducedMotion()) {
      this.panTarget = nt;
      select(this.svg).transition().duration(DURATIONS.pan).call(this.zoomer.transform, nt)
        .on("end", () => (this.userZoomed = user))
        .on("end.target interrupt.target", () => this.panTarget === nt && (this.panTarget = null));
    } else {
      this.panTarget = null;
      select(this.svg).call(this.zoomer.transform, nt);
      this.userZoomed = user;
    }
  },

  // Show a group's drawn box (a breadcrumb): whole when it reads whole, else its start at the readable
  // zoom (never a 150-layer group at ~3 px), in the free rectangle (clear of the caption, the legend, the
  // tools and the map) where it is biggest.
  frameGroup(box, animate = true) {
    if (!this.model) return;
    const pad = GRAPH.fitPadding;
    const most = GRAPH.readableZoom[this.projector ? "projector" : "normal"];
    let best = null;
    for (const r of this.freeRects()) {
      const f = Math.min((r.x1 - r.x0 - 2 * pad) / Math.max(box.w, 1), (r.y1 - r.y0 - 2 * pad) / Math.max(box.h, 1));
      if (!best || f > best.f) best = { r, f };
    }
    if (!best) return;
    const k = Math.max(this.minZoom(), Math.min(most, best.f)), r = best.r;
    // centred on the box; a box bigger than the rectangle shows its start (where the group begins)
    const tx = placeIn(box.x, box.x + box.w, 0, k, r.x0, r.x1, r.x0, r.x1, pad);
    const ty = placeIn(box.y, box.y + box.h, 0, k, r.y0, r.y1, r.y0, r.y1, pad);
    const t = zoomIdentity.translate(tx, ty).scale(k);
    this.userZoomed = true;
    this.wholeView = false;
    this.panTarget = null;
    const sel = select(this.svg);
    sel.interrupt();
    if (animate && !prefersReducedMotion()) sel.transition().duration(DURATIONS.zoom).call(this.zoomer.transform, t);
    else sel.call(this.zoomer.transform, t);
  },

  zoomBy(f) {
    if (prefersReducedMotion()) select(this.svg).call(this.zoomer.scaleBy, f);
    else select(this.svg).transition().duration(DURATIONS.zoomStep).call(this.zoomer.scaleBy, f);
  },

  checkInView() {
    if (!this.model || !this.onViewChange) return;
    const g = this.model.graph, t = this.transform;
    const W = this.svg.clientWidth, H = this.svg.clientHeight;
    const x0 = t.applyX(0), y0 = t.applyY(0), x1 = t.applyX(g.width), y1 = t.applyY(g.height);
    this.onViewChange(x0 < -2 || y0 < -2 || x1 > W + 2 || y1 > H + 2);
  },
};
