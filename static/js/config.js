// Every visual constant of the page lives here: colours, sizes, durations and the one diverging
// colour scale used for sign and magnitude everywhere (graph cells, heatmaps, inspector, legend).
// CSS reads the colours through custom properties that applyTheme() sets from this module.

export const THEMES = {
  light: {
    bg: "#f7f7f5",
    panel: "#ffffff",
    panel2: "#eef0f3",
    border: "#d5d9df",
    text: "#1d2330",
    muted: "#5f6b7a",
    accent: "#2156d1",
    accentText: "#ffffff",
    danger: "#c62828",
    dangerBg: "#fdecea",
    ok: "#2e7d32",
    graphBg: "#ffffff",
    edge: "#8a94a3",
    nodeFill: "#ffffff",
    nodeStroke: "#596273",
    pending: "#eceff3",       // "not computed yet": hatched grey, never a number
    pendingInk: "#9aa3af",
    opFill: "#f2f4f7",
    cluster: "#f3f1fb",
    clusterStroke: "#9b8fd1",
    zero: "#f4f4f4",          // centre of the diverging scale
    nan: "#4a4a4a",           // not a number: its own colour, never on the scale
    neg: [33, 102, 172],      // RdBu end points (sign = hue)
    pos: [178, 24, 43],
    forward: "#00a37a",       // values travelling forward
    backward: "#e07b00",      // gradients travelling back (the second colour)
    cut: "#c62828",
    focus: "#2156d1",
  },
  dark: {
    bg: "#14171c",
    panel: "#1b1f26",
    panel2: "#232833",
    border: "#343b48",
    text: "#e6e9ee",
    muted: "#9aa4b2",
    accent: "#6ea1ff",
    accentText: "#0c1220",
    danger: "#ff6b6b",
    dangerBg: "#3a1e22",
    ok: "#7bd88f",
    graphBg: "#111418",
    edge: "#7b8494",
    nodeFill: "#1d222b",
    nodeStroke: "#a3adbd",
    pending: "#262c36",
    pendingInk: "#77808e",
    opFill: "#262c36",
    cluster: "#1f1c2e",
    clusterStroke: "#7f72c0",
    zero: "#2a2f38",
    nan: "#9a9a9a",
    neg: [92, 160, 236],
    pos: [240, 96, 96],
    forward: "#2fd3a0",
    backward: "#ffa53a",
    cut: "#ff6b6b",
    focus: "#6ea1ff",
  },
};

// Node roles: the header band of a tensor record. Chosen away from the red/blue sign hues.
export const ROLE_COLORS = {
  input: "#138a72",
  parameter: "#7b3fb0",
  intermediate: "#5b6778",
  output: "#b8630a",
  loss: "#b8630a",
  constant: "#8d96a3",
};
export const ROLE_NAMES = {
  input: "input",
  parameter: "parameter",
  intermediate: "intermediate",
  output: "output",
  loss: "loss",
  constant: "constant",
};

export const SIZES = {
  normal: {
    uiFont: 14,          // px, the page
    monoFont: 13,
    edgeWidth: 1.4,      // graph units (points)
    litEdgeWidth: 3,
    nodeStroke: 1.3,
    pulseRadius: 4.5,
    editorWidth: 380,    // px
    inspectorWidth: 300,
  },
  projector: {
    uiFont: 20,
    monoFont: 19,
    edgeWidth: 2.6,
    litEdgeWidth: 5,
    nodeStroke: 2.4,
    pulseRadius: 7,
    editorWidth: 440,
    inspectorWidth: 360,
  },
};

export const DURATIONS = {
  step: 700,             // ms per timeline step at speed 1
  pulse: 520,            // ms a pulse takes to travel its edge at speed 1
  flash: 900,            // ms a changed cell stays highlighted
  toast: 3200,           // ms an event banner stays up
  zoom: 350,             // ms zoom-to-fit transition
  copiedNote: 1400,
};
export const SPEEDS = [0.25, 0.5, 1, 2, 4];

export const GRAPH = {
  fontFamily: "ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace",
  // The server lays records out at recordH × 96–130 pt and op ellipses 32 pt high, sized for the
  // text below (app/layout/sizes.py): record text ≈ 0.62 × row height ≈ 10.7 pt, op text ≈ 14 pt.
  recordH: 54,
  headerFrac: 0.36,      // tensor record: header band, then value row and grad row
  // graph-unit font sizes of the small print, at recordH (scaled with the records' size)
  fonts: { caption: 9, edgeLabel: 10, badge: 10, cluster: 11, cutmark: 10 },
  cellMaxElems: 48,      // mini heatmap inside a node up to this many elements
  fitPadding: 24,        // px around the graph for zoom-to-fit
  minZoom: 0.05,
  minReadableZoom: 0.45, // below this, zoom-to-fit starts readable at the beginning and follows the step
  maxZoom: 8,
};

export const HEATMAP = { cell: 22, maxCells: 256 };

// ---- The one diverging colour scale: sign = hue, magnitude = strength (symmetric log) ----
function mix(a, b, t) {
  return [0, 1, 2].map((i) => Math.round(a[i] + (b[i] - a[i]) * t));
}
function hexToRgb(h) {
  const n = parseInt(h.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

// t in [0, 1] from |v| relative to the domain's largest magnitude, symlog so small gradients show.
export function magnitude(v, maxAbs) {
  if (!isFinite(v)) return 1;
  const m = Math.max(maxAbs || 1, 1e-12);
  const c = m / 100;
  return Math.min(1, Math.log1p(Math.abs(v) / c) / Math.log1p(m / c));
}

export function divergingColor(v, maxAbs, theme = "light") {
  const th = THEMES[theme] || THEMES.light;
  if (typeof v !== "number") return th.pending;
  if (Number.isNaN(v)) return th.nan;
  const z = hexToRgb(th.zero);
  const end = v < 0 ? th.neg : th.pos;
  const [r, g, b] = mix(z, end, magnitude(v, maxAbs));
  return `rgb(${r},${g},${b})`;
}

// Text drawn on top of a scale colour: light on strong colours, dark on pale ones.
export function inkOn(v, maxAbs, theme = "light") {
  if (Number.isNaN(v)) return theme === "dark" ? "#111111" : "#ffffff";
  const t = typeof v === "number" ? magnitude(v, maxAbs) : 0;
  if (theme === "dark") return t > 0.55 ? "#ffffff" : THEMES.dark.text;
  return t > 0.55 ? "#ffffff" : THEMES.light.text;
}

// CSS custom properties for the page chrome.
export function cssVars(theme, projector) {
  const th = THEMES[theme] || THEMES.light;
  const sz = SIZES[projector ? "projector" : "normal"];
  const vars = {
    "--ui-font": sz.uiFont + "px",
    "--mono-font": sz.monoFont + "px",
    "--editor-width": sz.editorWidth + "px",
    "--inspector-width": sz.inspectorWidth + "px",
    "--forward": th.forward,
    "--backward": th.backward,
  };
  for (const [k, v] of Object.entries(th)) {
    if (typeof v === "string") vars["--" + k.replace(/[A-Z]/g, (m) => "-" + m.toLowerCase())] = v;
  }
  for (const [k, v] of Object.entries(ROLE_COLORS)) vars["--role-" + k] = v;
  vars["--scale-neg"] = divergingColor(-1, 1, theme);
  vars["--scale-zero"] = th.zero;
  vars["--scale-pos"] = divergingColor(1, 1, theme);
  return vars;
}

// The graph's own stylesheet (inside the <svg>, so an exported SVG looks the same).
export function graphCss(theme, projector) {
  const th = THEMES[theme] || THEMES.light;
  const sz = SIZES[projector ? "projector" : "normal"];
  const roles = Object.entries(ROLE_COLORS)
    .map(([r, c]) => `.fg-node.role-${r} .fg-head{fill:${c}} .fg-node.role-${r} .fg-frame{stroke:${c}}`)
    .join("\n");
  return `
svg.fg-graph{background:${th.graphBg};font-family:${GRAPH.fontFamily}}
.fg-edge path{fill:none;stroke:${th.edge};stroke-width:${sz.edgeWidth}}
.fg-edge.lit-forward path{stroke:${th.forward};stroke-width:${sz.litEdgeWidth}}
.fg-edge.lit-backward path{stroke:${th.backward};stroke-width:${sz.litEdgeWidth}}
.fg-edge.cut path{stroke:${th.cut};stroke-dasharray:6 5}
.fg-cutmark{fill:${th.cut};font-size:${GRAPH.fonts.cutmark}px;font-weight:700;paint-order:stroke;stroke:${th.graphBg};stroke-width:3px}
.fg-cut-gap{fill:${th.graphBg}}
.fg-cut-bar{stroke:${th.cut};stroke-width:${sz.edgeWidth + 0.6}}
.fg-arrow{fill:${th.edge}}
.fg-arrow-forward{fill:${th.forward}}
.fg-arrow-backward{fill:${th.backward}}
.fg-arrow-cut{fill:${th.cut}}
.fg-elabel rect{fill:${th.graphBg};stroke:${th.backward};stroke-width:1}
.fg-elabel text{fill:${th.text};font-size:${GRAPH.fonts.edgeLabel}px}
.fg-elabel.fwd rect{stroke:${th.forward}}
.fg-frame{fill:${th.nodeFill};stroke:${th.nodeStroke};stroke-width:${sz.nodeStroke}}
.fg-node.nograd .fg-frame{stroke-dasharray:4 3}
.fg-node.leaf .fg-frame{stroke-width:${sz.nodeStroke * 2}}
.fg-head-text{fill:#ffffff;font-weight:600}
.fg-shape-text{fill:#ffffff;opacity:.85}
.fg-rowlabel{fill:${th.muted}}
.fg-cell{stroke:none}
.fg-cell.pending{fill:url(#fg-hatch)}
.fg-celltext{fill:${th.text}}
.fg-celltext.pending,.fg-celltext.none{fill:${th.pendingInk};font-style:italic}
.fg-caption{fill:${th.muted}}
.fg-caption:not([font-size]){font-size:${GRAPH.fonts.caption}px}
.fg-op .fg-opshape{fill:${th.opFill};stroke:${th.nodeStroke};stroke-width:${sz.nodeStroke}}
.fg-op text{fill:${th.text};font-weight:600}
.fg-op.nograd .fg-opshape{stroke-dasharray:3 3;opacity:.7}
.fg-op.freed .fg-opshape{stroke-dasharray:2 3;opacity:.45}
.fg-op.freed text{opacity:.45}
.fg-node.active-forward .fg-frame,.fg-op.active-forward .fg-opshape{stroke:${th.forward};stroke-width:${sz.litEdgeWidth}}
.fg-node.active-backward .fg-frame,.fg-op.active-backward .fg-opshape{stroke:${th.backward};stroke-width:${sz.litEdgeWidth}}
.fg-node.error .fg-frame{stroke:${th.cut};stroke-width:${sz.litEdgeWidth}}
.fg-node.selected .fg-frame,.fg-op.selected .fg-opshape{stroke:${th.focus};stroke-width:${sz.litEdgeWidth}}
.fg-node:focus,.fg-op:focus{outline:none}
.fg-node:focus-visible .fg-frame,.fg-op:focus-visible .fg-opshape{stroke:${th.focus};stroke-width:${sz.litEdgeWidth}}
.fg-node.pending .fg-frame{stroke-dasharray:5 4}
.fg-flash{fill:none;stroke-width:${sz.litEdgeWidth + 2};opacity:0}
.fg-badge rect{fill:${th.backward}}
.fg-badge text{fill:#ffffff;font-size:${GRAPH.fonts.badge}px;font-weight:600}
.fg-badge.fwd rect{fill:${th.forward}}
.fg-badge.err rect{fill:${th.cut}}
.fg-cluster rect.fg-cbox{fill:${th.cluster};stroke:${th.clusterStroke};stroke-width:${sz.nodeStroke};stroke-dasharray:5 3}
.fg-cluster text{fill:${th.clusterStroke};font-weight:600}
.fg-cluster text:not([font-size]){font-size:${GRAPH.fonts.cluster}px}
.fg-cluster.collapsed rect.fg-cbox{stroke-dasharray:none;fill:${th.panel2}}
.fg-cluster .fg-ctoggle{cursor:pointer}
.fg-pulse-forward{fill:${th.forward}}
.fg-pulse-backward{fill:${th.backward}}
.fg-hatch-line{stroke:${th.pendingInk};stroke-width:1;opacity:.45}
.fg-hatch-bg{fill:${th.pending}}
${roles}
`;
}
