// Where the graph is in view (GraphView methods): zoom-to-fit clear of the overlays, following
// the step through a big graph, the zoom buttons.
import { select, zoomIdentity } from "../vendor/d3.js";
import { DURATIONS, GRAPH, prefersReducedMotion } from "./config.js";

// The translation that puts a graph extent [0, size] at zoom k in the screen band [lo, hi]: the whole
// extent centred when it fits, else `at` centred but the extent's ends never inside the band.
function placeAxis(at, size, k, lo, hi, pad) {
  const room = hi - lo - 2 * pad;
  if (size * k <= room) return lo + pad + (room - size * k) / 2;
  return clampAxis((lo + hi) / 2 - at * k, size, k, lo, hi, pad);
}

// The same for a span of the graph (the step's nodes): centred, or its start first when it is bigger than the band.
function placeSpan(a, b, size, k, lo, hi, pad) {
  if ((b - a) * k <= hi - lo - 2 * pad) return placeAxis((a + b) / 2, size, k, lo, hi, pad);
  return clampAxis(lo + pad - a * k, size, k, lo, hi, pad);
}

// A translation moved as little as needed so that an extent bigger than the band leaves no empty band.
function clampAxis(tr, size, k, lo, hi, pad) {
  if (size * k <= hi - lo - 2 * pad) return tr;
  return Math.min(lo + pad, Math.max(hi - pad - size * k, tr));
}

export const camera = {
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
  },

  fitScale() {
    const g = this.model.graph;
    const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500, pad = GRAPH.fitPadding;
    const { top, bottom } = this.insets();
    return Math.min((W - 2 * pad) / Math.max(g.width, 1), (H - top - bottom - 2 * pad) / (Math.max(g.height, 1) + GRAPH.bottomRoom));
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
    this.userZoomed = false;
    this.wholeView = !!this.forceWhole;  // an overview stays one (follow, a resize) until the user zooms
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
    const minK = this.minZoom();
    if (k < minK && !this.forceWhole) {
      this.lastFitWasReadable = true;
      // too big to read whole: readable (the floor), no bigger than fitting the graph's height in the band
      // needs; on the step's nodes (a folded graph's step may lie far from its beginning), else from the
      // graph's top left. The graph fills the band: nothing under the caption or the legend while the band
      // has room. follow() pans along.
      k = Math.max(minK, Math.min(GRAPH.readableZoom[mode], (H - 2 * pad) / gh));
      const at = this.stepBox ? this.stepBox() : null;
      const tx = at ? placeSpan(at.x0, at.x1, gw, k, 0, W, pad) : placeAxis(-Infinity, gw, k, 0, W, pad);
      const ty = at ? placeSpan(at.y0, at.y1, gh, k, top, top + H, pad) : placeAxis(-Infinity, gh, k, top, top + H, pad);
      t = zoomIdentity.translate(tx, ty).scale(k);
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

  // The drawn box of the last followed step's nodes (graph units), or null before any step.
  stepBox() {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const id of this.stepIds || []) {
      const rec = this.nodeEls.get(id);
      if (!rec || (this.hidden && this.hidden.has(id))) continue;
      const n = rec.n, op = rec.kind === "op";
      // an op record's (x, y) is its centre too: records are placed by their centres
      x0 = Math.min(x0, n.x - n.w / 2);
      x1 = Math.max(x1, n.x + n.w / 2);
      y0 = Math.min(y0, n.y - n.h / 2);
      y1 = Math.max(y1, n.y + n.h / 2 + (op ? 0 : GRAPH.bottomRoom));
    }
    if (!isFinite(x0)) return null;
    return { x0, y0, x1, y1, cx: (x0 + x1) / 2, cy: (y0 + y1) / 2 };
  },

  // Keep the nodes of the current step in view: pan (same zoom) when they are outside the part of the
  // view the caption, the legend and the minimap leave free. Judged against where a pan in flight is
  // going (an auto-expanded fold moves the step's node while the view glides).
  follow(ids, phase = "forward", animate = true) {
    if (!this.model || !ids.length) return;
    this.stepIds = ids;
    const W = this.svg.clientWidth, H = this.svg.clientHeight, t = this.panTarget || this.transform;
    const g = this.model.graph, { top, bottom } = this.insets();
    // whole and clear of the caption and the legend: nothing to do
    const whole = t.applyX(0) >= -2 && t.applyY(0) >= top - 2 && t.applyX(g.width) <= W + 2 && t.applyY(g.height) <= H - bottom + 2;
    if (whole) return;
    if (this.userZoomed) this.wholeView = false;
    if (this.wholeView || (!this.userZoomed && this.fitScale() >= this.minZoom())) {
      this.forceWhole = this.wholeView;
      this.fit(false);
      return;
    }
    const box = this.stepBox();
    if (!box) return;
    const { x0, y0, x1, y1, cx, cy } = box;
    const m = GRAPH.followMargin;
    const right = W - (this.overlayRight ? this.overlayRight(y0, y1, t) : 0);
    const inView = t.applyX(x0) >= m && t.applyX(x1) <= right - m && t.applyY(y0) >= top + m && t.applyY(y1) <= H - bottom - m;
    if (inView) return;
    // lead the way: forward goes left to right, backward right to left, so put the step near
    // the side it comes from and the next steps stay in view longer (fewer pans)
    const lead = GRAPH.followLead;
    const fx = x1 - x0 < W * GRAPH.followNarrow ? (phase === "backward" ? 1 - lead : lead) : 0.5;
    // vertically: in the band between the caption and the legend; a step taller than the band shows its top
    // and never past the graph's ends: the band shows graph, not empty room, beside a step near an end
    const band = Math.max(1, H - top - bottom), pad = GRAPH.fitPadding, gh = g.height + GRAPH.bottomRoom;
    const ty = (y1 - y0) * t.k > band - 2 * m ? clampAxis(top + m - y0 * t.k, gh, t.k, top, H - bottom, pad) : placeAxis(cy, gh, t.k, top, H - bottom, pad);
    const tx = clampAxis(W * fx - cx * t.k, g.width, t.k, 0, W, pad);
    const nt = zoomIdentity.translate(tx, ty).scale(t.k);
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
  // zoom (never a 150-layer group at ~3 px), in the band the caption, the legend and the tools leave free.
  frameGroup(box, animate = true) {
    if (!this.model) return;
    const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500, pad = GRAPH.fitPadding;
    const { top, bottom } = this.insets();
    const most = GRAPH.readableZoom[this.projector ? "projector" : "normal"];
    const fit = Math.min(most, (W - 2 * pad) / Math.max(box.w, 1), (H - top - bottom - 2 * pad) / Math.max(box.h, 1));
    const k = Math.max(this.minZoom(), fit);
    // centred on the box; a box bigger than the band shows its start (where the group begins)
    const at = (a, size, lo, hi) => (size * k <= hi - lo - 2 * pad ? (lo + hi) / 2 - (a + size / 2) * k : lo + pad - a * k);
    const tx = at(box.x, box.w, 0, W), ty = at(box.y, box.h, top, H - bottom);
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
