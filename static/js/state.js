// The page's shared state (window.__fg, read by the tests and the benchmark), element lookup, status line.
export const $ = (id) => document.getElementById(id);

export const app = {
  trace: null,
  model: null,
  passIndex: 0,
  step: 0,
  playing: false,
  speed: 1,
  selected: null,
  theme: "light",
  projector: false,
  examples: [],
  exampleId: null,
  runSeq: 0,
  stream: null,
  streamPaused: false,
  streamQueue: [],
  metrics: { runs: [] },
  // the components, set by main.js
  editor: null,
  graph: null,
  inspector: null,
  lossChart: null,
};
window.__fg = app;

export function setStatus(text, isError = false) {
  const s = $("status");
  s.textContent = text;
  s.classList.toggle("error", isError);
}
