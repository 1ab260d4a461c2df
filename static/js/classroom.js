// Class sessions: the presenter's page sends its state (the program it ran, pass, step, selected node,
// playing…) to the server; followers' pages (/s/CODE) apply every state they receive; questions at a node
// with the class's answers as a live histogram. The HTTP contract is docs/classroom.md.
// Issue 24: followers never run what the teacher types: the server runs the teacher's program once when the
// teacher runs it (POST …/run) and followers load that answer; what is being typed is mirrored as text only.
import qrcode from "../vendor/qrcode.js";
import { traceSource } from "./api.js";
import { setMask } from "./classmask.js";
import { CLASSROOM } from "./config.js";
import { $, setStatus } from "./dom.js";
import { flat } from "./values.js";
import { openPass, setStep, stopPlaying } from "./player.js";
import { run, setRunThrough } from "./run.js";
import { select } from "./selection.js";
import { set, state, subscribe } from "./store.js";
import { loadTrace } from "./views.js";

// what a presenter sends its class (presenterState): a change to any of them goes out
const SENT_FIELDS = ["program", "lastSource", "runSeq", "model", "passIndex", "step", "selected", "playing", "speed"];
const LECTURE = {
  presenceMs: 5000,        // the presenter's page beats this often (the server's presenter_quiet_s is 30 s)
  draftChars: 16000,       // the typed text mirrored to followers, at most (a state is at most 64 KB)
  shareRetryMs: 2000,      // a shared run the server refused (busy) is asked again after this
  progressPollMs: 500,     // the presenter reads its class run's progress this often while it runs
  shareTries: 3,
};
const PRESENTER_KEY = "fg-class-presenter";  // {code, token, url}: sessionStorage (this tab), localStorage (any tab)
const VIEW_KEY = "fg-class-view";  // {code, program, pass, step, node}: the view this tab last sent its class

export const classSession = {
  role: null,        // "presenter" | "follower"
  code: null,
  token: null,       // presenter only: never in a URL
  following: true,   // follower: apply the teacher's states (false: exploring on their own)
  latest: null,      // follower: the last state received
  question: null,    // the current question (public view)
  answered: null,    // follower: the value sent for the current question
  applying: false,
  pending: false,
  ranProgram: null,
  ranRun: null,
  postTimer: null,
  lastPost: 0,
  countTimer: null,
  tallyAbort: null,
  source: null,      // follower's EventSource
  shared: null,      // presenter: {source, id} the run followers load; follower: the run id loaded
  presenceTimer: null,
  ended: false,
  resumeView: null,  // presenter: the view this tab had sent before a reload (its first run opens there)
};
const session = classSession;  // window.__fg.classroom for the tests

// The follower token the server gave this tab for this session (POST …/join): the only id it accepts on the
// stream and on answers. Kept per tab and session, so a reload is the same follower, not a new one.
async function followerToken(code, fresh = false) {
  const key = "fg-follower-" + code;
  let token = fresh ? null : sessionStorage.getItem(key);
  if (!token) {
    const r = await traceSource.joinSession(code);
    if (!r.ok) throw new Error((r.body && r.body.error && r.body.error.message) || "could not join the class");
    token = r.body.follower;
    sessionStorage.setItem(key, token);
  }
  return token;
}

// ---------------------------------------------------------------- presenter

// `program` is what ran (what the graph shows), never what is being typed: that is `draft`, text only.
function presenterState() {
  const ran = state.lastSource;
  const typed = state.editor.text;
  const shared = session.shared && session.shared.source === ran ? session.shared.id : null;
  return {
    program: ran,
    run: shared,
    draft: typed !== ran && ran != null ? typed.slice(0, LECTURE.draftChars) : null,
    pass: state.model ? state.passIndex : 0,
    step: state.model ? state.step : 0,
    node: state.selected,
    playing: !!state.playing,
    speed: state.speed,
  };
}

// The teacher ran a program: the server runs it once for the class (followers load its answer, never run it).
// Resolves to the run's id (null: the class could not get it); asked once per program, however often it is called.
function shareRun(source) {
  if (session.role !== "presenter" || source == null) return Promise.resolve(null);
  if (session.shared && session.shared.source === source) return session.shared.pending;
  const shared = { source, id: null };
  session.shared = shared;
  shared.pending = askShare(shared);
  return shared.pending;
}

async function askShare(shared) {
  for (let tries = LECTURE.shareTries; tries > 0; tries--) {
    let r;
    try {
      r = await traceSource.shareRun(session.code, session.token, shared.source);
    } catch (_) {
      r = { ok: false, status: 0, body: {} };
    }
    if (session.shared !== shared) return null;  // the teacher ran something else meanwhile
    if (r.ok && r.body && r.body.run) {
      shared.id = r.body.run;
      classStateChanged();
      return shared.id;
    }
    const again = r.status === 429 || r.status >= 500 || r.status === 0;
    if (!again || tries === 1) {
      setStatus(`class session: the class could not get this run (${(r.body && r.body.error && r.body.error.message) || r.status})`, true);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, LECTURE.shareRetryMs));
    if (session.shared !== shared) return null;
  }
  if (session.shared === shared) session.shared = null;  // the next Run asks again
  return null;
}

// The presenter's Run (run.js setRunThrough): the class's run is the one run; this page loads the answer its
// followers load. A program run again is run again (a random one gives new numbers; the server's answer cache
// spares a deterministic one), unless the run for it is still under way.
async function runForClass(source, signal) {
  if (session.shared && session.shared.source === source && session.shared.id) session.shared = null;
  const stop = new Promise((resolve) => signal.addEventListener("abort", () => resolve(null), { once: true }));
  // the server streams the class's run: a long loop's progress shows here as on every follower's page
  const polling = setInterval(async () => {
    const r = await traceSource.sessionInfo(session.code).catch(() => ({ ok: false }));
    if (r.ok && session.role === "presenter" && !signal.aborted) showRunProgress(r.body.progress);
  }, LECTURE.progressPollMs);
  let id;
  try {
    id = await Promise.race([shareRun(source), stop]);
  } finally {
    clearInterval(polling);
    showRunProgress(null);
  }
  if (signal.aborted) {  // the teacher cancelled: the class does not get the run either
    if (session.shared && session.shared.source === source && !session.shared.id) session.shared = null;
    return null;
  }
  if (!id) return null;
  const r = await traceSource.sharedRun(session.code, id).catch(() => ({ ok: false }));
  if (!r.ok) return null;
  // a reloaded presenter's page opens where the class was, not playing from the start under its eyes
  const view = session.resumeView && session.resumeView.program === source ? session.resumeView : null;
  session.resumeView = null;
  return { trace: r.body, view: view && { pass: view.pass, step: view.step, node: view.node, noAutoplay: true } };
}

async function postState() {
  session.postTimer = null;
  session.lastPost = performance.now();
  const sent = presenterState();
  if (sent.program != null && state.model) {  // where the class is: a reload of this tab opens there
    try {
      sessionStorage.setItem(VIEW_KEY, JSON.stringify({ code: session.code, program: sent.program, pass: sent.pass, step: sent.step, node: sent.node }));
    } catch (_) { /* storage refused: a reload starts from the program's start */ }
  }
  try {
    const r = await traceSource.postSessionState(session.code, session.token, sent);
    if (!r.ok) setStatus(`class session: ${(r.body.error && r.body.error.message) || r.status}`, true);
  } catch (_) {
    setStatus("class session: the server cannot be reached; followers keep the last state", true);
  }
}

// Called whenever what the page shows changes (a store subscriber): throttled, the last state always goes out.
function classStateChanged(changed) {
  if (session.role !== "presenter") return;
  if (changed && changed.includes("lastSource") && state.lastSource != null) shareRun(state.lastSource);
  if (session.postTimer) return;
  const wait = Math.max(0, CLASSROOM.postIntervalMs - (performance.now() - session.lastPost));
  session.postTimer = setTimeout(postState, wait);
}

function drawQr(url) {
  const qr = qrcode(0, "M");
  qr.addData(url);
  qr.make();
  const n = qr.getModuleCount();
  const quiet = 4;
  let path = "";
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (qr.isDark(r, c)) path += `M${c + quiet} ${r + quiet}h1v1h-1z`;
  const size = n + 2 * quiet;
  const px = size * CLASSROOM.qrCellPx * (state.projector ? 2 : 1);
  return `<svg class="class-qr" viewBox="0 0 ${size} ${size}" width="${px}" height="${px}" role="img" aria-label="QR code of ${url}" shape-rendering="crispEdges"><rect width="${size}" height="${size}" fill="#fff"/><path d="${path}" fill="#000"/></svg>`;
}

async function refreshCount() {
  try {
    const r = await traceSource.sessionInfo(session.code);
    if (r.ok) {
      const n = r.body.followers;
      $("class-count").textContent = `${n} following`;
      $("class-count").dataset.followers = String(n);
      $("class-panel").classList.toggle("joined", n > 0);  // the class is in: the QR shrinks, the code stays
    } else if (r.status === 404 && session.role === "presenter") {
      forgetSession(`class ${session.code} has ended`);
    }
  } catch (_) { /* keep the last count */ }
}

function storedPresenter(store) {
  try {
    const got = JSON.parse(store.getItem(PRESENTER_KEY) || "null");
    return got && typeof got.code === "string" && typeof got.token === "string" ? got : null;
  } catch (_) {
    return null;
  }
}

function rememberPresenter(held) {
  for (const store of [sessionStorage, localStorage]) {
    try {
      if (held) store.setItem(PRESENTER_KEY, JSON.stringify(held));
      else store.removeItem(PRESENTER_KEY);
    } catch (_) { /* storage refused: the session lives in this page only */ }
  }
}

async function startSession() {
  const r = await traceSource.startSession();
  const body = r.body;
  if (!r.ok) {
    setStatus(`class session: ${(body.error && body.error.message) || r.status}`, true);
    return;
  }
  becomePresenter({ code: body.code, token: body.presenter_token, url: body.join_url });
}

// This tab presents class `held.code` (a new one, or one reclaimed after a reload or from another tab).
async function becomePresenter(held) {
  Object.assign(session, { role: "presenter", code: held.code, token: held.token, shared: null, ended: false });
  rememberPresenter(held);
  setRunThrough(runForClass);
  const panel = $("class-panel");
  panel.hidden = false;
  $("class-code").textContent = held.code;
  $("class-code").dataset.joinCode = held.code;
  $("class-code").setAttribute("data-join-code", held.code);
  $("class-url").textContent = held.url;
  $("class-qr").innerHTML = drawQr(held.url);
  $("class-start").setAttribute("aria-pressed", "true");
  $("class-start").setAttribute("aria-label", "Show or hide the class panel");
  $("class-start").textContent = "Class " + held.code;
  $("class-end-confirm").hidden = true;
  refreshCount();
  clearInterval(session.countTimer);
  session.countTimer = setInterval(refreshCount, CLASSROOM.countPollMs);
  clearInterval(session.presenceTimer);
  session.presenceTimer = setInterval(() => traceSource.presence(session.code, session.token).catch(() => {}), LECTURE.presenceMs);
  traceSource.presence(session.code, session.token).catch(() => {});
  await restoreQuestion();  // before the tally: its first frame is this question's
  openTally();
  if (state.lastSource != null && state.model) shareRun(state.lastSource);
  postState();
}

// A reload keeps the class (sessionStorage); another tab of this browser offers to take it over (localStorage).
async function reclaim() {
  const mine = storedPresenter(sessionStorage);
  const other = mine ? null : storedPresenter(localStorage);
  const held = mine || other;
  if (!held) return;
  const r = await traceSource.sessionInfo(held.code).catch(() => ({ ok: false, status: 0 }));
  if (!r.ok) {
    if (r.status === 404) rememberPresenter(null);  // it ended: nothing to reclaim
    return;
  }
  if (mine) {
    try {
      const view = JSON.parse(sessionStorage.getItem(VIEW_KEY) || "null");
      session.resumeView = view && view.code === held.code ? view : null;
    } catch (_) {
      session.resumeView = null;
    }
    return becomePresenter(held);
  }
  session.reclaimable = held;
  $("class-start").textContent = "Resume class " + held.code;
  $("class-start").setAttribute("aria-label", "Resume class session " + held.code);
}

// The presenter's live answers, reopened when the stream is lost.
async function openTally() {
  const ctl = new AbortController();
  session.tallyAbort = ctl;
  try {
    await traceSource.sessionTally(session.code, session.token, ctl.signal, showTally);
  } catch (_) { /* aborted or lost: reopened below */ }
  if (session.tallyAbort === ctl && !ctl.signal.aborted) setTimeout(openTally, CLASSROOM.reconnectMs);
}

function selectedNumber(kind) {
  if (!state.model || !state.selected) return null;
  const st = state.model.stateAt(state.model.resultStep ?? state.model.steps.length).nodes.get(state.selected);
  const node = state.model.graph.nodes.find((n) => n.id === state.selected);
  const v = st && (kind === "value" ? st.value : st.grad);
  const f = flat(v);
  if (!node || v == null || !f.data.length || !Number.isFinite(f.data[0])) return null;
  const name = node.name || node.label || node.id;
  const element = f.shape.length ? `${name}[${f.shape.map(() => 0).join(", ")}]` : name;
  return { answer: f.data[0], label: kind === "value" ? element : `∂L/∂${element}`, node: state.selected };
}

// The question the class is on (a presenter reloaded, or took the class over from another tab): the server keeps it,
// with its answers; the panel shows it as it was, masked until Reveal.
async function restoreQuestion() {
  const info = await traceSource.sessionInfo(session.code).catch(() => ({ ok: false }));
  const current = info.ok && info.body.question;
  if (!current) return;
  const r = await traceSource.sessionQuestion(session.code, session.token, current.id).catch(() => ({ ok: false }));
  if (!r.ok || session.role !== "presenter") return;
  showQuestionPanel(r.body);
  if (r.body.status === "revealed") showRevealed(r.body);
}

// The panel's question: its label, the histogram so far, Reveal; the projector masks the asked kind of number.
function showQuestionPanel(q) {
  session.question = q;
  $("class-question").hidden = false;
  $("class-question-label").textContent = `${q.label} = ?`;
  $("class-answer").textContent = "";
  $("class-reveal").disabled = false;
  $("class-panel").classList.add("asking");
  const values = q.values || [];
  showTally({ question: q.id, count: values.length, values });
  setMask(q);
  $("class-question").scrollIntoView({ block: "nearest" });
}

function showRevealed(q) {
  $("class-reveal").disabled = true;
  $("class-answer").textContent = `answer: ${Number(q.answer.toPrecision(6))}`;
  $("class-panel").classList.remove("asking");
  showTally({ question: q.id, count: q.values.length, values: q.values });
  setMask(null);
  $("class-question").scrollIntoView({ block: "nearest" });
}

async function ask(kind) {
  const q = selectedNumber(kind);
  if (!q) {
    setStatus(`select a node with a ${kind === "value" ? "value" : "gradient"} first, then ask`, true);
    return;
  }
  const r = await traceSource.askQuestion(session.code, session.token, { ...q, kind, tolerance: CLASSROOM.defaultTolerance });
  const body = r.body;
  if (!r.ok) return setStatus(`class session: ${(body.error && body.error.message) || r.status}`, true);
  showQuestionPanel({ ...body, values: [] });  // the projector hides the asked kind of number too
}

function histogram(values, truth) {
  const W = CLASSROOM.histogramWidth, H = CLASSROOM.histogramHeight, B = CLASSROOM.histogramBins;
  const all = truth == null ? values : values.concat([truth]);
  let lo = Math.min(...all), hi = Math.max(...all);
  if (!all.length) { lo = 0; hi = 1; }
  if (hi === lo) { lo -= 1; hi += 1; }
  const counts = new Array(B).fill(0);
  for (const v of values) counts[Math.min(B - 1, Math.floor(((v - lo) / (hi - lo)) * B))]++;
  const top = Math.max(1, ...counts), bw = W / B;
  let svg = `<svg viewBox="0 0 ${W} ${H + 16}" width="${W}" height="${H + 16}" role="img" aria-label="Answers: ${values.length}">`;
  counts.forEach((c, i) => {
    const h = (c / top) * H;
    svg += `<rect class="class-bar" x="${i * bw + 1}" y="${H - h}" width="${bw - 2}" height="${h}"><title>${c}</title></rect>`;
    if (c) svg += `<text x="${i * bw + bw / 2}" y="${H - h - 2}" text-anchor="middle" class="class-bar-n">${c}</text>`;
  });
  if (truth != null) {
    const x = Math.min(W - 1, Math.max(1, ((truth - lo) / (hi - lo)) * W));  // inside the box at the extremes
    svg += `<line class="class-truth" x1="${x}" x2="${x}" y1="0" y2="${H}"/>`;
  }
  const fmt = (v) => Number(v.toPrecision(3));
  svg += `<text x="0" y="${H + 13}" class="class-axis">${fmt(lo)}</text><text x="${W}" y="${H + 13}" text-anchor="end" class="class-axis">${fmt(hi)}</text></svg>`;
  return svg;
}

function showTally(t) {
  if (!session.question || t.question !== session.question.id) return;
  session.question.values = t.values;
  $("class-tally").innerHTML = histogram(t.values, session.question.status === "revealed" ? session.question.answer : null);
  $("class-tally").dataset.count = String(t.count);
  $("class-tally-count").textContent = `${t.count} answer${t.count === 1 ? "" : "s"}`;
}

async function reveal() {
  const q = session.question;
  if (!q) return;
  const r = await traceSource.revealAnswer(session.code, session.token, q.id);
  if (!r.ok) return setStatus("class session: the answer could not be revealed", true);
  Object.assign(q, r.body);
  showRevealed(q);
}

// Ending is the teacher's decision, asked twice: followers are told and the code stops working.
async function endSession() {
  $("class-end-confirm").hidden = true;
  const r = await traceSource.endSession(session.code, session.token).catch(() => ({ ok: false, status: 0, body: {} }));
  if (!r.ok && r.status !== 404) {
    return setStatus(`class session: could not end the class (${(r.body.error && r.body.error.message) || r.status}); try again`, true);
  }
  forgetSession(`class ${session.code} ended`);
}

function forgetSession(message) {
  clearInterval(session.countTimer);
  clearInterval(session.presenceTimer);
  if (session.tallyAbort) session.tallyAbort.abort();
  rememberPresenter(null);
  setRunThrough(null);
  Object.assign(session, { role: null, code: null, token: null, question: null, tallyAbort: null, shared: null, reclaimable: null });
  setMask(null);
  $("class-panel").hidden = true;
  $("class-panel").classList.remove("joined", "asking");
  $("class-question").hidden = true;
  $("class-start").setAttribute("aria-pressed", "false");
  $("class-start").setAttribute("aria-label", "Start class session");
  $("class-start").textContent = "Class";
  setStatus(message);
}

// ---------------------------------------------------------------- a class run under way

// The class's run while the server streams it (frames' "progress", null once it ended): "running…", the passes so
// far and the loss curve, in the training panel, as the teacher's own streamed run shows them. Its answer, when it
// comes, is loaded as any run (loadTrace redraws the panel from the whole run).
function showRunProgress(progress) {
  const status = $("stream-status");
  if (!progress) {
    if (document.body.classList.contains("class-running")) {
      document.body.classList.remove("class-running");
      if (session.role === "follower") document.body.classList.remove("stale-result");
      status.textContent = "";
      delete status.dataset.classPasses;
    }
    return;
  }
  document.body.classList.add("class-running");
  // the graph shown is the last run's: dimmed, as on the presenter's page (run.js) while a run is under way
  if (session.role === "follower") document.body.classList.add("stale-result");
  const n = progress.passes;
  const text = `running… · ${n} pass${n === 1 ? "" : "es"}`;
  status.textContent = session.role === "follower" ? `the teacher's program: ${text}` : `the class's run: ${text}`;
  status.dataset.classPasses = String(n);
  $("training").hidden = false;
  const losses = Array.isArray(progress.losses) ? progress.losses : [];
  state.lossChart.setData(losses.map((p) => p[0]), losses.map((p) => p[1]));
  setStatus(text);
}

// ---------------------------------------------------------------- follower

// The teacher's run, as the server answered it: loaded, never run here (a run the server no longer holds is
// the one case a follower runs the program itself).
async function loadShared(sent) {
  const r = await traceSource.sharedRun(session.code, sent.run).catch(() => ({ ok: false, status: 0 }));
  session.shared = sent.run;
  session.ranProgram = sent.program;
  if (state.editor.text !== sent.program) state.editor.text = sent.program;
  if (!r.ok) {
    if (r.status === 404) return run({ pass: sent.pass, step: sent.step, node: sent.node, noAutoplay: true, noStream: true });
    setStatus("class session: the teacher's run could not be loaded; it comes with the next one", true);
    return;
  }
  set({ lastSource: sent.program, runSeq: state.runSeq + 1 });
  stopPlaying();
  state.inspector.resetRun();
  loadTrace(r.body, { pass: sent.pass, step: sent.step, node: session.question ? null : sent.node, noAutoplay: true });
  setStatus("the teacher's run");
}

// What the teacher is typing (not run): shown as text, with the "editing…" badge.
function showDraft(sent) {
  const typing = sent.draft != null && sent.draft !== sent.program;
  $("follow-editing").hidden = !typing;
  const text = typing ? sent.draft : sent.program;
  if (text != null && state.editor.text !== text) state.editor.text = text;
}

async function apply(sent) {
  if (!sent || session.ended) return;
  if (session.applying) {  // a run is loading: apply the newest state once it is in
    session.pending = true;
    return;
  }
  session.applying = true;
  try {
    if (sent.program == null) {
      showDraft(sent);
    } else if (sent.program !== session.ranProgram || (!state.model && sent.run && sent.run !== session.shared)) {
      if (sent.run) await loadShared(sent);  // the teacher's new run: until its id comes, the last one stays
      showDraft(sent);
    } else if (sent.run && sent.run !== session.shared) {
      session.shared = sent.run;  // the same program run again: the same answer (runs are deterministic)
    } else if (state.model) {
      showDraft(sent);
      if (sent.pass !== state.passIndex) openPass(sent.pass, { step: sent.step, node: asked() ? null : sent.node, autoplay: false });
      else if (sent.step !== state.step) setStep(sent.step, { animate: true, toast: false });
      // a question open: the teacher's selection is not followed (the inspector's sheet would cover the card), and a
      // node the student opened stays open whatever the teacher does meanwhile (showQuestion closed it once)
      if (!asked() && sent.node !== state.selected) select(sent.node);
    }
    if (state.playing && !sent.playing) stopPlaying();
    set({ speed: sent.speed || state.speed });
  } finally {
    session.applying = false;
  }
  if (session.pending) {
    session.pending = false;
    if (session.following && session.latest) apply(session.latest);
  }
}

const asked = () => !!session.question && session.question.status === "open";

function bannerText() {
  const code = session.code;
  if (session.ended) return "The teacher ended the class";
  if (!session.following) return `Exploring on your own (class ${code})`;
  if (session.away) return `Waiting for the teacher… (class ${code})`;
  return `Following the teacher (class ${code})`;
}

function setFollowing(on) {
  session.following = on;
  const banner = $("follow-banner");
  banner.classList.toggle("exploring", !on);
  banner.classList.toggle("away", !!session.away && on);
  banner.classList.toggle("ended", session.ended);
  document.body.classList.toggle("class-following", on && !session.ended);
  $("follow-text").textContent = bannerText();
  $("follow-explore").hidden = !on || session.ended;
  $("follow-again").hidden = on || session.ended;
  if (on && session.latest) apply(session.latest);
}

function showQuestion(q) {
  const box = $("question-box");
  const wasOpen = asked();
  session.question = q;
  setMask(q);
  document.body.classList.toggle("class-asked", !!q);
  if (!q) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  box.dataset.questionId = q.id;
  box.dataset.status = q.status;
  $("question-label").textContent = `${q.label || (q.kind === "value" ? "the value" : "the gradient")} = ?`;
  const input = $("question-input");
  if (q.status === "open") {
    if (box.dataset.for !== q.id) {
      box.dataset.for = q.id;
      session.answered = null;
      input.value = "";
      $("question-result").textContent = "";
      $("question-result").className = "question-result";
    }
    input.disabled = false;
    $("question-send").disabled = false;
    if (!wasOpen && session.following && state.selected) select(null);  // the card, not the inspector sheet
  } else {
    input.disabled = true;
    $("question-send").disabled = true;
    const mine = session.answered;
    const right = mine != null && Math.abs(mine - q.answer) <= q.tolerance * Math.max(1, Math.abs(q.answer));
    const truth = Number(q.answer.toPrecision(6));
    $("question-result").textContent = mine == null ? `The answer: ${truth}` :
      right ? `Right! The answer: ${truth}` : `Not quite: you said ${mine}, the answer is ${truth}`;
    $("question-result").className = "question-result " + (mine == null ? "" : right ? "right" : "wrong");
  }
}

// "−3,5" and "-3.5" are the same answer: a phone's minus sign and decimal comma are read as typed.
export function parseAnswer(text) {
  const t = String(text).trim().replace(/[−–]/g, "-").replace(/^(-?\d+),(\d+)$/, "$1.$2");
  if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return NaN;
  return parseFloat(t);
}

async function sendAnswer(e) {
  e.preventDefault();
  const q = session.question;
  const value = parseAnswer($("question-input").value);
  if (!q) return;
  if (!Number.isFinite(value)) {
    $("question-result").textContent = "a number, please (e.g. -1.5)";
    $("question-result").className = "question-result wrong";
    return;
  }
  let r = await traceSource.sendAnswer(session.code, q.id, await followerToken(session.code), value);
  if (r.status === 403) {  // a token the server no longer knows (it restarted with a new key): join again
    r = await traceSource.sendAnswer(session.code, q.id, await followerToken(session.code, true), value);
  }
  const body = r.body;
  if (r.ok) {
    session.answered = value;
    $("question-result").textContent = `Sent: ${value} (you can change it until the answer is revealed)`;
    $("question-result").className = "question-result";
  } else {
    $("question-result").textContent = (body.error && body.error.message) || "not sent";
  }
}

function classEnded() {
  session.ended = true;
  if (session.source) session.source.close();
  session.source = null;
  showQuestion(null);
  $("follow-editing").hidden = true;
  setFollowing(false);  // the page is theirs now: nothing more comes
  setStatus("The teacher ended the class");
}

async function follow(code, fresh = false) {
  Object.assign(session, { role: "follower", code });
  document.body.classList.add("class-follower");
  $("follow-banner").hidden = false;
  // phones and tablets: the graph gets the room, the code is a tap away
  if (matchMedia("(max-width: 900px)").matches) $("layout").classList.add("no-editor");
  setFollowing(true);
  let token;
  try {
    token = await followerToken(code, fresh);
  } catch (err) {
    $("follow-text").textContent = `Cannot join class ${code}: ${err.message}`;
    return;
  }
  const es = traceSource.followSession(code, token);
  session.source = es;
  es.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    if (ev.ended) return classEnded();
    session.latest = ev.state;
    session.seq = ev.seq;
    if (!!ev.away !== !!session.away) {
      session.away = !!ev.away;
      setFollowing(session.following);
    }
    showQuestion(ev.question);
    if (session.following) {
      showRunProgress(ev.progress || null);
      apply(ev.state);
    }
  };
  es.onerror = () => {
    if (session.ended) return;
    $("follow-text").textContent = `Reconnecting to class ${code}…`;
    // refused for good (EventSource gives up on a 4xx, e.g. a token from before a server restart): join again
    if (es.readyState === EventSource.CLOSED && !fresh) {
      session.source = null;
      setTimeout(() => follow(code, true), 1000);
    }
  };
  es.onopen = () => setFollowing(session.following);
}

function toggleCode() {
  const hidden = $("layout").classList.toggle("no-editor");
  $("follow-code").setAttribute("aria-pressed", String(!hidden));
}

export async function bindClassroom() {
  $("class-start").addEventListener("click", () => {
    if (session.role === "presenter") $("class-panel").hidden = !$("class-panel").hidden;
    else if (session.reclaimable) becomePresenter(session.reclaimable);
    else startSession();
  });
  $("class-hide").addEventListener("click", () => ($("class-panel").hidden = true));
  $("class-end").addEventListener("click", () => {
    $("class-end-confirm").hidden = false;
    $("class-end-no").focus();
  });
  $("class-end-no").addEventListener("click", () => ($("class-end-confirm").hidden = true));
  $("class-end-yes").addEventListener("click", endSession);
  $("class-ask-value").addEventListener("click", () => ask("value"));
  $("class-ask-grad").addEventListener("click", () => ask("gradient"));
  $("class-reveal").addEventListener("click", reveal);
  $("follow-explore").addEventListener("click", () => setFollowing(false));
  $("follow-again").addEventListener("click", () => setFollowing(true));
  $("follow-code").addEventListener("click", toggleCode);
  $("question-box").addEventListener("submit", sendAnswer);
  subscribe(SENT_FIELDS, classStateChanged);
  // the presenter's page closing: its followers hear it at once (a request that outlives the page)
  window.addEventListener("pagehide", () => session.role === "presenter" && traceSource.presence(session.code, session.token, false).catch(() => {}));
  const code = document.body.dataset.followCode;
  if (code) {
    const r = await traceSource.sessionInfo(code);
    if (!r.ok) {  // the page stays empty: running something else would look like the teacher's program
      setStatus(`No class session ${code}: it may have ended.`, true);
      $("follow-banner").hidden = false;
      $("follow-text").textContent = `No class session ${code}: check the code, or ask your teacher for a new one.`;
      $("follow-explore").hidden = true;
      return true;
    }
    follow(r.body.code);
    return true;
  }
  const reclaiming = reclaim();
  if (storedPresenter(sessionStorage)) await reclaiming;  // this tab presents: its first run is the class's
  return false;
}
