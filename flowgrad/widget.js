// The flowgrad widget (anywidget): the page's offline copy (app/export/html.py) in an iframe, replaying the trace
// in the model. flowgrad/page.py writes the page in below; the page's own modules do the drawing.
const PAGE = /*FLOWGRAD_PAGE*/null;

// the notebook's theme, when the host says (JupyterLab / Notebook 7, VS Code); else the page follows the OS
function hostTheme() {
  const light = document.body && document.body.dataset.jpThemeLight;
  if (light === "true" || light === "false") return light === "true" ? "light" : "dark";
  const cls = document.body ? document.body.classList : null;
  if (cls && (cls.contains("vscode-dark") || cls.contains("vscode-high-contrast"))) return "dark";
  if (cls && cls.contains("vscode-light")) return "light";
  return null;
}

// what static/js/offline.js reads; NOTE: `<` escaped as in the offline file, so "</script>" cannot end it early
function documentFor(model) {
  const trace = model.get("trace");
  const traceText = typeof trace === "string" ? (trace || "{}") : JSON.stringify(trace || {});
  const view = Object.assign({ pass: null, step: null, node: null, theme: hostTheme(), projector: false }, model.get("view") || {});
  const data = `{"source":${JSON.stringify(model.get("source") || "")},"view":${JSON.stringify(view)},"trace":${traceText}}`;
  return PAGE.before + data.replace(/</g, "\\u003c") + PAGE.after;
}

function render({ model, el }) {
  const frame = document.createElement("iframe");
  frame.className = "flowgrad-widget";
  frame.title = "flowgrad: the program's graph, forward and backward";
  // its own opaque origin: the page in it cannot reach the notebook's (the kernel's token, its DOM)
  frame.setAttribute("sandbox", "allow-scripts allow-downloads");
  frame.setAttribute("allow", "clipboard-write");
  frame.style.cssText = "display:block;width:100%;border:1px solid rgba(128,128,128,.35);border-radius:6px;box-sizing:border-box;";
  const size = () => { frame.style.height = `${model.get("height") || 620}px`; };
  const load = () => { frame.srcdoc = documentFor(model); };
  size();
  load();
  el.replaceChildren(frame);
  model.on("change:trace", load);
  model.on("change:source", load);
  model.on("change:view", load);
  model.on("change:height", size);
  return () => {
    model.off("change:trace", load);
    model.off("change:source", load);
    model.off("change:view", load);
    model.off("change:height", size);
  };
}

export default { render };
