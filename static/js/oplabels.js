// What an op node says: the op table's label plus its scalar parameters (`params` on op nodes
// and op frames: `x ** 2` → pow_scalar [2] → "** 2"; `x.sum(1)` → sum_dim [[1], false] → "sum(1)").
// How an op's parameters are written is the server's op table's (`ops[name].params` = {format,
// names, symbol}, engine/ops.py `Params`), passed in as `fmt`. app/trace/labels.py is the same
// formatting in Python (it sizes op nodes for the layout): keep the two in step;
// tests/browser/test_page.py compares them.

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

// A parameter equal to its default: (1, 1) equals 1; {same_as: name} is another parameter's value.
function isDefault(v, def, p, names) {
  if (def !== null && typeof def === "object" && !Array.isArray(def)) {
    const other = names.indexOf(def.same_as);
    return other >= 0 && other < p.length && JSON.stringify(v) === JSON.stringify(p[other]);
  }
  const items = Array.isArray(v) ? v : [v];
  return items.length > 0 && items.every((x) => x === def);
}

// The "keywords" format: {head: "conv2d" (N from the first, spatial, parameter), args: "stride=2, padding=1"}.
export function keywordCall(label, p, fmt) {
  const names = (fmt && fmt.names) || [], defaults = (fmt && fmt.defaults) || {};
  const head = Array.isArray(p[0]) ? `${label}${p[0].length}d` : label;
  const args = [];
  p.forEach((v, i) => {
    const name = i < names.length ? names[i] : `arg${i + 1}`;
    if (Object.prototype.hasOwnProperty.call(defaults, name) && isDefault(v, defaults[name], p, names)) return;
    // a tuple of equal items is written as PyTorch's users write it: (2, 2) → 2
    const text = Array.isArray(v) ? (v.length && v.every((x) => x === v[0]) ? fmtParam(v[0]) : `(${fmtParam(v)})`) : fmtParam(v);
    args.push(`${name}=${text}`);
  });
  return { head, args: args.join(", ") };
}

// "** 2", "clamp(0, 1)", "sum(1)", "[:, 1:3]"…; the bare label when there is nothing to add.
export function opText(op, label, params, fmt) {
  label = label || op || "op";
  if (!Array.isArray(params) || !params.length) return label;
  const p = params;
  const a = fmtParam(p[0]);
  switch (fmt && fmt.format) {
    case "right":
      return `${fmt.symbol} ${a}`;
    case "left":
      return `${a} ${fmt.symbol}`;
    case "clamp": {
      const lo = p[0] ?? null, hi = p.length > 1 ? p[1] ?? null : null;
      if (lo !== null && hi !== null) return `clamp(${fmtParam(lo)}, ${fmtParam(hi)})`;
      if (lo !== null) return `clamp(min=${fmtParam(lo)})`;
      if (hi !== null) return `clamp(max=${fmtParam(hi)})`;
      return label;
    }
    case "reduce":
      return `${label}(${dims(p[0])}${p.length > 1 && p[1] === true ? ", keepdim" : ""})`;
    case "call":
      return `${label}(${a})`;
    case "subscript":
      return `[${fmtParam(Array.isArray(p[0]) ? p[0] : [p[0]])}]`;
    case "hidden":
      return label;
    case "reduction":
      return p[0] === DEFAULT_REDUCTION ? label : `${label}(${a})`;
    case "keywords": {
      const { head, args } = keywordCall(label, p, fmt);
      return args ? `${head}(${args})` : head;
    }
    default:
      return `${label}(${fmtParam(p)})`;
  }
}

// The node's own text (graph nodes carry op, label and params).
export function opNodeText(n, fmt) {
  return opText(n.op, n.label, n.params, fmt);
}

// Named parameters for the inspector: [[name, text], ...].
export function opParamRows(op, params, fmt) {
  if (!Array.isArray(params) || !params.length) return [];
  const names = (fmt && fmt.names) || [];
  return params.map((v, i) => {
    const name = names[i] || `arg ${i + 1}`;
    let text;
    if (fmt && fmt.format === "subscript" && i === 0) text = `[${fmtParam(Array.isArray(v) ? v : [v])}]`;
    else if (Array.isArray(v)) text = `(${fmtParam(v)}${v.length === 1 ? "," : ""})`;
    else if (typeof v === "string" && name === "reduction") text = `"${v}"`;
    else text = fmtParam(v);
    return [name, text];
  });
}

// How tightly each infix operator binds (Python's order): an operand with a looser operator at its top
// level is parenthesised, so ((pred - target) ** 2) reads "(pred − target) ** 2", never "pred − target ** 2".
const PRECEDENCE = { "+": 1, "−": 1, "-": 1, "×": 2, "*": 2, "÷": 2, "/": 2, "@": 2, "**": 3 };

// The loosest operator outside parentheses in an expression ("a × b + c" → 1); Infinity for a name or a call.
export function loosestOperator(expr) {
  let depth = 0, loosest = Infinity;
  const words = String(expr).split(" ");
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (depth === 0 && i > 0 && i < words.length - 1 && w in PRECEDENCE) loosest = Math.min(loosest, PRECEDENCE[w]);
    for (const ch of w) {
      if (ch === "(" || ch === "[") depth++;
      else if ((ch === ")" || ch === "]") && depth > 0) depth--;
    }
  }
  return loosest;
}

// An operand in parentheses when its own operator binds looser than `tighter` needs.
export function operand(expr, tighter) {
  return loosestOperator(expr) < tighter ? `(${expr})` : expr;
}

// A name as it sits after ∂ in a derivative: compound names in parentheses, "∂L/∂(x × 3)".
export function dName(name) {
  return / /.test(name) ? `(${name})` : name;  // "x × 3", "model.0 out": anything more than one word
}

// An expression for the op's output from its input names: "s ** 2", "x[:, 1:3]", "sum(x, 1)".
const INFIX = new Set(["+", "−", "-", "×", "*", "÷", "/", "@"]);
export function opExpr(op, label, params, ins, fmt) {
  label = label || op || "op";
  const unary = Array.isArray(params) && params.length > 0 && ins.length === 1;
  const kind = fmt && fmt.format;
  if (unary && kind === "right") {
    const p = PRECEDENCE[fmt.symbol] || 2;
    return `${operand(ins[0], p + 1)} ${fmt.symbol} ${fmtParam(params[0])}`;
  }
  if (unary && kind === "left") return `${fmtParam(params[0])} ${fmt.symbol} ${operand(ins[0], (PRECEDENCE[fmt.symbol] || 2))}`;
  if (unary && kind === "subscript") return `${operand(ins[0], Infinity)}${opText(op, label, params, fmt)}`;
  if (INFIX.has(label) && ins.length === 2) {
    // left-associative: the right operand of − and ÷ keeps parentheses at its own level (a − (b − c))
    const p = PRECEDENCE[label];
    const right = label === "+" || label === "×" || label === "*" ? p : p + 1;
    return `${operand(ins[0], p)} ${label} ${operand(ins[1], right)}`;
  }
  if (label === "ᵀ" && ins.length === 1) return `${operand(ins[0], Infinity)}ᵀ`;
  if (kind === "keywords" && Array.isArray(params) && params.length) {
    const { head, args } = keywordCall(label, params, fmt);
    return `${head}(${[...ins, ...(args ? [args] : [])].join(", ")})`;
  }
  const text = opText(op, label, params, fmt);
  if (text !== label && text.endsWith(")")) return `${label}(${[...ins, text.slice(label.length + 1, -1)].join(", ")})`;
  return `${label}(${ins.join(", ")})`;
}
