// Every word the page has with the server goes through one TraceSource: runs (POST /api/run, the stream
// POST /api/stream, cancel), a pass recorded on demand, a folded pass's groups and search, the examples,
// the offline export and the class sessions. Shapes: docs/trace.md, docs/classroom.md. The offline file
// (offline.js) has no server: its TraceSource answers from the trace inlined in it, and refuses the rest.
import { searchGraph } from "./graphsearch.js";
import { OFFLINE } from "./offline.js";

// One id per browser tab: the server keeps one run per client, and a classroom shares one IP.
export const CLIENT_ID = (() => {
  try {
    let id = sessionStorage.getItem("fg-client");
    if (!id) {
      id = "tab-" + Math.random().toString(36).slice(2, 12);
      sessionStorage.setItem("fg-client", id);
    }
    return id;
  } catch (_) {
    return "tab-" + Math.random().toString(36).slice(2, 12);
  }
})();

// The page draws no variable beyond a summary: it asks for summaries (the API's default is every element,
// 5.5 MB for an MNIST-sized MLP against 0.17 MB; docs/trace.md §2)
const VARIABLE_VALUES = "summary";
const NO_SERVER = "this offline copy has no server";
const JSON_POST = { method: "POST", headers: { "Content-Type": "application/json" } };

// A run the server refused (429, 413, 5xx): the shape of an answer, with the reason as its error.
function refusedRun(status, body) {
  const detail = body && (body.detail || body.error);
  const message = typeof detail === "string" ? detail : detail && detail.message ? detail.message : JSON.stringify(detail || `HTTP ${status}`);
  return {
    stdout: "", variables: {}, ops: {}, passes: [], steps: [], truncated: false,
    error: { type: status === 429 ? "TooManyRequests" : status === 413 ? "ProgramTooLarge" : "ServerError", message, line: detail && detail.line, column: detail && detail.column },
  };
}

// Server-Sent Events from a fetch body: calls onEvent(event name, data) per event; resolves at the end.
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let event = "message";
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      let line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line === "") {
        if (data.length) onEvent(event, data.join("\n"));
        event = "message";
        data = [];
      } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      else if (line.startsWith("event:")) event = line.slice(6).trim();
    }
  }
  if (data.length) onEvent(event, data.join("\n"));
}

export class TraceSource {
  // recorded: the offline file's {source, view, trace}, or null on the served page
  constructor(recorded) {
    this.recorded = recorded;
    this.offline = !!recorded;
  }

  // The one network call of the page.
  async #http(path, init = {}) {
    if (this.offline) throw new Error(NO_SERVER);
    const r = await fetch(path, init);
    // the server process that ran the latest run: a 404 from another one means "on another server", not "expired"
    if (r.ok && (path === "/api/run" || path === "/api/stream")) this.runProcess = r.headers.get("X-Flowgrad-Process");
    return r;
  }

  // {ok, status, body}: body the answer's JSON, {} when it has none
  async #json(path, init = {}) {
    const r = await this.#http(path, init);
    const body = await r.json().catch(() => ({}));
    return { ok: r.ok, status: r.status, body };
  }

  // ---------------------------------------------------------------- runs
  async examples() {
    const r = await this.#http("/api/examples");
    if (!r.ok) throw new Error(`examples: HTTP ${r.status}`);
    return r.json();
  }

  // The whole trace of a run (POST /api/run); `passes`: only these passes kept in full (a pass recorded on demand).
  async run(source, { signal, passes = null } = {}) {
    const r = await this.#http("/api/run", {
      ...JSON_POST,
      // a pass recorded on demand is its own client: it must not cancel (or be cancelled by) the main run
      body: JSON.stringify(passes ? { source, passes, client_id: CLIENT_ID + ":pass", values: VARIABLE_VALUES }
        : { source, client_id: CLIENT_ID, values: VARIABLE_VALUES }),
      signal,
    });
    let body = null;
    try {
      body = await r.json();
    } catch (_) {
      body = null;
    }
    return r.ok ? body : refusedRun(r.status, body);
  }

  // A summary pass recorded in full: the program runs again with pass `index` kept (runs are deterministic).
  recordPass(source, index) {
    return this.run(source, { passes: [index] });
  }

  // The recorded run of the offline file, its middle passes marked: the server records those when opened, a file cannot.
  recordedRun() {
    const { source, view, trace } = this.recorded;
    for (const p of trace.passes) if (p && !p.graph && !p.folded) p.folded = "not recorded in this offline copy";
    return { source, view, trace };
  }

  // Stream a run over Server-Sent Events (POST /api/stream, app/api/routes/stream.py): events
  // stdout {text}, figure {svg, at} (after the text printed before it), step {...}, pass {pass} (a summary pass
  // may later be replaced by its full graph, same index), and last done {error, variables, stdout, ops, steps,
  // modules, figures, truncated}.
  // handlers: onPass(pass), onStep(step), onStdout(text), onFigure({svg, at}), onDone(msg),
  // onError({fallback, noStream, message}).
  // fallback=true: no stream came (the request failed or was refused, e.g. a program too large):
  // the caller should run() instead, which says why; noStream=true: this server has no
  // stream at all (404, 405, or an answer that is not SSE).
  stream(source, handlers) {
    const ctrl = new AbortController();
    let finished = false;
    const dispatch = (type, data) => {
      let msg;
      try {
        msg = JSON.parse(data);
      } catch (_) {
        return;
      }
      type = msg.type || type;
      if (type === "pass") handlers.onPass && handlers.onPass(msg.pass);
      else if (type === "step") handlers.onStep && handlers.onStep(msg.step !== undefined && typeof msg.step === "object" ? msg.step : msg);
      else if (type === "stdout") handlers.onStdout && handlers.onStdout(msg.text || "");
      else if (type === "figure") handlers.onFigure && handlers.onFigure({ svg: msg.svg, at: msg.at });
      else if (type === "done") {
        finished = true;
        handlers.onDone && handlers.onDone(msg);
      }
    };
    (async () => {
      let r;
      try {
        r = await this.#http("/api/stream", {
          method: "POST",
          headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
          body: JSON.stringify({ source, client_id: CLIENT_ID, values: VARIABLE_VALUES }),
          signal: ctrl.signal,
        });
      } catch (e) {
        if (!ctrl.signal.aborted) handlers.onError && handlers.onError({ fallback: true, noStream: false, message: String(e) });
        return;
      }
      if (!r.ok || !r.body || !(r.headers.get("content-type") || "").includes("text/event-stream")) {
        const noStream = r.status === 404 || r.status === 405 || r.ok;
        handlers.onError && handlers.onError({ fallback: true, noStream, message: `stream: HTTP ${r.status}` });
        return;
      }
      try {
        await readEvents(r.body, dispatch);
      } catch (e) {
        if (ctrl.signal.aborted) return;
      }
      if (!finished && !ctrl.signal.aborted && handlers.onError) handlers.onError({ fallback: false, message: "the stream ended early" });
    })();
    return {
      close() {
        finished = true;
        ctrl.abort();
      },
    };
  }

  // Stop this tab's run on the server (its process is killed); nothing to wait for.
  cancel() {
    this.#http("/api/cancel", { method: "POST", headers: { "X-Client-Id": CLIENT_ID } }).catch(() => {});
  }

  // ---------------------------------------------------------------- folded passes (issue 11)
  // A folded pass's group: its contents laid out on their own, values and frames included.
  // Resolves {payload} or {expired: true, elsewhere} (404 RunExpired: the run left the server's store; elsewhere:
  // its reason is "elsewhere", another server process ran it and this one cannot reach it) or throws.
  async group(run, passIndex, gid) {
    if (this.offline) return { payload: this.#inlinePayload(run, passIndex, gid) };
    const r = await this.#http(`/api/runs/${encodeURIComponent(run)}/passes/${passIndex}/groups/${encodeURIComponent(gid)}`);
    if (r.status === 404) {
      const body = await r.json().catch(() => null);
      // the same process (restarted, or it forgot the run long ago) lost it: expired, whatever it says
      const elsewhere = !!body && body.reason === "elsewhere" && !(this.runProcess && body.process === this.runProcess);
      return { expired: true, elsewhere };
    }
    if (!r.ok) throw new Error(`group ${gid}: HTTP ${r.status}`);
    return { payload: await r.json() };
  }

  // the offline file's payloads (app/runs/export.py): a pass's groups, each with its descendants
  #inlinePayload(run, passIndex, gid) {
    for (const p of this.recorded.trace.passes) {
      const g = p && p.graph;
      if (!g || !g.payloads || String(g.run) !== String(run) || (g.pass_index ?? p.index) !== passIndex) continue;
      if (g.payloads[gid]) return g.payloads[gid];
      for (const payload of Object.values(g.payloads)) if (payload.descendants && payload.descendants[gid]) return payload.descendants[gid];
    }
    throw new Error(`${gid} is not in this offline copy (its groups did not fit the file)`);
  }

  // Nodes of a folded pass whose name, label, op or grad_fn holds q: {results, total}. The server knows
  // what the folds hide; offline, the drawn graph `graph` and the payloads inlined in it are searched.
  async search(graph, passIndex, q, limit) {
    if (this.offline) return searchGraph(graph, q, limit);
    const url = `/api/runs/${encodeURIComponent(graph.run)}/passes/${encodeURIComponent(graph.pass_index ?? passIndex)}/search?q=${encodeURIComponent(q)}&limit=${limit}`;
    const { ok, status, body } = await this.#json(url);
    if (!ok) throw new Error(body && body.error ? body.error.message : `search: HTTP ${status}`);
    return body;
  }

  // ---------------------------------------------------------------- the offline file
  // POST /api/export/html: the program and the view shown (view: {pass, step, node, theme, projector}),
  // answered as one offline .html file (app/api/routes/export.py); resolves {blob, name}, throws with the server's reason.
  async exportHtml(source, view) {
    const r = await this.#http("/api/export/html", {
      ...JSON_POST,
      // its own client id: "one run per client" must not cancel the run the page is showing
      body: JSON.stringify({ source, client_id: CLIENT_ID + ":export", ...view }),
    });
    if (!r.ok) {
      let message = `HTTP ${r.status}`;
      try {
        const body = await r.json();
        message = (body.error && body.error.message) || message;
      } catch (_) {
        // not JSON: the status says it
      }
      throw new Error(message);
    }
    const name = /filename="([^"]+)"/.exec(r.headers.get("content-disposition") || "");
    return { blob: await r.blob(), name: name ? name[1] : "flowgrad.html" };
  }

  // ---------------------------------------------------------------- class sessions (docs/classroom.md)
  // Each resolves {ok, status, body}; the presenter's calls carry its bearer token.
  startSession() {
    return this.#json("/api/sessions", { method: "POST" });
  }

  sessionInfo(code) {
    return this.#json(`/api/sessions/${encodeURIComponent(code)}`);
  }

  postSessionState(code, token, presenterState) {
    return this.#json(`/api/sessions/${code}/state`, {
      method: "POST", headers: { ...bearer(token), "Content-Type": "application/json" }, body: JSON.stringify(presenterState),
    });
  }

  askQuestion(code, token, question) {
    return this.#json(`/api/sessions/${code}/questions`, {
      method: "POST", headers: { ...bearer(token), "Content-Type": "application/json" }, body: JSON.stringify(question),
    });
  }

  // The question with its answers so far (the presenter's view: a reloaded presenter's page shows it again).
  sessionQuestion(code, token, questionId) {
    return this.#json(`/api/sessions/${code}/questions/${questionId}`, { headers: bearer(token) });
  }

  revealAnswer(code, token, questionId) {
    return this.#json(`/api/sessions/${code}/questions/${questionId}/reveal`, { method: "POST", headers: bearer(token) });
  }

  // A follower token for this tab (the server signs it; the stream and answers take only such tokens).
  joinSession(code) {
    return this.#json(`/api/sessions/${encodeURIComponent(code)}/join`, { method: "POST" });
  }

  sendAnswer(code, questionId, follower, value) {
    return this.#json(`/api/sessions/${code}/questions/${questionId}/answers`, {
      ...JSON_POST, body: JSON.stringify({ follower, value }),
    });
  }

  // The presenter's live answers: a fetch stream (an EventSource cannot send the bearer token); calls
  // onTally(tally) per event, resolves when the stream ends, rejects when it is aborted or lost.
  async sessionTally(code, token, signal, onTally) {
    const r = await this.#http(`/api/sessions/${code}/tally`, { headers: bearer(token), signal });
    await readEvents(r.body, (_, data) => data && onTally(JSON.parse(data)));
  }

  // The presenter's program run once by the server for the class (its answer kept for followers): {run} in body.
  shareRun(code, token, source) {
    return this.#json(`/api/sessions/${code}/run`, {
      method: "POST", headers: { ...bearer(token), "Content-Type": "application/json" },
      body: JSON.stringify({ source, values: VARIABLE_VALUES }),
    });
  }

  // The presenter's shared run, as POST /api/run answered it: a follower loads it instead of running anything.
  sharedRun(code, runId) {
    return this.#json(`/api/sessions/${code}/runs/${runId}`);
  }

  endSession(code, token) {
    return this.#json(`/api/sessions/${code}/end`, { method: "POST", headers: bearer(token) });
  }

  // The presenter's page is open (here) or closing (keepalive: the request outlives the page).
  presence(code, token, here = true) {
    return this.#json(`/api/sessions/${code}/presence`, {
      method: "POST", keepalive: !here, headers: { ...bearer(token), "Content-Type": "application/json" },
      body: JSON.stringify({ here }),
    });
  }

  // A follower's states and questions: an EventSource (it reconnects by itself).
  followSession(code, follower) {
    if (this.offline) throw new Error(NO_SERVER);
    return new EventSource(`/api/sessions/${code}/events?follower=${encodeURIComponent(follower)}`);
  }
}

const bearer = (token) => ({ Authorization: "Bearer " + token });

export const traceSource = new TraceSource(OFFLINE);
