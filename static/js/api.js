// Talking to the server: POST /api/run (whole trace), POST /api/stream (Server-Sent Events: pieces as they come),
// GET /api/examples. Shapes are in docs/trace.md.

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

export async function fetchExamples() {
  const r = await fetch("/api/examples");
  if (!r.ok) throw new Error(`examples: HTTP ${r.status}`);
  return r.json();
}

export async function runProgram(source, { signal, passes = null } = {}) {
  const r = await fetch("/api/run", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
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
  if (!r.ok) {
    const detail = body && (body.detail || body.error);
    const message = typeof detail === "string" ? detail : detail && detail.message ? detail.message : JSON.stringify(detail || `HTTP ${r.status}`);
    return {
      stdout: "", variables: {}, ops: {}, passes: [], steps: [], truncated: false,
      error: { type: r.status === 429 ? "TooManyRequests" : r.status === 413 ? "ProgramTooLarge" : "ServerError", message, line: detail && detail.line, column: detail && detail.column },
    };
  }
  return body;
}

// Stream a run over Server-Sent Events (POST /api/stream, app/api/routes/stream.py): events
// stdout {text}, figure {svg, at} (after the text printed before it), step {...}, pass {pass} (a summary pass
// may later be replaced by its full graph, same index), and last done {error, variables, stdout, ops, steps,
// modules, figures, truncated}.
// handlers: onPass(pass), onStep(step), onStdout(text), onFigure({svg, at}), onDone(msg),
// onError({fallback, noStream, message}).
// fallback=true: no stream came (the request failed or was refused, e.g. a program too large):
// the caller should POST /api/run instead, which says why; noStream=true: this server has no
// stream at all (404, 405, or an answer that is not SSE).
export function streamProgram(source, handlers) {
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
      r = await fetch("/api/stream", {
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
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    let event = "message";
    let data = [];
    try {
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
            if (data.length) dispatch(event, data.join("\n"));
            event = "message";
            data = [];
          } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          else if (line.startsWith("event:")) event = line.slice(6).trim();
        }
      }
      if (data.length) dispatch(event, data.join("\n"));
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

// A folded pass's group (issue 11): its contents laid out on their own, values and frames included.
// Resolves {payload} or {expired: true} (404 RunExpired: the run left the server's store) or throws.
export async function fetchGroup(run, passIndex, gid) {
  const r = await fetch(`/api/runs/${encodeURIComponent(run)}/passes/${passIndex}/groups/${encodeURIComponent(gid)}`);
  if (r.status === 404) return { expired: true };
  if (!r.ok) throw new Error(`group ${gid}: HTTP ${r.status}`);
  return { payload: await r.json() };
}
