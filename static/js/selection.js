// The selected node: its highlight in the graph, the inspector column and what the inspector shows.
import { $ } from "./dom.js";
import { set, state } from "./store.js";

export function select(id) {
  set({ selected: id });
  const layout = $("layout");
  const wasHidden = layout.classList.contains("no-inspector");
  layout.classList.toggle("no-inspector", !id);
  if (wasHidden !== !id) requestAnimationFrame(() => state.graph.checkInView());
  if (state.model) state.graph.update(state.model.stateAt(state.step), id);
  if (id) refreshInspector();
  else state.inspector.clear();
}

export function refreshInspector() {
  if (!state.model || !state.selected) return;
  state.inspector.show(state.model, state.model.stateAt(state.step), state.selected,
    { theme: state.theme, maxAbs: state.graph.maxAbs, ops: state.trace.ops || {} });
}
