// The names the page gives nodes: the server's, names that arrive later in a streamed run, and
// readable expressions for unnamed results ("exp(x)", "w × 2.0"). PassModel methods.
import { opExpr } from "./oplabels.js";

export function nodeName(node) {
  if (!node) return "?";
  if (node.name || node.display) return node.name || node.display;
  if (node.kind === "op" || (node.label && !ANON.test(node.label)) || isNumberConstant(node)) return node.label || node.id;
  return unnamed(node);
}

// labels that are not names: ids, or the shape the server puts on unnamed tensors ("scalar", "2×3")
const ANON = /^(t\d+|scalar|\d+(×\d+)*|)$/;

// a Python number an op took ("3" in x * 3): its value is its name
const isNumberConstant = (n) => n.role === "constant" && !(n.shape && n.shape.length) && n.label != null && n.label !== "";

// A tensor the program never named, and no drawn op made: what it is and where, never its shape ("8×8")
// or a size ("10" from torch.randn(10)).
const ROLE_WORDS = { input: "input", parameter: "parameter", constant: "constant", loss: "loss", output: "output" };
function unnamed(n) {
  const what = ROLE_WORDS[n.role] || (n.is_leaf ? "leaf" : "result");
  return n.line ? `${what} (line ${n.line})` : what;
}

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
    const named = (n) => n.name || (n.label && (isNumberConstant(n) || !ANON.test(n.label)));
    const short = (id) => {
      const n = this.nodes.get(id);
      if (!n) return "?";
      // a module's parameter inside an expression: its own name ("weightᵀ"); the module box says whose
      if (named(n)) return n.name && n.role === "parameter" && n.name.includes(".") ? n.name.split(".").pop() : n.name || n.label;
      const d = n.display || "…";
      return d.length <= 16 ? d : "…";  // opExpr parenthesises a compound operand by precedence
    };
    // consumers of each tensor: a module's result leaves it when no op of that module reads it
    const readers = new Map();
    for (const e of this.graph.edges) {
      const t = this.nodes.get(e.target);
      if (t && t.kind === "op") {
        if (!readers.has(e.source)) readers.set(e.source, []);
        readers.get(e.source).push(t);
      }
    }
    const inside = (m, op) => !!op.module && (op.module === m || op.module.startsWith(m + "."));
    const MAX = 24;
    for (const n of this.graph.nodes) {
      if (n.kind !== "tensor" || named(n)) continue;
      const op = producer.get(n.id);
      if (!op) {
        n.display = null;
        continue;
      }
      // a module's output is named by the module ("model.0 out"), never "addmm(…, …, …)"
      const m = op.module;
      if (m && !/^m\d+$/.test(m) && (n.module === m || !n.module) && !(readers.get(n.id) || []).some((r) => inside(m, r))) {
        n.display = `${m} out`;
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
