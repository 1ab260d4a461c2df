// Offline mode: the page saved as one file (app/export/html.py) replays the trace recorded in it; nothing needs the server.
import { app, setStatus } from "./state.js";

// {source, view: {pass, step, node, theme, projector}, trace} or null on the served page
export const OFFLINE = (() => {
  const el = document.getElementById("fg-offline");
  return el ? JSON.parse(el.textContent) : null;
})();

// The view the file was saved at, unless its own URL hash says otherwise (a reader's bookmark).
export function offlineView(url) {
  const v = OFFLINE.view || {};
  const hasHash = location.hash.length > 1;
  const pick = (key) => (hasHash && url[key] != null ? url[key] : v[key] ?? null);
  return { pass: pick("pass"), step: pick("step"), node: pick("node"), theme: v.theme || null, projector: !!v.projector };
}

export function showRecorded({ loadTrace, updateExampleTitle }, view) {
  app.lastSource = OFFLINE.source;
  app.editor.text = OFFLINE.source;
  updateExampleTitle(OFFLINE.source);
  // a training run's middle passes came as summaries (the server records them when opened): not in this file
  for (const p of OFFLINE.trace.passes) if (p && !p.graph && !p.folded) p.folded = "not recorded in this offline copy";
  loadTrace(OFFLINE.trace, { pass: view.pass, step: view.step, node: view.node, noAutoplay: view.step != null });
  setStatus("recorded · offline copy", !!OFFLINE.trace.error);
}
