// Loss curve (uPlot, loaded on first use): grows as passes stream in; click to open a pass.
import { LOSS_CHART as LC, THEMES } from "./config.js";
import { onFirstUse } from "./lazy.js";

const loadUPlot = onFirstUse("/static/vendor/uplot/uPlot.min.css", () => import("../vendor/uplot/uplot.js"));

// A y tick: at most 3 significant digits, thousands as k and M ("2.5k", not "2,500.000").
export function yLabel(v) {
  if (v == null || !isFinite(v)) return "";
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 1e6) return +(v / 1e6).toPrecision(3) + "M";
  if (a >= 1e4) return +(v / 1e3).toPrecision(3) + "k";
  if (a < 1e-3) return v.toExponential(1);
  return String(+v.toPrecision(3));
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
    this.log = false;
    // the log axis: late improvements of a loss that fell by orders of magnitude show (zero or below: no log)
    this.logButton = document.getElementById("loss-log");
    if (this.logButton) this.logButton.addEventListener("click", () => this.setLog(!this.log));
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
    const canLog = ys.length > 0 && ys.every((y) => y > 0);
    if (this.logButton) this.logButton.disabled = !canLog;
    if (this.log && !canLog) this.setLog(false);
    else this.draw();
  }

  setLog(on) {
    this.log = on;
    if (this.logButton) this.logButton.setAttribute("aria-pressed", String(on));
    this.rebuild();
  }

  rebuild() {
    if (this.plot) {
      this.plot.destroy();
      this.plot = null;
    }
    this.draw();
  }

  setCurrent(x) {
    this.current = x;
    if (this.plot) this.plot.redraw(false);
  }

  setTheme(theme) {
    if (theme === this.theme) return;
    this.theme = theme;
    this.rebuild();
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
    // y labels in 3 significant digits, the axis as wide as its longest label (a 2,000-scale loss is not clipped)
    const yLabels = (u, ticks) => ticks.map(yLabel);
    const ySize = (u, values) => {
      if (!values || !values.length) return LC.yAxis;
      u.ctx.font = u.axes[1].font[0];
      const widest = Math.max(...values.map((v) => u.ctx.measureText(v).width)) / devicePixelRatio;
      return Math.max(LC.yAxis, Math.ceil(widest + LC.yLabelPad));
    };
    const y = this.log ? { distr: 3, log: 10 } : { range: (u, min, max) => [Math.min(0, min), max > 0 ? max * LC.headroom : 1] };
    this.plot = new uPlot({
      width, height,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: false }, y },
      axes: [{ ...axis, size: LC.xAxis, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] }, { ...axis, size: ySize, space: LC.ySpace, values: yLabels }],
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
