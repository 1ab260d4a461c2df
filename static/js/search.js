// Search the graph by tensor name or op ("/" or Ctrl+F in the graph): a folded pass asks the server
// (GET /api/runs/{run}/passes/{k}/search, it knows what the folds hide), an unfolded one searches the
// drawn nodes; Enter or a click reveals the result (expand its groups, centre, highlight).
import { NAVIGATION } from "./config.js";
import "./graphapi.js";
import { nodeName } from "./naming.js";
import { OFFLINE } from "./offline.js";
import { $, app, setStatus } from "./state.js";

const S = NAVIGATION.search;
let results = [];
let active = -1;
let seq = 0;
let timer = null;
let shownFor = null;     // the pass model the results were found in

function folded() {
  const g = app.model && app.model.graph;
  return !!(g && g.folded && g.run != null);
}

// Every drawn node (and, offline, every node of the folds' payloads) whose name, label, op or grad_fn holds q.
export function searchLocal(q, limit = S.limit) {
  const g = app.model && app.model.graph;
  if (!g) return { results: [], total: 0 };
  const needle = q.toLowerCase();
  const found = [];
  const consider = (n, path) => {
    const hay = [nodeName(n), n.name, n.label, n.op, n.grad_fn].filter(Boolean).join("\u0000").toLowerCase();
    if (!hay.includes(needle)) return;
    const label = n.kind === "group" ? n.label : nodeName(n);
    found.push({ id: n.id, label, kind: n.kind, op: n.op || null, name: n.name || null, path,
      starts: String(label).toLowerCase().startsWith(needle) ? 0 : 1 });
  };
  for (const n of g.nodes) consider(n, []);
  // the offline file carries the folds' contents: search them too, with the path that opens them
  for (const [gid, payload] of Object.entries(g.payloads || {})) {
    const path = [];
    for (let id = gid; id && g.tree && g.tree[id]; id = g.tree[id].parent) path.unshift(id);
    for (const n of payload.nodes || []) if (n.kind !== "group") consider(n, path);
  }
  found.sort((a, b) => a.starts - b.starts);
  return { results: found.slice(0, limit).map(({ starts, ...r }) => r), total: found.length };
}

async function searchServer(q) {
  const g = app.model.graph;
  const url = `/api/runs/${encodeURIComponent(g.run)}/passes/${encodeURIComponent(g.pass_index ?? app.passIndex)}/search?q=${encodeURIComponent(q)}&limit=${S.limit}`;
  const r = await fetch(url);
  const body = await r.json().catch(() => null);
  if (!r.ok) {
    const msg = body && body.error ? body.error.message : `search: HTTP ${r.status}`;
    throw new Error(msg);
  }
  return body;
}

export function pathText(path) {
  const tree = (app.model && app.model.graph && app.model.graph.tree) || {};
  return (path || []).map((gid) => (tree[gid] ? tree[gid].label : gid)).join(S.pathSeparator);
}

function show(list, total, note = "") {
  results = list;
  shownFor = app.model;
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
  if (q.length < S.minChars || !app.model) return closeResults();
  try {
    const got = folded() && !OFFLINE ? await searchServer(q) : searchLocal(q);
    if (me !== seq) return;  // a newer query answered first
    show(got.results || [], got.total ?? (got.results || []).length);
  } catch (err) {
    if (me === seq) show([], 0, err.message);
  }
}

async function choose(i) {
  const r = results[i];
  if (!r || !app.graph || !app.graph.reveal) return;
  closeResults();
  $("search-input").blur();
  try {
    await app.graph.reveal(r.id, r.path || []);
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
    timer = setTimeout(() => find(input.value), folded() && !OFFLINE ? S.debounceMs : 0);
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
    if (shownFor === app.model) return;
    results = [];
    closeResults();
  });
}

bindSearch();
