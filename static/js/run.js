// Running a program and receiving its trace: streamed (or POSTed), shown at once or as it comes.
import { CLIENT_ID, runProgram, streamProgram } from "./api.js";
import { DURATIONS } from "./config.js";
import { liveOutput } from "./figures.js";
import { openPass, stopPlaying } from "./player.js";
import { refreshInspector } from "./selection.js";
import { $, app, setStatus } from "./state.js";
import { loadTrace, scheduleTraining, showError, showOutput, updateTraining } from "./views.js";

// How a run is shown follows what the server sends, not the program text. Every run streams
// (POST /api/stream); its pieces are held, and when `done` comes the whole trace is drawn at once,
// as from POST /api/run. But the server draws only the first and the last few passes in full and
// sends the others as they close as summaries (`graph: null`): a summary pass before `done` says
// the run is a long loop of passes (a training loop), and from then on the run is shown as it
// comes: the first pass plays while the loss curve grows, and the stream can be paused.
const saysLongLoop = (msg) => msg.type === "pass" && !msg.pass.graph;

const canStream = () => typeof TextDecoderStream !== "undefined" && !app.noStream;

export async function run(opts = {}) {
  const src = app.editor.text;
  app.lastSource = src;
  const seq = ++app.runSeq;
  stopPlaying();
  if (app.stream) app.stream.close();
  app.stream = null;
  setStreamControls(null);
  const t0 = performance.now();
  app.metrics.current = { t0, firstFrame: null, live: false };
  setStatus("running…");
  $("run").disabled = true;
  app.inspector.resetRun();
  clearTimeout(app.cancelTimer);
  app.cancelTimer = setTimeout(() => seq === app.runSeq && $("run").disabled && ($("cancel").hidden = false), DURATIONS.cancelShown);
  const finish = () => {
    if (seq !== app.runSeq) return;
    $("run").disabled = false;
    clearTimeout(app.cancelTimer);
    if (!$("cancel").hidden && document.activeElement === $("cancel")) $("graph-wrap").focus({ preventScroll: true });
    $("cancel").hidden = true;
  };
  if (canStream() && !opts.noStream) return startStream(src, seq, opts, t0, finish);
  const ctrl = new AbortController();
  app.abortRun = () => ctrl.abort();
  try {
    const trace = await runProgram(src, { signal: ctrl.signal });
    if (seq !== app.runSeq) return;
    loadTrace(trace, opts);
    setStatus(statusText(trace, t0), !!trace.error);
  } catch (e) {
    if (seq !== app.runSeq) return;
    showError({ type: "NetworkError", message: String(e.message || e) });
    setStatus("could not reach the server", true);
  } finally {
    finish();
  }
}

function statusText(trace, t0) {
  const ms = Math.round(performance.now() - t0);
  if (trace.error) return `${trace.error.type} (${ms} ms)`;
  const n = trace.passes.length;
  return `ran in ${ms} ms · ${n} pass${n === 1 ? "" : "es"}${trace.truncated ? " · truncated" : ""}`;
}

// The pause button and the line beside it: null hides them (no run is shown as it comes).
function setStreamControls(status) {
  $("stream-toggle").hidden = status == null;
  setToggle(false);
  $("stream-status").textContent = status || "";
}

function setToggle(paused) {
  const b = $("stream-toggle");
  b.textContent = paused ? "Resume stream" : "Pause stream";
  b.setAttribute("aria-label", b.textContent);
}

// Resolves when the run is over (unless the next run replaces it first).
function startStream(src, seq, opts, t0, finish) {
  const trace = { stdout: "", error: null, variables: {}, ops: {}, passes: [], steps: [], figures: [], truncated: false, streaming: true };
  let output = null; // the output pane, filled as text and figures come (every streamed run)
  const out = () => output || (output = liveOutput($("stdout")));
  app.streamPaused = false;
  app.streamQueue = [];
  let live = false; // shown as it comes (the server sent a summary pass)
  let shown = false; // a pass is open
  let over;
  const ended = new Promise((resolve) => (over = resolve));
  const end = () => {
    finish();
    over();
  };
  const goLive = () => {
    live = true;
    app.metrics.current.live = true;
    $("training").hidden = false;
    setStreamControls("streaming…");
    if (trace.passes.some((p) => p && p.graph)) {
      shown = true;
      loadTrace(trace, opts, { partial: true });
    } else {
      updateTraining();
    }
  };
  const apply = (msg) => {
    if (seq !== app.runSeq) return;
    if (msg.type === "pass") {
      const idx = msg.pass.index ?? trace.passes.length;
      const replacing = trace.passes[idx] != null;
      trace.passes[idx] = msg.pass;
      if (!live) {
        if (saysLongLoop(msg)) goLive();
        return;
      }
      if (shown && replacing && idx === app.passIndex && msg.pass.graph && app.model && app.model.pass !== msg.pass && !app.model.pass.graph) {
        openPass(idx, {});
      }
      if (!shown && msg.pass.graph) {
        shown = true;
        app.trace = trace;
        loadTrace(trace, opts, { partial: true });
      } else {
        scheduleTraining();
      }
    } else if (msg.type === "step") {
      trace.steps.push(msg.step);
      if (live) scheduleTraining();
    } else if (msg.type === "stdout") {
      trace.stdout += msg.text;
      out().text(msg.text);
    } else if (msg.type === "figure") {
      trace.figures.push(msg.figure);
      out().figure(msg.figure);
    } else if (msg.type === "done") {
      trace.error = msg.error || null;
      if (msg.stdout != null) trace.stdout = msg.stdout;
      if (msg.ops) trace.ops = msg.ops;
      if (Array.isArray(msg.steps) && msg.steps.length >= trace.steps.length) trace.steps = msg.steps;
      trace.variables = msg.variables || {};
      trace.truncated = !!msg.truncated;
      trace.streaming = false;
      trace.passes = trace.passes.filter(Boolean);
      if (msg.modules) trace.modules = msg.modules;
      trace.figures = Array.isArray(msg.figures) ? msg.figures : [];
      setStreamControls(null);
      if (!shown) loadTrace(trace, opts);
      else if (opts.pass != null && opts.pass !== app.passIndex && trace.passes[opts.pass]) {
        showOutput(trace);
        updateTraining();
        openPass(opts.pass, { step: opts.step, node: opts.node });  // a share link's pass, once the run is whole
      } else {
        updateTraining();
        showOutput(trace);
        // names of modules and parameters are known now: redraw the open pass where it is
        if (app.model) {
          app.model.fillNames(trace);
          app.model.nameAnonymous();
          app.graph.render(app.model);
          app.graph.update(app.model.stateAt(app.step), app.selected);
          if (app.selected) refreshInspector();
        }
      }
      setStatus(statusText(trace, t0), !!trace.error);
      end();
    }
  };
  app.applyStreamMsg = apply;
  app.stream = streamProgram(src, {
    onPass: (pass) => route({ type: "pass", pass }),
    onStep: (step) => route({ type: "step", step }),
    onStdout: (text) => route({ type: "stdout", text }),
    onFigure: (figure) => route({ type: "figure", figure }),
    onDone: (msg) => route({ ...msg, type: "done" }),
    onError: (err) => {
      if (seq !== app.runSeq) return;
      $("stream-toggle").hidden = true;
      if (err.fallback) {
        if (err.noStream) app.noStream = true; // the server has no stream: use POST from now on
        finish();
        run({ ...opts, noStream: true }).then(over);
      } else if (trace.streaming) {
        apply({ type: "done", error: { type: "StreamError", message: err.message } });
      }
    },
  });
  function route(msg) {
    if (app.streamPaused) {
      app.streamQueue.push(msg);
      $("stream-status").textContent = `paused · ${app.streamQueue.length} message(s) waiting`;
    } else {
      apply(msg);
      if (live && trace.streaming) $("stream-status").textContent = `streaming · ${trace.passes.filter(Boolean).length} passes`;
    }
  }
  return ended;
}

function toggleStream() {
  app.streamPaused = !app.streamPaused;
  setToggle(app.streamPaused);
  if (!app.streamPaused) {
    const q = app.streamQueue;
    app.streamQueue = [];
    for (const m of q) app.applyStreamMsg(m);
  }
}

// Stop the running program: its answer is ignored, the server kills its process, the last result stays.
export function cancelRun() {
  if (!$("run").disabled) return;
  app.runSeq++;  // every callback of the cancelled run is ignored from here on
  if (app.stream) app.stream.close();
  app.stream = null;
  if (app.abortRun) app.abortRun();
  app.abortRun = null;
  fetch("/api/cancel", { method: "POST", headers: { "X-Client-Id": CLIENT_ID } }).catch(() => {});
  setStreamControls(null);
  clearTimeout(app.cancelTimer);
  $("cancel").hidden = true;
  $("run").disabled = false;
  $("graph-wrap").focus({ preventScroll: true });
  setStatus("cancelled: the last result is still shown");
  document.body.dataset.ready = String(app.runSeq);
}

export function bindRun() {
  $("cancel").addEventListener("click", cancelRun);
  $("run").addEventListener("click", () => {
    run();
    // keyboard stepping right after Run: Space plays instead of pressing Run again
    if (document.activeElement === $("run")) $("graph-wrap").focus({ preventScroll: true });
  });
  $("stream-toggle").addEventListener("click", toggleStream);
}
