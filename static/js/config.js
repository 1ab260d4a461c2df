// Every visual constant of the page lives here: colours, sizes, durations and the one diverging
// colour scale used for sign and magnitude everywhere (graph cells, heatmaps, inspector, legend).
// CSS reads the colours through custom properties that applyLook() (look.js) sets from cssVars().
// LAYOUT, the sizes the server lays nodes out for, has a Python twin in app/layout/sizes.py.

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
  toast: 3200,           // ms an event banner stays up (shorter at 2× and faster)
  zoom: 300,             // ms zoom-to-fit transition
  zoomStep: 200,         // ms the + / − buttons take
  pan: 220,              // ms the view takes to follow the step
  copiedNote: 1400,
  urlWrite: 150,         // ms of quiet before the URL hash is rewritten
  refit: 50,             // ms after a projector switch before the graph is fitted again
  resize: 120,           // ms of quiet after a window resize before the graph is fitted again
  cancelShown: 400,      // ms a run goes on before its Cancel button appears (quick runs never flash it)
};
export const SPEEDS = [0.25, 0.5, 1, 2, 4];
// prefers-reduced-motion: reduce — no autoplay, and the view jumps where it would glide
export const prefersReducedMotion = () => typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;

// Where a pulse is along its step (fractions of the step): an op's inputs light up first and its
// output after; a backward step sends the gradient into the op first, then out to its inputs.
export const PULSE = { forwardSplit: 0.5, backwardSplit: 0.45 };

// ---- The layout contract with the server ----
// app/layout/sizes.py sizes the boxes Graphviz lays out for the text the page draws in them, with
// these numbers (graph units = points). It keeps its own copy; tests/browser/test_layout_twin.py
// reads the block between the markers below (JSON but for comments) and checks the two are equal.
// LAYOUT-BEGIN
export const LAYOUT = {
  "recordH": 54,         // tensor record height
  "recordMinW": 96,      // record widths the server picks from (the page draws what it is given)
  "recordMaxW": 130,
  "headerFrac": 0.36,    // record: a header band (name, shape), then the value row and the grad row
  "textFill": 0.62,      // text size as a fraction of its band's height: ≈ 10.7 pt in a record row
  "glyphW": 0.62,        // monospace advance per em (DejaVu Sans Mono: 0.602, and a little room)
  "recordTextPad": 12,   // header width that is not text: insets and the gap before the shape
  "unnamedChars": 9,     // the server's width budget for an unnamed tensor's expression
  "opH": 32,             // op ellipse height
  "opMinW": 34,
  "opFont": 13,          // the op text size the server sizes ellipses for
  "opPad": 18,           // ellipse width beyond its text
  "clusterFont": 11,     // module box titles: dot keeps a band this high above the members
  "numbersUpTo": 24,     // tensors this small write their numbers on their cells ...
  "numberW": 4.1,        // ... each in this many ems of the record font (6 characters: "-0.339", and a gap)
  "numberLineH": 1.3,    // ... and this many ems high
  "numbersMaxW": 250,    // the server grows a record to hold its numbers at the record font up to this wide ...
  "numbersMaxRows": 4,   // ... and this many rows of numbers
  "rowLabelW": 26,       // the "data" / "grad" label before a row's cells
  "cellGap": 3           // around a row's cells
};
// LAYOUT-END

// The page's own drawing of the graph (graph units unless marked px or ms).
export const GRAPH = {
  fontFamily: "ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace",
  // font sizes of the small print, at LAYOUT.recordH (scaled with the records' size)
  fonts: { caption: 9, captionMin: 6, edgeLabel: 10, badge: 10, cluster: LAYOUT.clusterFont, cutmark: 10, min: 5 },
  labelScale: [0.55, 1.2], // badges, edge labels and pulses follow the records' size, within these
  record: {
    radius: 4,             // frame corners
    inset: 5,              // header text from the sides
    fontPerW: 7,           // the record font is at most its width / this
    shapeFont: 0.8,        // the shape ("4×3") beside the name, × the record font
    shapeMaxW: 0.45,       // of the record width at most
    rowLabelFont: 0.72,    // "data", "grad", "∂L", × the record font
    rowLabelX: 3,
    rowLabelChars: 4,
    rowLabelPad: 6,
    rowLabelMaxW: 0.3,     // of the record width at most
    cellGap: LAYOUT.cellGap,  // around a row's value cell
    cellRadius: 2,
    pendingFont: 0.85,     // "not yet", "None", "no grad", × the record font
    captionOverhang: 1.1,  // a caption below the record may be this much wider than it
    captionGap: 1,
    longCaptionW: 110,     // records at least this wide say "grad_fn=<…>", not only its name
    leafCaptionW: 100,     // and "leaf · requires_grad", not only "leaf"
  },
  cell: {
    maxElems: 48,          // mini heatmap inside a node up to this many elements
    maxCols: 16,           // columns of a summary's (or a long row's) mini heatmap
    spacing: 0.6,          // between heatmap cells
    minSize: 0.5,
    numbersUpTo: LAYOUT.numbersUpTo,  // numbers written on the cells of heatmaps this small (when they fit)
    numberChars: 6,        // a cell's number, 3 significant digits: "-0.339", "1.2e5" (values.js shortNum)
    numberGap: 0.8,        // characters of room between two numbers side by side
    numberMinFont: 0.45,   // written when that fits in this × the record font at least (a 2×3 tensor does)
    numberMinPx: 7,        // ... and shown only while they are at least this big on screen (level of detail)
    numberFill: 1,         // of the cell height at most (digits have no descenders: a 2-row tensor keeps readable numbers)
    glyphW: 0.6,           // numbers are fitted to the bare monospace advance
  },
  op: {
    fontFill: 0.9,         // op text size: at most this × the half height
    textInset: 12,         // ellipse width not for text
  },
  cluster: {
    radius: 8,
    titleX: 22,            // after the collapse toggle
    titleY: 12,
    titleRoom: 28,         // box width not for the title
    toggle: { x: 5, y: 3, w: 13, h: 12, radius: 2, symX: 11.5, symY: 13 },
    collapsedFont: [9, 16], // a collapsed module's name: font range
    collapsedFontPerH: 4,  // and at most its box height / this
    collapsedPadChars: 4,
    collapsedLine: 1.2,    // second line below, in ems
    collapsedSubFont: 0.75,
  },
  cut: {
    at: [0.45, 0.5, 0.55], // along the edge: the break's ends and its middle
    gap: { w: 6, h: 14 },  // the break: a gap between two bars
    labelRise: 10,         // the word ("no_grad", "detach") above the break
    shortEdge: 60,         // shorter edges put the word above both records
    labelGap: 5,
  },
  label: {
    maxChars: 48,          // edge labels and badges
    padX: 8,
    h: 16,
    radius: 8,
    badgeRise: 10,         // a badge above its node
    tries: 12,             // steps (one label height) a label moves to keep off the others
    avoidSteps: 4,         // steps up and down first tried to keep off the records
    nodePad: 4,            // room kept around records and ops
    captionDrop: 6,        // a record's caption hangs below it
    captionH: 16,
  },
  focusRing: { width: 3, offset: 3 }, // px: a focused node's ring, solid and outside it (dashes mean "not yet")
  hatch: 6,                // "not computed yet" hatching period
  arrow: 7,                // arrow head size
  fitPadding: 24,          // px around the graph for zoom-to-fit
  bottomRoom: 12,          // below the graph's box: the last records' captions
  minZoom: 0.05,
  minReadableZoom: 0.45,   // below this, zoom-to-fit starts readable at the beginning and follows the step
  projectorMinTextPx: 16,  // projector mode: no graph text smaller than this on screen (read from the back row)
  normalMinTextPx: 11,     // normal mode: graph text at least this on screen (a 1366×768 laptop), but for
  normalTextQuantile: 0.05, // ... the smallest few per cent of it (a long caption shrunk to fit its record)
  projectorGradFnLabels: false, // projector mode draws the grad_fn names under the nodes (off: room for the numbers)
  readableZoom: { normal: 1, projector: 1.4 }, // that readable start
  maxFitZoom: { normal: 2, projector: 3 },     // zoom-to-fit enlarges small graphs up to this
  maxZoom: 8,
  maxInsets: 0.5,          // of the view height at most for the caption and the legend
  followMargin: 30,        // px: nodes of the step closer to the edge than this are followed
  followLead: 0.28,        // where the step is put: from the side it comes from (forward: left)
  followMaxNodes: 48,      // of a step's nodes, the first this many are framed (a big backward step)
  followNarrow: 0.5,       // lead only when the step is narrower than this of the view
  exportPad: 10,           // around an exported SVG
  pngScale: 2,             // exported PNG pixels per graph unit
};

// The page around the graph (px unless marked).
export const PAGE = {
  zoomStep: 1.3,           // + and − buttons
  legendMinW: 760,         // the legend is shown by default only on a graph pane this big
  legendMinH: 420,
  legendGap: 8,            // the graph keeps this far above the legend
  captionLines: 2.85,      // the step caption: two lines of what happened, then the line of code (.82em)
  stepLinesMax: 60,        // a hook's or custom backward's source lines lit at most (then only its first ones)
  captionGap: 4,
  captionLineHeight: 1.3,  // fallbacks when the caption's line height is not known
  captionLinePx: 18,
  maxToasts: 2,
  cardLines: 3,            // lines of code on an example's card in the gallery
  toastSpeedCap: 2,        // toasts go faster with the speed, up to this
};

// Class sessions (classroom.js): how often the presenter's state goes out, how the tally is drawn.
export const CLASSROOM = {
  postIntervalMs: 100,      // at most 10 states a second from the presenter
  countPollMs: 2000,        // the follower count on the presenter's panel
  reconnectMs: 1000,        // a lost tally stream is reopened after this
  histogramBins: 9,
  histogramWidth: 260,
  histogramHeight: 90,
  qrCellPx: 5,              // one QR module, in CSS pixels (×2 in projector mode)
  defaultTolerance: 0.05,   // an answer within 5 % (or 0.05 near zero) counts as right
};

export const HEATMAP = {
  cell: 22,                // px, compact cells at most
  compactMin: 8,           // px, compact cells at least
  numberCellMin: 40,       // px, cells with numbers at least
  numbersUpTo: 36,         // numbers written on the cells of heatmaps this small
  summaryCols: 8,
  maxCells: 256,
  legendStops: 20,         // colour stops of the legend bar
};

// Image-like values in the inspector (conv weights, feature maps): one canvas tile per channel.
export const TILES = {
  maxTiles: 24,            // tiles drawn; the rest are counted in a "+N more" note
  tilePx: 64,              // a tile's longer side aims at this many px
  minCellPx: 2,            // px per element at least (a 28×28 map is 56 px)
  maxCellPx: 12,           // and at most (a 5×5 kernel is 60 px)
  minSide: 2,              // (…, H, W) with both sides at least this are tiles
  min2d: 8,                // a plain matrix is one tile when both sides are at least this
  gap: 6,                  // px between tiles
};

export const LOSS_CHART = {
  minW: 200,
  minH: 80,
  h: 110,
  xAxis: 28,               // axis sizes
  yAxis: 52,               // at least: wider when its labels need it
  yLabelPad: 14,           // px beside the widest y label (tick and gap)
  ySpace: 16,
  lineW: 2,
  pointsUpTo: 60,          // points drawn on curves with fewer
  pointSize: 5,
  headroom: 1.08,          // above the largest loss
  markerW: 2,              // the open pass (device px per CSS px)
};

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
.fg-celltext.pending,.fg-celltext.none{fill:${th.muted};font-style:italic}
.fg-caption{fill:${th.muted}}
${projector && !GRAPH.projectorGradFnLabels ? ".fg-caption{display:none}" : ""}
.fg-caption:not([font-size]){font-size:${GRAPH.fonts.caption}px}
.fg-op .fg-opshape{fill:${th.opFill};stroke:${th.nodeStroke};stroke-width:${sz.nodeStroke}}
.fg-op text{fill:${th.text};font-weight:600}
.fg-op.nograd .fg-opshape{stroke-dasharray:3 3;opacity:.7}
.fg-op.failed .fg-opshape{stroke:${th.cut};stroke-width:${sz.litEdgeWidth};fill:color-mix(in srgb,${th.cut} 14%,${th.opFill})}
.fg-op.failed text{fill:${th.cut}}
.fg-fail-shapes{font-weight:700}
.fg-op.freed .fg-opshape{stroke-dasharray:2 3;opacity:.45}
.fg-op.freed text{opacity:.45}
.fg-node.active-forward .fg-frame,.fg-op.active-forward .fg-opshape{stroke:${th.forward};stroke-width:${sz.litEdgeWidth}}
.fg-node.active-backward .fg-frame,.fg-op.active-backward .fg-opshape{stroke:${th.backward};stroke-width:${sz.litEdgeWidth}}
.fg-node.error .fg-frame{stroke:${th.cut};stroke-width:${sz.litEdgeWidth}}
.fg-node.selected .fg-frame,.fg-op.selected .fg-opshape{stroke:${th.focus};stroke-width:${sz.litEdgeWidth}}
.fg-node:focus,.fg-op:focus{outline:none}
.fg-node:focus-visible,.fg-op:focus-visible{outline:${GRAPH.focusRing.width}px solid ${th.focus};outline-offset:${GRAPH.focusRing.offset}px}
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

// ---- Finding your way in big graphs (issue 11): minimap, search, breadcrumbs, fit to screen ----
export const NAVIGATION = {
  minimap: {
    maxW: 150, maxH: 90,         // px: the map keeps the graph's aspect inside this box (small: it sits on the graph)
    minNodes: 120,               // auto-shown from this many drawn nodes, or when the graph does not fit readable
    pad: 4,                      // px around the drawn graph inside the map
    dotMin: 1.5,                 // px: the smallest a node is drawn (a 10k-node map is dots)
    stackOffset: 2.5,            // px between the cards of a collapsed group's stack
    stackCards: 3,
    viewStroke: 1.5,             // px: the viewport rectangle's line
    viewFillAlpha: 0.12,
    keyPanFraction: 0.25,        // of the view an arrow key moves it (Shift: a whole view)
    minRoomH: 40,                // px: below this much room between the search panel and the legend, no map
    gap: 8,                      // px kept clear between the map and the panel above it
  },
  search: {
    debounceMs: 120,             // ms of quiet typing before a folded pass asks the server
    limit: 50,                   // results asked and listed
    minChars: 1,
    pathSeparator: " › ",
  },
  fitWholeKey: "0",              // "Fit to screen": the whole graph, however small it gets
};

// Figures a program plots (matplotlib, shown in the output pane among the printed lines).
export const FIGURES = {
  maxWidthPx: 640,         // a figure is never drawn wider than this (narrower panes: the pane's width)
  background: "#ffffff",   // matplotlib draws for a white page; dark themes keep it
  minHeightPx: 160,        // below this a figure does not read: the pane scrolls instead of shrinking it
};

// ---- "Export animation" (static/js/animation.js): the chosen pass's playback as GIF or WebM ----
export const ANIMATION = {
  fps: 30,
  size: { width: 1280, height: 720 },   // the "1280×720" choice (the other is the graph as shown)
  captionH: 56,                         // px of the step caption band below the graph
  captionFont: "600 20px system-ui, sans-serif",
  stepFont: "16px system-ui, sans-serif",
  tagFont: "700 15px system-ui, sans-serif",
  pad: 16,                              // px around the caption text and graph-units around the whole graph
  endHoldMs: 1000,                      // the last step stays this long before the animation ends (or loops)
  maxSteps: 600,                        // a longer pass is refused: the file and the wait would be too big
  gifColors: 256,
  webmBitsPerSecond: 4_000_000,
  webmTypes: ["video/webm;codecs=vp9", "video/webm;codecs=vp8", "video/webm"],
};

// ---- Folded passes (issue 11): collapsed groups, expanding in place, culling, level of detail ----
export const FOLD = {
  stack: 3,               // cards drawn for a collapsed group
  stackOffset: 5,         // between them (graph units)
  radius: 8,
  pad: 18,                // around an expanded group's contents
  titleBand: 24,          // above them, for the title and the collapse button
  button: { x: 6, y: 5, w: 14, h: 14, radius: 3 },
  labelFont: [9, 15],     // a collapsed group's label: font range (graph units)
  labelFontPerH: 4.2,     // at most its card height / this
  animateMs: 180,         // expanding / collapsing: the rest of the graph glides aside
  foundMs: 2000,          // how long reveal() keeps its highlight
  prefetchSteps: 120,     // while playing, fetch the groups of the steps this far ahead
  badgeAt: [0.5, 0.6, 0.4, 0.7, 0.3, 0.8, 0.2, 0.9], // where along a bundled edge its "× n" may sit: the first that covers no record
  cullMargin: 0.35,       // of the view's size drawn beyond each edge, so a pan shows no holes
  cullFrom: 300,          // records drawn before culling starts (tutorial graphs never cull)
  dotBelowPx: 0.18,       // a record whose text would be smaller than this × its size on screen: a dot
  dotZoom: 0.22,          // below this zoom records are dots and labels are hidden
  restMs: 160,            // after the last pan or zoom, text and shapes are drawn crisp again
};
export function foldCss(theme) {
  const th = THEMES[theme] || THEMES.light;
  return `
.fg-group-node{cursor:pointer}
.fg-group-node .fg-gcard{fill:${th.panel2};stroke:${th.clusterStroke};stroke-width:1.4}
.fg-group-node .fg-gcard.top{fill:${th.cluster}}
.fg-group-node:focus .fg-gcard.top,.fg-group-node:hover .fg-gcard.top{stroke:${th.focus};stroke-width:2.5}
.fg-group-node text{fill:${th.text}}
.fg-group-node .fg-gcount{fill:${th.clusterStroke};font-weight:700}
.fg-group-node .fg-gsum{fill:${th.muted}}
.fg-group-box rect.fg-gbox{fill:${th.cluster};fill-opacity:.45;stroke:${th.clusterStroke};stroke-width:1.2;stroke-dasharray:4 3}
.fg-group-box text{fill:${th.clusterStroke};font-weight:600}
.fg-group-box.bare rect.fg-gbox{fill:none;stroke:none}
.fg-group-box .fg-gcollapse{cursor:pointer}
.fg-group-box .fg-gcollapse rect{fill:${th.panel};stroke:${th.clusterStroke}}
.fg-bundle-count rect{fill:${th.panel};stroke:${th.edge}}
.fg-bundle-count text{fill:${th.muted};font-size:10px}
.fg-edge.bundled path{stroke-width:2.4}
.fg-fold-in{animation:fg-fold-in ${FOLD.animateMs}ms ease-out}
@keyframes fg-fold-in{from{opacity:0}to{opacity:1}}
.fg-found .fg-frame,.fg-found .fg-opshape,.fg-found .fg-gcard.top{stroke:${th.focus};stroke-width:4}
.fg-dot{fill:${th.nodeStroke}}
svg.fg-graph.fg-far .fg-node > :not(.fg-dot),svg.fg-graph.fg-far .fg-op > :not(.fg-dot){display:none}
svg.fg-graph:not(.fg-far) .fg-dot{display:none}
svg.fg-graph.fg-moving *{text-rendering:optimizeSpeed;shape-rendering:optimizeSpeed}
svg.fg-graph.fg-far .fg-layer-labels,svg.fg-graph.fg-far .fg-bundle-count text,svg.fg-graph.fg-far .fg-group-box text{display:none}
`;
}
