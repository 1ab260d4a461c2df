// Search the graph by tensor name or op ("/" or Ctrl+F in the graph): a folded pass asks the server
// (GET /api/runs/{run}/passes/{k}/search, it knows what the folds hide), an unfolded one searches the
// drawn nodes; Enter or a click reveals the result (expand its groups, centre, highlight).
import { traceSource } from "./api.js";
import { NAVIGATION } from "./config.js";
import { $, setStatus } from "./dom.js";
import { withoutEmptyChunks } from "./graphapi.js";
import { searchGraph } from "./graphsearch.js";
import { state } from "./store.js";

const S = NAVIGATION.search;
let results = [];
let active = -1;
let seq = 0;
let timer = null;
let shownFor = null;     // the pass model the results were found in

function folded() {
  const g = state.model && state.model.graph;
  return !!(g && g.folded && g.run != null);
}

export function pathText(path) {
  const tree = (state.model && state.model.graph && state.model.graph.tree) || {};
  return withoutEmptyChunks(tree, path || []).map((gid) => (tree[gid] ? tree[gid].label : gid)).join(S.pathSeparator);
}

function show(list, total, note = "") {
  results = list;
  shownFor = state.model;
  active = list.length ? 0 : -1;
  const ul = $("search-results");
  ul.replaceChildren();
  list.forEach((r, i) => {
    const li = document.createElement("li");
    li.id = `search-result-${i}`;
    li.className = "search-result";
    li.setAttribute("role", "option");
    li.dataset.nodeId = r.id;
    const name = document.createElement("span");
    name.className = "sr-label";
    name.textContent = r.label || r.name || r.id;
    const op = document.createElement("span");
    op.className = "sr-op";
    op.textContent = r.kind === "op" ? r.op || "op" : r.kind === "group" ? "group" : r.op ? `tensor · ${r.op}` : "tensor";
    const where = document.createElement("span");
    where.className = "sr-path";
    where.textContent = r.path && r.path.length ? pathText(r.path) : "";
    li.append(name, op, where);
    li.addEventListener("mousedown", (e) => e.preventDefault());  // keep the focus in the box
    li.addEventListener("click", () => choose(i));
    ul.appendChild(li);
  });
  const more = document.createElement("li");
  more.className = "search-note";
  more.setAttribute("role", "presentation");
  more.textContent = note || (list.length ? (total > list.length ? `${list.length} of ${total}` : `${total} found`) : "nothing found");
  ul.appendChild(more);
  ul.hidden = false;
  $("search-input").setAttribute("aria-expanded", "true");
  mark();
}

function mark() {
  const ul = $("search-results");
  [...ul.querySelectorAll(".search-result")].forEach((li, i) => li.setAttribute("aria-selected", String(i === active)));
  const input = $("search-input");
  if (active >= 0) {
    input.setAttribute("aria-activedescendant", `search-result-${active}`);
    const li = $(`search-result-${active}`);
    if (li) li.scrollIntoView({ block: "nearest" });
  } else input.removeAttribute("aria-activedescendant");
}

export function closeResults() {
  $("search-results").hidden = true;
  $("search-input").setAttribute("aria-expanded", "false");
  $("search-input").removeAttribute("aria-activedescendant");
}

async function find(q) {
  const me = ++seq;
  q = q.trim();
  if (q.length < S.minChars || !state.model) return closeResults();
  try {
    const got = folded() ? await traceSource.search(state.model.graph, state.passIndex, q, S.limit) : searchGraph(state.model.graph, q, S.limit);
    if (me !== seq) return;  // a newer query answered first
    show(got.results || [], got.total ?? (got.results || []).length);
  } catch (err) {
    if (me === seq) show([], 0, err.message);
  }
}

async function choose(i) {
  const r = results[i];
  if (!r || !state.graph || !state.graph.reveal) return;
  closeResults();
  $("search-input").blur();
  try {
    await state.graph.reveal(r.id, r.path || []);
  } catch (err) {
    setStatus(err.message || String(err), true);
  }
}

function onKey(e) {
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    if ($("search-results").hidden) return find($("search-input").value);
    e.preventDefault();
    if (!results.length) return;
    active = (active + (e.key === "ArrowDown" ? 1 : -1) + results.length) % results.length;
    mark();
  } else if (e.key === "Enter") {
    e.preventDefault();
    choose(Math.max(0, active));
  } else if (e.key === "Escape") {
    e.preventDefault();
    e.stopPropagation();  // not the page's Escape (cancel run, deselect)
    if (!$("search-results").hidden) closeResults();
    else $("search-input").blur();
  }
}

export function focusSearch() {
  const input = $("search-input");
  input.focus();
  input.select();
}

export function bindSearch() {
  const input = $("search-input");
  input.addEventListener("input", () => {
    clearTimeout(timer);
    // a folded pass asks the server: wait for a pause in the typing; locally answer at once
    timer = setTimeout(() => find(input.value), folded() && !traceSource.offline ? S.debounceMs : 0);
  });
  input.addEventListener("keydown", onKey);
  input.addEventListener("blur", () => setTimeout(closeResults, 0));
  input.addEventListener("focus", () => input.value.trim() && find(input.value));
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.altKey || e.metaKey) return;
    const t = e.target, tag = (t.tagName || "").toLowerCase();
    if ((t.closest && t.closest(".cm-editor")) || tag === "input" || tag === "select" || tag === "textarea") return;
    const inGraph = t.closest && t.closest("#graph-wrap");
    // "/" anywhere outside the editor; Ctrl+F only inside the graph (elsewhere it stays the browser's find)
    if ((e.key === "/" && !e.ctrlKey) || (e.ctrlKey && e.key.toLowerCase() === "f" && inGraph)) {
      e.preventDefault();
      focusSearch();
    }
  });
  // results belong to a pass: another pass drawn closes them (the same pass drawn again keeps them)
  document.addEventListener("fg:graph-drawn", () => {
    if (shownFor === state.model) return;
    results = [];
    closeResults();
  });
}

bindSearch();
