// Image-like values as heatmap tiles, one per channel: a conv weight (out, in, kh, kw) or a feature
// map (N, C, H, W) is a tile per [out, in] / [n, c], (C, H, W) a tile per channel, a big matrix one
// tile. Drawn on canvas on the one diverging scale; hovering a pixel reads its number.
import { HEATMAP, TILES, divergingColor } from "./config.js";
import { flat, fmt, shapeText } from "./values.js";

// Is `v` (a full value, not a summary) one to draw as tiles?
export function isImageLike(v) {
  const f = flat(v);
  // small ones keep the heatmap with the numbers written on it
  if (f.summary || f.data.length <= HEATMAP.numbersUpTo) return false;
  const s = f.shape;
  if (s.length === 3 || s.length === 4) return s[s.length - 1] >= TILES.minSide && s[s.length - 2] >= TILES.minSide;
  if (s.length === 2) return s[0] >= TILES.min2d && s[1] >= TILES.min2d;
  return false;
}

// The tiles' index prefixes: [[0, 0], [0, 1], …] over the leading dims (none for a matrix).
function tileIndices(shape) {
  const lead = shape.slice(0, -2);
  const out = [];
  const count = lead.reduce((a, b) => a * b, 1);
  for (let t = 0; t < count; t++) {
    const idx = [];
    let r = t;
    for (let d = lead.length - 1; d >= 0; d--) {
      idx.unshift(r % lead[d]);
      r = Math.floor(r / lead[d]);
    }
    out.push(idx);
  }
  return out;
}

export function tiles(v, maxAbs, theme, { label = "value", domainNote = false } = {}) {
  const { shape, data } = flat(v);
  const h = shape[shape.length - 2], w = shape[shape.length - 1];
  const all = tileIndices(shape);
  const shown = all.slice(0, TILES.maxTiles);
  // pixels per element: the tile's longer side near TILES.tilePx, within the cell size limits
  const cell = Math.max(TILES.minCellPx, Math.min(TILES.maxCellPx, Math.floor(TILES.tilePx / Math.max(h, w))));
  const wrap = document.createElement("div");
  wrap.className = "tiles";
  const grid = document.createElement("div");
  grid.className = "tiles-grid";
  grid.style.gap = `${TILES.gap}px`;
  grid.setAttribute("aria-label", `${label} ${shapeText(shape)}: ${all.length} heatmap tile${all.length === 1 ? "" : "s"}`);
  const readout = document.createElement("div");
  readout.className = "heatmap-readout tiles-readout";
  readout.textContent = "hover a pixel to read it";
  const dpr = window.devicePixelRatio || 1;
  for (const idx of shown) {
    const offset = idx.reduce((acc, i, d) => acc * shape[d] + i, 0) * h * w;
    const fig = document.createElement("figure");
    fig.className = "tile";
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(w * cell * dpr);
    canvas.height = Math.round(h * cell * dpr);
    canvas.style.width = `${w * cell}px`;
    canvas.style.height = `${h * cell}px`;
    const name = idx.length ? `${label}[${idx.join(", ")}]` : label;
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", `${name}: ${h}×${w} heatmap`);
    const g = canvas.getContext("2d");
    g.scale(dpr, dpr);
    for (let i = 0; i < h; i++) {
      for (let j = 0; j < w; j++) {
        g.fillStyle = divergingColor(data[offset + i * w + j], maxAbs, theme);
        g.fillRect(j * cell, i * cell, cell, cell);
      }
    }
    const at = (e) => {
      const r = canvas.getBoundingClientRect();
      const j = Math.min(w - 1, Math.max(0, Math.floor(((e.clientX - r.left) / r.width) * w)));
      const i = Math.min(h - 1, Math.max(0, Math.floor(((e.clientY - r.top) / r.height) * h)));
      return { i, j, x: data[offset + i * w + j] };
    };
    canvas.addEventListener("mousemove", (e) => {
      const { i, j, x } = at(e);
      const where = `${label}[${[...idx, i, j].join(", ")}]`;
      readout.textContent = `${where} = ${fmt(x)}`;
      canvas.title = `${where} = ${fmt(x)}`;
    });
    const cap = document.createElement("figcaption");
    cap.textContent = idx.length ? `[${idx.join(", ")}]` : shapeText(shape);
    fig.append(canvas, cap);
    grid.appendChild(fig);
  }
  wrap.appendChild(grid);
  if (all.length > shown.length) {
    const more = document.createElement("p");
    more.className = "muted small tiles-more";
    more.textContent = `+${all.length - shown.length} more (${all.length} tiles of ${h}×${w})`;
    wrap.appendChild(more);
  }
  if (domainNote) {
    const note = document.createElement("p");
    note.className = "muted small tiles-domain";
    note.textContent = `colour ±${fmt(maxAbs)} (this tensor's largest): blue negative, red positive`;
    wrap.appendChild(note);
  }
  wrap.appendChild(readout);
  return wrap;
}
