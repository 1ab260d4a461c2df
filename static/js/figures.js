// The output pane: printed text with the program's figures in place (docs/trace.md, "figures").
// A figure's SVG is shown as an <img> from a blob URL: an image document runs no script and loads nothing.
import { FIGURES } from "./config.js";

function figureImage(fig, i) {
  const img = document.createElement("img");
  const url = URL.createObjectURL(new Blob([fig.svg], { type: "image/svg+xml" }));
  // revoked once read: a pane redrawn before the image loaded (a streamed figure, then `done`) must not
  // take its URL away (the load failed with ERR_FILE_NOT_FOUND); a detached image still loads
  const done = () => URL.revokeObjectURL(url);
  img.addEventListener("load", done, { once: true });
  img.addEventListener("error", done, { once: true });
  img.src = url;
  img.className = "figure";
  img.alt = `Figure ${i + 1}`;
  img.style.maxWidth = `min(100%, ${FIGURES.maxWidthPx}px)`;
  img.style.background = FIGURES.background;
  return img;
}

// A figure is shown whole below the text printed before it (issue 23 §5): the pane grows while it holds
// figures (`has-figures`), and the figures share the height the text leaves, never less than
// FIGURES.minHeightPx (then the pane scrolls to the last one). Fitted again whenever the pane is resized.
const fitted = new WeakSet();
function fitFigures(pre) {
  const imgs = [...pre.querySelectorAll("img.figure")];
  const pane = pre.closest(".output"), layout = pre.closest(".layout");
  if (pane) pane.classList.toggle("has-figures", imgs.length > 0);
  if (layout) layout.classList.toggle("output-figures", imgs.length > 0);
  if (!imgs.length) return;
  if (!fitted.has(pre) && typeof ResizeObserver === "function") {
    fitted.add(pre);
    let last = "";
    new ResizeObserver(() => {
      const size = `${pre.clientWidth}x${pre.clientHeight}`;  // its own max-height changes do not loop
      if (size !== last) (last = size, fitFigures(pre));
    }).observe(pre);
  }
  for (const img of imgs) img.style.display = "none";
  // the printed text's height (scrollHeight is never below the pane's, so the text's own box is measured)
  const range = document.createRange();
  range.selectNodeContents(pre);
  const text = range.getBoundingClientRect(), cs = getComputedStyle(pre);
  const textBottom = text.height ? text.bottom - pre.getBoundingClientRect().top + pre.scrollTop : parseFloat(cs.paddingTop);
  const textH = textBottom + parseFloat(cs.paddingBottom);
  for (const img of imgs) img.style.display = "";
  const margins = imgs.reduce((m, img) => m + parseFloat(getComputedStyle(img).marginTop) + parseFloat(getComputedStyle(img).marginBottom), 0);
  const room = Math.floor((pre.clientHeight - textH - margins) / imgs.length);
  const floor = Math.min(FIGURES.minHeightPx, pre.clientHeight - margins / imgs.length);
  for (const img of imgs) img.style.maxHeight = `${Math.max(room, floor)}px`;
  if (room < floor) pre.scrollTop = pre.scrollHeight;
}

// Fill `pre` with `stdout`, each figure at its offset (`at`: code points printed before it).
export function renderOutput(pre, stdout, figures) {
  const text = stdout || "";
  const list = Array.isArray(figures) ? figures.filter((f) => f && typeof f.svg === "string") : [];
  if (!list.length) {
    pre.textContent = text;
    fitFigures(pre);
    return;
  }
  pre.replaceChildren();
  const points = Array.from(text); // `at` counts code points, as Python does
  let from = 0;
  list.forEach((fig, i) => {
    const at = Math.max(from, Math.min(points.length, Number.isInteger(fig.at) ? fig.at : points.length));
    if (at > from) pre.append(document.createTextNode(points.slice(from, at).join("")));
    from = at;
    pre.append(figureImage(fig, i));
  });
  if (from < points.length) pre.append(document.createTextNode(points.slice(from).join("")));
  fitFigures(pre);
}

// A streamed run's output as it comes: the stream sends each figure right after the text printed before it
// (`figure` events, docs/trace.md), so appending in arrival order places it; `done` redraws the pane whole.
export function liveOutput(pre) {
  pre.replaceChildren();
  fitFigures(pre);
  let shown = 0;
  return {
    text(t) {
      if (t) pre.append(document.createTextNode(t));
    },
    figure(fig) {
      if (fig && typeof fig.svg === "string") {
        pre.append(figureImage(fig, shown++));
        fitFigures(pre);
      }
    },
  };
}
