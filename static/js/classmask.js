// "Predict the gradient" (issue 24 §3): while a class question is open, the asked KIND of number reads "?" on this
// page (the projector and every follower) until the teacher reveals it. Every node's number of that kind is masked,
// not only the asked node's: in (x+y)**2 y.grad equals x.grad, and a neighbour's cell would give the answer away.
// Masked: the cells (a rule in a <style> of its own, so every redraw is masked as it is drawn), the inspector (its
// `masked` hook: every value or .grad/∂L, the optimizer state), the hover texts and the step caption (rewritten as
// they change), the edge labels and badges that carry numbers, and the printed output (classroom.css).
import { $ } from "./dom.js";
import { refreshInspector } from "./selection.js";
import { state } from "./store.js";

let masked = null;     // {node, kind: "value" | "gradient"} while a question is open
let observer = null;
// a number in a caption ("x.grad += 6", "-1.5e-3"), not the digits of a name like x1
const NUMBER = /(?<![\w\]])[-+−]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?/gi;
// the parts of a tensor node's hover text (graph.js paintNode: "x []: value 2; grad 6; leaf; role input")
const VALUE_PART = /(: value )[^;]*;/;
const GRAD_PART = /(; )(?:grad (?!None;)|dL\/d)[^;]*;/;

export const maskedNow = () => masked;

// The CSS for every node's cell of the asked kind: the value row is a record's first cell group, the gradient row
// the second. Hover is off on masked rows: a matrix cell's <title> carries its number.
function cellRule(m) {
  const row = m.kind === "value" ? "#graph [data-node-id] > g.fg-cellg:first-of-type" : "#graph [data-node-id] > g.fg-cellg ~ g.fg-cellg";
  return `${row} .fg-celltext { visibility: hidden; }\n${row} .fg-cell { fill: var(--class-mask, #9aa3ad) !important; }\n` +
    `${row} { pointer-events: none; }`;
}

function hidden(m) {
  return m.kind === "value" ? "value hidden for now (a class question is open);" : "gradient hidden for now (a class question is open);";
}

// A tensor node's hover text without the asked kind's number (a gradient "None" or "not computed yet" stays).
export function maskedLabel(text, m) {
  return text.replace(m.kind === "value" ? VALUE_PART : GRAD_PART, (_, head) => head + hidden(m));
}

// The texts that change as the page steps: every tensor node's hover text, the caption's numbers.
function maskTexts() {
  if (!masked) return;
  for (const g of document.querySelectorAll("#graph [data-node-id]")) {
    const title = g.querySelector(":scope > title");
    const label = g.getAttribute("aria-label");
    if (label && label.includes(": value ")) {
      const say = maskedLabel(label, masked);
      if (say !== label) g.setAttribute("aria-label", say);
    }
    if (title && title.textContent.includes(": value ")) {
      const say = maskedLabel(title.textContent, masked);
      if (say !== title.textContent) title.textContent = say;
    }
  }
  for (const t of document.querySelectorAll("#caption .cap-text")) {
    for (const n of t.childNodes) {
      if (n.nodeType === Node.TEXT_NODE && NUMBER.test(n.nodeValue)) n.nodeValue = n.nodeValue.replace(NUMBER, "?");
      NUMBER.lastIndex = 0;
    }
  }
}

// q: the open question ({node, kind}) or null (none, or revealed): masks or unmasks everything at once.
export function setMask(q) {
  const next = q && q.status === "open" ? { node: q.node, kind: q.kind } : null;
  if ((next && masked && next.node === masked.node && next.kind === masked.kind) || (!next && !masked)) return;
  masked = next;
  let style = document.getElementById("class-mask-style");
  if (!style) {
    style = document.createElement("style");
    style.id = "class-mask-style";
    document.head.appendChild(style);
  }
  style.textContent = next ? cellRule(next) : "";
  if (next) document.body.dataset.classMask = next.kind;
  else delete document.body.dataset.classMask;
  if (state.inspector) state.inspector.masked = next;
  if (observer) observer.disconnect();
  observer = null;
  if (next) {
    observer = new MutationObserver(maskTexts);
    for (const root of [$("graph"), $("caption")]) {
      observer.observe(root, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["aria-label"] });
    }
    maskTexts();
  } else if (state.model) {
    state.graph.sig && state.graph.sig.clear();  // the hover texts are written again at the next update
    state.graph.update(state.model.stateAt(state.step), state.selected);
  }
  refreshInspector();
}
