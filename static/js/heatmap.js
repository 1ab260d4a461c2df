// Vectors and matrices as heatmaps on the one diverging scale, the numbers on hover (a tap on touch screens).
import { HEATMAP, divergingColor, inkOn } from "./config.js";
import { flat, fmt, shapeText } from "./values.js";

export function heatmap(v, maxAbs, theme, { label = "value" } = {}) {
  const f = flat(v);
  const wrap = document.createElement("div");
  wrap.className = "heatmap";
  const shape = f.shape;
  let cols = shape.length ? shape[shape.length - 1] : 1;
  if (f.summary) cols = Math.min(f.data.length, HEATMAP.summaryCols);
  cols = Math.max(1, Math.min(cols, f.data.length || 1));
  const data = f.data.slice(0, HEATMAP.maxCells);
  const grid = document.createElement("div");
  grid.className = "heatmap-grid";
  const showNumbers = data.length <= HEATMAP.numbersUpTo;
  grid.style.gridTemplateColumns = showNumbers ? `repeat(${cols}, minmax(${HEATMAP.numberCellMin}px, 1fr))`
    : `repeat(${cols}, minmax(${HEATMAP.compactMin}px, ${HEATMAP.cell}px))`;
  grid.setAttribute("role", "table");
  grid.setAttribute("aria-label", `${label} ${shapeText(shape)} heatmap`);
  const readout = document.createElement("div");
  readout.className = "heatmap-readout";
  readout.setAttribute("aria-live", "polite");
  readout.textContent = f.summary ? `summary: first ${f.data.length} of ${shape.reduce((a, b) => a * b, 1)} elements` : matchMedia("(hover: none)").matches ? "tap a cell to read it" : "hover a cell to read it";
  data.forEach((x, i) => {
    const c = document.createElement("div");
    c.className = "heatmap-cell";
    c.style.background = divergingColor(x, maxAbs, theme);
    c.style.color = inkOn(x, maxAbs, theme);
    const idx = indexOf(i, shape, f.summary);
    c.title = `${label}${idx} = ${fmt(x)}`;
    c.setAttribute("role", "cell");
    if (showNumbers) c.textContent = Math.abs(x) >= 1e-3 && Math.abs(x) < 1e4 ? String(Number(x.toPrecision(3))) : fmt(x);
    const read = () => (readout.textContent = `${label}${idx} = ${x}`);
    c.addEventListener("mouseenter", read);
    // touch has no hover: a tap reads the cell, and stays marked so the reader sees which one
    c.addEventListener("click", () => {
      read();
      for (const other of grid.querySelectorAll(".heatmap-cell.read")) other.classList.remove("read");
      c.classList.add("read");
    });
    grid.appendChild(c);
  });
  if (!showNumbers) grid.classList.add("compact");
  wrap.append(grid, readout);
  return wrap;
}

function indexOf(i, shape, summary) {
  if (summary || !shape.length) return `.flat[${i}]`;
  const idx = [];
  for (let d = shape.length - 1; d >= 0; d--) {
    idx.unshift(i % shape[d]);
    i = Math.floor(i / shape[d]);
  }
  return `[${idx.join(", ")}]`;
}

// A legend bar for the diverging scale.
export function scaleLegend(maxAbs, theme) {
  const wrap = document.createElement("div");
  wrap.className = "scale-legend";
  const bar = document.createElement("div");
  bar.className = "scale-bar";
  const stops = [];
  const n = HEATMAP.legendStops;
  for (let i = 0; i <= n; i++) {
    const v = -maxAbs + (2 * maxAbs * i) / n;
    stops.push(`${divergingColor(v, maxAbs, theme)} ${i * (100 / n)}%`);
  }
  bar.style.background = `linear-gradient(90deg, ${stops.join(", ")})`;
  // one line: "values −25 ▬▬▬ +25" (blue negative, pale zero, red positive)
  wrap.title = "Colour of values and gradients: blue negative, pale zero, red positive; stronger = larger";
  const name = document.createElement("span");
  name.className = "scale-name";
  name.textContent = "values";
  const lo = document.createElement("span");
  lo.className = "scale-end";
  lo.textContent = `−${fmt(maxAbs)}`;
  const hi = document.createElement("span");
  hi.className = "scale-end";
  hi.textContent = `+${fmt(maxAbs)}`;
  wrap.append(name, lo, bar, hi);
  return wrap;
}
