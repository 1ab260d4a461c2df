// The selected node: its highlight in the graph, the inspector column and what the inspector shows.
import { $, app } from "./state.js";
import { scheduleUrl } from "./share.js";

export function select(id) {
  app.selected = id;
  const layout = $("layout");
  const wasHidden = layout.classList.contains("no-inspector");
  layout.classList.toggle("no-inspector", !id);
  if (wasHidden !== !id) requestAnimationFrame(() => app.graph.checkInView());
  if (app.model) app.graph.update(app.model.stateAt(app.step), id);
  if (id) refreshInspector();
  else app.inspector.clear();
  scheduleUrl();
}

export function refreshInspector() {
  if (!app.model || !app.selected) return;
  app.inspector.show(app.model, app.model.stateAt(app.step), app.selected,
    { theme: app.theme, maxAbs: app.graph.maxAbs, ops: app.trace.ops || {} });
}
