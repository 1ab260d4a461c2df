// What an op node says: the op table's label plus its scalar parameters (`params` on op nodes
// and op frames: `x ** 2` → pow_scalar [2] → "** 2"; `x.sum(1)` → sum_dim [[1], false] → "sum(1)").
// app/trace/labels.py is the same formatting in Python (it sizes op nodes for the layout): keep
// the two in step; tests/browser/test_page.py compares them.

const REDUCE_DIM = new Set(["sum_dim", "mean_dim", "max_dim", "min_dim", "argmax", "argmin"]);
const ONE_DIM = new Set(["softmax", "log_softmax", "cat", "stack", "unsqueeze", "squeeze_dim"]);
const SHAPE = new Set(["view", "unsafe_view", "expand", "permute", "squeeze_dims", "reshape"]);
const LOSSES = new Set(["mse_loss", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits"]);
const DEFAULT_REDUCTION = "mean";

// One parameter as Python prints it; lists as comma-separated items.
export function fmtParam(v) {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (Array.isArray(v)) return v.map(fmtParam).join(", ");
  return String(v);
}

function dims(v) {
  if (Array.isArray(v)) return v.length === 1 ? fmtParam(v[0]) : `(${fmtParam(v)})`;
  return fmtParam(v);
}

// "** 2", "clamp(0, 1)", "sum(1)", "[:, 1:3]"…; the bare label when there is nothing to add.
export function opText(op, label, params) {
  label = label || op || "op";
  if (!Array.isArray(params) || !params.length) return label;
  const p = params;
  const a = fmtParam(p[0]);
  switch (op) {
    case "pow_scalar":
      return `** ${a}`;
    case "rpow":
      return `${a} **`;
    case "rsub":
      return `${a} −`;
    case "clamp": {
      const lo = p[0] ?? null, hi = p.length > 1 ? p[1] ?? null : null;
      if (lo !== null && hi !== null) return `clamp(${fmtParam(lo)}, ${fmtParam(hi)})`;
      if (lo !== null) return `clamp(min=${fmtParam(lo)})`;
      if (hi !== null) return `clamp(max=${fmtParam(hi)})`;
      return label;
    }
    case "transpose":
      return `${label}(${fmtParam(p)})`;
    case "select":
    case "slice":
      return `[${fmtParam(Array.isArray(p[0]) ? p[0] : [p[0]])}]`;
    case "index":
      return label;
    case "to_copy":
      return `${label}(${a})`;
    default:
      break;
  }
  if (REDUCE_DIM.has(op)) return `${label}(${dims(p[0])}${p.length > 1 && p[1] === true ? ", keepdim" : ""})`;
  if (ONE_DIM.has(op) || SHAPE.has(op)) return `${label}(${a})`;
  if (LOSSES.has(op)) return p[0] === DEFAULT_REDUCTION ? label : `${label}(${a})`;
  return `${label}(${fmtParam(p)})`;
}

// The node's own text (graph nodes carry op, label and params).
export function opNodeText(n) {
  return opText(n.op, n.label, n.params);
}

// Named parameters for the inspector: [[name, text], ...].
const NAMES = {
  pow_scalar: ["exponent"],
  rpow: ["base"],
  rsub: ["minuend"],
  clamp: ["min", "max"],
  sum_dim: ["dim", "keepdim"],
  mean_dim: ["dim", "keepdim"],
  max_dim: ["dim", "keepdim"],
  min_dim: ["dim", "keepdim"],
  argmax: ["dim", "keepdim"],
  argmin: ["dim", "keepdim"],
  softmax: ["dim"],
  log_softmax: ["dim"],
  cat: ["dim"],
  stack: ["dim"],
  unsqueeze: ["dim"],
  squeeze_dim: ["dim"],
  squeeze_dims: ["dims"],
  view: ["shape"],
  unsafe_view: ["shape"],
  reshape: ["shape"],
  expand: ["size"],
  permute: ["dims"],
  transpose: ["dim0", "dim1"],
  select: ["index"],
  slice: ["index"],
  index: ["index"],
  to_copy: ["dtype"],
  mse_loss: ["reduction"],
  nll_loss: ["reduction"],
  binary_cross_entropy: ["reduction"],
  binary_cross_entropy_with_logits: ["reduction"],
};

export function opParamRows(op, params) {
  if (!Array.isArray(params) || !params.length) return [];
  const names = NAMES[op] || [];
  return params.map((v, i) => {
    const name = names[i] || `arg ${i + 1}`;
    let text;
    if ((op === "select" || op === "slice") && i === 0) text = `[${fmtParam(Array.isArray(v) ? v : [v])}]`;
    else if (Array.isArray(v)) text = `(${fmtParam(v)}${v.length === 1 ? "," : ""})`;
    else if (typeof v === "string" && name === "reduction") text = `"${v}"`;
    else text = fmtParam(v);
    return [name, text];
  });
}

// An expression for the op's output from its input names: "s ** 2", "x[:, 1:3]", "sum(x, 1)".
const INFIX = new Set(["+", "−", "-", "×", "*", "÷", "/", "@"]);
export function opExpr(op, label, params, ins) {
  label = label || op || "op";
  const has = Array.isArray(params) && params.length > 0;
  if (has && op === "pow_scalar" && ins.length === 1) return `${ins[0]} ** ${fmtParam(params[0])}`;
  if (has && op === "rpow" && ins.length === 1) return `${fmtParam(params[0])} ** ${ins[0]}`;
  if (has && op === "rsub" && ins.length === 1) return `${fmtParam(params[0])} − ${ins[0]}`;
  if (has && (op === "select" || op === "slice") && ins.length === 1) return `${ins[0]}${opText(op, label, params)}`;
  if (INFIX.has(label) && ins.length === 2) return `${ins[0]} ${label} ${ins[1]}`;
  if (op === "t" && ins.length === 1) return `${ins[0]}ᵀ`;
  const text = opText(op, label, params);
  if (text !== label && text.endsWith(")")) return `${label}(${[...ins, text.slice(label.length + 1, -1)].join(", ")})`;
  return `${label}(${ins.join(", ")})`;
}
