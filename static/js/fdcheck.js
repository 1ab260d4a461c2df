// "Check gradient": a real central finite difference. The program is re-run on the server with
// the tensor nudged by ±ε (a `with torch.no_grad(): <tensor> += δ` line inserted right after the
// statement that creates it), and (L(x+ε) − L(x−ε)) / 2ε is compared with this pass's autograd
// gradient. Works for named tensors and module parameters (`model.0.weight` → `model[0].weight`).
import { flat, num } from "./values.js";

// Logical-line ranges of a Python source: [{start, end}] (1-based), following bracket nesting,
// strings and backslash continuations.
export function logicalLines(src) {
  const lines = src.split("\n");
  const out = [];
  let depth = 0, start = null, inStr = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (start === null) start = i + 1;
    for (let j = 0; j < line.length; j++) {
      const ch = line[j];
      if (inStr) {
        if (ch === "\\") j++;
        else if (line.startsWith(inStr, j)) {
          j += inStr.length - 1;
          inStr = null;
        }
        continue;
      }
      if (ch === "#") break;
      if (ch === '"' || ch === "'") {
        const triple = line.startsWith(ch.repeat(3), j);
        inStr = triple ? ch.repeat(3) : ch;
        if (triple) j += 2;
        continue;
      }
      if ("([{".includes(ch)) depth++;
      else if (")]}".includes(ch)) depth = Math.max(0, depth - 1);
    }
    if (inStr && inStr.length === 1) inStr = null;
    const cont = /\\\s*$/.test(line);
    if (depth === 0 && !inStr && !cont) {
      out.push({ start, end: i + 1 });
      start = null;
    }
  }
  if (start !== null) out.push({ start, end: lines.length });
  return out;
}

const indentOf = (s) => s.match(/^\s*/)[0];

function insideDef(lines, lineNo) {
  let ind = indentOf(lines[lineNo - 1]).length;
  for (let i = lineNo - 2; i >= 0; i--) {
    const l = lines[i];
    if (!l.trim() || l.trim().startsWith("#")) continue;
    const li = indentOf(l).length;
    if (li < ind) {
      if (/^\s*(async\s+)?def\s|^\s*class\s/.test(l)) return true;
      ind = li;
      if (ind === 0) return false;
    }
  }
  return false;
}

// "model.0.weight" -> "model[0].weight"; "x" -> "x"
export function pythonPath(name) {
  if (!name || !/^[A-Za-z_][\w.]*$/.test(name)) return null;
  return name.split(".").map((p, i) => (i === 0 ? p : /^\d+$/.test(p) ? `[${p}]` : "." + p)).join("");
}

function deltaLiteral(shape, flatIndex, eps) {
  if (!shape.length) return `torch.tensor(${eps})`;
  let k = 0;
  const build = (d) => {
    const parts = [];
    for (let i = 0; i < shape[d]; i++) parts.push(d === shape.length - 1 ? (k++ === flatIndex ? String(eps) : "0.0") : build(d + 1));
    return "[" + parts.join(", ") + "]";
  };
  return `torch.tensor(${build(0)})`;
}

// Where to insert: after the top-level (not inside def/class) statement assigning the root name.
export function perturbSource(src, name, creationLine, shape, flatIndex, eps) {
  const expr = pythonPath(name);
  if (!expr) return { error: `“${name}” is not a variable of the program, so it cannot be nudged. Bind it to a name to check it.` };
  const root = expr.match(/^[A-Za-z_]\w*/)[0];
  const lines = src.split("\n");
  const logical = logicalLines(src);
  const assigns = new RegExp(`^\\s*${root}\\s*(=(?!=)|:[^=]*=)`);
  let target = null;
  const stmtAt = (n) => logical.find((r) => r.start <= n && n <= r.end);
  if (creationLine) {
    const st = stmtAt(creationLine);
    if (st && assigns.test(lines[st.start - 1]) && !insideDef(lines, st.start)) target = st;
  }
  if (!target) {
    for (const st of logical) {
      if (assigns.test(lines[st.start - 1]) && !insideDef(lines, st.start)) {
        target = st;
        if (!creationLine || st.start >= creationLine) break;
      }
    }
  }
  if (!target) return { error: `could not find where “${root}” is assigned at the top level of the program` };
  const ind = indentOf(lines[target.start - 1]);
  const inject = [`${ind}with torch.no_grad():`, `${ind}    ${expr} += ${deltaLiteral(shape, flatIndex, eps)}`];
  const out = [...lines.slice(0, target.end), ...inject, ...lines.slice(target.end)];
  return { source: out.join("\n"), line: target.end };
}

function pickIndices(gradFlat, n) {
  const idx = new Set([0]);
  let best = 0;
  gradFlat.forEach((g, i) => {
    if (Math.abs(g) > Math.abs(gradFlat[best])) best = i;
  });
  idx.add(best);
  idx.add(gradFlat.length - 1);
  return [...idx].slice(0, n);
}

function creationLineOf(trace, id) {
  for (const p of trace.passes) for (const f of p.frames || []) if (f.kind === "tensor" && f.id === id) return f.line;
  return null;
}

export async function checkGradient({ trace, model, nodeId, source, run }) {
  const n = model.nodes.get(nodeId);
  if (!n || n.kind !== "tensor") return { error: "pick a tensor node" };
  const pass = model.pass;
  if (typeof num(pass.loss) !== "number" || !isFinite(num(pass.loss))) {
    return { error: "this pass has no scalar loss.backward(), so there is nothing to differentiate" };
  }
  for (const p of trace.passes.slice(0, model.passIndex)) {
    if ((p.frames || []).some((f) => f.kind === "optim_step" || f.kind === "inplace")) {
      return { error: "parameters were updated in an earlier pass; the check is available on passes before the first update" };
    }
  }
  const g = model.passGradient(nodeId);
  if (g === undefined) return { error: "no gradient reached this tensor in this pass" };
  const gf = flat(g);
  const vf = flat(n.value);
  if (gf.summary || vf.summary) return { error: "tensor too large to check element by element" };
  const shape = vf.shape;
  const name = n.name || n.label;
  const line = creationLineOf(trace, nodeId);
  const rows = [];
  for (const i of pickIndices(gf.data, 3)) {
    const x = vf.data[i];
    const eps = 1e-2 * Math.max(1, Math.abs(x));
    const plus = perturbSource(source, name, line, shape, i, eps);
    if (plus.error) return { error: plus.error };
    const minus = perturbSource(source, name, line, shape, i, -eps);
    // one after the other: the server keeps one run per client and cancels the previous one
    const a = await run(plus.source);
    const b = await run(minus.source);
    for (const r of [a, b]) {
      if (r.error) return { error: `perturbed run failed: ${r.error.type}: ${r.error.message}` };
    }
    const la = a.passes[model.passIndex] && num(a.passes[model.passIndex].loss);
    const lb = b.passes[model.passIndex] && num(b.passes[model.passIndex].loss);
    if (!isFinite(la) || !isFinite(lb)) return { error: "the perturbed runs did not produce this pass's loss" };
    const index = shape.length ? `[${unravel(i, shape).join(", ")}]` : "(scalar)";
    rows.push({ index, autograd: gf.data[i], estimate: (la - lb) / (2 * eps), eps });
  }
  return {
    rows,
    note: `central difference (L(x+ε) − L(x−ε)) / 2ε, ε = 1e-2·max(1,|x|), from two extra runs per element of the program with ${pythonPath(name)} nudged (float32, so expect ~1e-3 agreement).`,
  };
}

function unravel(i, shape) {
  const out = [];
  for (let d = shape.length - 1; d >= 0; d--) {
    out.unshift(i % shape[d]);
    i = Math.floor(i / shape[d]);
  }
  return out;
}
