// Loss curve (uPlot, loaded on first use): grows as passes stream in; click to open a pass.
import { THEMES } from "./config.js";

let uplotPromise = null;
function loadUPlot() {
  if (!uplotPromise) {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = "/static/vendor/uplot/uPlot.min.css";
    document.head.appendChild(link);
    uplotPromise = import("../vendor/uplot/uplot.js").then((m) => m.default);
  }
  return uplotPromise;
}

export class LossChart {
  constructor(root, { onPick } = {}) {
    this.root = root;
    this.onPick = onPick;
    this.xs = [];
    this.ys = [];
    this.current = null;
    this.theme = "light";
    this.plot = null;
    new ResizeObserver(() => {
      if (!this.plot || this.root.closest("[hidden]")) return;
      const width = Math.max(200, this.root.clientWidth), height = Math.max(80, this.root.clientHeight || 110);
      if (this.plot.width !== width || this.plot.height !== height) this.plot.setSize({ width, height });
    }).observe(root);
  }

  setData(xs, ys) {
    this.xs = xs;
    this.ys = ys;
    this.draw();
  }

  setCurrent(x) {
    this.current = x;
    if (this.plot) this.plot.redraw(false);
  }

  setTheme(theme) {
    if (theme === this.theme) return;
    this.theme = theme;
    if (this.plot) {
      this.plot.destroy();
      this.plot = null;
    }
    this.draw();
  }

  async draw() {
    if (this.root.closest("[hidden]")) return;
    const uPlot = await loadUPlot();
    const th = THEMES[this.theme] || THEMES.light;
    const data = [this.xs, this.ys];
    const width = Math.max(200, this.root.clientWidth);
    const height = Math.max(80, this.root.clientHeight || 110);
    if (this.plot && (this.plot.width !== width || this.plot.height !== height)) this.plot.setSize({ width, height });
    if (this.plot) {
      this.plot.setData(data);
      return;
    }
    const self = this;
    const axis = { stroke: th.muted, grid: { stroke: th.border, width: 1 }, ticks: { stroke: th.border } };
    this.plot = new uPlot({
      width, height,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: false }, y: { range: (u, min, max) => [Math.min(0, min), max > 0 ? max * 1.08 : 1] } },
      axes: [{ ...axis, size: 28, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] }, { ...axis, size: 52, space: 16 }],
      series: [{}, { label: "loss", stroke: th.backward, width: 2, points: { show: this.xs.length < 60, size: 5 } }],
      hooks: {
        draw: [(u) => {
          if (self.current == null) return;
          const x = u.valToPos(self.current, "x", true);
          const ctx = u.ctx;
          ctx.save();
          ctx.strokeStyle = th.accent;
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.beginPath();
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
          ctx.restore();
        }],
      },
    }, data, this.root);
    this.plot.over.addEventListener("click", () => {
      const idx = this.plot.cursor.idx;
      if (idx != null && this.onPick) this.onPick(this.xs[idx]);
    });
    this.plot.over.setAttribute("aria-label", "Loss curve: click to open that pass");
  }
}
