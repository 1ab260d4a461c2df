// Pure model of one pass: groups the trace's frames into timeline steps and replays them into
// the state shown at step k (no DOM here). Step k = the first k steps applied; 0 = nothing run.
import { add, describe, fmt, shapeText, flat, scalarOf } from "./values.js";
import { opExpr } from "./oplabels.js";
import { PULSE } from "./config.js";

const SILENT = new Set(["name", "module", "module_names", "requires_grad", "grad_mode", "detach"]);

export function nodeName(node) {
  if (!node) return "?";
  return node.name || node.display || node.label || node.id;
}

// labels that are not names: ids, or the shape the server puts on unnamed tensors ("scalar", "2×3")
const ANON = /^(t\d+|scalar|\d+(×\d+)*|)$/;

function zerosLike(v) {
  if (Array.isArray(v)) return v.map(zerosLike);
  if (v != null && typeof v === "object") return v; // summary: keep as is
  return 0;
}

export class PassModel {
  constructor(trace, passIndex, opts = {}) {
    this.trace = trace;
    this.pass = trace.passes[passIndex];
    this.passIndex = passIndex;
    this.graph = this.pass.graph || { nodes: [], edges: [], clusters: [], width: 0, height: 0 };
    this.nodes = new Map(this.graph.nodes.map((n) => [n.id, n]));
    this.edges = new Map(this.graph.edges.map((e) => [e.id, e]));
    // source>target -> [edge ids] (an op may take the same tensor twice: x * x)
    this.edgesBetween = new Map();
    for (const e of this.graph.edges) {
      const k = e.source + ">" + e.target;
      if (!this.edgesBetween.has(k)) this.edgesBetween.set(k, []);
      this.edgesBetween.get(k).push(e.id);
    }
    this.freedBefore = opts.freedBefore || new Set();
    this.frames = reorder(this.pass.frames || []);
    this.fillNames(trace);
    this.nameAnonymous();
    this.steps = this.groupSteps();
    this.initial = this.initialState();
    this.cache = new Map();
  }

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
  }

  // How an op's parameters are written: the op table's entry, from the pass (sent before the run's
  // `ops` while streaming) or the trace.
  opParams(name) {
    const entry = (this.pass.ops && this.pass.ops[name]) || (this.trace.ops && this.trace.ops[name]);
    return entry ? entry.params : undefined;
  }

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
  }

  edgeBetween(src, dst, nth = 0) {
    const l = this.edgesBetween.get(src + ">" + dst);
    return l ? l[Math.min(nth, l.length - 1)] : undefined;
  }

  // which of the edges input>op belongs to argument position `index` of the op
  nthOf(op, input, index) {
    const f = this.frames.find((x) => x.kind === "op" && x.id === op);
    if (!f || !f.inputs) return 0;
    let n = 0;
    for (let i = 0; i < index && i < f.inputs.length; i++) if (f.inputs[i] === input) n++;
    return n;
  }

  // ---- grouping -------------------------------------------------------------------------
  visible(f) {
    if (SILENT.has(f.kind)) return false;
    if (f.kind === "tensor") return this.nodes.has(f.id) && !(f.op && this.nodes.has(f.op) && this.opIds.has(f.op));
    if (f.kind === "op") return this.nodes.has(f.id);
    if (f.kind === "inplace") return this.nodes.has(f.tensor);
    if (f.kind === "accumulate" || f.kind === "retain_grad") return true;
    return true;
  }

  groupSteps() {
    this.opIds = new Set(this.frames.filter((f) => f.kind === "op").map((f) => f.id));
    const steps = [];
    let pending = [];
    for (const f of this.frames) {
      if (this.visible(f)) {
        steps.push({ frames: [...pending, f], main: f, phase: f.phase || "forward" });
        pending = [];
      } else if (steps.length) {
        steps[steps.length - 1].frames.push(f);
      } else {
        pending.push(f);
      }
    }
    if (pending.length) {
      if (steps.length) steps[steps.length - 1].frames.push(...pending);
      else this.preFrames = pending;
    }
    return steps;
  }

  // ---- state ----------------------------------------------------------------------------
  initialState() {
    const created = new Set();
    const firstAcc = new Map();
    for (const f of this.frames) {
      if (f.kind === "tensor" || f.kind === "op") created.add(f.id);
      if (f.kind === "accumulate" && !firstAcc.has(f.tensor)) firstAcc.set(f.tensor, f.before);
    }
    const nodes = new Map();
    for (const n of this.graph.nodes) {
      const pre = !created.has(n.id);
      const s = { value: undefined, grad: undefined, flow: undefined, freed: false };
      if (n.kind === "tensor") {
        if (pre) s.value = n.value;
        const hasGradSlot = n.is_leaf && n.requires_grad;
        if (hasGradSlot) s.grad = firstAcc.has(n.id) ? firstAcc.get(n.id) : n.grad == null ? null : n.grad;
        else s.grad = null;
      } else {
        s.value = pre ? true : undefined;
        s.freed = this.freedBefore.has(n.id);
      }
      nodes.set(n.id, s);
    }
    for (const f of this.preFrames || []) this.applyFrame({ nodes, retained: new Set() }, f, null);
    return nodes;
  }

  cloneNodes(nodes) {
    const m = new Map();
    for (const [k, v] of nodes) m.set(k, { ...v });
    return m;
  }

  // state at step k: {nodes: Map, retained: Set, effects (of step k-1)}
  stateAt(k) {
    k = Math.max(0, Math.min(k, this.steps.length));
    if (this.cache.has(k)) return this.cache.get(k);
    // replay from the nearest cached checkpoint below k
    let start = 0;
    let st = { nodes: this.cloneNodes(this.initial), retained: new Set(), backward: false, error: null, freed: false };
    for (let j = k - 1; j > 0; j--) {
      if (this.cache.has(j)) {
        const c = this.cache.get(j);
        st = { nodes: this.cloneNodes(c.nodes), retained: new Set(c.retained), backward: c.backward, error: c.error, freed: c.freed };
        start = j;
        break;
      }
    }
    let effects = null;
    for (let i = start; i < k; i++) {
      effects = i === k - 1 ? newEffects(this.steps[i]) : null;
      for (const f of this.steps[i].frames) this.applyFrame(st, f, effects);
    }
    const out = { ...st, effects, step: k };
    if (k % 25 === 0 || this.steps.length < 400) this.cache.set(k, out);
    return out;
  }

  lit(f, fallback) {
    return f.edges && f.edges.length ? f.edges.filter((e) => this.edges.has(e)) : fallback.filter(Boolean);
  }

  applyFrame(st, f, fx) {
    const N = st.nodes;
    const get = (id) => N.get(id);
    switch (f.kind) {
      case "tensor": {
        const s = get(f.id);
        if (!s) return;
        s.value = f.value;
        if (fx) {
          fx.active[f.id] = "forward";
          fx.flash.add(f.id + ":value");
          const merged = fx.op && fx.op.id === f.op;
          const edges = this.lit(f, [f.op ? this.edgeBetween(f.op, f.id) : null]);
          for (const e of edges) fx.pulses.push({ edge: e, dir: "forward", t0: merged ? PULSE.forwardSplit : 0, t1: 1 });
          const name = nodeName(this.nodes.get(f.id));
          if (merged) {
            const op = fx.op;
            const ins = (op.inputs || []).map((t) => nodeName(this.nodes.get(t)));
            const expr = opExpr(op.op, op.label, op.params, ins, this.opParams(op.op));
            const lhs = name === expr ? expr : `${name} = ${expr}`;
            fx.text = `${lhs} = ${describe(f.value, 6)}` + (op.grad_enabled === false ? "  (no_grad: no grad_fn)" : "");
          } else {
            fx.text = `${name} = ${describe(f.value, 6)}` + (f.origin === "detach" ? "  (detached: no grad_fn)" : f.origin === "leaf" && f.requires_grad ? "  (leaf, requires_grad)" : "");
          }
        }
        return;
      }
      case "op": {
        const s = get(f.id);
        if (!s) return;
        s.value = true;
        if (fx) {
          fx.active[f.id] = "forward";
          fx.op = f;
          const seen = {};
          const edges = this.lit(f, (f.inputs || []).map((t) => this.edgeBetween(t, f.id, (seen[t] = (seen[t] ?? -1) + 1))));
          const hasOut = f.output && this.nodes.has(f.output);
          for (const e of edges) fx.pulses.push({ edge: e, dir: "forward", t0: 0, t1: hasOut ? PULSE.forwardSplit : 1 });
          const ins = (f.inputs || []).map((t) => nodeName(this.nodes.get(t)));
          fx.text = opExpr(f.op, f.label, f.params, ins, this.opParams(f.op)) + (f.grad_enabled === false ? " under no_grad" : f.grad_fn ? ` → grad_fn ${f.grad_fn}` : "");
        }
        return;
      }
      case "backward_begin": {
        st.backward = true;
        const s = get(f.root);
        if (s) s.flow = f.gradient;
        if (fx) {
          fx.active[f.root] = "backward";
          fx.flash.add(f.root + ":grad");
          fx.text = `${nodeName(this.nodes.get(f.root))}.backward(): seed gradient ${describe(f.gradient, 4)}` +
            (f.retain_graph ? " (retain_graph=True)" : "");
          fx.badges.push({ node: f.root, text: `∂L/∂L = ${describe(f.gradient, 3)}`, kind: "bwd" });
        }
        return;
      }
      case "backward_step": {
        const out = get(f.output);
        if (out) out.flow = f.upstream;
        const op = get(f.node);
        if (op) op.bwdDone = true;
        for (const c of f.contributions || []) {
          const s = get(c.input);
          if (!s) continue;
          s.flow = s.flow === undefined ? c.grad : add(s.flow, c.grad);
          s.parts = [...(s.parts || []), c.grad];
        }
        if (fx) {
          fx.active[f.node] = "backward";
          fx.backwardStep = f;
          const outEdge = this.edgeBetween(f.node, f.output);
          if (outEdge) fx.pulses.push({ edge: outEdge, dir: "backward", t0: 0, t1: PULSE.backwardSplit });
          const inEdges = [];
          const seen = {};
          for (const c of f.contributions || []) {
            const e = this.edgeBetween(c.input, f.node, c.index != null ? this.nthOf(f.node, c.input, c.index) : (seen[c.input] = (seen[c.input] ?? -1) + 1));
            if (!e) continue;
            inEdges.push(e);
            fx.pulses.push({ edge: e, dir: "backward", t0: PULSE.backwardSplit, t1: 1 });
            let label = edgeText(c.grad);
            if (c.unbroadcast_from) label = `Σ ${shapeText(c.unbroadcast_from)}→${shapeText(flat(c.grad).shape)}` + (flat(c.grad).shape.length ? "" : " = " + label);
            fx.edgeLabels.push({ edge: e, text: label, dir: "backward" });
            fx.flash.add(c.input + ":grad");
          }
          for (const e of f.edges || []) if (!inEdges.includes(e) && e !== outEdge && this.edges.has(e)) {
            fx.pulses.push({ edge: e, dir: "backward", t0: PULSE.backwardSplit, t1: 1 });
          }
          if (f.upstream_parts && f.upstream_parts.length > 1) {
            fx.badges.push({
              node: f.output,
              text: "Σ " + f.upstream_parts.map((p) => edgeText(p)).join(" + ") + " = " + edgeText(f.upstream),
              kind: "bwd",
            });
          }
          const ins = (f.contributions || []).map((c) => nodeName(this.nodes.get(c.input))).join(", ");
          fx.text = `${f.grad_fn}: ∂L/∂${nodeName(this.nodes.get(f.output))} = ${describe(f.upstream, 3)} → ${ins}`;
        }
        return;
      }
      case "accumulate": {
        const s = get(f.tensor);
        const parts = (s && s.parts) || [];
        if (s) {
          s.grad = f.after;
          s.parts = [];
        }
        if (fx) {
          fx.active[f.tensor] = "backward";
          fx.flash.add(f.tensor + ":grad");
          if (parts.length > 1) {
            fx.badges.push({ node: f.tensor, text: `Σ ${parts.map(edgeText).join(" + ")} = ${edgeText(f.incoming)}`, kind: "bwd" });
          }
          const before = f.before == null ? "None" : describe(f.before, 3);
          fx.badges.push({ node: f.tensor, text: `.grad ${f.before == null ? "None" : edgeText(f.before)} + ${edgeText(f.incoming)} → ${edgeText(f.after)}`, kind: "bwd" });
          fx.text = `AccumulateGrad: ${nodeName(this.nodes.get(f.tensor))}.grad = ${before} + ${describe(f.incoming, 4)} = ${describe(f.after, 4)}`;
          fx.accumulate = f;
        }
        return;
      }
      case "retain_grad": {
        st.retained.add(f.tensor);
        const s = get(f.tensor);
        if (s) s.grad = f.grad;
        if (fx) {
          fx.active[f.tensor] = "backward";
          fx.flash.add(f.tensor + ":grad");
          fx.text = `retain_grad: ${nodeName(this.nodes.get(f.tensor))}.grad = ${describe(f.grad, 4)}`;
          fx.badges.push({ node: f.tensor, text: "retain_grad", kind: "bwd" });
        }
        return;
      }
      case "backward_end": {
        if (f.freed) {
          st.freed = true;
          for (const [id, n] of this.nodes) if (n.kind === "op" && N.get(id) && N.get(id).bwdDone) N.get(id).freed = true;
        }
        if (fx) {
          fx.text = f.freed
            ? "backward done: graph freed (retain_graph=False), its saved tensors are gone"
            : "backward done: graph kept (retain_graph=True)";
          fx.toast = f.freed
            ? { kind: "info", title: "Graph freed", text: "retain_graph=False: the saved tensors are released. A second backward() through it will fail." }
            : { kind: "ok", title: "Graph retained", text: "retain_graph=True: you may call backward() again." };
        }
        return;
      }
      case "backward_error": {
        st.error = f;
        const s = get(f.root);
        if (s) s.error = true;
        if (fx) {
          fx.text = `${f.type}: ${f.message}`;
          fx.toast = { kind: "error", title: f.type || "RuntimeError", text: f.message };
          fx.badges.push({ node: f.root, text: f.type || "error", kind: "err" });
        }
        return;
      }
      case "inplace": {
        const s = get(f.tensor);
        if (s) s.value = f.value;
        if (fx) {
          fx.active[f.tensor] = "forward";
          fx.flash.add(f.tensor + ":value");
          // `w.grad.zero_()`: not a node of this graph, so not a step of its own either; it rides along
          // with the step before and must not replace that step's text (its line is the one shown)
          const t = this.nodes.get(f.tensor);
          if (t) fx.text = `${nodeName(t)}.${f.op}(…) → ${describe(f.value, 4)}`;
          else if (!fx.text) fx.text = `in-place ${f.op}() → ${describe(f.value, 4)}`;
        }
        return;
      }
      case "zero_grad": {
        for (const id of f.tensors || []) {
          const s = get(id);
          if (!s) continue;
          s.grad = f.set_to_none ? null : s.grad == null ? s.grad : zerosLike(s.grad);
          if (fx) fx.flash.add(id + ":grad");
        }
        if (fx) fx.text = f.set_to_none ? "zero_grad(): .grad set to None" : "zero_grad(): .grad filled with zeros";
        return;
      }
      case "optim_step": {
        if (fx) {
          fx.text = `${f.optimizer}.step(): update ${(f.params || []).length} parameters (lr=${fmt(f.lr)})`;
          fx.toast = { kind: "ok", title: `${f.optimizer}.step()`, text: `p -= lr·p.grad with lr=${fmt(f.lr)}` };
        }
        return;
      }
      default:
        return;
    }
  }

  describeStep(k) {
    if (k <= 0) return "start: nothing computed yet";
    const st = this.stateAt(k);
    return (st.effects && st.effects.text) || this.steps[k - 1].main.kind;
  }

  phaseRanges() {
    const ranges = [];
    this.steps.forEach((s, i) => {
      const last = ranges[ranges.length - 1];
      if (last && last.phase === s.phase) last.end = i + 1;
      else ranges.push({ phase: s.phase, start: i, end: i + 1 });
    });
    return ranges;
  }

  eventSteps() {
    const ev = [];
    this.steps.forEach((s, i) => {
      for (const f of s.frames) {
        if (f.kind === "backward_error") ev.push({ step: i + 1, kind: "error" });
        else if (f.kind === "backward_end") ev.push({ step: i + 1, kind: f.freed ? "freed" : "retained" });
        else if (f.kind === "backward_begin") ev.push({ step: i + 1, kind: "backward" });
        else if (f.kind === "optim_step") ev.push({ step: i + 1, kind: "update" });
      }
    });
    return ev;
  }

  // The backward_step (≤ step k) that most recently involved node id, for the chain rule.
  chainFor(id, k) {
    for (let i = Math.min(k, this.steps.length) - 1; i >= 0; i--) {
      for (const f of this.steps[i].frames) {
        if (f.kind !== "backward_step") continue;
        if (f.node === id || f.output === id || (f.contributions || []).some((c) => c.input === id)) return { frame: f, step: i + 1 };
      }
    }
    return null;
  }

  // Sum of this pass's gradient into tensor id (what a finite difference of this pass's loss estimates).
  passGradient(id) {
    let g;
    for (const f of this.frames) {
      if (f.kind === "backward_step") for (const c of f.contributions || []) if (c.input === id) g = g === undefined ? c.grad : add(g, c.grad);
    }
    if (g === undefined) for (const f of this.frames) if (f.kind === "backward_begin" && f.root === id) g = f.gradient;
    return g;
  }

  // The domain of the one colour scale for this pass: a robust maximum (95th percentile of every
  // |number| shown), so one huge loss does not wash out every other value; larger ones saturate.
  maxAbs() {
    const all = [];
    const upd = (v) => {
      const f = flat(v);
      for (const x of f.data) if (isFinite(x)) all.push(Math.abs(x));
    };
    for (const n of this.graph.nodes) {
      if (n.kind !== "tensor") continue;
      if (n.value != null) upd(n.value);
      if (n.grad != null) upd(n.grad);
    }
    for (const f of this.frames) {
      if (f.kind === "backward_step") upd(f.upstream);
      if (f.kind === "tensor" || f.kind === "inplace") upd(f.value);
    }
    if (!all.length) return 1;
    all.sort((a, b) => a - b);
    const p95 = all[Math.min(all.length - 1, Math.floor(all.length * 0.95))];
    return p95 > 0 ? p95 : all[all.length - 1] || 1;
  }
}

// The recorder emits an op's output tensor just before the op itself: put it after, so a step
// reads "inputs flow into the op, the result appears".
function reorder(frames) {
  const out = [];
  const held = new Map();
  const opsSeen = new Set();
  for (const f of frames) {
    if (f.kind === "op") opsSeen.add(f.id);
    if (f.kind === "tensor" && f.op && f.origin !== "leaf" && !opsSeen.has(f.op)) {
      held.set(f.op, f);
      continue;
    }
    out.push(f);
    if (f.kind === "op" && held.has(f.id)) {
      out.push(held.get(f.id));
      held.delete(f.id);
    }
  }
  for (const f of held.values()) out.push(f);
  return out;
}

// What fits on an edge: a number, or a shape for a tensor (the numbers are in the inspector).
function edgeText(v) {
  const f = flat(v);
  if (!f.shape.length && !f.summary) return fmt(f.data[0]);
  if (f.data.length <= 2 && !f.summary) return describe(v, 2);
  return `∇${shapeText(f.shape)}`;
}

function newEffects(step) {
  return { pulses: [], edgeLabels: [], active: {}, badges: [], flash: new Set(), toast: null, text: "", phase: step.phase };
}

export { scalarOf };
