// Folded passes (issue 11), GraphView methods: collapsed groups drawn as stacked cards, expanded in
// place from their payload (laid out on their own by the server) while the rest only moves aside,
// stepping into folds, and the page API the navigation controls call (docs/trace.md, contract 11).
import { select, zoomIdentity } from "../vendor/d3.js";
import { traceSource } from "./api.js";
import { FOLD, GRAPH, LAYOUT } from "./config.js";
import { setStatus } from "./dom.js";
import { pathD } from "./graphdraw.js";
import { el, truncate } from "./svg.js";
import { fmt, num } from "./values.js";

const EPS = 0.5;
const fmtCount = (n) => Number(n).toLocaleString("en-US");

function emit(name, detail = {}) {
  document.dispatchEvent(new CustomEvent(name, { detail }));
}

// "h: min -0.98 … max 0.97" or "loss = 0.25": a group's value summary in words
function summaryText(summary, name) {
  if (summary == null) return "";
  const who = name ? name + ": " : "";
  if (typeof summary !== "object") return `${who}${fmt(num(summary))}`;
  return `${who}min ${fmt(num(summary.min))} … max ${fmt(num(summary.max))}`;
}

// A fold's chunk (a range of its iterations, `count` set) only holds iterations or smaller ranges whose own
// labels say where they are: open, it adds nothing (issue 23 §4), so it is drawn without a frame or title.
// Sequence chunks ("123 ops · line 5–9", no count) say what they hold: they keep theirs.
function addsNothingOpen(g) {
  return !!g && g.kind === "chunk" && g.count != null;
}

function countText(g) {
  if (!g || g.count == null) return g && g.size ? `${fmtCount(g.size)} nodes` : "";
  return g.count === 1 ? "1 step" : `${fmtCount(g.count)} steps`;
}

export const folds = {
  // ---- drawing ---------------------------------------------------------------------------
  initFolded() {
    // fetches in flight live on the model: a redraw of the same pass (names arriving) must not ask twice
    if (this.model && !this.model.inflight) this.model.inflight = new Map();
    if (this.model && this.model.folded) this.model.resetLayout();
    this.fold = { expanded: new Map(), inflight: this.model ? this.model.inflight : new Map(), path: [] };
    this.svg.classList.toggle("fg-folded", !!(this.model && this.model.folded));
  },

  groupOf(id) {
    return (this.model.tree && this.model.tree[id]) || null;
  },

  // A record of any kind drawn from its record (tensor, op, collapsed group); dots for the far zoom.
  drawRecord(n) {
    if (n.kind === "group") return this.renderGroupNode(n);
    if (n.kind === "op") this.renderOp(n);
    else this.renderTensor(n);
    if (this.model.folded) {
      const rec = this.nodeEls.get(n.id);
      const r = Math.max(3, Math.min(n.w, n.h) / 2.5);
      el("circle", n.kind === "op" ? { class: "fg-dot", r } : { class: "fg-dot", cx: n.w / 2, cy: n.h / 2, r }, rec.g);
    }
  },

  drawEdge(e) {
    this.renderEdge(e);
    if (!(e.count > 1)) return;
    const rec = this.edgeEls.get(e.id);
    rec.g.classList.add("bundled");
    rec.badge = el("g", { class: "fg-bundle-count" }, this.layers.cuts);
    const text = `× ${fmtCount(e.count)}`;
    const w = text.length * 10 * LAYOUT.glyphW + 8;
    el("rect", { x: -w / 2, y: -8, width: w, height: 16, rx: 8 }, rec.badge);
    const t = el("text", { "text-anchor": "middle", "dominant-baseline": "central" }, rec.badge);
    t.textContent = text;
    el("title", {}, rec.badge).textContent = `${fmtCount(e.count)} edges bundled`;
    rec.badgeW = w;
    this.placeBadge(rec);
  },

  // on the edge where the badge covers neither end's record (a parameter drawn close beside its fold
  // leaves a short edge: its middle would sit on the parameter's shape label), else the middle
  placeBadge(rec) {
    if (!rec.badge) return;
    rec.len = null;
    const ends = [rec.e.source, rec.e.target].map((id) => this.nodeEls.get(id)).filter(Boolean).map((r) => r.n);
    const hw = (rec.badgeW || 0) / 2 + 2, hh = 10;
    const clear = (p) => ends.every((n) => Math.abs(p.x - n.x) >= n.w / 2 + hw || Math.abs(p.y - n.y) >= n.h / 2 + hh);
    let p = this.pointAt(rec, 0.5);
    for (const t of FOLD.badgeAt) {
      const q = this.pointAt(rec, t);
      if (clear(q)) {
        p = q;
        break;
      }
    }
    rec.badge.setAttribute("transform", `translate(${p.x.toFixed(1)},${p.y.toFixed(1)})`);
  },

  renderGroupNode(n) {
    const g = this.groupOf(n.group || n.id) || n;
    const F = FOLD, off = F.stackOffset, k = F.stack - 1;
    const label = n.label || g.label || n.id;
    const outName = g.output && this.model.nameOf ? this.model.nameOf(g.output) : null;
    const sum = summaryText(n.summary ?? g.summary, outName);
    const aria = [`Expand ${label}`, countText(g), sum].filter(Boolean).join(", ");
    const grp = el("g", { class: "fg-group-node", "data-node-id": n.id, role: "button", tabindex: 0, "aria-label": aria,
      transform: `translate(${n.x - n.w / 2},${n.y - n.h / 2})` }, this.layers.nodes);
    const cw = n.w - k * off, ch = n.h - k * off;
    for (let i = k; i >= 0; i--) el("rect", { class: "fg-gcard" + (i === 0 ? " top" : ""), x: i * off, y: i * off, width: cw, height: ch, rx: F.radius }, grp);
    const [minFs, maxFs] = F.labelFont;
    const fs = Math.max(minFs, Math.min(maxFs, ch / F.labelFontPerH, cw / (label.length * LAYOUT.glyphW + 2)));
    const chars = (size) => Math.max(4, Math.floor((cw - 10) / (size * LAYOUT.glyphW)));
    const line = (y, text, cls, size) => {
      const t = el("text", { class: cls, x: cw / 2, y, "text-anchor": "middle", "dominant-baseline": "central", "font-size": size.toFixed(1) }, grp);
      t.textContent = truncate(text, chars(size));
    };
    line(ch * 0.3, label, "fg-glabel", fs);
    // the second line says what the label does not: the count, or (when the label is the count) the size
    const count = g.kind === "iter" ? "one step" : g.count != null && !label.startsWith("×") ? `× ${fmtCount(g.count)}` : `${fmtCount(g.size || 0)} nodes`;
    line(ch * 0.56, count, "fg-gcount", fs * 0.85);
    if (sum) line(ch * 0.8, sum, "fg-gsum", fs * 0.7);
    el("title", {}, grp).textContent = aria;
    const open = (ev) => {
      ev.stopPropagation();
      ev.preventDefault();
      this.expand(n.id).then(() => this.focusGroupButton(n.id));
    };
    grp.addEventListener("click", open);
    grp.addEventListener("keydown", (ev) => (ev.key === "Enter" || ev.key === " ") && open(ev));
    this.nodeEls.set(n.id, { g: grp, n, kind: "group" });
    if (this.model.folded) el("circle", { class: "fg-dot", cx: n.w / 2, cy: n.h / 2, r: Math.min(n.w, n.h) / 3 }, grp);
  },

  // where keyboard focus goes after a group opens: its collapse button
  focusGroupButton(gid) {
    const ex = this.fold && this.fold.expanded.get(gid);
    if (!ex || !ex.button) return;
    if (document.activeElement && document.activeElement.closest && document.activeElement.closest("svg") === this.svg) ex.button.focus();
    else if (!document.activeElement || document.activeElement === document.body) ex.button.focus();
  },

  drawGroupBox(gid, box, bare = false) {
    const g = this.groupOf(gid) || { label: gid };
    const F = FOLD, B = F.button;
    const grp = el("g", { class: "fg-group-box" + (bare ? " bare" : ""), "data-group-id": gid, transform: `translate(${box.x},${box.y})` }, this.layers.clusters);
    const rect = el("rect", { class: "fg-gbox", width: box.w, height: box.h, rx: F.radius }, grp);
    if (bare) return { g: grp, rect, button: null };  // folded again with the fold around it
    const title = el("text", { x: B.x + B.w + 6, y: B.y + B.h / 2, "dominant-baseline": "central", "font-size": GRAPH.fonts.cluster }, grp);
    const label = g.label || gid;
    title.textContent = `${label}${g.count > 1 && !label.startsWith("×") ? ` · × ${fmtCount(g.count)}` : ""}`;
    const button = el("g", { class: "fg-gcollapse", role: "button", tabindex: 0, "aria-label": `Collapse ${g.label || gid}` }, grp);
    el("rect", { x: B.x, y: B.y, width: B.w, height: B.h, rx: B.radius }, button);
    const sym = el("text", { x: B.x + B.w / 2, y: B.y + B.h / 2, "text-anchor": "middle", "dominant-baseline": "central", "font-size": 12 }, button);
    sym.textContent = "−";
    const close = (ev) => {
      ev.stopPropagation();
      ev.preventDefault();
      this.collapse(gid);
      const rec = this.nodeEls.get(gid);
      if (rec) rec.g.focus();
    };
    button.addEventListener("click", close);
    button.addEventListener("keydown", (ev) => (ev.key === "Enter" || ev.key === " ") && close(ev));
    return { g: grp, rect, button };
  },

  // ---- moving the rest aside -----------------------------------------------------------------
  placeRecord(rec, dx = 0, dy = 0) {
    const n = rec.n;
    const x = rec.kind === "op" ? n.x : n.x - n.w / 2, y = rec.kind === "op" ? n.y : n.y - n.h / 2;
    rec.g.setAttribute("transform", `translate(${x + dx},${y + dy})`);
  },

  // Space opens (or closes) for a group at x0 … xl, above yl: whatever starts right of xl moves by dw,
  // whatever lies below the group moves by dh, boxes around it grow. Nothing is laid out again.
  shiftSpace(x0, xl, yl, dw, dh, gid = null) {
    const moved = [];
    if (!dw && !dh) return moved;
    // right of the line: moves right; below the group (overlapping its columns, not moved right): moves down
    const mx = (x) => (x >= xl - EPS ? dw : 0);
    const below = (left, right, top) => left < xl - EPS && right > x0 + EPS && top >= yl - EPS;
    const moves = new Map();
    for (const [id, rec] of this.nodeEls) {
      if (id === gid) continue;
      const n = rec.n;
      const l = n.x - n.w / 2, ddx = mx(l), ddy = below(l, n.x + n.w / 2, n.y - n.h / 2) ? dh : 0;
      moves.set(id, [ddx, ddy]);
      if (!ddx && !ddy) continue;
      n.x += ddx;
      n.y += ddy;
      moved.push({ rec, dx: ddx, dy: ddy });
    }
    // an edge's ends follow the records they touch; its middle (and ends on a group box) follow the lines
    for (const rec of this.edgeEls.values()) {
      const pts = rec.e.points || [];
      if (!pts.length) continue;
      const first = moves.get(rec.e.source), last = moves.get(rec.e.target);
      const out = pts.map(([x, y], i) => {
        const d = i === 0 && first ? first : i === pts.length - 1 && last ? last : [mx(x), below(x, x + 2 * EPS, y) ? dh : 0];
        return [x + d[0], y + d[1]];
      });
      if (out.every(([x, y], i) => x === pts[i][0] && y === pts[i][1])) continue;
      rec.e.points = out;
      rec.path.setAttribute("d", pathD(out));
      rec.bb = null;
      this.placeBadge(rec);
    }
    for (const ex of this.fold.expanded.values()) {
      const b = ex.box;
      // boxes only move here: their sizes follow their contents (fitBoxes)
      if (b.x >= xl - EPS) b.x += dw;
      else if (b.y >= yl - EPS && b.x + b.w > x0 + EPS) b.y += dh;
      ex.g.setAttribute("transform", `translate(${b.x},${b.y})`);
      ex.rect.setAttribute("width", b.w);
      ex.rect.setAttribute("height", b.h);
    }
    for (const c of this.clusters || []) {
      if (!c._el) continue;
      const cx0 = c.x - c.w / 2, cy0 = c.y - c.h / 2, over = cx0 < xl - EPS && cx0 + c.w > x0 + EPS;
      if (cx0 >= xl - EPS) c.x += dw;
      else if (cx0 + c.w >= xl - EPS) {
        c.w += dw;
        c.x += dw / 2;
      }
      if (over && cy0 >= yl - EPS) c.y += dh;
      else if (over && cy0 + c.h >= yl - EPS) {
        c.h += dh;
        c.y += dh / 2;
      }
      const r = c._el.querySelector("rect.fg-cbox");
      if (r) {
        r.setAttribute("x", c.x - c.w / 2);
        r.setAttribute("y", c.y - c.h / 2);
        r.setAttribute("width", c.w);
        r.setAttribute("height", c.h);
      }
    }
    return moved;
  },

  // the records that moved glide from where they were (only those in view: the others just jump)
  glide(moved) {
    const live = moved.filter((m) => !m.rec.culled);
    for (const m of moved) this.placeRecord(m.rec);
    if (!live.length || FOLD.animateMs <= 0) return;
    const t0 = performance.now();
    const step = (now) => {
      const t = Math.min(1, (now - t0) / FOLD.animateMs), e = 1 - (1 - t) * (1 - t);
      for (const m of live) this.placeRecord(m.rec, -(1 - e) * m.dx, -(1 - e) * m.dy);
      if (t < 1) requestAnimationFrame(step);
    };
    for (const m of live) this.placeRecord(m.rec, -m.dx, -m.dy);
    requestAnimationFrame(step);
  },

  // the drawn extent, for fit and the minimap
  measure() {
    let w = 0, h = 0;
    for (const { n } of this.nodeEls.values()) {
      w = Math.max(w, n.x + n.w / 2);
      h = Math.max(h, n.y + n.h / 2);
    }
    for (const ex of this.fold.expanded.values()) {
      w = Math.max(w, ex.box.x + ex.box.w);
      h = Math.max(h, ex.box.y + ex.box.h);
    }
    const g = this.model.graph;
    g.width = w + FOLD.pad;
    g.height = h + FOLD.pad;
  },

  // ---- expand / collapse -------------------------------------------------------------------
  isExpanded(gid) {
    return !!(this.fold && this.fold.expanded.has(gid));
  },

  // The payload of a group: on the page already, or fetched once (concurrent callers share the fetch).
  async loadPayload(gid) {
    const model = this.model;
    const have = model.payloadFor(gid);
    if (have) return have;
    if (this.fold.inflight.has(gid)) return this.fold.inflight.get(gid);
    const g = model.graph;
    const job = traceSource.group(g.run, g.pass_index ?? model.passIndex, gid).then((got) => {
      if (got.expired) {
        this.runExpired(got.elsewhere);
        return null;
      }
      if (this.model === model) model.addPayload(gid, got.payload);
      return got.payload;
    }).catch((e) => {
      setStatus(`could not open ${gid}: ${e.message || e}`, true);
      return null;
    }).finally(() => this.fold.inflight.delete(gid));
    this.fold.inflight.set(gid, job);
    return job;
  },

  // elsewhere: the server's answer says another server process ran it (several processes without a broker)
  runExpired(elsewhere = false) {
    if (this._rerunning) return;
    if (this._expiredAt != null && this.model && this.model.createdAt > this._expiredAt) {
      // the run made to replace an expired one expired too: say so rather than run again and again
      setStatus(elsewhere
        ? "this run is on another server process, which this page cannot reach: the server needs sticky routing or a broker"
        : "the server did not keep this run: try Run again later", true);
      return;
    }
    this._rerunning = true;
    this._expiredAt = performance.now();
    setStatus(elsewhere ? "this run is on another server process: running the program again here…"
      : "this run is no longer on the server: running the program again…");
    document.body.dataset.runExpired = elsewhere ? "elsewhere" : "1";
    const again = this.runAgain ? this.runAgain() : null;  // set by main.js: runs the program anew
    Promise.resolve(again).finally(() => {
      this._rerunning = false;
      setStatus(elsewhere ? "this run was on another server process: ran the program again here"
        : "this run had left the server: ran the program again");
    });
  },

  async expand(gid, opts = {}) {
    if (!this.model || !this.model.folded || this.isExpanded(gid)) return;
    const model = this.model;
    for (const g of model.groupPath(gid)) {
      if (this.isExpanded(g)) continue;
      const payload = await this.loadPayload(g);
      if (!payload || this.model !== model) return;
      this.expandNow(g, payload, opts);
    }
  },

  // Synchronous: the payload is on the page. Draws the contents into the group's place.
  expandNow(gid, payload, { auto = false, animate = true } = {}) {
    const rec = this.nodeEls.get(gid);
    if (!rec || this.isExpanded(gid)) return false;
    const n = rec.n, F = FOLD;
    // a fold's chunk ("#60 … #69") opens bare: its iterations sit in the fold's box, no frame or title of its own
    const bare = addsNothingOpen(this.groupOf(gid)), band = bare ? F.pad : F.titleBand;
    const box = { x: n.x - n.w / 2, y: n.y - n.h / 2, w: Math.max(n.w, payload.width + 2 * F.pad), h: Math.max(n.h, payload.height + F.pad + band) };
    const moved = this.shiftSpace(box.x, box.x + n.w, box.y + n.h, box.w - n.w, box.h - n.h, gid);
    rec.g.remove();
    this.nodeEls.delete(gid);
    this.sig.delete(gid);
    const ox = box.x + F.pad, oy = box.y + band;
    const drawn = this.drawGroupBox(gid, box, bare);
    const ex = { gid, n, box, w0: box.w, h0: box.h, ...drawn, nodes: [], edges: [], auto };
    this.fold.expanded.set(gid, ex);
    for (const e of payload.edges || []) {
      const c = { ...e, points: (e.points || []).map(([x, y]) => [x + ox, y + oy]) };
      this.model.addEdge(c);
      this.drawEdge(c);
      ex.edges.push(c.id);
    }
    for (const m of payload.nodes || []) {
      const c = { ...m, x: m.x + ox, y: m.y + oy };
      this.model.addNode(c, gid);
      this.drawRecord(c);
      ex.nodes.push(c.id);
    }
    if (animate) {
      drawn.g.classList.add("fg-fold-in");
      for (const id of ex.nodes) this.nodeEls.get(id).g.classList.add("fg-fold-in");
      this.glide(moved);
    } else for (const m of moved) this.placeRecord(m.rec);
    this.foldChanged();
    return true;
  },

  collapse(gid, { animate = true } = {}) {
    const ex = this.fold && this.fold.expanded.get(gid);
    if (!ex) return;
    for (const [c] of [...this.fold.expanded]) if (c !== gid && this.model.groupPath(c).includes(gid)) this.collapseOne(c, false);
    this.collapseOne(gid, animate);
    this.foldChanged();
  },

  collapseOne(gid, animate) {
    const ex = this.fold.expanded.get(gid);
    if (!ex) return;
    for (const id of ex.nodes) {
      const rec = this.nodeEls.get(id);
      if (!rec) continue;
      rec.g.remove();
      this.nodeEls.delete(id);
      this.sig.delete(id);
    }
    for (const id of ex.edges) {
      const rec = this.edgeEls.get(id);
      if (!rec) continue;
      rec.g.remove();
      if (rec.badge) rec.badge.remove();
      this.edgeEls.delete(id);
    }
    ex.g.remove();
    this.fold.expanded.delete(gid);
    const n = ex.n, b = ex.box;
    n.x = b.x + n.w / 2;
    n.y = b.y + n.h / 2;
    this.renderGroupNode(n);
    const moved = this.shiftSpace(b.x, b.x + ex.w0, b.y + ex.h0, n.w - ex.w0, n.h - ex.h0, gid);
    if (animate) this.glide(moved);
    else for (const m of moved) this.placeRecord(m.rec);
  },

  // An expanded box wraps what it holds (inner boxes first): at least its first size, never the sum of growths.
  fitBoxes() {
    const model = this.model, F = FOLD;
    const boxes = [...this.fold.expanded.values()].sort((a, b) => model.groupPath(b.gid).length - model.groupPath(a.gid).length);
    for (const ex of boxes) {
      const b = ex.box;
      let r = b.x + ex.w0, d = b.y + ex.h0;
      for (const id of ex.nodes) {
        const rec = this.nodeEls.get(id);
        if (!rec) continue;
        r = Math.max(r, rec.n.x + rec.n.w / 2 + F.pad);
        d = Math.max(d, rec.n.y + rec.n.h / 2 + F.pad);
      }
      for (const c of boxes) if (c !== ex && model.tree[c.gid] && model.tree[c.gid].parent === ex.gid) {
        r = Math.max(r, c.box.x + c.box.w + F.pad);
        d = Math.max(d, c.box.y + c.box.h + F.pad);
      }
      b.w = r - b.x;
      b.h = d - b.y;
      ex.rect.setAttribute("width", b.w);
      ex.rect.setAttribute("height", b.h);
    }
    this.snapBoxEdges();
  },

  // An edge leaving an expanded box by its right side starts on that side: the box wraps its contents
  // (it may shrink back from where shiftSpace moved the edge's end when an inner group opened).
  snapBoxEdges() {
    for (const ex of this.fold.expanded.values()) {
      const b = ex.box, right = b.x + b.w;
      for (const rec of this.edgeEls.values()) {
        const pts = rec.e.points || [];
        const i = rec.e.source === ex.gid ? 0 : rec.e.target === ex.gid ? pts.length - 1 : -1;
        if (i < 0 || !pts.length || pts[i][0] <= b.x + b.w / 2 || Math.abs(pts[i][0] - right) < EPS) continue;
        rec.e.points = pts.map((p, j) => (j === i ? [right, p[1]] : p));
        rec.path.setAttribute("d", pathD(rec.e.points));
        rec.bb = null;
        this.placeBadge(rec);
      }
    }
  },

  foldChanged() {
    this.fitBoxes();
    this.measure();
    // records just drawn have no signature yet: only they are painted (the player paints the step itself)
    if (this.lastState && !this.fold.syncing) this.update(this.lastState, this.selected);
    if (this.cullSoon) this.cullSoon(true);
    emit("fg:graph-changed", { expanded: [...this.fold.expanded.keys()] });
  },

  // ---- stepping into folds ------------------------------------------------------------------
  // Called by the player before a step is drawn: the step's group is opened (and the ones playback
  // opened and left are folded again); `again` redraws the step once a missing payload has come.
  syncStep(k, { playing = false, again = null } = {}) {
    const model = this.model;
    if (!model || !model.folded) {
      const main = model && k > 0 ? model.steps[k - 1].main : null;
      this.fold.path = [];
      emit("fg:step", { node: main ? main.node : null, path: [] });
      return;
    }
    const gid = model.stepGroup(k);
    const path = gid ? model.groupPath(gid) : [];
    this.fold.syncing = true;
    const inner = [...this.fold.expanded.values()].filter((ex) => ex.auto && !path.includes(ex.gid))
      .sort((a, b) => model.groupPath(b.gid).length - model.groupPath(a.gid).length);
    for (const ex of inner) this.collapse(ex.gid, { animate: !playing });
    for (const g of path) {
      if (this.isExpanded(g)) continue;
      const payload = model.payloadFor(g);
      if (payload) {
        this.expandNow(g, payload, { auto: true, animate: !playing });
        continue;
      }
      this.loadPayload(g).then((p) => p && this.model === model && again && again());
      break;
    }
    this.fold.syncing = false;
    if (playing) this.prefetch(k);
    this.fold.path = path;
    const main = k > 0 ? model.steps[k - 1].main : null;
    emit("fg:step", { node: main ? main.node : null, path: this.currentPath() });
  },

  // while playing, the groups of the next steps are fetched before playback reaches them
  prefetch(k) {
    const model = this.model;
    const end = Math.min(model.steps.length, k + FOLD.prefetchSteps);
    let last = null;
    for (let i = k; i < end; i++) {
      const g = model.steps[i].main.group;
      if (!g || g === last) continue;
      last = g;
      const missing = model.groupPath(g).find((p) => !model.payloads.has(p) && !(model.pass.graph.payloads || {})[p]);
      if (missing && !this.fold.inflight.has(missing)) {
        this.loadPayload(missing);
        return;
      }
    }
  },

  currentPath() {
    if (!this.fold) return [];
    let path = this.fold.path || [];
    const focused = document.activeElement && document.activeElement.closest ? document.activeElement.closest("[data-group-id]") : null;
    if (!path.length && focused && this.model && this.model.folded) path = this.model.groupPath(focused.dataset.groupId);
    return path.map((id) => ({ id, label: (this.groupOf(id) || {}).label || id }));
  },

  // ---- the page API (contract 11) ----------------------------------------------------------
  async reveal(nodeId, path = []) {
    for (const g of path || []) await this.expand(g);
    // a module box closed over the node (modules below the first level start closed): open the boxes holding it
    if (this.hidden && this.hidden.has(nodeId)) {
      const holding = (this.clusters || []).filter((c) => this.collapsed.has(c.id) && (c.nodes || []).includes(nodeId));
      for (const c of holding) this.collapsed.delete(c.id);
      if (holding.length) this.collapsedChanged();
    }
    const rec = this.nodeEls.get(nodeId);
    if (!rec) return;
    // found from an overview: close enough to read it
    this.centreAt(rec.n.x, rec.n.y, Math.max(this.transform.k, this.minZoom()));
    rec.g.classList.add("fg-found");
    setTimeout(() => rec.g.classList.remove("fg-found"), FOLD.foundMs);
  },

  visibleBox() {
    const g = this.model ? this.model.graph : { width: 0, height: 0 };
    return { x: 0, y: 0, w: g.width, h: g.height };
  },

  viewBox() {
    const t = this.transform || zoomIdentity;
    const W = this.svg.clientWidth || 1, H = this.svg.clientHeight || 1;
    return { x: -t.x / t.k, y: -t.y / t.k, w: W / t.k, h: H / t.k };
  },

  panTo(x, y) {
    this.userZoomed = true;
    select(this.svg).call(this.zoomer.translateTo, x, y);
  },

  // (x, y) at the centre of the view, at zoom k
  centreAt(x, y, k) {
    this.userZoomed = true;
    const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500;
    select(this.svg).call(this.zoomer.transform, zoomIdentity.translate(W / 2 - x * k, H / 2 - y * k).scale(k));
  },
};
