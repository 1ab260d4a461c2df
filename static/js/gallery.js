// The examples: the gallery dialog, and the title that names the program in the editor.
import { traceSource } from "./api.js";
import { PAGE } from "./config.js";
import { $ } from "./dom.js";
import { run } from "./run.js";
import { set, state } from "./store.js";

export async function loadExamples() {
  let examples;
  try {
    examples = await traceSource.examples();
  } catch (_) {
    examples = [];
  }
  set({ examples });
}

// The gallery: examples grouped by their number (01–06 expressions, 07–13 autograd, 14+ networks).
const GROUPS = [
  { title: "Expressions", upto: 6 },
  { title: "Autograd semantics", upto: 13 },
  { title: "Networks and training", upto: Infinity },
];
function openGallery() {
  const body = $("gallery-body");
  body.replaceChildren();
  const groups = GROUPS.map((g) => ({ ...g, items: [] }));
  for (const ex of state.examples) {
    const n = parseInt(ex.id, 10);
    (groups.find((g) => (Number.isFinite(n) ? n : Infinity) <= g.upto) || groups[groups.length - 1]).items.push(ex);
  }
  for (const g of groups) {
    if (!g.items.length) continue;
    const h3 = document.createElement("h3");
    h3.textContent = g.title;
    const grid = document.createElement("div");
    grid.className = "gallery-grid";
    for (const ex of g.items) {
      const card = document.createElement("button");
      card.className = "card" + (ex.id === state.exampleId ? " current" : "");
      card.dataset.example = ex.id;
      const b = document.createElement("b");
      b.textContent = ex.title;
      const code = document.createElement("code");
      code.textContent = ex.source.split("\n").filter((l) => l.trim() && !l.startsWith("#") && !/^(import|from)\s/.test(l)).slice(0, PAGE.cardLines).join("\n");
      card.append(b, code);
      card.addEventListener("click", () => {
        $("gallery").close();
        loadExample(ex);
      });
      grid.appendChild(card);
    }
    body.append(h3, grid);
  }
  $("gallery").showModal();
  const cur = body.querySelector(".card.current") || body.querySelector(".card");
  if (cur) cur.focus();
}

// The selector names the program in the editor: an example's title when the text is that example
// (whichever way it got there: gallery, share link, pasted), "<title> (edited)" once the loaded
// example has been changed, and "Examples" for a program of one's own.
export function updateExampleTitle(text) {
  const same = state.examples.find((e) => e.source === text);
  if (same) set({ exampleId: same.id });
  const ex = state.examples.find((e) => e.id === state.exampleId);
  const edited = !same && !!ex && stillResembles(ex.source, text);
  const title = $("example-title");
  title.textContent = same ? same.title : edited ? `${ex.title} (edited)` : "Examples";
  title.dataset.example = same ? same.id : "";
  title.dataset.edited = String(edited);
}

// An edit keeps most of the example's lines; a program pasted over it does not.
function stillResembles(source, text) {
  const lines = (s) => s.split("\n").map((l) => l.trim()).filter((l) => l && !/^(import|from)\s/.test(l));
  const mine = new Set(lines(text));
  const theirs = lines(source);
  return theirs.length > 0 && theirs.filter((l) => mine.has(l)).length >= theirs.length / 2;
}

function loadExample(ex) {
  set({ exampleId: ex.id });
  state.editor.text = ex.source;
  updateExampleTitle(ex.source);
  run();
}

export function bindGallery() {
  $("examples-open").addEventListener("click", openGallery);
  $("gallery-close").addEventListener("click", () => $("gallery").close());
  $("gallery").addEventListener("click", (e) => {
    if (e.target === $("gallery")) $("gallery").close(); // backdrop
  });
}
