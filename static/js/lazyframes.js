// A folded pass (issue 11) in the PassModel: frames inside collapsed groups come lazy (no values);
// a group's payload, when it arrives, brings its nodes, edges and full frames. PassModel methods.

export const lazyFrames = {
  initFolds() {
    const g = this.pass.graph;
    // the view moves records when groups open: it works on copies, so reopening the pass starts from the server's layout
    this.graph = { ...g, nodes: g.nodes.map((n) => ({ ...n })), edges: g.edges.map((e) => ({ ...e })), clusters: (g.clusters || []).map((c) => ({ ...c })) };
    this.nodes = new Map(this.graph.nodes.map((n) => [n.id, n]));
    this.edges = new Map(this.graph.edges.map((e) => [e.id, e]));
    this.folded = true;
    this.home = { w: g.width, h: g.height, nodes: g.nodes, edges: g.edges, clusters: g.clusters || [] };
    this.createdAt = performance.now();  // a run that expires again right after being run anew is not run a third time
    this.tree = g.tree || {};
    this.payloads = new Map();
    this.nodeGroup = new Map();  // node id -> the group whose payload drew it
    this.lazyIds = new Set();
    for (const f of this.pass.frames || []) if (f.lazy && (f.kind === "tensor" || f.kind === "op")) this.lazyIds.add(f.id);
  },

  // Drawn again (names arrived): every group starts folded, so every record goes back to the server's place.
  resetLayout() {
    const h = this.home;
    this.graph.width = h.w;
    this.graph.height = h.h;
    h.nodes.forEach((n, i) => Object.assign(this.graph.nodes[i], { x: n.x, y: n.y }));
    h.edges.forEach((e, i) => (this.graph.edges[i].points = e.points));
    h.clusters.forEach((c, i) => Object.assign(this.graph.clusters[i], { x: c.x, y: c.y, w: c.w, h: c.h }));
  },

  // a tensor's variable name from the pass's `name` frames (kept in lazy frames: they carry no value)
  nameOf(id) {
    if (!this._names) {
      this._names = new Map();
      for (const f of this.pass.frames || []) if (f.kind === "name") this._names.set(f.tensor, f.name);
    }
    const n = this.nodes.get(id);
    return (n && n.name) || this._names.get(id) || null;
  },

  known(id) {
    return this.nodes.has(id) || (!!this.lazyIds && this.lazyIds.has(id));
  },

  // outermost … innermost group holding gid (gid included)
  groupPath(gid) {
    const path = [];
    for (let g = gid; g && this.tree[g]; g = this.tree[g].parent) path.unshift(g);
    return path;
  },

  // the innermost group of step k's node (null: drawn at the top level)
  stepGroup(k) {
    if (!this.folded || k <= 0 || k > this.steps.length) return null;
    const main = this.steps[k - 1].main;
    if (main.group) return main.group;
    return (main.node && this.nodeGroup.get(main.node)) || null;
  },

  // A group's payload already on the page: received, in the pass (an offline file), or a descendant of one.
  payloadFor(gid) {
    if (this.payloads.has(gid)) return this.payloads.get(gid);
    const inline = this.pass.graph.payloads && this.pass.graph.payloads[gid];
    if (inline) {
      this.addPayload(gid, inline);
      return inline;
    }
    return null;
  },

  addPayload(gid, payload) {
    this.payloads.set(gid, payload);
    for (const [d, p] of Object.entries(payload.descendants || {})) if (!this.payloads.has(d)) this.payloads.set(d, p);
    for (const [d, t] of Object.entries(payload.groups || {})) if (!this.tree[d]) this.tree[d] = t;
    this.hydrate(payload.frames);
  },

  // Lazy frames get their values; states from the first step they touch on are replayed again.
  hydrate(frames) {
    if (!frames) return;
    let first = Infinity;
    for (const [i, full] of Object.entries(frames)) {
      const f = this.pass.frames[+i];
      if (!f || !f.lazy) continue;
      Object.assign(f, full);
      delete f.lazy;
      const s = this.stepOfFrame.get(f);
      if (s != null && s < first) first = s;
    }
    if (first === Infinity) return;
    this._opInputs = null;
    for (const k of [...this.cache.keys()]) if (k > first) this.cache.delete(k);
  },

  // Records drawn from a payload (moved into place by the view) join the pass's nodes and edges.
  addNode(n, gid) {
    this.nodes.set(n.id, n);
    if (n.kind !== "group") this.nodeGroup.set(n.id, gid);
    if (this.initial.has(n.id) || n.kind === "group") return;
    const s = { value: undefined, grad: undefined, flow: undefined, freed: false };
    if (n.kind === "tensor") s.grad = n.is_leaf && n.requires_grad ? (this.firstAccBefore(n.id) ?? (n.grad == null ? null : n.grad)) : null;
    this.initial.set(n.id, s);
  },

  addEdge(e) {
    this.edges.set(e.id, e);
    const k = e.source + ">" + e.target;
    if (!this.edgesBetween.has(k)) this.edgesBetween.set(k, []);
    if (!this.edgesBetween.get(k).includes(e.id)) this.edgesBetween.get(k).push(e.id);
  },

  firstAccBefore(id) {
    for (const f of this.frames) if (f.kind === "accumulate" && f.tensor === id) return f.before;
    return undefined;
  },
};
