// A trace into the page: the output and error panel, the training panel (passes, loss curve), the pass to open.
import { traceSource } from "./api.js";
import { prefersReducedMotion } from "./config.js";
import { $ } from "./dom.js";
import { renderOutput } from "./figures.js";
import { graphPasses, nearestGraphPass, openPass, setTimeline } from "./player.js";
import { hintFor } from "./hints.js";
import { set, state } from "./store.js";
import { num } from "./values.js";

export function showError(err) {
  const box = $("error");
  const editor = state.editor;
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
  const hint = hintFor(err);
  if (hint) {
    const p = document.createElement("p");
    p.className = "err-hint";
    p.textContent = "Hint: " + hint;
    box.append(p);
  }
  editor.showError(err);
}

export function showOutput(trace) {
  renderOutput($("stdout"), trace.stdout, trace.figures);
  showError(trace.error);
}

export function loadTrace(trace, opts = {}, { partial = false } = {}) {
  document.body.classList.remove("stale-result");  // the new result replaces the dimmed one
  set({ trace });
  showOutput(trace);
  const passes = graphPasses();
  updateTraining();
  if (!passes.length) {
    set({ model: null });
    state.graph.viewport.replaceChildren();
    if (state.graph.overlayVp) state.graph.overlayVp.replaceChildren();  // no pulse dot left from the last run
    $("empty").hidden = false;
    $("empty").textContent = trace.error ? "The program stopped before building a graph: see Output." : "This program built no graph (no tensor ops with requires_grad).";
    $("caption").replaceChildren();
    $("legend").replaceChildren();  // the last graph's roles and value range explain nothing now
    setTimeline();
    requestAnimationFrame(() => (document.body.dataset.ready = String(state.runSeq)));
    return;
  }
  $("empty").hidden = true;
  // a share link's pass: opened as it is, recorded on demand if it came as a summary (not while streaming)
  const asked = opts.pass != null && trace.passes[opts.pass] && (trace.passes[opts.pass].graph || !partial);
  let idx = asked ? opts.pass : passes[0].index;
  if (opts.pass != null && !asked && !partial) idx = nearestGraphPass(opts.pass);
  openPass(idx, { step: opts.step, node: opts.node, autoplay: opts.step == null && !opts.noAutoplay && !prefersReducedMotion() });
}

// A streamed training run sends a message per pass: the panel is redrawn once per frame, not per message.
let trainingFrame = 0;
export function scheduleTraining() {
  if (!trainingFrame) trainingFrame = requestAnimationFrame(() => {
    trainingFrame = 0;
    updateTraining();
  });
}

// an offline file holds the passes it was saved with: the others are not stored, whatever the reason
const missing = (p) => (traceSource.offline ? " (not stored in this file)" : p.folded ? " (too big to draw)" : " (recorded when opened)");
const passLabel = (p) => `${p.index}${p.loss != null ? " · loss " + Number(num(p.loss)).toPrecision(4) : ""}${p.graph ? "" : missing(p)}`;

export function updateTraining() {
  const t = state.trace;
  const passes = t ? t.passes.filter(Boolean) : [];
  const withLoss = passes.filter((p) => p.loss != null).length;
  const updates = passes.some((p) => (p.frames || []).some((f) => f.kind === "optim_step"));
  const training = withLoss > 2 || updates || (t && t.streaming);
  $("pass-nav").hidden = passes.length < 2;
  const sel = $("pass-select");
  const cur = sel.value;
  // the options are kept and only what changed is rewritten: rebuilding 400 of them per message froze the page
  const opts = sel.options;
  passes.forEach((p, i) => {
    let o = opts[i];
    if (!o) {
      o = document.createElement("option");
      sel.appendChild(o);
    }
    const value = String(p.index), text = passLabel(p), disabled = !p.graph && !!p.folded;
    if (o.value !== value) o.value = value;
    if (o.textContent !== text) o.textContent = text;
    if (o.disabled !== disabled) o.disabled = disabled;
  });
  while (opts.length > passes.length) sel.remove(opts.length - 1);
  sel.value = state.model ? String(state.passIndex) : cur;
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
  state.lossChart.setData(xs, ys);
}
