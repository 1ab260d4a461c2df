// The player: the open pass, its timeline (steps, phases, caption, toasts) and the animation loop.
import { DURATIONS, PAGE, SPEEDS } from "./config.js";
import { traceSource } from "./api.js";
import { $, setStatus } from "./dom.js";
import { renderLegend } from "./look.js";
import { PassModel } from "./replay.js";
import { refreshInspector } from "./selection.js";
import { set, state } from "./store.js";

// ---------------------------------------------------------------- passes
export function graphPasses() {
  return (state.trace ? state.trace.passes : []).filter((p) => p && p.graph);
}

export function nearestGraphPass(x) {
  let best = null;
  for (const p of graphPasses()) if (best == null || Math.abs(p.index - x) < Math.abs(best - x)) best = p.index;
  return best;
}

function freedBefore(k) {
  const freed = new Set();
  for (const p of state.trace.passes.slice(0, k)) {
    if (!p || !p.frames) continue;
    const ops = p.frames.filter((f) => f.kind === "backward_step").map((f) => f.node);
    if (p.frames.some((f) => f.kind === "backward_end" && f.freed)) ops.forEach((o) => freed.add(o));
  }
  return freed;
}

// A pass sent as a summary (the middle of a training run) is recorded when it is opened: the
// program runs again with that pass kept in full (runs are deterministic, so it is the same pass).
// Resolves true when the pass has its graph now.
async function recordPass(index) {
  const pass = state.trace.passes[index];
  if (pass.folded || !state.lastSource || state.trace.streaming) return false;  // folded: too big to draw, not unrecorded
  const seq = state.runSeq;
  document.body.dataset.recording = String(index);
  setStatus(`recording pass ${index}…`);
  try {
    const trace = await traceSource.recordPass(state.lastSource, index);
    if (seq !== state.runSeq || state.trace.passes[index] !== pass) return false;  // a new run, or already recorded
    const got = trace.passes && trace.passes.find((p) => p && p.index === index);
    if (!got || !got.graph) {
      setStatus(`pass ${index} could not be recorded${trace.error ? ": " + trace.error.message : got && got.folded ? ": " + got.folded : ""}`, true);
      return false;
    }
    state.trace.passes[index] = got;  // the trace is a document filled in place (as a stream fills it)
    setStatus(`pass ${index} recorded`);
    return true;
  } finally {
    if (document.body.dataset.recording === String(index)) delete document.body.dataset.recording;
  }
}

export async function openPass(index, opts = {}) {
  if (index == null || !state.trace || !state.trace.passes[index]) return;
  if (!state.trace.passes[index].graph && !(await recordPass(index))) return;
  showPass(index, opts);
}

function showPass(index, { step = null, node = null, autoplay = false } = {}) {
  const graph = state.graph;
  stopPlaying();
  $("toasts").replaceChildren();
  set({ passIndex: index, model: new PassModel(state.trace, index, { freedBefore: freedBefore(index) }) });
  graph.render(state.model);
  renderLegend(); // before the fit: the fit keeps clear of the legend
  graph.fit(false);
  setTimeline();
  const n = state.model.steps.length;
  const k = step == null ? (autoplay ? 0 : state.model.resultStep) : Math.max(0, Math.min(step, n));
  set({ selected: node && state.model.nodes.has(node) ? node : null });
  setStep(k, { animate: false });
  if (state.selected) refreshInspector();
  else state.inspector.clear();
  $("pass-select").value = String(index);
  state.lossChart.setCurrent(index);
  // first frame drawn: measured for the benchmark
  requestAnimationFrame(() => {
    const m = state.metrics.current;
    if (m && m.firstFrame == null) {
      const firstFrame = performance.now() - m.t0;
      set({ metrics: { runs: [...state.metrics.runs, firstFrame], current: { ...m, firstFrame } } });
    }
    document.body.dataset.ready = String(state.runSeq);
  });
  if (autoplay && n > 0) play();
}

// Every pass is reachable: the next one, recorded on demand if it came as a summary.
export function stepPass(d) {
  const n = state.trace ? state.trace.passes.length : 0;
  const j = Math.max(0, Math.min(n - 1, state.passIndex + d));
  if (j !== state.passIndex && state.trace.passes[j]) openPass(j, { step: d > 0 ? 0 : null, node: state.selected });
}

// ---------------------------------------------------------------- timeline
export function setTimeline() {
  const tl = $("timeline");
  const n = state.model ? state.model.steps.length : 0;
  tl.max = String(n);
  const ph = $("phases");
  ph.replaceChildren();
  if (!state.model || !n) {
    // nothing to step through: no stale count from the previous run
    tl.value = "0";
    set({ step: 0 });
    $("step-text").textContent = "no steps";
    tl.setAttribute("aria-valuetext", "no steps");
    return;
  }
  for (const r of state.model.phaseRanges()) {
    const d = document.createElement("div");
    d.className = "ph " + r.phase;
    d.style.flex = String(r.end - r.start);
    d.title = `${r.phase}: steps ${r.start + 1}–${r.end}`;
    ph.appendChild(d);
  }
  for (const e of state.model.eventSteps()) {
    if (e.kind === "backward") continue;
    const d = document.createElement("div");
    d.className = "ev " + e.kind;
    d.style.left = `calc(${(100 * e.step) / n}% - 1px)`;
    d.title = e.kind;
    ph.appendChild(d);
  }
}

export function setStep(k, { animate = true, toast = true } = {}) {
  if (!state.model) return;
  const { graph, editor } = state;
  const n = state.model.steps.length;
  k = Math.max(0, Math.min(k, n));
  const forward = k === state.step + 1;
  set({ step: k });
  // a step inside a folded group opens it first (and folds what playback opened and left)
  if (graph.syncStep) graph.syncStep(k, { playing: state.playing, again: () => state.model && setStep(state.step, { animate: false, toast: false }) });
  const st = state.model.stateAt(k);
  graph.update(st, state.selected);
  if (st.effects) graph.follow(Object.keys(st.effects.active), st.effects.phase, !(state.playing && state.speed > 1));
  const tl = $("timeline");
  tl.value = String(k);
  const phase = k > 0 ? state.model.steps[k - 1].phase : "start";
  tl.setAttribute("aria-valuetext", `step ${k} of ${n}, ${phase}: ${state.model.describeStep(k)}`);
  $("step-text").textContent = `step ${k} of ${n}`;
  const cap = $("caption");
  cap.replaceChildren();
  const tag = document.createElement("span");
  tag.className = "ph-tag " + phase;
  tag.textContent = phase;
  // what happened (two lines at most), then always the line of code on a line of its own
  const what = document.createElement("span");
  what.className = "cap-text";
  what.append(tag, document.createTextNode(state.model.describeStep(k)));
  cap.append(what);
  // tie the step to the code: which line ran
  const main = k > 0 ? state.model.steps[k - 1].main : null;
  // a backward step points at the line of the op it differentiates
  const opNode = main && main.kind === "backward_step" ? state.model.nodes.get(main.node) : null;
  const line = main && (main.line || (opNode && opNode.line) || null);
  // a hook or a custom Function's backward: the program's own function ran, so its lines are the ones lit
  const lines = st.effects && st.effects.lines;
  if (lines && state.lastSource === editor.text) {
    editor.highlightLine(lines);
    const code = document.createElement("span");
    code.className = "cap-line";
    const where = lines[1] > lines[0] ? `lines ${lines[0]}–${lines[1]}` : `line ${lines[0]}`;
    code.textContent = `${where}: ${editor.lineText(lines[0]).trim()}`;
    cap.append(code);
  } else editor.highlightLine(line && state.lastSource === editor.text ? line : null);
  if (!lines && line && state.lastSource === editor.text) {
    const code = document.createElement("span");
    code.className = "cap-line";
    code.textContent = `line ${line}: ${editor.lineText(line).trim()}`;
    cap.append(code);
  }
  document.body.dataset.step = String(k);
  document.body.dataset.steps = String(n);
  for (const t of document.querySelectorAll(".toast.sticky")) t.remove();
  // a banner is about its step: gone when the steps go back before it or on into another forward
  for (const t of document.querySelectorAll(".toast")) if (+t.dataset.step > k || (phase === "forward" && t.dataset.phase !== phase)) t.remove();
  if (toast && st.effects && st.effects.toast && (forward || state.playing || st.effects.toast.kind === "error")) showToast(st.effects.toast, k, phase);
  if (animate) startPulse();
  else graph.animate(2);
  if (state.selected) refreshInspector();
}

function showToast(t, step, phase) {
  const el = document.createElement("div");
  el.className = "toast " + (t.kind || "");
  el.dataset.step = String(step);
  el.dataset.phase = phase;
  el.setAttribute("role", t.kind === "error" ? "alert" : "status");
  const b = document.createElement("b");
  b.textContent = t.title;
  el.append(b, document.createTextNode(t.text));
  $("toasts").appendChild(el);
  while ($("toasts").children.length > PAGE.maxToasts) $("toasts").firstChild.remove();
  // an error stays up while its step is shown: it is the teachable moment
  if (t.kind === "error") el.classList.add("sticky");
  else setTimeout(() => el.remove(), DURATIONS.toast / Math.min(PAGE.toastSpeedCap, state.speed));
}

// ---------------------------------------------------------------- animation loop
let raf = null, stepStart = 0;
let stopAfter = false;  // the pass's last step is shown: stop once its pulse has finished
function tick(now) {
  raf = null;
  const graph = state.graph;
  const stepDur = DURATIONS.step / state.speed;
  const pulseDur = DURATIONS.pulse / state.speed;
  const el = now - stepStart;
  graph.animate(Math.min(1, el / pulseDur) || 0);
  if (state.playing && el >= stepDur) {
    if (state.step >= state.model.resultStep) {
      // the story goes on in the next pass (second backward, next training step)
      const next = state.trace.passes[state.passIndex + 1];
      if (next && next.graph) {
        openPass(state.passIndex + 1, { autoplay: true });
        return;
      }
      stopPlaying();
      return;
    }
    stepStart = now;
    setStep(state.step + 1, { animate: false });
    graph.animate(0);
    if (state.step >= state.model.resultStep) {
      // let the last pulse finish, then stop
      stopAfter = true;
    }
  }
  const hasNext = state.trace && state.trace.passes[state.passIndex + 1] && state.trace.passes[state.passIndex + 1].graph;
  if (stopAfter && !hasNext && el >= pulseDur && state.step >= state.model.resultStep) {
    stopAfter = false;
    stopPlaying();
    graph.animate(1);
    return;
  }
  if (state.playing || el < pulseDur) raf = requestAnimationFrame(tick);
}
function startPulse() {
  stepStart = performance.now();
  state.graph.animate(0);
  if (!raf) raf = requestAnimationFrame(tick);
}
export function play() {
  if (!state.model) return;
  if (state.step >= state.model.resultStep) setStep(0, { animate: false });  // playback ends on the pass's result
  set({ playing: true });
  setPlayButton();
  stepStart = performance.now() - DURATIONS.step / state.speed; // first step immediately
  if (!raf) raf = requestAnimationFrame(tick);
}
export function stopPlaying() {
  set({ playing: false });
  stopAfter = false;
  setPlayButton();
}
export function togglePlay() {
  if (state.playing) stopPlaying();
  else play();
}
function setPlayButton() {
  const b = $("play");
  b.classList.toggle("playing", state.playing);
  b.setAttribute("aria-label", state.playing ? "Pause" : "Play");
}
export function stepBy(d) {
  stopPlaying();
  setStep(state.step + d, { animate: d > 0 });
}
// Home / End: the start of the pass, or its result (a trailing zero_grad stays one step further)
export function jumpTo(end) {
  stopPlaying();
  setStep(end && state.model ? state.model.resultStep : 0, { animate: false });
}

// ---------------------------------------------------------------- transport controls
export function bindTransport() {
  $("play").addEventListener("click", togglePlay);
  $("step-fwd").addEventListener("click", () => stepBy(1));
  $("step-back").addEventListener("click", () => stepBy(-1));
  $("to-start").addEventListener("click", () => jumpTo(false));
  $("to-end").addEventListener("click", () => jumpTo(true));
  $("timeline").addEventListener("input", (e) => {
    stopPlaying();
    setStep(parseInt(e.target.value, 10), { animate: false });
  });
  const sp = $("speed");
  for (const s of SPEEDS) {
    const o = document.createElement("option");
    o.value = String(s);
    o.textContent = `${s}×`;
    sp.appendChild(o);
  }
  sp.value = String(state.speed);
  sp.addEventListener("change", () => {
    set({ speed: parseFloat(sp.value) });
  });
  $("pass-select").addEventListener("change", (e) => openPass(parseInt(e.target.value, 10), { step: 0, autoplay: false, node: state.selected }));
  $("pass-prev").addEventListener("click", () => stepPass(-1));
  $("pass-next").addEventListener("click", () => stepPass(1));
}
