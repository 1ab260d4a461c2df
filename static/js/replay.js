// Pure model of one pass: groups the trace's frames into timeline steps and replays them into
// the state shown at step k (no DOM here). Step k = the first k steps applied; 0 = nothing run.
import { add, flat, scalarOf } from "./values.js";
import { CARRIED_KINDS } from "./framekinds.js";
import { frameEffects } from "./frames.js";
import { naming } from "./naming.js";
import { lazyFrames } from "./lazyframes.js";

export { nodeName } from "./naming.js";

const FOLDED_CHECKPOINTS = 160;

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
    if (this.graph.folded) this.initFolds();
    this.frames = reorder(this.pass.frames || []);
    this.fillNames(trace);
    this.nameAnonymous();
    this.steps = this.groupSteps();
    // a zero_grad after the last step() (frames `after_result`) is a step of its own, never the pass's result
    const after = this.steps.findIndex((s) => s.main.after_result);
    this.resultStep = after < 0 ? this.steps.length : after;
    this.initial = this.initialState();
    this.cache = new Map();
  }

  // How an op's parameters are written: the op table's entry, from the pass (sent before the run's
  // `ops` while streaming) or the trace.
  // The inputs of op `id`, in order (from its forward frame).
  opInputs(id) {
    if (!this._opInputs) {
      this._opInputs = new Map();
      for (const f of this.frames) if (f.kind === "op") this._opInputs.set(f.id, f.inputs || []);
    }
    return this._opInputs.get(id) || [];
  }

  opParams(name) {
    const entry = (this.pass.ops && this.pass.ops[name]) || (this.trace.ops && this.trace.ops[name]);
    return entry ? entry.params : undefined;
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
    if (CARRIED_KINDS.has(f.kind)) return false;
    if (this.folded) {  // frames inside collapsed groups are steps too: their nodes are drawn when the step comes
      if (f.kind === "tensor") return this.known(f.id) && !(f.op && this.known(f.op) && this.opIds.has(f.op));
      if (f.kind === "op") return this.known(f.id);
      if (f.kind === "inplace") return this.known(f.tensor);
    }
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
    if (this.folded) {
      this.stepOfFrame = new Map();
      steps.forEach((s, i) => s.frames.forEach((f) => this.stepOfFrame.set(f, i)));
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
        // records a group's payload added after this checkpoint was taken
        if (st.nodes.size < this.initial.size) for (const [id, v] of this.initial) if (!st.nodes.has(id)) st.nodes.set(id, { ...v });
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
    // a folded pass's states grow with every group opened: its checkpoints are bounded, oldest out first
    if (this.folded && this.cache.size > FOLDED_CHECKPOINTS) this.cache.delete(this.cache.keys().next().value);
    return out;
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
        else if (f.kind === "hook") ev.push({ step: i + 1, kind: "hook" });
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

function newEffects(step) {
  return { pulses: [], edgeLabels: [], active: {}, badges: [], flash: new Set(), toast: null, text: "", phase: step.phase };
}

Object.assign(PassModel.prototype, naming, frameEffects, lazyFrames);

export { scalarOf };
