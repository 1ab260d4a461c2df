// What one frame of a pass does (PassModel methods): to the state shown (values, gradients, flows)
// and as effects of its step (pulses, edge labels, badges, caption, toast).
import { PULSE } from "./config.js";
import { nodeName } from "./naming.js";
import { dName, opExpr } from "./oplabels.js";
import { bindings, latexToText, localInNames, substituteLatex } from "./mathtext.js";
import { add, describe, flat, fmt, scalarOf, shapeText } from "./values.js";

// the ops whose gradients are matrix products (their last two inputs are the factors)
export const PRODUCT_OPS = new Set(["mm", "addmm", "bmm", "mv"]);
const tight = (shape) => `[${(shape || []).join(",")}]`;

// upstream times a local derivative in names: "·wᵀ" follows ∂L/∂y, "xᵀ·" precedes it, "1" is ∂L/∂y itself
export function chainText(dOut, local) {
  const t = local.trim();
  if (t === "1") return dOut;
  if (t === "−1") return `−${dOut}`;
  if (t.includes("(·)")) return t.replace("(·)", `(${dOut})`);  // a transpose: (∂L/∂y)ᵀ
  if (t.startsWith("·")) return `${dOut} · ${t.slice(1)}`;
  if (t.endsWith("·")) return `${t.slice(0, -1)} · ${dOut}`;
  return `${dOut} · ${/[ +−]/.test(t) ? `(${t})` : t}`;
}

function zerosLike(v) {
  if (Array.isArray(v)) return v.map(zerosLike);
  if (v != null && typeof v === "object") return v; // summary: keep as is
  return 0;
}

// What fits on an edge: a number, or a shape for a tensor (the numbers are in the inspector).
function edgeText(v) {
  const f = flat(v);
  if (!f.shape.length && !f.summary) return fmt(f.data[0]);
  if (f.data.length <= 2 && !f.summary) return describe(v, 2);
  return `∇${shapeText(f.shape)}`;
}

// what each kind of hook is called in the caption (the trace's `hook.where`)
const HOOK_WHAT = {
  tensor: "tensor hook", post_accumulate: "post-accumulate hook", module_forward_pre: "forward pre-hook",
  module_forward: "forward hook", module_backward: "backward hook",
};

export const frameEffects = {
  // The chain rule with the numbers in: "PowBackward0: ∂L/∂s = ∂L/∂z · ∂z/∂s = 1 · 2·5^(2−1) = 1 · 10 = 10".
  // Tensors (not one number) give the rule in the inputs' names and the shapes:
  // "MmBackward0: ∂L/∂x = ∂L/∂y · weightᵀ [2, 4]; ∂L/∂weight = xᵀ · ∂L/∂y [4, 1]".
  backwardCaption(f, get) {
    const outName = this.tensorName(f.output);
    const up = scalarOf(f.upstream);
    const contribs = f.contributions || [];
    const inputs = this.opInputs(f.node);
    const params = (this.nodes.get(f.node) || {}).params;
    const scalar = up !== undefined && contribs.length && contribs.every((c) => scalarOf(c.grad) !== undefined);
    if (!scalar) {
      const names = inputs.map((id) => this.tensorName(id));
      const dOut = `∂L/∂${dName(outName)}`;
      const rules = contribs.map((c) => {
        const inName = this.tensorName(c.input);
        const local = localInNames(c.local, names, params);
        const shape = shapeText(flat(c.grad).shape);
        // a product's factors get a product (their broadcast shape is the output's): only real sums say "summed"
        const factor = PRODUCT_OPS.has((this.nodes.get(f.node) || {}).op) && inputs.indexOf(c.input) >= inputs.length - 2;
        const sum = c.unbroadcast_from && !factor ? `, summed ${shapeText(c.unbroadcast_from)}→${shape}` : "";
        return `∂L/∂${dName(inName)} = ${local == null ? `${dOut} → ${shape}` : chainText(dOut, local)}${sum}`;
      });
      if (!rules.length) return `${f.grad_fn}: ${dOut} = ${describe(f.upstream, 3)}`;
      return `${f.grad_fn}: ${rules.join("; ")}`;
    }
    const values = inputs.map((id) => {
      const s = get(id);
      return s ? scalarOf(s.value) : undefined;
    });
    const vars = bindings(values, params);
    const parts = contribs.map((c) => {
      const inName = this.tensorName(c.input);
      const g = scalarOf(c.grad);
      const local = up !== 0 ? g / up : undefined;
      const symbolic = c.local ? latexToText(c.local) : null;
      const withNumbers = c.local ? substituteLatex(c.local, vars) : null;
      const numeric = withNumbers ? latexToText(withNumbers) : null;
      let rule = `∂L/∂${dName(inName)} = ∂L/∂${dName(outName)} · ∂${dName(outName)}/∂${dName(inName)}`;
      const said = [];  // each equality once: "1 · 3 = 1 · 3" says nothing
      if (symbolic && !/^[\d.−-]+$/.test(symbolic)) said.push(`${fmt(up)} · ${numeric || symbolic}`);
      if (local !== undefined) said.push(`${fmt(up)} · ${fmt(local)}`);
      for (const x of said) if (!rule.endsWith(` = ${x}`)) rule += ` = ${x}`;
      return `${rule} = ${fmt(g)}`;
    });
    return `${f.grad_fn}: ${parts.join("; ")}`;
  },

  // A matrix product's gradient is a product, not a sum: "[2,4]ᵀ @ [2,1] → [4,1]" (Σ stays for real sums).
  productEdgeText(f, c) {
    const op = this.nodes.get(f.node);
    if (!op || !PRODUCT_OPS.has(op.op)) return null;
    const ins = this.opInputs(f.node);
    const at = c.index != null ? c.index : ins.indexOf(c.input);
    const n = ins.length;
    if (n < 2 || (at !== n - 2 && at !== n - 1)) return null;  // addmm's bias: a real sum over the batch
    const shapeOf = (id) => (this.nodes.get(id) || {}).shape;
    const [a, b] = [shapeOf(ins[n - 2]), shapeOf(ins[n - 1])];
    const up = flat(f.upstream).shape, g = flat(c.grad).shape;
    if (!a || !b) return null;
    return at === n - 2 ? `${tight(up)} @ ${tight(b)}ᵀ → ${tight(g)}` : `${tight(a)}ᵀ @ ${tight(up)} → ${tight(g)}`;
  },

  // A node's name, also for a tensor drawn inside a collapsed group (the final h of a folded loop): the
  // name the program bound it to, else what it is; never "?".
  tensorName(id) {
    const n = this.nodes.get(id);
    if (n) return nodeName(n);
    if (!this._frameNames) {
      this._frameNames = new Map();
      for (const f of this.frames) if (f.kind === "name" && f.tensor) this._frameNames.set(f.tensor, f.name);
    }
    return this._frameNames.get(id) || "a value inside the fold";
  },

  lit(f, fallback) {
    return f.edges && f.edges.length ? f.edges.filter((e) => this.edges.has(e)) : fallback.filter(Boolean);
  },

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
          const name = this.tensorName(f.id);
          if (merged) {
            const op = fx.op;
            const ins = (op.inputs || []).map((t) => this.tensorName(t));
            const expr = opExpr(op.op, op.label, op.params, ins, this.opParams(op.op));
            const lhs = name === expr ? expr : `${name} = ${expr}`;
            fx.text = `${lhs} = ${describe(f.value, 6)}` + (op.grad_enabled === false ? "  (no_grad: no grad_fn)" : "");
          } else if (f.origin === "const" && name === describe(f.value, 6)) {
            fx.text = `constant ${name}`;  // a Python number an op took: "3", not "3 = 3"
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
        if (fx && f.error) {  // the forward raised: the op is drawn red, the caption says with what
          fx.active[f.id] = "forward";
          const ins = (f.inputs || []).map((t) => (t ? this.tensorName(t) : "a number"));
          const shapes = (f.input_shapes || []).map((x) => (x == null ? "?" : x.length ? x.join("×") : "scalar"));
          fx.text = `✗ ${opExpr(f.op, f.label, f.params, ins, this.opParams(f.op))} failed with shapes ${shapes.join(", ")}: ${f.error.message}`;
          fx.toast = { kind: "error", title: f.error.type, text: f.error.message };
          return;
        }
        if (fx) {
          fx.active[f.id] = "forward";
          fx.op = f;
          const seen = {};
          const edges = this.lit(f, (f.inputs || []).map((t) => this.edgeBetween(t, f.id, (seen[t] = (seen[t] ?? -1) + 1))));
          const hasOut = f.output && this.nodes.has(f.output);
          for (const e of edges) fx.pulses.push({ edge: e, dir: "forward", t0: 0, t1: hasOut ? PULSE.forwardSplit : 1 });
          const ins = (f.inputs || []).map((t) => this.tensorName(t));
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
          fx.text = `${this.tensorName(f.root)}.backward(): seed gradient ${describe(f.gradient, 4)}` +
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
            const product = this.productEdgeText(f, c);
            if (product) label = product;
            else if (c.unbroadcast_from) label = `Σ ${shapeText(c.unbroadcast_from)}→${shapeText(flat(c.grad).shape)}` + (flat(c.grad).shape.length ? "" : " = " + label);
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
          fx.text = this.backwardCaption(f, get);
          if (f.lines) {
            // a custom autograd.Function: the program's own backward ran; show what it returned
            fx.lines = f.lines;
            const outs = f.upstream_outputs && f.upstream_outputs.length > 1
              ? f.upstream_outputs.map((g) => (g == null ? "None" : describe(g, 3))).join(", ") : describe(f.upstream, 3);
            const got = (f.contributions || []).map((c) => `${this.tensorName(c.input)}: ${describe(c.grad, 3)}`).join(", ");
            fx.text = `${f.grad_fn}: your backward(ctx, ${outs}) returned ${got || "None"}`;
          }
        }
        return;
      }
      case "hook": {
        // a program's hook ran: what it saw and, when it returned one, the gradient that replaced it
        const s = f.tensor ? get(f.tensor) : null;
        if (s && f.replaced != null && !this.nodes.get(f.tensor).is_leaf) s.flow = f.replaced;
        if (fx) {
          const owner = f.tensor && this.nodes.has(f.tensor) ? this.tensorName(f.tensor) : null;
          const what = HOOK_WHAT[f.where] || "hook";
          fx.lines = f.lines || null;
          if (owner) {
            fx.active[f.tensor] = f.id ? "backward" : "forward";
            fx.flash.add(f.tensor + ":grad");
            fx.badges.push({ node: f.tensor, text: `hook ${f.hook}`, kind: "hook" });
          }
          fx.text = `${what} ${f.hook}` + (owner ? ` on ${owner}` : "") +
            (f.grad != null ? `: got ${describe(f.grad, 4)}` : "") +
            (f.replaced != null ? ` → returned ${describe(f.replaced, 4)}` : "");
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
          fx.text = `AccumulateGrad: ${this.tensorName(f.tensor)}.grad = ${before} + ${describe(f.incoming, 4)} = ${describe(f.after, 4)}`;
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
          fx.text = `retain_grad: ${this.tensorName(f.tensor)}.grad = ${describe(f.grad, 4)}`;
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
        if (fx) fx.text = (f.set_to_none ? "zero_grad(): .grad set to None" : "zero_grad(): .grad filled with zeros")
          // the clearing after the last step() is not the pass's result (issue 23 §3): say where the result is
          + (f.after_result ? " (cleared by zero_grad() after the last step; the step before shows the gradients)" : "");
        return;
      }
      case "optim_step": {
        if (fx) {
          // the parameters it updates are the step's nodes: lit, and the camera frames them
          for (const id of f.params || []) if (this.nodes.has(id)) fx.active[id] = "forward";
          fx.text = `${f.optimizer}.step(): update ${(f.params || []).length} parameters (lr=${fmt(f.lr)})`;
          fx.toast = { kind: "ok", title: `${f.optimizer}.step()`, text: `p -= lr·p.grad with lr=${fmt(f.lr)}` };
        }
        return;
      }
      default:
        return;
    }
  },
};
