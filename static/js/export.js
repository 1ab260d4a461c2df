// Export: the graph at the step shown as an SVG or PNG download.
import { GRAPH, THEMES } from "./config.js";
import { bindAnimationExport } from "./animation.js";
import { traceSource } from "./api.js";
import { $, setStatus } from "./dom.js";
import { state } from "./store.js";
import { SVGNS } from "./svg.js";

// The graph as a standalone SVG document: the whole graph at the step shown, no pan or zoom.
function svgOf(view) {
  const g = view.model ? view.model.graph : { width: 100, height: 100 };
  const clone = view.svg.cloneNode(true);
  const pad = GRAPH.exportPad, W = g.width + 2 * pad, H = g.height + 2 * pad + GRAPH.bottomRoom;
  clone.setAttribute("xmlns", SVGNS);
  clone.setAttribute("viewBox", `${-pad} ${-pad} ${W} ${H}`);
  clone.setAttribute("width", W);
  clone.setAttribute("height", H);
  const vp = clone.querySelector(".fg-viewport");
  vp.removeAttribute("transform");
  const pulses = clone.querySelector(".fg-layer-pulses");
  if (pulses) pulses.replaceChildren();
  const bg = document.createElementNS(SVGNS, "rect");
  bg.setAttribute("x", -pad);
  bg.setAttribute("y", -pad);
  bg.setAttribute("width", W);
  bg.setAttribute("height", H);
  bg.setAttribute("class", "fg-export-bg");
  bg.setAttribute("fill", getComputedStyle(view.svg).backgroundColor || THEMES.light.graphBg);
  vp.insertBefore(bg, vp.firstChild);
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(clone);
}

async function pngOf(view, scale = GRAPH.pngScale) {
  const text = svgOf(view);
  const g = view.model.graph, pad = GRAPH.exportPad;
  const w = Math.ceil((g.width + 2 * pad) * scale), h = Math.ceil((g.height + 2 * pad + GRAPH.bottomRoom) * scale);
  const img = new Image();
  const url = URL.createObjectURL(new Blob([text], { type: "image/svg+xml" }));
  try {
    await new Promise((res, rej) => {
      img.onload = res;
      img.onerror = rej;
      img.src = url;
    });
    const canvas = document.createElement("canvas");
    canvas.width = w;
    canvas.height = h;
    canvas.getContext("2d").drawImage(img, 0, 0, w, h);
    return await new Promise((res) => canvas.toBlob(res, "image/png"));
  } finally {
    URL.revokeObjectURL(url);
  }
}

function download(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => {
    URL.revokeObjectURL(a.href);
    a.remove();
  }, 1000);
}

const fileName = (ext) => `flowgrad-pass${state.passIndex}-step${state.step}.${ext}`;

// The page as one offline file at the current view: the server runs the program again and builds it.
async function downloadHtml() {
  const btn = $("export-html");
  btn.disabled = true;
  setStatus("building the offline file…");
  try {
    const file = await traceSource.exportHtml(state.lastSource ?? state.editor.text, {
      pass: state.model ? state.passIndex : null,
      step: state.model && state.step !== state.model.resultStep ? state.step : null,
      node: state.selected, theme: state.theme, projector: !!state.projector,
    });
    download(file.blob, file.name);
    setStatus(`saved ${file.name} (${(file.blob.size / 1e6).toFixed(1)} MB)`);
  } catch (e) {
    setStatus(`HTML export failed: ${e.message || e}`, true);
  } finally {
    btn.disabled = false;
  }
}

export function bindExport() {
  $("export-svg").addEventListener("click", () => {
    if (!state.model) return;
    download(new Blob([svgOf(state.graph)], { type: "image/svg+xml" }), fileName("svg"));
  });
  $("export-png").addEventListener("click", async () => {
    if (!state.model) return;
    download(await pngOf(state.graph), fileName("png"));
  });
  $("export-html").addEventListener("click", downloadHtml);
  bindAnimationExport({ download });
}
