// The names the page gives nodes: the server's, names that arrive later in a streamed run, and
// readable expressions for unnamed results ("exp(x)", "w × 2.0"). PassModel methods.
import { opExpr } from "./oplabels.js";

export function nodeName(node) {
  if (!node) return "?";
  return node.name || node.display || node.label || node.id;
}

// labels that are not names: ids, or the shape the server puts on unnamed tensors ("scalar", "2×3")
const ANON = /^(t\d+|scalar|\d+(×\d+)*|)$/;

export const naming = {
  // Early passes of a streamed run are built before module and parameter names are known
  // (they are resolved at the end of the run): take them from later passes and trace.modules.
  fillNames(trace) {
    const names = new Map();
    for (const p of trace.passes || []) {
      if (!p || !p.graph) continue;
      for (const n of p.graph.nodes) if (n.name && !names.has(n.id)) names.set(n.id, n.name);
    }
    for (const n of this.graph.nodes) {
      if (!n.name && names.has(n.id)) {
        n.name = names.get(n.id);
        if (n.label === undefined || ANON.test(n.label || "")) n.label = n.name;
      }
    }
    const mods = trace.modules || {};
    for (const c of this.graph.clusters || []) {
      const m = mods[c.id];
      if (m) {
        if (!c.name) c.name = m.name;
        if (!c.cls) c.cls = m.cls;
      }
    }
  },

  // Unnamed intermediates get a readable expression ("exp(x)", "w × 2.0") instead of an id,
  // built in execution order from their inputs' names (or short expressions).
  nameAnonymous() {
    const producer = new Map();
    const inputsOf = new Map();
    for (const e of this.graph.edges) {
      const s = this.nodes.get(e.source), t = this.nodes.get(e.target);
      if (!s || !t) continue;
      if (s.kind === "op" && t.kind === "tensor") producer.set(t.id, s);
      if (t.kind === "op") {
        if (!inputsOf.has(t.id)) inputsOf.set(t.id, []);
        inputsOf.get(t.id).push(s.id);
      }
    }
    for (const f of this.frames) if (f.kind === "op" && f.inputs) inputsOf.set(f.id, f.inputs.filter((i) => this.nodes.has(i)));
    const named = (n) => n.name || (n.label && (n.role === "constant" || !ANON.test(n.label)));
    const short = (id) => {
      const n = this.nodes.get(id);
      if (!n) return "?";
      // a module's parameter inside an expression: its own name ("weightᵀ"); the module box says whose
      if (named(n)) return n.name && n.role === "parameter" && n.name.includes(".") ? n.name.split(".").pop() : n.name || n.label;
      const d = n.display || "…";
      return d.length <= 9 ? (/[ ]/.test(d) ? `(${d})` : d) : "…";
    };
    const MAX = 18;
    for (const n of this.graph.nodes) {
      if (n.kind !== "tensor" || named(n)) continue;
      const op = producer.get(n.id);
      if (!op) {
        n.display = null;
        continue;
      }
      const ins = (inputsOf.get(op.id) || []).map(short);
      const label = op.label || op.op || "op";
      const fmt = this.opParams(op.op);
      let d = opExpr(op.op, label, op.params, ins, fmt);
      if (d.length > MAX) d = opExpr(op.op, label, op.params, ins.map(() => "…"), fmt);
      if (d.length > MAX) d = `${label}(…)`;
      n.display = d;
    }
  },
};
