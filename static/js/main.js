// The page: wires editor, graph, transport, inspector, output, training panel and URL state.
import { DURATIONS, ROLE_COLORS, ROLE_NAMES, SPEEDS, cssVars } from "./config.js";
import { fetchExamples, runProgram, streamProgram } from "./api.js";
import { Editor } from "./editor.js";
import { GraphView } from "./graph.js";
import { Inspector } from "./inspector.js";
import { LossChart } from "./losschart.js";
import { PassModel } from "./replay.js";
import { checkGradient } from "./fdcheck.js";
import { scaleLegend } from "./heatmap.js";
import { decodeProgram, encodeProgram, readUrl, shareUrl, writeUrl } from "./urlstate.js";
import { num } from "./values.js";

const $ = (id) => document.getElementById(id);

const app = {
  trace: null,
  model: null,
  passIndex: 0,
  step: 0,
  playing: false,
  speed: 1,
  selected: null,
  theme: "light",
  projector: false,
  examples: [],
  exampleId: null,
  runSeq: 0,
  stream: null,
  streamPaused: false,
  streamQueue: [],
  metrics: { runs: [] },
};
window.__fg = app;

// ---------------------------------------------------------------- theme / projector
function applyLook() {
  const vars = cssVars(app.theme, app.projector);
  for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(k, v);
  document.documentElement.dataset.theme = app.theme;
  document.body.classList.toggle("projector", app.projector);
  $("projector").setAttribute("aria-pressed", String(app.projector));
  $("theme").setAttribute("aria-pressed", String(app.theme === "dark"));
  if (graph) graph.setTheme(app.theme, app.projector);
  if (editor) editor.setTheme(app.theme);
  if (lossChart) lossChart.setTheme(app.theme);
  renderLegend();
  if (app.model) refreshInspector();
}

function renderLegend() {
  const lg = $("legend");
  if (!lg) return;
  lg.replaceChildren();
  const chip = (html) => {
    const s = document.createElement("span");
    s.className = "chip";
    s.innerHTML = html;
    lg.appendChild(s);
  };
  // the roles this graph has (output and loss share a colour: one chip)
  const g = app.model ? app.model.graph : null;
  const roles = new Set(g ? g.nodes.filter((n) => n.kind === "tensor").map((n) => n.role) : ["input", "parameter", "intermediate", "loss"]);
  for (const r of ["input", "parameter", "constant", "intermediate", "output", "loss"]) {
    if (!roles.has(r) || (r === "output" && roles.has("loss"))) continue;
    const name = r === "loss" && roles.has("output") ? "output / loss" : ROLE_NAMES[r];
    chip(`<span class="sw" style="background:${ROLE_COLORS[r]}"></span>${name}`);
  }
  chip(`<span class="sw pending"></span>not computed yet`);
  chip(`<span class="line" style="background:var(--forward)"></span>forward`);
  chip(`<span class="line" style="background:var(--backward)"></span>backward`);
  const cuts = g ? g.edges.some((e) => e.cut) : true;
  if (cuts) chip(`<span class="line cut"></span>no_grad / detach`);
  chip(`<span class="sw freed"></span>op freed by backward`);
  const maxAbs = app.model ? graph.maxAbs : 1;
  lg.appendChild(scaleLegend(maxAbs || 1, app.theme));
}

// ---------------------------------------------------------------- components
let graph = null, editor = null, inspector = null, lossChart = null;

function initComponents() {
  graph = new GraphView($("graph"), { onSelect: (id) => select(id) });
  graph.onViewChange = (out) => $("zoom-fit").classList.toggle("attention", out);
  graph.getInsets = graphInsets;
  editor = new Editor($("editor"), {
    onRun: () => run(),
    onChange: (text) => {
      updateExampleTitle(text);
      scheduleUrl();
    },
  });
  inspector = new Inspector($("inspector"), {
    onCheckGradient: (id) => checkGradient({
      trace: app.trace, model: app.model, nodeId: id, source: app.lastSource, run: (src) => runProgram(src),
    }),
    onGoToLine: (n) => editor.goToLine(n),
    onClose: () => select(null),
  });
  lossChart = new LossChart($("loss-chart"), { onPick: (x) => openPass(nearestGraphPass(x)) });
  Object.assign(app, { editor, graph, inspector, lossChart, run, setStep, openPass, select, loadTrace, play, stopPlaying });
}

// Zoom-to-fit keeps the graph clear of the step caption (up to two lines, top left) and the legend.
function graphInsets() {
  const cap = $("caption"), lg = $("legend");
  const cs = getComputedStyle(cap);
  const line = parseFloat(cs.lineHeight) || parseFloat(cs.fontSize) * 1.3 || 18;
  const top = cap.offsetTop + 2 * line + (parseFloat(cs.paddingTop) || 0) + (parseFloat(cs.paddingBottom) || 0) + 4;
  const bottom = lg.hidden ? 0 : lg.offsetHeight + 8;
  return { top, bottom };
}

// ---------------------------------------------------------------- running
// Stream training loops: a backward() inside a for/while body.
function wantsStream(src) {
  if (typeof TextDecoderStream === "undefined" || app.noStream) return false;
  const loops = [];
  for (const line of src.split("\n")) {
    if (!line.trim() || line.trim().startsWith("#")) continue;
    const ind = line.match(/^\s*/)[0].length;
    while (loops.length && loops[loops.length - 1] >= ind) loops.pop();
    if (/^\s*(for|while)\b.*:\s*(#.*)?$/.test(line)) loops.push(ind);
    else if (loops.length && /\.backward\(/.test(line)) return true;
  }
  return false;
}

function setStatus(text, isError = false) {
  const s = $("status");
  s.textContent = text;
  s.classList.toggle("error", isError);
}

async function run(opts = {}) {
  const src = editor.text;
  app.lastSource = src;
  const seq = ++app.runSeq;
  stopPlaying();
  if (app.stream) app.stream.close();
  app.stream = null;
  const t0 = performance.now();
  app.metrics.current = { t0, firstFrame: null };
  setStatus("running…");
  $("run").disabled = true;
  inspector.resetRun();
  const finish = () => {
    if (seq === app.runSeq) $("run").disabled = false;
  };
  if (wantsStream(src) && !opts.noStream) {
    startStream(src, seq, opts, t0, finish);
    return;
  }
  try {
    const trace = await runProgram(src);
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

function startStream(src, seq, opts, t0, finish) {
  const trace = { stdout: "", error: null, variables: {}, ops: {}, passes: [], steps: [], truncated: false, streaming: true };
  app.streamPaused = false;
  app.streamQueue = [];
  $("training").hidden = false;
  $("stream-status").textContent = "streaming…";
  $("stream-toggle").hidden = false;
  $("stream-toggle").textContent = "Pause stream";
  $("stream-toggle").setAttribute("aria-label", "Pause stream");
  let shown = false;
  const apply = (msg) => {
    if (seq !== app.runSeq) return;
    if (msg.type === "pass") {
      const idx = msg.pass.index ?? trace.passes.length;
      const replacing = trace.passes[idx] != null;
      trace.passes[idx] = msg.pass;
      if (shown && replacing && idx === app.passIndex && msg.pass.graph && app.model && app.model.pass !== msg.pass && !app.model.pass.graph) {
        openPass(idx, {});
      }
      if (!shown && msg.pass.graph) {
        shown = true;
        app.trace = trace;
        loadTrace(trace, opts, { partial: true });
      } else {
        updateTraining();
      }
    } else if (msg.type === "step") {
      trace.steps.push(msg.step);
      updateTraining();
    } else if (msg.type === "stdout") {
      trace.stdout += msg.text;
      $("stdout").textContent = trace.stdout;
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
      $("stream-toggle").hidden = true;
      $("stream-status").textContent = "";
      if (!shown) loadTrace(trace, opts);
      else {
        updateTraining();
        showOutput(trace);
        // names of modules and parameters are known now: redraw the open pass where it is
        if (app.model) {
          app.model.fillNames(trace);
          app.model.nameAnonymous();
          graph.render(app.model);
          graph.update(app.model.stateAt(app.step), app.selected);
          if (app.selected) refreshInspector();
        }
      }
      setStatus(statusText(trace, t0), !!trace.error);
      finish();
    }
  };
  app.applyStreamMsg = apply;
  app.stream = streamProgram(src, {
    onPass: (pass) => route({ type: "pass", pass }),
    onStep: (step) => route({ type: "step", step }),
    onStdout: (text) => route({ type: "stdout", text }),
    onDone: (msg) => route({ ...msg, type: "done" }),
    onError: (err) => {
      if (seq !== app.runSeq) return;
      $("stream-toggle").hidden = true;
      if (err.fallback) {
        app.noStream = true; // the server has no stream: use POST from now on
        finish();
        run({ ...opts, noStream: true });
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
      if (trace.streaming) $("stream-status").textContent = `streaming · ${trace.passes.filter(Boolean).length} passes`;
    }
  }
}

function toggleStream() {
  app.streamPaused = !app.streamPaused;
  const b = $("stream-toggle");
  b.textContent = app.streamPaused ? "Resume stream" : "Pause stream";
  b.setAttribute("aria-label", app.streamPaused ? "Resume stream" : "Pause stream");
  if (!app.streamPaused) {
    const q = app.streamQueue;
    app.streamQueue = [];
    for (const m of q) app.applyStreamMsg(m);
  }
}

// ---------------------------------------------------------------- trace -> views
function showError(err) {
  const box = $("error");
  if (!err) {
    box.hidden = true;
    box.replaceChildren();
    editor.clearError();
    return;
  }
  box.hidden = false;
  box.replaceChildren();
  const t = document.createElement("span");
  t.className = "err-type";
  t.textContent = err.type + ": ";
  box.append(t, document.createTextNode(err.message || ""));
  if (err.line) {
    const b = document.createElement("button");
    b.className = "btn small";
    b.textContent = `line ${err.line}`;
    b.setAttribute("aria-label", `Go to line ${err.line}`);
    b.addEventListener("click", () => editor.goToLine(err.line));
    box.append(" ", b);
  }
  editor.showError(err);
}

function showOutput(trace) {
  $("stdout").textContent = trace.stdout || "";
  showError(trace.error);
}

function graphPasses() {
  return (app.trace ? app.trace.passes : []).filter((p) => p && p.graph);
}

function nearestGraphPass(x) {
  let best = null;
  for (const p of graphPasses()) if (best == null || Math.abs(p.index - x) < Math.abs(best - x)) best = p.index;
  return best;
}

function loadTrace(trace, opts = {}, { partial = false } = {}) {
  app.trace = trace;
  showOutput(trace);
  const passes = graphPasses();
  updateTraining();
  if (!passes.length) {
    app.model = null;
    graph.viewport.replaceChildren();
    $("empty").hidden = false;
    $("empty").textContent = trace.error ? "The program stopped before building a graph: see Output." : "This program built no graph (no tensor ops with requires_grad).";
    $("caption").replaceChildren();
    setTimeline();
    requestAnimationFrame(() => (document.body.dataset.ready = String(app.runSeq)));
    return;
  }
  $("empty").hidden = true;
  let idx = opts.pass != null && trace.passes[opts.pass] && trace.passes[opts.pass].graph ? opts.pass : passes[0].index;
  if (opts.pass != null && idx !== opts.pass && !partial) idx = nearestGraphPass(opts.pass);
  openPass(idx, { step: opts.step, node: opts.node, autoplay: opts.step == null && !opts.noAutoplay });
}

function freedBefore(k) {
  const freed = new Set();
  for (const p of app.trace.passes.slice(0, k)) {
    if (!p || !p.frames) continue;
    const ops = p.frames.filter((f) => f.kind === "backward_step").map((f) => f.node);
    if (p.frames.some((f) => f.kind === "backward_end" && f.freed)) ops.forEach((o) => freed.add(o));
  }
  return freed;
}

function openPass(index, { step = null, node = null, autoplay = false } = {}) {
  if (index == null || !app.trace.passes[index] || !app.trace.passes[index].graph) return;
  stopPlaying();
  $("toasts").replaceChildren();
  app.passIndex = index;
  app.model = new PassModel(app.trace, index, { freedBefore: freedBefore(index) });
  graph.render(app.model);
  renderLegend(); // before the fit: the fit keeps clear of the legend
  graph.fit(false);
  setTimeline();
  const n = app.model.steps.length;
  const k = step == null ? (autoplay ? 0 : n) : Math.max(0, Math.min(step, n));
  app.selected = node && app.model.nodes.has(node) ? node : null;
  setStep(k, { animate: false });
  if (app.selected) refreshInspector();
  else inspector.clear();
  $("pass-select").value = String(index);
  lossChart.setCurrent(index);
  // first frame drawn: measured for the benchmark
  requestAnimationFrame(() => {
    const m = app.metrics.current;
    if (m && m.firstFrame == null) {
      m.firstFrame = performance.now() - m.t0;
      app.metrics.runs.push(m.firstFrame);
    }
    document.body.dataset.ready = String(app.runSeq);
  });
  if (autoplay && n > 0) play();
}

function updateTraining() {
  const t = app.trace;
  const passes = t ? t.passes.filter(Boolean) : [];
  const withLoss = passes.filter((p) => p.loss != null).length;
  const updates = passes.some((p) => (p.frames || []).some((f) => f.kind === "optim_step"));
  const training = withLoss > 2 || updates || (t && t.streaming);
  $("pass-nav").hidden = passes.length < 2;
  const sel = $("pass-select");
  const cur = sel.value;
  sel.replaceChildren();
  for (const p of passes) {
    const o = document.createElement("option");
    o.value = String(p.index);
    o.textContent = `${p.index}${p.loss != null ? " · loss " + Number(num(p.loss)).toPrecision(4) : ""}${p.graph ? "" : " (summary)"}`;
    o.disabled = !p.graph;
    sel.appendChild(o);
  }
  sel.value = app.model ? String(app.passIndex) : cur;
  $("training").hidden = !training;
  if (!training) return;
  const xs = [], ys = [];
  for (const p of passes) if (p.loss != null && isFinite(num(p.loss))) {
    xs.push(p.index);
    ys.push(num(p.loss));
  }
  if (!xs.length && t.steps) t.steps.forEach((s) => {
    if (s.loss != null) {
      xs.push(s.step);
      ys.push(num(s.loss));
    }
  });
  lossChart.setData(xs, ys);
}

// ---------------------------------------------------------------- timeline / player
function setTimeline() {
  const tl = $("timeline");
  const n = app.model ? app.model.steps.length : 0;
  tl.max = String(n);
  const ph = $("phases");
  ph.replaceChildren();
  if (!app.model || !n) {
    // nothing to step through: no stale count from the previous run
    tl.value = "0";
    app.step = 0;
    $("step-text").textContent = "no steps";
    tl.setAttribute("aria-valuetext", "no steps");
    return;
  }
  for (const r of app.model.phaseRanges()) {
    const d = document.createElement("div");
    d.className = "ph " + r.phase;
    d.style.flex = String(r.end - r.start);
    d.title = `${r.phase}: steps ${r.start + 1}–${r.end}`;
    ph.appendChild(d);
  }
  for (const e of app.model.eventSteps()) {
    if (e.kind === "backward") continue;
    const d = document.createElement("div");
    d.className = "ev " + e.kind;
    d.style.left = `calc(${(100 * e.step) / n}% - 1px)`;
    d.title = e.kind;
    ph.appendChild(d);
  }
}

function setStep(k, { animate = true, toast = true } = {}) {
  if (!app.model) return;
  const n = app.model.steps.length;
  k = Math.max(0, Math.min(k, n));
  const forward = k === app.step + 1;
  app.step = k;
  const st = app.model.stateAt(k);
  graph.update(st, app.selected);
  if (st.effects) graph.follow(Object.keys(st.effects.active), st.effects.phase, !(app.playing && app.speed > 1));
  const tl = $("timeline");
  tl.value = String(k);
  const phase = k > 0 ? app.model.steps[k - 1].phase : "start";
  tl.setAttribute("aria-valuetext", `step ${k} of ${n}, ${phase}: ${app.model.describeStep(k)}`);
  $("step-text").textContent = `step ${k} of ${n}`;
  const cap = $("caption");
  cap.replaceChildren();
  const tag = document.createElement("span");
  tag.className = "ph-tag " + phase;
  tag.textContent = phase;
  cap.append(tag, document.createTextNode(app.model.describeStep(k)));
  // tie the step to the code: which line ran
  const main = k > 0 ? app.model.steps[k - 1].main : null;
  const line = main && (main.line || (main.kind === "op" || main.kind === "tensor" ? null : null));
  editor.highlightLine(line && app.lastSource === editor.text ? line : null);
  if (line && app.lastSource === editor.text) {
    const code = document.createElement("span");
    code.className = "cap-line";
    code.textContent = `line ${line}: ${editor.lineText(line).trim()}`;
    cap.append(code);
  }
  document.body.dataset.step = String(k);
  document.body.dataset.steps = String(n);
  for (const t of document.querySelectorAll(".toast.sticky")) t.remove();
  if (toast && st.effects && st.effects.toast && (forward || app.playing || st.effects.toast.kind === "error")) showToast(st.effects.toast);
  if (animate) startPulse();
  else graph.animate(2);
  if (app.selected) refreshInspector();
  scheduleUrl();
}

function showToast(t) {
  const el = document.createElement("div");
  el.className = "toast " + (t.kind || "");
  el.setAttribute("role", t.kind === "error" ? "alert" : "status");
  const b = document.createElement("b");
  b.textContent = t.title;
  el.append(b, document.createTextNode(t.text));
  $("toasts").appendChild(el);
  while ($("toasts").children.length > 2) $("toasts").firstChild.remove();
  // an error stays up while its step is shown: it is the teachable moment
  if (t.kind === "error") el.classList.add("sticky");
  else setTimeout(() => el.remove(), DURATIONS.toast / Math.min(2, app.speed));
}

let raf = null, stepStart = 0;
function tick(now) {
  raf = null;
  const stepDur = DURATIONS.step / app.speed;
  const pulseDur = DURATIONS.pulse / app.speed;
  const el = now - stepStart;
  graph.animate(Math.min(1, el / pulseDur) || 0);
  if (app.playing && el >= stepDur) {
    if (app.step >= app.model.steps.length) {
      // the story goes on in the next pass (second backward, next training step)
      const next = app.trace.passes[app.passIndex + 1];
      if (next && next.graph) {
        openPass(app.passIndex + 1, { autoplay: true });
        return;
      }
      stopPlaying();
      return;
    }
    stepStart = now;
    setStep(app.step + 1, { animate: false });
    graph.animate(0);
    if (app.step >= app.model.steps.length) {
      // let the last pulse finish, then stop
      app.stopAfter = true;
    }
  }
  const hasNext = app.trace && app.trace.passes[app.passIndex + 1] && app.trace.passes[app.passIndex + 1].graph;
  if (app.stopAfter && !hasNext && el >= pulseDur && app.step >= app.model.steps.length) {
    app.stopAfter = false;
    stopPlaying();
    graph.animate(1);
    return;
  }
  if (app.playing || el < pulseDur) raf = requestAnimationFrame(tick);
}
function startPulse() {
  stepStart = performance.now();
  graph.animate(0);
  if (!raf) raf = requestAnimationFrame(tick);
}
function play() {
  if (!app.model) return;
  if (app.step >= app.model.steps.length) setStep(0, { animate: false });
  app.playing = true;
  setPlayButton();
  stepStart = performance.now() - DURATIONS.step / app.speed; // first step immediately
  if (!raf) raf = requestAnimationFrame(tick);
}
function stopPlaying() {
  app.playing = false;
  app.stopAfter = false;
  setPlayButton();
}
function togglePlay() {
  if (app.playing) stopPlaying();
  else play();
}
function setPlayButton() {
  const b = $("play");
  b.classList.toggle("playing", app.playing);
  b.setAttribute("aria-label", app.playing ? "Pause" : "Play");
}
function stepBy(d) {
  stopPlaying();
  setStep(app.step + d, { animate: d > 0 });
}

function stepPass(d) {
  const list = graphPasses().map((p) => p.index);
  const i = list.indexOf(app.passIndex);
  const j = Math.max(0, Math.min(list.length - 1, i + d));
  if (j !== i) openPass(list[j], { step: d > 0 ? 0 : null, node: app.selected });
}

// ---------------------------------------------------------------- selection / inspector
function select(id) {
  app.selected = id;
  const layout = $("layout");
  const wasHidden = layout.classList.contains("no-inspector");
  layout.classList.toggle("no-inspector", !id);
  if (wasHidden !== !id) requestAnimationFrame(() => graph.checkInView());
  if (app.model) graph.update(app.model.stateAt(app.step), id);
  if (id) refreshInspector();
  else inspector.clear();
  scheduleUrl();
}
function refreshInspector() {
  if (!app.model || !app.selected) return;
  inspector.show(app.model, app.model.stateAt(app.step), app.selected, { theme: app.theme, maxAbs: graph.maxAbs, ops: app.trace.ops || {} });
}

// ---------------------------------------------------------------- URL
let urlTimer = null;
let encodedFor = null, encoded = null;
function scheduleUrl() {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(updateUrl, 150);
}
async function currentUrlState() {
  const text = editor.text;
  const ex = app.examples.find((e) => e.id === app.exampleId);
  let program = null, example = null;
  if (ex && ex.source === text) example = ex.id;
  else {
    if (encodedFor !== text) {
      encoded = await encodeProgram(text);
      encodedFor = text;
    }
    program = encoded;
  }
  return {
    program, example,
    pass: app.model ? app.passIndex : 0,
    step: app.model && app.step !== app.model.steps.length ? app.step : null,
    node: app.selected,
    speed: app.speed,
    projector: app.projector,
    theme: app.themeFromUrl ? app.theme : null,
  };
}
async function updateUrl() {
  writeUrl(await currentUrlState());
}

async function copyText(text, what) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (_) {
    const ta = document.createElement("textarea");
    ta.value = text;
    document.body.appendChild(ta);
    ta.select();
    document.execCommand("copy");
    ta.remove();
  }
  setStatus(`${what} copied`);
}

function download(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => {
    URL.revokeObjectURL(a.href);
    a.remove();
  }, 1000);
}

// ---------------------------------------------------------------- wiring
function bindControls() {
  $("run").addEventListener("click", async () => {
    await run();
    // keyboard stepping right after Run: Space plays instead of pressing Run again
    if (document.activeElement === $("run")) $("graph-wrap").focus({ preventScroll: true });
  });
  $("toggle-editor").addEventListener("click", () => {
    const hidden = $("layout").classList.toggle("no-editor");
    $("toggle-editor").setAttribute("aria-pressed", String(!hidden));
    $("toggle-editor").setAttribute("aria-label", hidden ? "Show program editor" : "Hide program editor");
  });
  $("play").addEventListener("click", togglePlay);
  $("step-fwd").addEventListener("click", () => stepBy(1));
  $("step-back").addEventListener("click", () => stepBy(-1));
  $("to-start").addEventListener("click", () => {
    stopPlaying();
    setStep(0, { animate: false });
  });
  $("to-end").addEventListener("click", () => {
    stopPlaying();
    setStep(app.model ? app.model.steps.length : 0, { animate: false });
  });
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
  sp.value = String(app.speed);
  sp.addEventListener("change", () => {
    app.speed = parseFloat(sp.value);
    scheduleUrl();
  });
  $("zoom-in").addEventListener("click", () => graph.zoomBy(1.3));
  $("zoom-out").addEventListener("click", () => graph.zoomBy(1 / 1.3));
  $("zoom-fit").addEventListener("click", () => {
    // a second press shows the whole graph even when it is too big to read
    graph.forceWhole = graph.lastFitWasReadable === true;
    graph.fit();
  });
  // the legend: shown by default when the graph has room; the user's choice sticks (localStorage)
  const legendPref = () => {
    try {
      return localStorage.getItem("fg-legend");
    } catch (_) {
      return null;
    }
  };
  const applyLegend = () => {
    const pref = legendPref();
    // by default only where it leaves the graph room: a wide pane, and not a short one (projector
    // mode over a loss chart on a 720-pixel screen)
    const show = pref === "1" || (pref == null && $("graph").clientWidth >= 760 && $("graph").clientHeight >= 420);
    const changed = $("legend").hidden === show;
    $("legend").hidden = !show;
    if (changed && graph.model && !graph.userZoomed) graph.fit(false);
    $("legend-toggle").setAttribute("aria-pressed", String(show));
  };
  $("legend-toggle").addEventListener("click", () => {
    const show = $("legend").hidden;
    try {
      localStorage.setItem("fg-legend", show ? "1" : "0");
    } catch (_) { /* private mode */ }
    applyLegend();
  });
  new ResizeObserver(applyLegend).observe($("graph"));
  applyLegend();
  $("projector").addEventListener("click", () => {
    app.projector = !app.projector;
    applyLook();
    setTimeout(() => graph.fit(), 50);
    scheduleUrl();
  });
  $("theme").addEventListener("click", () => {
    app.theme = app.theme === "dark" ? "light" : "dark";
    app.themeFromUrl = true;
    applyLook();
    scheduleUrl();
  });
  $("copy-link").addEventListener("click", async () => copyText(shareUrl(await currentUrlState()), "Link"));
  $("copy-program").addEventListener("click", () => copyText(editor.text, "Program"));
  $("export-svg").addEventListener("click", () => {
    if (!app.model) return;
    download(new Blob([graph.exportSvg()], { type: "image/svg+xml" }), `flowgrad-pass${app.passIndex}-step${app.step}.svg`);
  });
  $("export-png").addEventListener("click", async () => {
    if (!app.model) return;
    download(await graph.exportPng(2), `flowgrad-pass${app.passIndex}-step${app.step}.png`);
  });
  $("pass-select").addEventListener("change", (e) => openPass(parseInt(e.target.value, 10), { step: 0, autoplay: false, node: app.selected }));
  $("pass-prev").addEventListener("click", () => stepPass(-1));
  $("pass-next").addEventListener("click", () => stepPass(1));
  $("stream-toggle").addEventListener("click", toggleStream);
  $("examples-open").addEventListener("click", openGallery);
  $("gallery-close").addEventListener("click", () => $("gallery").close());
  $("gallery").addEventListener("click", (e) => {
    if (e.target === $("gallery")) $("gallery").close(); // backdrop
  });
  $("graph").addEventListener("click", (e) => {
    if (e.target.closest("[data-node-id]") == null && app.selected) select(null);
  });
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || $("gallery").open) return;
    const t = e.target;
    if (t.closest && t.closest(".cm-editor")) return;
    const tag = (t.tagName || "").toLowerCase();
    const formish = tag === "input" || tag === "select" || tag === "textarea";
    if (formish) return;
    switch (e.key) {
      case " ":
        if (tag === "button" || tag === "a") return;
        e.preventDefault();
        togglePlay();
        break;
      case "ArrowRight":
        e.preventDefault();
        stepBy(1);
        break;
      case "ArrowLeft":
        e.preventDefault();
        stepBy(-1);
        break;
      case "Home":
        e.preventDefault();
        stopPlaying();
        setStep(0, { animate: false });
        break;
      case "End":
        e.preventDefault();
        stopPlaying();
        setStep(app.model ? app.model.steps.length : 0, { animate: false });
        break;
      case "f":
        graph.fit();
        break;
      case "PageDown":
        e.preventDefault();
        stepPass(1);
        break;
      case "PageUp":
        e.preventDefault();
        stepPass(-1);
        break;
      case "Escape":
        select(null);
        break;
      default:
        break;
    }
  });
  window.addEventListener("resize", () => {
    clearTimeout(app.resizeTimer);
    app.resizeTimer = setTimeout(() => graph.fit(false), 120);
  });
}

async function loadExamples() {
  try {
    app.examples = await fetchExamples();
  } catch (_) {
    app.examples = [];
  }
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
  for (const ex of app.examples) {
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
      card.className = "card" + (ex.id === app.exampleId ? " current" : "");
      card.dataset.example = ex.id;
      const b = document.createElement("b");
      b.textContent = ex.title;
      const code = document.createElement("code");
      code.textContent = ex.source.split("\n").filter((l) => l.trim() && !l.startsWith("#") && !/^(import|from)\s/.test(l)).slice(0, 3).join("\n");
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
function updateExampleTitle(text) {
  const same = app.examples.find((e) => e.source === text);
  if (same) app.exampleId = same.id;
  const ex = app.examples.find((e) => e.id === app.exampleId);
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
  app.exampleId = ex.id;
  editor.text = ex.source;
  updateExampleTitle(ex.source);
  run();
}

async function boot() {
  const url = readUrl();
  app.themeFromUrl = !!url.theme;
  app.theme = url.theme || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
  app.projector = url.projector;
  app.speed = SPEEDS.includes(url.speed) ? url.speed : 1;
  initComponents();
  $("layout").classList.toggle("no-inspector", !url.node);
  applyLook();
  document.documentElement.classList.remove("fg-loading");
  bindControls();
  const examplesReady = loadExamples();
  let source = await decodeProgram(url.program);
  await examplesReady;
  if (source == null) {
    const ex = app.examples.find((e) => e.id === url.example) || (url.program ? null : app.examples[0]);
    if (ex) {
      app.exampleId = ex.id;
      source = ex.source;
    }
  }
  editor.text = source || "import torch\n\nx = torch.tensor(2.0, requires_grad=True)\ny = (x + 1) ** 2\ny.backward()\nprint(x.grad)\n";
  updateExampleTitle(editor.text);
  const fromLink = url.program != null || url.example != null;
  await run({ pass: url.pass, step: url.step, node: url.node, noAutoplay: fromLink && url.step != null });
}

boot();
