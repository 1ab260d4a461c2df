// Export: the graph at the step shown as an SVG or PNG download.
import { $, app } from "./state.js";

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

const fileName = (ext) => `flowgrad-pass${app.passIndex}-step${app.step}.${ext}`;

export function bindExport() {
  $("export-svg").addEventListener("click", () => {
    if (!app.model) return;
    download(new Blob([app.graph.exportSvg()], { type: "image/svg+xml" }), fileName("svg"));
  });
  $("export-png").addEventListener("click", async () => {
    if (!app.model) return;
    download(await app.graph.exportPng(), fileName("png"));
  });
}
