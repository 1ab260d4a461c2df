// Search a drawn pass graph by tensor name or op: its nodes and, in the offline file, the nodes of the
// folds' inlined payloads (with the path of groups that opens them). Pure: no DOM, no state.
import { nodeName } from "./naming.js";

// Every node of `graph` (and of its payloads) whose name, label, op or grad_fn holds q: {results, total}.
export function searchGraph(graph, q, limit) {
  if (!graph) return { results: [], total: 0 };
  const needle = q.toLowerCase();
  const found = [];
  const consider = (n, path) => {
    const hay = [nodeName(n), n.name, n.label, n.op, n.grad_fn].filter(Boolean).join("\u0000").toLowerCase();
    if (!hay.includes(needle)) return;
    const label = n.kind === "group" ? n.label : nodeName(n);
    found.push({ id: n.id, label, kind: n.kind, op: n.op || null, name: n.name || null, path,
      starts: String(label).toLowerCase().startsWith(needle) ? 0 : 1 });
  };
  for (const n of graph.nodes) consider(n, []);
  // the offline file carries the folds' contents: search them too, with the path that opens them
  for (const [gid, payload] of Object.entries(graph.payloads || {})) {
    const path = [];
    for (let id = gid; id && graph.tree && graph.tree[id]; id = graph.tree[id].parent) path.unshift(id);
    for (const n of payload.nodes || []) if (n.kind !== "group") consider(n, path);
  }
  found.sort((a, b) => a.starts - b.starts);
  return { results: found.slice(0, limit).map(({ starts, ...r }) => r), total: found.length };
}
