// "Export animation": the open pass played forward and backward, frame by frame at ANIMATION.fps,
// drawn on a canvas with the step caption, encoded as GIF (vendored gifenc) or WebM (MediaRecorder).
// The frames follow the player's clock (DURATIONS.step / pulse at the chosen speed), not the screen:
// each step's graph is rasterised once from its SVG and the pulses are drawn over it per frame.
import { ANIMATION, DURATIONS, GRAPH, THEMES, prefersReducedMotion } from "./config.js";
import { setStep, stopPlaying } from "./player.js";
import { state } from "./store.js";
import { SVGNS } from "./svg.js";
import { select } from "../vendor/d3.js";
import { GIFEncoder, applyPalette, quantize } from "../vendor/gifenc.js";

const frameCount = (ms) => Math.max(1, Math.round((ms / 1000) * ANIMATION.fps));

// The area the graph is drawn in and how graph units map to it, for the two sizes.
function frameGeometry(view, size) {
  const g = state.model.graph;
  if (size === "view") {
    // NOTE: video encoders want even sizes; an odd pixel is cropped, not scaled
    const w = Math.max(2, Math.floor(view.svg.clientWidth / 2) * 2);
    const h = Math.max(2, Math.floor(view.svg.clientHeight / 2) * 2);
    const t = view.transform || { k: 1, x: 0, y: 0 };
    return { width: w, height: h + ANIMATION.captionH, graphH: h, map: { k: t.k, x: t.x, y: t.y }, transform: `translate(${t.x},${t.y}) scale(${t.k})` };
  }
  const { width, height } = ANIMATION.size;
  const graphH = height - ANIMATION.captionH, pad = ANIMATION.pad;
  const vw = g.width + 2 * pad, vh = g.height + 2 * pad + GRAPH.bottomRoom;
  const k = Math.min(width / vw, graphH / vh);
  return { width, height, graphH, map: { k, x: (width - vw * k) / 2 + pad * k, y: (graphH - vh * k) / 2 + pad * k }, transform: null, viewBox: [-pad, -pad, vw, vh] };
}

// The graph as shown at this step, as an SVG document sized to the frame (pulses are drawn separately).
function stepSvg(view, geo) {
  const clone = view.svg.cloneNode(true);
  clone.setAttribute("xmlns", SVGNS);
  clone.setAttribute("width", geo.width);
  clone.setAttribute("height", geo.graphH);
  const vp = clone.querySelector(".fg-viewport");
  if (geo.viewBox) {
    clone.setAttribute("viewBox", geo.viewBox.join(" "));
    vp.removeAttribute("transform");
  } else {
    clone.removeAttribute("viewBox");
    vp.setAttribute("transform", geo.transform);  // the camera stays where it was when the export began
  }
  return new XMLSerializer().serializeToString(clone);
}

// Where the pulses are at `progress` through the step (graph units), read from the player's own animate().
function pulsesAt(view, progress) {
  view.animate(progress);
  const out = [];
  for (const p of view.pulseEls || []) {
    if (!p.shown) continue;
    const m = /translate\(([-\d.]+),([-\d.]+)\)/.exec(p.c.getAttribute("transform") || "");
    if (m) out.push({ x: +m[1], y: +m[2], r: +p.c.getAttribute("r"), dir: p.dir });
  }
  return out;
}

// The whole animation as data: per step its SVG, caption and, per frame, its pulses (frames that
// look the same share one entry with a longer `frames` count).
// prefers-reduced-motion: reduce gives one still picture per step (no pulses gliding along the edges), each as long.
export function planAnimation({ size = "1280x720", speed = state.speed, still = prefersReducedMotion() } = {}) {
  const view = state.graph, model = state.model;
  if (!model) throw new Error("no graph to animate: run a program first");
  const n = model.resultStep;  // a zero_grad after the last step() is not the pass's result: the animation ends before it
  if (n > ANIMATION.maxSteps) throw new Error(`this pass has ${n} steps; an animation takes at most ${ANIMATION.maxSteps}`);
  const geo = frameGeometry(view, size === "view" ? "view" : "1280x720");
  const stepFrames = frameCount(DURATIONS.step / speed), pulseFrames = Math.min(stepFrames, frameCount(DURATIONS.pulse / speed));
  const saved = { step: state.step, camera: view.transform };
  if (state.playing) stopPlaying();
  const steps = [];
  try {
    for (let k = 0; k <= n; k++) {
      setStep(k, { animate: false, toast: false });
      const phase = k > 0 ? model.steps[k - 1].phase : "start";
      const shots = [];
      const glide = k > 0 && !still;
      if (glide) for (let i = 0; i < pulseFrames; i++) shots.push({ frames: 1, pulses: pulsesAt(view, i / pulseFrames) });
      const hold = (glide ? stepFrames - pulseFrames : stepFrames) + (k === n ? frameCount(ANIMATION.endHoldMs) : 0);
      if (hold > 0) shots.push({ frames: hold, pulses: glide ? pulsesAt(view, 1) : [] });
      steps.push({ k, phase, text: model.describeStep(k), svg: stepSvg(view, geo), shots });
    }
  } finally {
    setStep(saved.step, { animate: false, toast: false });
    view.animate(2);
    // the steps may have panned the camera after them: it goes back to where it was
    if (saved.camera) select(view.svg).interrupt().call(view.zoomer.transform, saved.camera);
  }
  const frames = steps.reduce((s, st) => s + st.shots.reduce((a, b) => a + b.frames, 0), 0);
  return { geo, steps, n, frames, still, fps: ANIMATION.fps, theme: THEMES[state.theme] || THEMES.light };
}

async function rasterise(svgText, w, h) {
  const url = URL.createObjectURL(new Blob([svgText], { type: "image/svg+xml" }));
  try {
    const img = new Image(w, h);
    img.src = url;
    await img.decode();
    return img;
  } finally {
    URL.revokeObjectURL(url);
  }
}

function fitText(ctx, text, maxW) {
  if (ctx.measureText(text).width <= maxW) return text;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(text.slice(0, mid) + "…").width <= maxW) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(0, lo) + "…";
}

// One frame: the step's graph, its pulses, the caption band (phase tag, what happened, step k of n).
function drawFrame(ctx, plan, step, image, pulses) {
  const { geo, theme } = plan, A = ANIMATION;
  ctx.fillStyle = theme.graphBg;
  ctx.fillRect(0, 0, geo.width, geo.graphH);
  ctx.drawImage(image, 0, 0, geo.width, geo.graphH);
  const { k: s, x: ox, y: oy } = geo.map;
  for (const p of pulses) {
    ctx.fillStyle = p.dir === "backward" ? theme.backward : theme.forward;
    ctx.beginPath();
    ctx.arc(ox + p.x * s, oy + p.y * s, Math.max(1.5, p.r * s), 0, 2 * Math.PI);
    ctx.fill();
  }
  const y0 = geo.graphH, h = A.captionH, mid = y0 + h / 2;
  ctx.fillStyle = theme.panel;
  ctx.fillRect(0, y0, geo.width, h);
  ctx.fillStyle = theme.border;
  ctx.fillRect(0, y0, geo.width, 1);
  ctx.textBaseline = "middle";
  ctx.font = A.stepFont;
  const stepText = `step ${step.k} of ${plan.n}`;
  const stepW = ctx.measureText(stepText).width;
  ctx.fillStyle = theme.muted;
  ctx.fillText(stepText, geo.width - A.pad - stepW, mid);
  ctx.font = A.tagFont;
  const tagW = ctx.measureText(step.phase).width + 12;
  ctx.fillStyle = step.phase === "backward" ? theme.backward : step.phase === "forward" ? theme.forward : theme.muted;
  ctx.fillRect(A.pad, mid - 12, tagW, 24);
  ctx.fillStyle = "#ffffff";
  ctx.fillText(step.phase, A.pad + 6, mid);
  ctx.font = A.captionFont;
  ctx.fillStyle = theme.text;
  ctx.fillText(fitText(ctx, step.text, geo.width - 4 * A.pad - tagW - stepW), 2 * A.pad + tagW, mid);
}

// Every frame in order: calls draw(ctx, frames) per distinct picture (`frames` 30 fps frames long).
async function renderFrames(plan, onPicture, onProgress) {
  const canvas = document.createElement("canvas");
  canvas.width = plan.geo.width;
  canvas.height = plan.geo.height;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  let next = rasterise(plan.steps[0].svg, plan.geo.width, plan.geo.graphH);
  for (let i = 0; i < plan.steps.length; i++) {
    const step = plan.steps[i];
    const image = await next;
    if (i + 1 < plan.steps.length) next = rasterise(plan.steps[i + 1].svg, plan.geo.width, plan.geo.graphH);  // one ahead
    for (const shot of step.shots) {
      drawFrame(ctx, plan, step, image, shot.pulses);
      await onPicture(ctx, canvas, shot.frames);
    }
    if (onProgress) onProgress((i + 1) / plan.steps.length);
  }
  return canvas;
}

const UNCHANGED_RGB = [255, 0, 255];
const hexRgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

// GIF: one frame per distinct picture, its delay the 30 fps frames it lasts (GIF counts in 1/100 s:
// delays are rounded on the running clock so the total stays exact).
export async function encodeGif(plan, onProgress) {
  const gif = GIFEncoder();
  const { width, height } = plan.geo;
  let palette = null, previous = null, shown = 0, pictures = 0;
  const unchanged = ANIMATION.gifColors - 1;  // the palette's last entry, never a pixel's nearest colour
  const cs = (frames) => Math.round((frames * 100) / plan.fps);
  // one palette for the whole animation: the first and the last step (values and both phases' colours) and the pulses
  const last = plan.steps[plan.steps.length - 1];
  const lastImage = await rasterise(last.svg, width, plan.geo.graphH);
  await renderFrames(plan, async (ctx, canvas, frames) => {
    const { data } = ctx.getImageData(0, 0, width, height);
    if (!palette) {
      const sample = document.createElement("canvas");
      sample.width = width;
      sample.height = 2 * height;
      const sctx = sample.getContext("2d");
      sctx.drawImage(canvas, 0, 0);
      drawFrame(sctx, plan, last, lastImage, []);
      sctx.drawImage(canvas, 0, 0, width, height, 0, height, width, height);
      sctx.setTransform(1, 0, 0, 1, 0, 0);
      palette = quantize(sctx.getImageData(0, 0, width, 2 * height).data, ANIMATION.gifColors - 3);
      for (const c of [plan.theme.forward, plan.theme.backward]) palette.push(hexRgb(c));
    }
    const index = applyPalette(data, palette);
    const delay = (cs(shown + frames) - cs(shown)) * 10;
    if (!previous) {
      gif.writeFrame(index, width, height, { palette: [...palette, UNCHANGED_RGB], delay, repeat: 0 });
    } else {
      // pixels as in the previous picture are transparent over it: a pulse's frame costs its pulses, not the graph
      const delta = index.slice();
      for (let i = 0; i < delta.length; i++) if (delta[i] === previous[i]) delta[i] = unchanged;
      gif.writeFrame(delta, width, height, { delay, transparent: true, transparentIndex: unchanged, dispose: 1 });
    }
    previous = index;
    shown += frames;
    pictures++;
    if (pictures % 8 === 0) await new Promise((r) => setTimeout(r));  // let the page breathe
  }, onProgress);
  gif.finish();
  return { blob: new Blob([gif.bytes()], { type: "image/gif" }), frames: shown, pictures };
}

export function webmType() {
  if (typeof MediaRecorder === "undefined") return null;
  return ANIMATION.webmTypes.find((t) => MediaRecorder.isTypeSupported(t)) || null;
}

// WebM: the canvas recorded by MediaRecorder in real time (a 10 s animation takes 10 s), one
// requested frame per 30 fps tick on the clock.
export async function encodeWebm(plan, onProgress) {
  const type = webmType();
  if (!type) throw new Error("this browser cannot record WebM (MediaRecorder)");
  const out = document.createElement("canvas");
  out.width = plan.geo.width;
  out.height = plan.geo.height;
  const octx = out.getContext("2d");
  const stream = out.captureStream(0);
  const track = stream.getVideoTracks()[0];
  const rec = new MediaRecorder(stream, { mimeType: type, videoBitsPerSecond: ANIMATION.webmBitsPerSecond });
  const chunks = [];
  rec.ondataavailable = (e) => e.data.size && chunks.push(e.data);
  const stopped = new Promise((r) => (rec.onstop = r));
  rec.start();
  const tick = 1000 / plan.fps;
  let shown = 0, t0 = null;
  await renderFrames(plan, async (_ctx, canvas, frames) => {
    for (let f = 0; f < frames; f++) {
      if (t0 == null) t0 = performance.now();
      octx.drawImage(canvas, 0, 0);  // NOTE: a canvas not drawn on since the last frame gives no new frame
      track.requestFrame();
      shown++;
      const wait = t0 + shown * tick - performance.now();
      await new Promise((r) => setTimeout(r, Math.max(0, wait)));
    }
  }, onProgress);
  rec.stop();
  await stopped;
  track.stop();
  return { blob: new Blob(chunks, { type: type.split(";")[0] }), frames: shown, pictures: shown };
}

// The page's entry: plan the open pass, encode it, answer {blob, frames, pictures, width, height, ms}.
export async function exportAnimation({ format = "gif", size = "1280x720", onProgress } = {}) {
  const t0 = performance.now();
  const plan = planAnimation({ size });
  const got = format === "webm" ? await encodeWebm(plan, onProgress) : await encodeGif(plan, onProgress);
  return { ...got, width: plan.geo.width, height: plan.geo.height, steps: plan.n, still: plan.still, ms: Math.round(performance.now() - t0) };
}

// ---------------------------------------------------------------- the dialog
function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

function choice(name, legend, options) {
  const set = h("fieldset", { class: "anim-choice" }, h("legend", {}, legend));
  options.forEach(([value, label, disabled], i) => {
    const input = h("input", { type: "radio", name, value });
    input.checked = i === 0;
    input.disabled = !!disabled;
    set.append(h("label", {}, input, " " + label));
  });
  return set;
}

// "Animation" in the top bar: a dialog with the format and size, then a download.
export function bindAnimationExport({ download }) {
  const open = document.getElementById("export-anim");
  if (!open) return;
  const status = h("p", { class: "anim-status", role: "status", "aria-live": "polite" });
  const motion = h("p", { class: "muted small anim-motion" });
  const go = h("button", { class: "btn primary", type: "submit", "aria-label": "Export" }, "Export");
  const close = h("button", { class: "btn", type: "button", "aria-label": "Close" }, "Close");
  const form = h("form", { method: "dialog" },
    h("h2", {}, "Export animation"),
    h("p", { class: "muted small" }, "The pass shown, played forward and backward at the current speed, 30 frames a second, with the step caption."),
    motion,
    choice("anim-format", "Format", [["gif", "GIF"], ["webm", "WebM (records in real time)", !webmType()]]),
    choice("anim-size", "Size", [["1280x720", "1280×720, the whole graph"], ["view", "the view as shown"]]),
    status, h("div", { class: "anim-buttons" }, close, go));
  const dialog = h("dialog", { id: "anim-dialog", class: "anim-dialog", "aria-label": "Export animation" }, form);
  document.body.append(dialog);
  close.addEventListener("click", () => dialog.close());
  open.addEventListener("click", () => {
    if (!state.model) return;
    status.textContent = "";
    // the system setting is read when the dialog opens: it may have changed since the page loaded
    motion.textContent = prefersReducedMotion() ? "Reduced motion is on: one still picture per step, no moving pulses." : "";
    motion.hidden = !motion.textContent;
    dialog.showModal();
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const format = form.elements["anim-format"].value, size = form.elements["anim-size"].value;
    go.disabled = true;
    status.textContent = "rendering…";
    try {
      const got = await exportAnimation({ format, size, onProgress: (f) => (status.textContent = `rendering… ${Math.round(f * 100)}%`) });
      download(got.blob, `flowgrad-pass${state.passIndex}.${format}`);
      status.textContent = `saved: ${got.width}×${got.height}, ${got.frames} frames, ${(got.blob.size / 1e6).toFixed(1)} MB in ${(got.ms / 1000).toFixed(1)} s`;
    } catch (err) {
      status.textContent = `export failed: ${err.message || err}`;
    } finally {
      go.disabled = false;
    }
  });
}
