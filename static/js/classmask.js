// "Predict the gradient" (issue 24 §3): while a class question is open, the asked quantity (one node's value or
// gradient) reads "?" on this page (the projector and every follower) until the teacher reveals it: the node's cell
// (a rule in a <style> of its own, so every redraw is masked as it is drawn), the inspector (its `masked` hook),
// the hover text and the step caption (rewritten as they change), the edge labels and badges that carry numbers.
import { $ } from "./dom.js";
import { refreshInspector } from "./selection.js";
import { state } from "./store.js";

let masked = null;     // {node, kind: "value" | "gradient"} while a question is open
let observer = null;
// a number in a caption ("x.grad += 6", "-1.5e-3"), not the digits of a name like x1
const NUMBER = /(?<![\w\]])[-+−]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?/gi;

export const maskedNow = () => masked;

// The CSS for the node's cell: the value row is the record's first cell group, the gradient row the second.
function cellRule(m) {
  const node = `#graph [data-node-id="${CSS.escape(m.node)}"]`;
  const row = m.kind === "value" ? `${node} > g.fg-cellg:first-of-type` : `${node} > g.fg-cellg ~ g.fg-cellg`;
  return `${row} .fg-celltext { visibility: hidden; }\n${row} .fg-cell { fill: var(--class-mask, #9aa3ad) !important; }`;
}

function hoverText(m) {
  return `${m.kind === "value" ? "its value" : "its gradient"} is hidden for now: a class question is open`;
}

// The texts that change as the page steps: the masked node's hover text, the caption's numbers.
function maskTexts() {
  if (!masked) return;
  const g = document.querySelector(`#graph [data-node-id="${CSS.escape(masked.node)}"]`);
  if (g) {
    const say = hoverText(masked);
    const title = g.querySelector(":scope > title");
    if (title && title.textContent !== say) title.textContent = say;
    if (g.getAttribute("aria-label") !== say) g.setAttribute("aria-label", say);
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
