// The inspector: what one node holds right now, the chain rule on its current backward edge
// (KaTeX, loaded on first use), and a finite-difference check of its gradient.
import { heatmap } from "./heatmap.js";
import { isImageLike, tiles } from "./tiles.js";
import { nodeName } from "./replay.js";
import { dName, opNodeText, opParamRows } from "./oplabels.js";
import { describe, flat, fmt, isSummary, latex, maxAbs as largest, scalarOf, shapeText } from "./values.js";
import { onFirstUse } from "./lazy.js";
import { bindings, localInNames, substituteLatex } from "./mathtext.js";
import { chainText, PRODUCT_OPS } from "./frames.js";

const loadKatex = onFirstUse("/static/vendor/katex/katex.min.css", () => import("../vendor/katex/katex.js"));

const tex = (s) => "\\text{" + String(s).replace(/([_#%&$])/g, "\\$1").replace(/[{}]/g, "") + "}";

function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v != null) e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

// How close a finite difference must come to autograd (absolute + relative, as torch.allclose).
const FD_TOLERANCE = { atol: 2e-3, rtol: 2e-2 };

// Which dims a broadcast gradient is summed over: "rows" for [2, 3] → [3], else "dims 0, 2".
function broadcastDims(from, to) {
  const extra = from.length - to.length;
  const dims = [];
  for (let i = 0; i < from.length; i++) if (i < extra || (to[i - extra] === 1 && from[i] !== 1)) dims.push(i);
  if (from.length === 2 && dims.length === 1) return dims[0] === 0 ? "rows" : "columns";
  return `dim${dims.length > 1 ? "s" : ""} ${dims.join(", ")}`;
}

// Why a leaf's .grad is None at step k: cleared by zero_grad() (which line), or not reached yet. A pass
// that opens with zero_grad (issue 23 §3) shows the cleared gradient from its start.
function whyNoGrad(model, id, k) {
  const applied = [...(model.preFrames || []), ...model.steps.slice(0, Math.min(k, model.steps.length)).flatMap((s) => s.frames)];
  const clears = (f) => f.kind === "zero_grad" && f.set_to_none && (f.tensors || []).includes(id);
  const reaches = (f) => (f.kind === "accumulate" || f.kind === "retain_grad") && f.tensor === id;
  let reset = null;
  for (const f of applied) {
    if (clears(f)) reset = f;
    if (reaches(f)) reset = null;
  }
  if (!reset && !applied.some(reaches)) {
    // not applied yet, but the state shown already is the cleared one: the pass starts after that clearing
    const first = model.frames.findIndex(reaches);
    reset = model.frames.slice(0, first < 0 ? model.frames.length : first).find(clears) || null;
  }
  if (reset) return `cleared by zero_grad()${reset.line ? ` on line ${reset.line}` : ""}`;
  return "no backward has reached it yet";
}

// The backward step that produced node id's gradient (≤ step k), else the latest one that used it.
function chainFor(model, id, k) {
  let used = null;
  for (let i = Math.min(k, model.steps.length) - 1; i >= 0; i--) {
    for (const f of model.steps[i].frames) {
      if (f.kind !== "backward_step") continue;
      if (f.node === id || (f.contributions || []).some((c) => c.input === id)) return { frame: f, step: i + 1 };
      if (!used && f.output === id) used = { frame: f, step: i + 1 };
    }
  }
  return used;
}

// The step that produced the gradient of an op's output (the step before in the chain), or null.
function upstreamStep(model, f, k) {
  for (let i = Math.min(k, model.steps.length) - 1; i >= 0; i--) {
    for (const g of model.steps[i].frames) {
      if (g.kind === "backward_step" && g !== f && (g.contributions || []).some((c) => c.input === f.output)) return g;
    }
  }
  return null;
}

export class Inspector {
  constructor(root, { onCheckGradient, onGoToLine, onClose } = {}) {
    this.root = root;
    this.onCheckGradient = onCheckGradient;
    this.onGoToLine = onGoToLine;
    this.onClose = onClose;
    this.fd = new Map(); // node id -> finite-difference result for this run
    this.masked = null;  // {node, kind}: a class question is open (classmask.js): every number of that kind reads "?"
    this.clear();
  }

  isMasked(nodeId, kind) {
    return !!this.masked && this.masked.kind === kind;  // any node: a neighbour's equal number would tell the answer
  }

  maskedView() {
    return h("p", { class: "masked-val", "data-masked": "true" }, "? (hidden until the teacher reveals it)");
  }

  clear(message = "Click a node to inspect its value, gradient and chain rule.") {
    this.nodeId = null;
    this.root.replaceChildren(h("p", { class: "muted" }, message));
  }

  resetRun() {
    this.fd.clear();
  }

  show(model, state, nodeId, ctx) {
    const another = nodeId !== this.nodeId;
    this.nodeId = nodeId;
    const n = model.nodes.get(nodeId);
    if (!n) return this.clear();
    const s = state.nodes.get(nodeId) || {};
    const { theme, maxAbs } = ctx;
    const parts = [];
    const title = h("h2", { id: "inspector-title" }, n.kind === "op" ? `${opNodeText(n, model.opParams(n.op))} (${n.op || "op"})` : nodeName(n));
    const close = h("button", { class: "icon-btn", "aria-label": "Close inspector", onclick: () => this.onClose && this.onClose() }, "×");
    parts.push(h("div", { class: "insp-head" }, title, close));
    const rows = [];
    const row = (k, v) => rows.push(h("dt", {}, k), h("dd", {}, v));
    if (n.kind === "tensor") {
      row("role", h("span", { class: `role-chip role-${n.role}` }, n.role || "intermediate"));
      row("shape", shapeText(n.shape));
      row("dtype", n.dtype || "float32");
      row("requires_grad", String(!!n.requires_grad));
      row("is_leaf", String(!!n.is_leaf));
      row("grad_fn", n.grad_fn ? `<${n.grad_fn}>` : "None");
      if (n.module) row("module", n.module);
    } else {
      row("op", n.op || n.label);
      for (const [k, v] of opParamRows(n.op, n.params, model.opParams(n.op))) row(k, h("code", { class: "op-param" }, v));
      row("grad_fn", n.grad_fn || "None (grad disabled)");
      if (n.module) row("module", n.module);
      row("state", s.value === undefined ? "not run yet" : s.freed ? "ran; graph freed" : "ran");
    }
    if (n.line) {
      row("line", h("a", { href: "#", class: "line-link", onclick: (e) => { e.preventDefault(); this.onGoToLine && this.onGoToLine(n.line); } }, `line ${n.line}`));
    }
    parts.push(h("dl", { class: "insp-props" }, ...rows));

    if (n.kind === "tensor") {
      parts.push(h("h3", {}, "value"));
      parts.push(this.isMasked(nodeId, "value") ? this.maskedView() : this.valueView(s.value, maxAbs, theme, "value"));
      const retained = state.retained && state.retained.has(nodeId);
      if (!n.requires_grad) {
        parts.push(h("h3", {}, "grad"), h("p", { class: "muted" }, "requires_grad=False: no gradient is tracked."));
      } else if (n.is_leaf || retained) {
        parts.push(h("h3", {}, ".grad"));
        parts.push(this.isMasked(nodeId, "gradient") ? this.maskedView() : s.grad === null ? h("p", { class: "none-val" }, `None (${whyNoGrad(model, nodeId, state.step)})`) : this.valueView(s.grad, maxAbs, theme, "grad"));
      } else {
        parts.push(h("h3", {}, `∂L/∂${nodeName(n)}`));
        parts.push(this.isMasked(nodeId, "gradient") ? this.maskedView() : s.flow === undefined ? h("p", { class: "pending-val" }, "not computed yet") : this.valueView(s.flow, maxAbs, theme, "dL"));
        parts.push(h("p", { class: "muted small" }, "Non-leaf: PyTorch frees this gradient after use, so its .grad is None unless you call retain_grad()."));
      }
    }

    if (n.kind === "tensor") {
      const found = this.optimizerState(model, nodeId, state.step);
      // its buffers are made of gradients and its step moves the values: hidden while a question is open
      if (found) parts.push(...(this.masked ? [h("h3", {}, "optimizer state"), this.maskedView()] : this.optimizerView(found, nodeId, theme)));
    }

    // an op's local derivatives, from the server's op table (trace.ops)
    const opInfo = n.kind === "op" && ctx.ops ? ctx.ops[n.op] : null;
    if (opInfo && Array.isArray(opInfo.latex) && opInfo.latex.length) {
      parts.push(h("h3", {}, "local derivatives"));
      const box = h("div", { class: "chain" });
      parts.push(box);
      const ins = this.inputsOf(model, nodeId);
      const letters = "abcdefgh";
      const lines = opInfo.latex.map((l, i) => `\\frac{\\partial\\,\\text{out}}{\\partial ${letters[i]}} = ${l || "\\text{(no gradient)}"}`);
      // the letters bound: the inputs, and c → the first scalar parameter when it is not an input (pow's exponent)
      const bound = ins.map((name, i) => `${letters[i]} = ${name}`);
      const usesC = opInfo.latex.some((l) => /(?<![\\A-Za-z])c(?![A-Za-z])/.test(l || ""));
      const p0 = Array.isArray(n.params) ? n.params[0] : undefined;
      if (usesC && ins.length < 3 && typeof p0 === "number") {
        const pname = ((model.opParams(n.op) || {}).names || [])[0];
        bound.push(`c = ${fmt(p0)}${pname ? ` (${pname})` : ""}`);
      }
      if (bound.length) parts.push(h("p", { class: "muted small insp-letters" }, bound.join(", ")));
      loadKatex().then((katex) => {
        for (const l of lines) {
          const d = h("div", { class: "katex-line" });
          // inline mode (display-sized): KaTeX may break the line after = and ×, so nothing is cut at the edge
        katex.render("\\displaystyle " + l, d, { throwOnError: false, displayMode: false });
          box.appendChild(d);
        }
      }).catch(() => lines.forEach((l) => box.appendChild(h("pre", {}, l))));
    }

    // chain rule on the most recent backward step involving this node
    const chain = this.masked ? null : chainFor(model, nodeId, state.step);  // its numbers would give the answer away
    if (chain) {
      const current = chain.step === state.step;
      parts.push(h("h3", {}, current ? "chain rule (this step)" : `chain rule (step ${chain.step})`));
      const rule = n.kind === "tensor" ? this.ruleInNames(model, chain.frame, nodeId, state.step) : null;
      if (rule) parts.push(h("p", { class: "chain-rule" }, rule));
      const box = h("div", { class: "chain", "aria-live": "polite" });
      parts.push(box);
      this.renderChain(box, model, chain.frame, nodeId);
    }

    if (n.kind === "tensor" && n.requires_grad && !this.isMasked(nodeId, "gradient")) {
      const out = h("div", { class: "fd-out", "aria-live": "polite" });
      const btn = h("button", { class: "btn", "aria-label": "Check gradient", onclick: () => this.check(model, nodeId, out, btn) }, "Check gradient");
      parts.push(h("h3", {}, "finite difference"), btn, out);
      if (this.fd.has(nodeId)) this.renderFd(out, this.fd.get(nodeId));
    }
    this.root.replaceChildren(...parts);
    if (another) this.root.scrollTop = 0; // a new node is read from its title; a step keeps the place
  }

  // The rule that produced a tensor's gradient, in names: "∂L/∂x = ∂L/∂y · w"; through a transpose into a
  // matrix product it is written out: "∂L/∂weight = (∂L/∂(model.0 out))ᵀ · x" (δᵀx).
  ruleInNames(model, f, id, k) {
    const c = (f.contributions || []).find((x) => x.input === id);
    if (!c) return null;
    const name = (t) => model.tensorName(t);
    const names = model.opInputs(f.node).map(name);
    const params = (model.nodes.get(f.node) || {}).params;
    const dOut = `∂L/∂${dName(name(f.output))}`;
    const local = localInNames(c.local, names, params);
    if (local == null) return null;
    const op = model.nodes.get(f.node) || {};
    if (op.op === "t" || op.op === "transpose") {
      const before = upstreamStep(model, f, k);
      const prod = before && model.nodes.get(before.node);
      const ins = before ? model.opInputs(before.node) : [];
      if (prod && PRODUCT_OPS.has(prod.op) && ins.length >= 2 && ins[ins.length - 1] === f.output) {
        // ∂L/∂Wᵀ = Aᵀ·δ, so ∂L/∂W = (Aᵀ·δ)ᵀ = δᵀ·A
        const delta = `∂L/∂${dName(name(before.output))}`;
        return `∂L/∂${dName(name(id))} = (${dOut})ᵀ = (${name(ins[ins.length - 2])}ᵀ · ${delta})ᵀ = (${delta})ᵀ · ${name(ins[ins.length - 2])}`;
      }
    }
    return `∂L/∂${dName(name(id))} = ${chainText(dOut, local)}`;
  }

  inputsOf(model, opId) {
    const f = model.frames.find((x) => x.kind === "op" && x.id === opId);
    const ids = f && f.inputs ? f.inputs : model.graph.edges.filter((e) => e.target === opId).map((e) => e.source);
    return ids.map((id) => nodeName(model.nodes.get(id)));
  }

  valueView(v, maxAbs, theme, label) {
    if (v === undefined) return h("p", { class: "pending-val" }, "not computed yet");
    if (v === null) return h("p", { class: "none-val" }, "None");
    const sc = scalarOf(v);
    // the full number beside the short one only when they differ: "0.333 (0.3333333)", never "5 (5)"
    if (sc !== undefined && flat(v).shape.length === 0) {
      return h("p", { class: "scalar-val" }, fmt(sc), String(sc) !== fmt(sc) ? h("span", { class: "muted small" }, `  (${sc})`) : null);
    }
    // tiles on the tensor's own domain: a kernel's ±0.2 would be washed out by the pass's inputs
    if (isImageLike(v)) return tiles(v, largest(v) || 1, theme, { label, domainNote: true });
    const view = heatmap(v, maxAbs, theme, { label });
    const shape = flat(v).shape;
    if (isSummary(v) && shape.length >= 3) {
      // NOTE: the trace summarises values above the value_limit setting: no pixels to tile
      view.prepend(h("p", { class: "muted small" }, `${shapeText(shape)}: too big for the trace to carry every number; ` +
        `min ${fmt(v.min)}, max ${fmt(v.max)}, mean ${fmt(v.mean)}, the first ${flat(v).data.length} below`));
    }
    return view;
  }

  // The optimizer's state of parameter `id` after its latest step: this pass up to `step`, else an
  // earlier pass (the state carries over). {frame, where} or null.
  optimizerState(model, id, step) {
    const has = (f) => f.kind === "optim_step" && f.state && f.state[id];
    for (let i = Math.min(step, model.steps.length) - 1; i >= 0; i--) {
      const f = model.steps[i].frames.find(has);
      if (f) return { frame: f, where: `step ${i + 1} of this pass` };
    }
    const passes = model.trace.passes || [];
    for (let p = Math.min(model.passIndex, passes.length) - 1; p >= 0; p--) {
      const f = [...(passes[p].frames || [])].reverse().find(has);
      if (f) return { frame: f, where: `pass ${p + 1}` };
    }
    return null;
  }

  optimizerView({ frame, where }, id, theme) {
    const st = frame.state[id];
    const line = frame.line ? ` (line ${frame.line})` : "";
    const out = [h("h3", {}, "optimizer state"),
      h("p", { class: "muted small" }, `${frame.optimizer}.step()${line}, ${where}${frame.lr != null ? `, lr ${fmt(frame.lr)}` : ""}`)];
    const order = ["step", "momentum_buffer", "exp_avg", "exp_avg_sq", "max_exp_avg_sq", "square_avg", "grad_avg", "sum",
      "acc_delta", "exp_inf", "mu_product"];
    const names = [...order.filter((k) => k in st), ...Object.keys(st).filter((k) => !order.includes(k))];
    const box = h("div", { class: "optim-state", "aria-label": "optimizer state" });
    for (const k of names) {
      const v = st[k];
      const sc = scalarOf(v);
      if (sc !== undefined && flat(v).shape.length === 0) {
        box.append(h("p", { class: "optim-name" }, h("code", {}, k), ` = ${fmt(sc)}`));
        continue;
      }
      // each buffer on its own domain: Adam's exp_avg_sq is orders of magnitude below the values
      const domain = largest(v) || 1;
      const note = isImageLike(v) ? "" : `, colour ±${fmt(domain)}`;
      box.append(h("p", { class: "optim-name" }, h("code", {}, k), h("span", { class: "muted small" }, `  ${shapeText(flat(v).shape)}${note}`)),
        this.valueView(v, domain, theme, k));
    }
    out.push(box);
    return out;
  }

  async renderChain(box, model, f, nodeId) {
    const outName = model.tensorName(f.output);
    const contribs = (f.contributions || []).filter((c) => nodeId === f.node || nodeId === f.output || c.input === nodeId);
    const lines = [];
    if (f.upstream_parts && f.upstream_parts.length > 1) {
      lines.push(`\\frac{\\partial L}{\\partial ${tex(outName)}} = ${f.upstream_parts.map(latex).join(" + ")} = ${latex(f.upstream)}`);
    }
    for (const c of contribs) {
      const inName = model.tensorName(c.input);
      const u = scalarOf(f.upstream), g = scalarOf(c.grad);
      let local = c.local || "?";
      if (u !== undefined && g !== undefined && u !== 0 && !/^-?[\d.]+$/.test(local.trim()) && flat(f.upstream).shape.length === 0 && flat(c.grad).shape.length === 0) {
        // the rule, then the same with this step's numbers in (parameters bound: pow's exponent), then its value
        const values = model.opInputs(f.node).map((id) => scalarOf((model.nodes.get(id) || {}).value));
        const withNumbers = substituteLatex(local, bindings(values, (model.nodes.get(f.node) || {}).params));
        local = `${local}${withNumbers ? ` = ${withNumbers}` : ""} = ${fmt(g / u)}`;
      }
      const product = `\\underbrace{${latex(f.upstream)}}_{\\partial L/\\partial ${tex(outName)}} \\times ` +
        `\\underbrace{${local}}_{\\partial ${tex(outName)}/\\partial ${tex(inName)}}`;
      if (c.unbroadcast_from) {
        // broadcasting undone: the product has the broadcast shape; the sum over the broadcast dims gives the input's
        const to = flat(c.grad).shape;
        lines.push(`${product} \\quad ${shapeText(c.unbroadcast_from)}`);
        lines.push(`\\textstyle\\sum_{\\text{${broadcastDims(c.unbroadcast_from, to)}}:\\ ${shapeText(c.unbroadcast_from)}\\to${shapeText(to)}} = ` +
          `\\underbrace{${latex(c.grad)}}_{\\partial L/\\partial ${tex(inName)}}`);
      } else {
        lines.push(`${product} = \\underbrace{${latex(c.grad)}}_{\\partial L/\\partial ${tex(inName)}}`);
      }
    }
    const caption = h("p", { class: "muted small" }, `${f.grad_fn}: upstream × local = contribution`);
    box.replaceChildren(caption);
    try {
      const katex = await loadKatex();
      for (const l of lines) {
        const d = h("div", { class: "katex-line" });
        katex.render(l, d, { throwOnError: false, displayMode: true });
        box.appendChild(d);
      }
    } catch (e) {
      for (const l of lines) box.appendChild(h("pre", {}, l));
    }
  }

  async check(model, nodeId, out, btn) {
    if (!this.onCheckGradient) return;
    btn.disabled = true;
    out.replaceChildren(h("p", { class: "muted" }, "running the program twice with the value nudged ±ε…"));
    try {
      const res = await this.onCheckGradient(nodeId);
      this.fd.set(nodeId, res);
      this.renderFd(out, res);
    } catch (e) {
      out.replaceChildren(h("p", { class: "error-text" }, String(e.message || e)));
    } finally {
      btn.disabled = false;
    }
  }

  renderFd(out, res) {
    if (res.error) {
      out.replaceChildren(h("p", { class: "error-text" }, res.error));
      return;
    }
    const tbl = h("table", { class: "fd-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "element"), h("th", {}, "autograd"), h("th", {}, "finite diff."), h("th", {}, "rel. err"), h("th", {}, ""))),
    );
    const body = h("tbody");
    for (const r of res.rows) {
      const diff = Math.abs(r.autograd - r.estimate);
      const rel = diff / Math.max(1e-8, Math.abs(r.autograd) + Math.abs(r.estimate));
      // NOTE: float32 central differences carry ~1e-3 of absolute noise: a tiny true gradient has a large relative
      // error and is still right, so it is judged like torch.allclose: |diff| ≤ atol + rtol·|autograd|
      const agrees = diff <= FD_TOLERANCE.atol + FD_TOLERANCE.rtol * Math.abs(r.autograd);
      body.append(h("tr", { class: agrees ? "fd-ok" : "fd-bad" },
        h("td", {}, r.index), h("td", {}, fmt(r.autograd)), h("td", {}, fmt(r.estimate)), h("td", {}, rel.toExponential(1)), h("td", {}, agrees ? "✓" : "✗")));
    }
    tbl.append(body);
    out.replaceChildren(tbl, h("p", { class: "muted small" },
      `${res.note || ""} ✓ when |autograd − estimate| ≤ ${FD_TOLERANCE.atol} + ${FD_TOLERANCE.rtol}·|autograd|.`));
  }
}

export { describe };
