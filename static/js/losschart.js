// Loss curve (uPlot, loaded on first use): grows as passes stream in; click to open a pass.
import { LOSS_CHART as LC, THEMES } from "./config.js";
import { onFirstUse } from "./lazy.js";

const loadUPlot = onFirstUse("/static/vendor/uplot/uPlot.min.css", () => import("../vendor/uplot/uplot.js"));

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
      const { width, height } = this.size();
      if (this.plot.width !== width || this.plot.height !== height) this.plot.setSize({ width, height });
    }).observe(root);
  }

  size() {
    return { width: Math.max(LC.minW, this.root.clientWidth), height: Math.max(LC.minH, this.root.clientHeight || LC.h) };
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
    const { width, height } = this.size();
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
      scales: { x: { time: false }, y: { range: (u, min, max) => [Math.min(0, min), max > 0 ? max * LC.headroom : 1] } },
      axes: [{ ...axis, size: LC.xAxis, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] }, { ...axis, size: LC.yAxis, space: LC.ySpace }],
      series: [{}, { label: "loss", stroke: th.backward, width: LC.lineW, points: { show: this.xs.length < LC.pointsUpTo, size: LC.pointSize } }],
      hooks: {
        draw: [(u) => {
          if (self.current == null) return;
          const x = u.valToPos(self.current, "x", true);
          const ctx = u.ctx;
          ctx.save();
          ctx.strokeStyle = th.accent;
          ctx.lineWidth = LC.markerW * devicePixelRatio;
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
