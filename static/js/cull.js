// Drawing at scale (issue 11), GraphView methods: records and edges outside the view (plus a margin)
// are taken out of the rendering (display none), updated once per animation frame as the camera moves;
// zoomed far out, records shrink to dots and labels go. Small graphs (under FOLD.cullFrom records) never cull.
import { FOLD } from "./config.js";

function edgeBox(rec) {
  if (rec.bb) return rec.bb;
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const [x, y] of rec.e.points || []) {
    x0 = Math.min(x0, x);
    y0 = Math.min(y0, y);
    x1 = Math.max(x1, x);
    y1 = Math.max(y1, y);
  }
  rec.bb = { x0, y0, x1, y1 };
  return rec.bb;
}

export const culling = {
  // once per frame at most; `now` runs it at once (after a fold changed what is drawn)
  cullSoon(now = false) {
    if (now) return this.cull();
    if (this.cullFrame) return;
    this.cullFrame = requestAnimationFrame(() => {
      this.cullFrame = null;
      this.cull();
    });
  },

  cull() {
    if (!this.model) return;
    const t = this.transform;
    const far = !!this.model.folded && t.k < FOLD.dotZoom;
    this.svg.classList.toggle("fg-far", far);
    const active = this.nodeEls.size + this.edgeEls.size > FOLD.cullFrom;
    if (!active && !this.culling) return;
    this.culling = active;
    const W = this.svg.clientWidth || 800, H = this.svg.clientHeight || 500, m = FOLD.cullMargin;
    const x0 = (-t.x - W * m) / t.k, x1 = (W * (1 + m) - t.x) / t.k, y0 = (-t.y - H * m) / t.k, y1 = (H * (1 + m) - t.y) / t.k;
    const shown = [];
    for (const [id, rec] of this.nodeEls) {
      const n = rec.n;
      const out = active && (n.x + n.w / 2 < x0 || n.x - n.w / 2 > x1 || n.y + n.h / 2 < y0 || n.y - n.h / 2 > y1);
      if (out === !!rec.culled) continue;
      rec.culled = out;
      if (out) rec.g.setAttribute("display", "none");
      else {
        rec.g.removeAttribute("display");
        shown.push(id);
      }
    }
    for (const rec of this.edgeEls.values()) {
      const b = edgeBox(rec);
      const out = active && (b.x1 < x0 || b.x0 > x1 || b.y1 < y0 || b.y0 > y1);
      if (out === !!rec.culled) continue;
      rec.culled = out;
      if (out) rec.g.setAttribute("display", "none");
      else rec.g.removeAttribute("display");
      if (rec.badge) out ? rec.badge.setAttribute("display", "none") : rec.badge.removeAttribute("display");
    }
    // records back in view show the current step (they were skipped while out of it)
    if (shown.length && this.lastState) for (const id of shown) this.paintNode(id, this.nodeEls.get(id), this.lastState, this.selected);
  },
};
