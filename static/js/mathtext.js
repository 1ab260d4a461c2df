// The op table's local derivatives (LaTeX in the inputs' names a, b, c) with the numbers of a step put
// in: as LaTeX for the inspector ("2\cdot(5)^{2-1}"), as plain text for the caption ("2·5^(2−1)").
// The letters: a, b → the op's first and second inputs, c → its third input, or its first scalar
// parameter (pow's exponent) when it has fewer inputs.

const VARIABLE = /(?<![\\A-Za-z])([abc])(?![A-Za-z])/g;

export function bindings(values, params) {
  const out = {};
  ["a", "b", "c"].forEach((v, i) => {
    if (values[i] !== undefined) out[v] = values[i];
  });
  if (out.c === undefined && params && typeof params[0] === "number" && values.length < 3) out.c = params[0];
  return out;
}

const num = (x) => (Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(4))));

// LaTeX with the numbers in (null when a letter has no number: the symbolic form stays).
export function substituteLatex(latex, vars) {
  if (!latex) return null;
  let missing = false;
  const out = latex.replace(VARIABLE, (m, v) => {
    if (vars[v] === undefined) {
      missing = true;
      return m;
    }
    const s = num(vars[v]);
    return s.startsWith("-") ? `(${s})` : s;
  });
  if (missing || out === latex) return null;
  return out.replace(/\\,/g, "\\cdot ");  // "2\,5^{1}" would read as 25
}

// LaTeX → plain text for the caption; null for anything this small converter does not know.
const COMMANDS = {
  "\\cdot": "·", "\\,": "·", "\\times": "×", "\\ln": "ln ", "\\log": "log ", "\\cos": "cos ", "\\sin": "sin ",
  "\\tanh": "tanh ", "\\sigma": "σ", "\\exp": "exp ", "\\textstyle": "", "\\sum": "Σ", "\\top": "ᵀ", "\\le": "≤",
  "\\ge": "≥", "\\lnot": "¬", "\\pi": "π", "\\ne": "≠", "\\alpha": "α", "\\beta": "β", "\\delta": "δ",
  "\\max": "max", "\\min": "min", "\\varphi": "φ", "\\Phi": "Φ", "\\lVert": "‖", "\\rVert": "‖",
};

function group(s, i) {  // the {…} starting at s[i]: [content, index after]
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    if (s[j] === "{") depth++;
    else if (s[j] === "}" && --depth === 0) return [s.slice(i + 1, j), j + 1];
  }
  return null;
}

const simple = (t) => /^[\w.·πσα-ω]+$/u.test(t);

export function latexToText(latex) {
  let out = "", i = 0;
  const s = latex;
  while (i < s.length) {
    const ch = s[i];
    if (ch === "\\") {
      const m = /^\\([A-Za-z]+|,)/.exec(s.slice(i));
      if (!m) return null;
      const cmd = m[0];
      i += cmd.length;
      if (cmd === "\\frac" || cmd === "\\tfrac") {
        const a = group(s, i);
        const b = a && group(s, a[1]);
        if (!b) return null;
        const [x, y] = [latexToText(a[0]), latexToText(b[0])];
        if (x == null || y == null) return null;
        out += `${simple(x) ? x : `(${x})`}/${simple(y) ? y : `(${y})`}`;
        i = b[1];
      } else if (cmd === "\\sqrt") {
        const a = group(s, i);
        const x = a && latexToText(a[0]);
        if (x == null) return null;
        out += `√(${x})`;
        i = a[1];
      } else if (cmd === "\\mathbb" || cmd === "\\operatorname" || cmd === "\\mathrm") {
        const a = group(s, i);
        if (!a) return null;
        out += a[0];
        i = a[1];
      } else if (cmd in COMMANDS) {
        out += COMMANDS[cmd];
      } else {
        return null;
      }
    } else if (ch === "^" || ch === "_") {
      i++;
      let x;
      if (s[i] === "{") {
        const a = group(s, i);
        if (!a) return null;
        x = latexToText(a[0]);
        i = a[1];
      } else {
        x = s[i++];
      }
      if (x == null) return null;
      if (ch === "_") continue;  // subscripts are labels (clip_δ): the caption leaves them out
      out += x === "ᵀ" ? "ᵀ" : simple(x) ? `^${x}` : `^(${x})`;
    } else if (ch === "{" || ch === "}") {
      i++;
    } else {
      out += ch === "-" ? "−" : ch;
      i++;
    }
  }
  return out.replace(/\s+/g, " ").replace(/\s*·\s*/g, "·").replace(/·+/g, "·").replace(/ \^/g, "^").trim();
}

// A local derivative in the inputs' names, as plain text for a tensor's caption ("·weightᵀ", "y", "1"):
// a, b, c → the op's inputs in order (c → its first scalar parameter when it has fewer inputs); A, B (and v)
// → the two factors of a matrix product, its last two inputs (addmm's are (bias, A, B)). null when unknown.
const LETTER = /(?<![\\A-Za-z])([abcABv])(?![A-Za-z])/g;
export function localInNames(latex, names, params) {
  if (!latex) return null;
  const n = names.length;
  const bound = { a: names[0], b: names[1], c: n > 2 ? names[2] : params && typeof params[0] === "number" ? num(params[0]) : undefined,
    A: names[n - 2], B: names[n - 1], v: names[n - 1] };
  const used = [];
  let missing = false;
  const marked = latex.replace(LETTER, (m, v) => {
    if (bound[v] === undefined) {
      missing = true;
      return m;
    }
    used.push(bound[v]);
    return String.fromCharCode(0xe000 + used.length - 1);  // a private-use mark: names may hold "_" or "^"
  });
  if (missing) return null;
  const text = latexToText(marked);
  if (text == null) return null;
  // a compound name keeps its parentheses; (wᵀ)ᵀ is w
  return text.replace(/[\ue000-\ue0ff]/g, (ch) => {
    const name = used[ch.charCodeAt(0) - 0xe000];
    return /[ ·]/.test(name) ? `(${name})` : name;
  }).replace(/ᵀᵀ/g, "");
}
