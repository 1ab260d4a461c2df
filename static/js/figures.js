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

// Fill `pre` with `stdout`, each figure at its offset (`at`: code points printed before it).
export function renderOutput(pre, stdout, figures) {
  const text = stdout || "";
  const list = Array.isArray(figures) ? figures.filter((f) => f && typeof f.svg === "string") : [];
  if (!list.length) {
    pre.textContent = text;
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
}

// A streamed run's output as it comes: the stream sends each figure right after the text printed before it
// (`figure` events, docs/trace.md), so appending in arrival order places it; `done` redraws the pane whole.
export function liveOutput(pre) {
  pre.replaceChildren();
  let shown = 0;
  return {
    text(t) {
      if (t) pre.append(document.createTextNode(t));
    },
    figure(fig) {
      if (fig && typeof fig.svg === "string") pre.append(figureImage(fig, shown++));
    },
  };
}
