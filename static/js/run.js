// Running a program and receiving its trace: streamed (or POSTed), shown at once or as it comes.
import { traceSource } from "./api.js";
import { DURATIONS } from "./config.js";
import { $, setStatus } from "./dom.js";
import { liveOutput } from "./figures.js";
import { openPass, stopPlaying } from "./player.js";
import { refreshInspector } from "./selection.js";
import { set, state } from "./store.js";
import { loadTrace, scheduleTraining, showError, showOutput, updateTraining } from "./views.js";

// How a run is shown follows what the server sends, not the program text. Every run streams
// (POST /api/stream); its pieces are held, and when `done` comes the whole trace is drawn at once,
// as from POST /api/run. But the server draws only the first and the last few passes in full and
// sends the others as they close as summaries (`graph: null`): a summary pass before `done` says
// the run is a long loop of passes (a training loop), and from then on the run is shown as it
// comes: the first pass plays while the loss curve grows, and the stream can be paused.
const saysLongLoop = (msg) => msg.type === "pass" && !msg.pass.graph;

// The run under way: its stream (or its POST's abort), the messages held while the stream is paused.
let stream = null;
let abortRun = null;
let streamQueue = [];
let applyStreamMsg = null;  // the stream's own handler: the queue is replayed through it on resume
let cancelTimer = null;
let noStream = false;       // this server has no stream: every run POSTs

const canStream = () => typeof TextDecoderStream !== "undefined" && !noStream;

// A class's presenter runs through its class (classroom.js): (source, signal) → {trace, view}: the trace the server
// ran once for the class and, after a reload, the view the class was at (pass, step, node); or null when the class
// could not get it (then the page runs it itself). One run, not two.
let runThrough = null;
export function setRunThrough(fn) {
  runThrough = fn;
}

export async function run(opts = {}) {
  const src = state.editor.text;
  const seq = state.runSeq + 1;
  set({ lastSource: src, runSeq: seq });
  stopPlaying();
  if (stream) stream.close();
  stream = null;
  setStreamControls(null);
  const t0 = performance.now();
  set({ metrics: { runs: state.metrics.runs, current: { t0, firstFrame: null, live: false } } });
  setStatus("running…");
  document.body.classList.add("stale-result");  // the last result is not this program's: dimmed at once
  $("run").disabled = true;
  state.inspector.resetRun();
  clearTimeout(cancelTimer);
  cancelTimer = setTimeout(() => seq === state.runSeq && $("run").disabled && ($("cancel").hidden = false), DURATIONS.cancelShown);
  const finish = () => {
    if (seq !== state.runSeq) return;
    document.body.classList.remove("stale-result");
    $("run").disabled = false;
    clearTimeout(cancelTimer);
    if (!$("cancel").hidden && document.activeElement === $("cancel")) $("graph-wrap").focus({ preventScroll: true });
    $("cancel").hidden = true;
  };
  if (runThrough && !opts.own) return runForClass(src, seq, opts, t0, finish);
  if (canStream() && !opts.noStream) return startStream(src, seq, opts, t0, finish);
  const ctrl = new AbortController();
  abortRun = () => ctrl.abort();
  try {
    const trace = await traceSource.run(src, { signal: ctrl.signal });
    if (seq !== state.runSeq) return;
    loadTrace(trace, opts);
    setStatus(statusText(trace, t0), !!trace.error);
  } catch (e) {
    if (seq !== state.runSeq) return;
    showError({ type: "NetworkError", message: String(e.message || e) });
    setStatus("could not reach the server", true);
  } finally {
    finish();
  }
}

// The presenter's Run: the class's run is this page's run too (the answer its followers load, whole, not streamed).
async function runForClass(src, seq, opts, t0, finish) {
  const ctrl = new AbortController();
  abortRun = () => ctrl.abort();
  let got = null;
  try {
    got = await runThrough(src, ctrl.signal);
  } catch (_) {
    got = null;
  }
  if (seq !== state.runSeq) return;  // cancelled, or run again meanwhile
  if (got == null) {
    finish();
    return run({ ...opts, own: true });
  }
  const trace = got.trace;
  try {
    loadTrace(trace, { ...opts, ...got.view });
    setStatus(statusText(trace, t0) + " · for the class", !!trace.error);
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
  set({ streamPaused: false });
  streamQueue = [];
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
    set({ metrics: { runs: state.metrics.runs, current: { ...state.metrics.current, live: true } } });
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
    if (seq !== state.runSeq) return;
    if (msg.type === "pass") {
      const idx = msg.pass.index ?? trace.passes.length;
      const replacing = trace.passes[idx] != null;
      trace.passes[idx] = msg.pass;
      if (!live) {
        if (saysLongLoop(msg)) goLive();
        return;
      }
      if (shown && replacing && idx === state.passIndex && msg.pass.graph && state.model && state.model.pass !== msg.pass && !state.model.pass.graph) {
        openPass(idx, {});
      }
      if (!shown && msg.pass.graph) {
        shown = true;
        set({ trace });
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
      else if (opts.pass != null && opts.pass !== state.passIndex && trace.passes[opts.pass]) {
        showOutput(trace);
        updateTraining();
        openPass(opts.pass, { step: opts.step, node: opts.node });  // a share link's pass, once the run is whole
      } else {
        updateTraining();
        showOutput(trace);
        // names of modules and parameters are known now: redraw the open pass where it is
        if (state.model) {
          state.model.fillNames(trace);
          state.model.nameAnonymous();
          state.graph.render(state.model);
          state.graph.update(state.model.stateAt(state.step), state.selected);
          if (state.selected) refreshInspector();
        }
      }
      setStatus(statusText(trace, t0), !!trace.error);
      end();
    }
  };
  applyStreamMsg = apply;
  stream = traceSource.stream(src, {
    onPass: (pass) => route({ type: "pass", pass }),
    onStep: (step) => route({ type: "step", step }),
    onStdout: (text) => route({ type: "stdout", text }),
    onFigure: (figure) => route({ type: "figure", figure }),
    onDone: (msg) => route({ ...msg, type: "done" }),
    onError: (err) => {
      if (seq !== state.runSeq) return;
      $("stream-toggle").hidden = true;
      if (err.fallback) {
        if (err.noStream) noStream = true; // the server has no stream: use POST from now on
        finish();
        run({ ...opts, noStream: true }).then(over);
      } else if (trace.streaming) {
        apply({ type: "done", error: { type: "StreamError", message: err.message } });
      }
    },
  });
  function route(msg) {
    if (state.streamPaused) {
      streamQueue.push(msg);
      $("stream-status").textContent = `paused · ${streamQueue.length} message(s) waiting`;
    } else {
      apply(msg);
      if (live && trace.streaming) $("stream-status").textContent = `streaming · ${trace.passes.filter(Boolean).length} passes`;
    }
  }
  return ended;
}

function toggleStream() {
  set({ streamPaused: !state.streamPaused });
  setToggle(state.streamPaused);
  if (!state.streamPaused) {
    const q = streamQueue;
    streamQueue = [];
    for (const m of q) applyStreamMsg(m);
  }
}

// Stop the running program: its answer is ignored, the server kills its process, the last result stays.
export function cancelRun() {
  if (!$("run").disabled) return;
  set({ runSeq: state.runSeq + 1 });  // every callback of the cancelled run is ignored from here on
  if (stream) stream.close();
  stream = null;
  if (abortRun) abortRun();
  abortRun = null;
  traceSource.cancel();
  setStreamControls(null);
  clearTimeout(cancelTimer);
  $("cancel").hidden = true;
  $("run").disabled = false;
  $("graph-wrap").focus({ preventScroll: true });
  setStatus("cancelled: the last result is still shown");
  document.body.dataset.ready = String(state.runSeq);
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
