// Values as the trace sends them (docs/trace.md "V"): a number, a nested list, the strings
// "nan"/"inf"/"-inf", or a summary object {summary, shape, min, max, mean, sample}.

export function num(x) {
  if (typeof x === "number") return x;
  if (x === "nan") return NaN;
  if (x === "inf") return Infinity;
  if (x === "-inf") return -Infinity;
  if (typeof x === "boolean") return x ? 1 : 0;
  return NaN;
}

export const isSummary = (v) => v != null && typeof v === "object" && !Array.isArray(v) && v.summary;
export const isScalar = (v) => v != null && !Array.isArray(v) && !isSummary(v);

export function shapeOf(v) {
  if (isSummary(v)) return v.shape || [];
  const shape = [];
  let cur = v;
  while (Array.isArray(cur)) {
    shape.push(cur.length);
    cur = cur[0];
  }
  return shape;
}

// Flat numbers (for summaries: the sample) plus the shape they belong to.
export function flat(v) {
  if (v == null) return { shape: [], data: [], summary: false };
  if (isSummary(v)) return { shape: v.shape || [], data: (v.sample || []).map(num), summary: true };
  if (!Array.isArray(v)) return { shape: [], data: [num(v)], summary: false };
  const data = [];
  const walk = (x) => (Array.isArray(x) ? x.forEach(walk) : data.push(num(x)));
  walk(v);
  return { shape: shapeOf(v), data, summary: false };
}

export function maxAbs(v) {
  if (v == null) return 0;
  if (isSummary(v)) return Math.max(Math.abs(num(v.min)), Math.abs(num(v.max))) || 0;
  let m = 0;
  for (const x of flat(v).data) if (isFinite(x)) m = Math.max(m, Math.abs(x));
  return m;
}

export function scalarOf(v) {
  if (v == null) return undefined;
  if (isScalar(v)) return num(v);
  const f = flat(v);
  if (!f.summary && f.data.length === 1) return f.data[0];
  return undefined;
}

// Compact number text: 4 significant digits, no trailing zeros, exponent when tiny or huge.
export function fmt(x) {
  x = num(x);
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const a = Math.abs(x);
  if (a >= 1e5 || a < 1e-3) return x.toExponential(2).replace(/\.?0+e/, "e");
  return String(Number(x.toPrecision(4)));
}

// A number on a small cell: 3 significant digits, 6 characters at most ("-0.339", "1.2e5", "-1e-3").
export function shortNum(x) {
  x = num(x);
  if (!Number.isFinite(x) || x === 0) return fmt(x);
  const a = Math.abs(x);
  if (a >= 1e4 || a < 1e-2) {
    const e = x.toExponential(1).replace(/\.0e/, "e").replace("e+", "e");
    return e.length <= 6 ? e : x.toExponential(0).replace("e+", "e");
  }
  const s = String(Number(x.toPrecision(3)));
  return s.length <= 6 ? s : String(Number(x.toPrecision(2)));  // "-0.0624" -> "-0.062"
}

export function shapeText(shape) {
  return "[" + (shape || []).join(", ") + "]";
}

// Text for labels and aria: "25", "[1, 2, 3]", "[[1, 2], [3, 4]]", or a summary.
export function describe(v, limit = 12) {
  if (v === undefined) return "not computed yet";
  if (v === null) return "None";
  if (isSummary(v)) return `${shapeText(v.shape)} tensor, min ${fmt(v.min)}, max ${fmt(v.max)}, mean ${fmt(v.mean)}`;
  if (!Array.isArray(v)) return fmt(v);
  let count = 0;
  let cut = false;
  const walk = (x) => {
    if (!Array.isArray(x)) {
      count++;
      if (count > limit) cut = true;
      return cut ? null : fmt(x);
    }
    const parts = [];
    for (const y of x) {
      const s = cut ? null : walk(y);
      if (s == null) {
        parts.push("…");
        break;
      }
      parts.push(s);
    }
    return "[" + parts.join(", ") + "]";
  };
  return walk(v);
}

// Short text that fits a node cell.
export function cellText(v) {
  if (v === undefined) return "?";
  if (v === null) return "None";
  const s = scalarOf(v);
  if (s !== undefined && shapeOf(v).length === 0) return fmt(s);
  if (isSummary(v)) return `μ ${fmt(v.mean)}`;
  return describe(v, 4);
}

// Elementwise a+b for same-shaped values (used to show accumulation / fan-in sums).
export function add(a, b) {
  if (a == null) return b;
  if (b == null) return a;
  if (Array.isArray(a) && Array.isArray(b)) return a.map((x, i) => add(x, b[i]));
  if (!Array.isArray(a) && !Array.isArray(b) && !isSummary(a) && !isSummary(b)) return num(a) + num(b);
  return b;
}

// LaTeX for a value: numbers, small vectors/matrices as bmatrix, otherwise the shape.
export function latex(v) {
  if (v === undefined) return "?";
  if (v === null) return "\\text{None}";
  const t = (x) => fmt(x).replace("e", "\\text{e}");
  if (isSummary(v)) return `\\text{tensor}${shapeText(v.shape).replace(/, /g, "{\\times}")}`;
  if (!Array.isArray(v)) return t(v);
  const shape = shapeOf(v);
  if (shape.length === 1 && shape[0] <= 6) return `\\begin{bmatrix}${v.map(t).join(" & ")}\\end{bmatrix}`;
  if (shape.length === 2 && shape[0] <= 4 && shape[1] <= 4) {
    return `\\begin{bmatrix}${v.map((r) => r.map(t).join(" & ")).join(" \\\\ ")}\\end{bmatrix}`;
  }
  return `\\text{tensor}[${shape.join("{\\times}")}]`;
}
