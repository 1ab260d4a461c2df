// Offline mode: the page saved as one file (app/export/html.py) replays the trace recorded in it; nothing
// needs the server. This reads what the file holds; api.js's TraceSource answers from it.

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
