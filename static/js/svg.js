// SVG elements for the graph, and text cut to fit a box.
export const SVGNS = "http://www.w3.org/2000/svg";

export function el(tag, attrs = {}, parent = null) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v != null) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

export function truncate(text, maxChars) {
  text = String(text);
  if (text.length <= maxChars) return text;
  return maxChars <= 1 ? "…" : text.slice(0, maxChars - 1) + "…";
}
