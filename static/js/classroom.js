// Class sessions: the presenter's page sends its state (program, pass, step, selected node, playing…)
// to the server; followers' pages (/s/CODE) apply every state they receive; questions at a node
// with the class's answers as a live histogram. The HTTP contract is docs/classroom.md.
import qrcode from "../vendor/qrcode.js";
import { traceSource } from "./api.js";
import { CLASSROOM } from "./config.js";
import { $, setStatus } from "./dom.js";
import { flat } from "./values.js";
import { openPass, setStep, stopPlaying } from "./player.js";
import { run } from "./run.js";
import { select } from "./selection.js";
import { set, state, subscribe } from "./store.js";

// what a presenter sends its class (presenterState): a change to any of them goes out
const SENT_FIELDS = ["program", "model", "passIndex", "step", "selected", "playing", "speed"];

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

function presenterState() {
  return {
    program: state.editor.text,
    run: state.runSeq,
    pass: state.model ? state.passIndex : 0,
    step: state.model ? state.step : 0,
    node: state.selected,
    playing: !!state.playing,
    speed: state.speed,
  };
}

async function postState() {
  session.postTimer = null;
  session.lastPost = performance.now();
  try {
    const r = await traceSource.postSessionState(session.code, session.token, presenterState());
    if (!r.ok) setStatus(`class session: ${(r.body.error && r.body.error.message) || r.status}`, true);
  } catch (_) {
    setStatus("class session: the server cannot be reached; followers keep the last state", true);
  }
}

// Called whenever what the page shows changes (a store subscriber): throttled, the last state always goes out.
function classStateChanged() {
  if (session.role !== "presenter" || session.postTimer) return;
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
    }
  } catch (_) { /* keep the last count */ }
}

async function startSession() {
  const r = await traceSource.startSession();
  const body = r.body;
  if (!r.ok) {
    setStatus(`class session: ${(body.error && body.error.message) || r.status}`, true);
    return;
  }
  Object.assign(session, { role: "presenter", code: body.code, token: body.presenter_token });
  const panel = $("class-panel");
  panel.hidden = false;
  $("class-code").textContent = body.code;
  $("class-code").dataset.joinCode = body.code;
  $("class-code").setAttribute("data-join-code", body.code);
  $("class-url").textContent = body.join_url;
  $("class-qr").innerHTML = drawQr(body.join_url);
  $("class-start").setAttribute("aria-pressed", "true");
  $("class-start").textContent = "Class " + body.code;
  refreshCount();
  session.countTimer = setInterval(refreshCount, CLASSROOM.countPollMs);
  openTally();
  postState();
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
  const st = state.model.stateAt(state.model.steps.length).nodes.get(state.selected);
  const node = state.model.graph.nodes.find((n) => n.id === state.selected);
  const v = st && (kind === "value" ? st.value : st.grad);
  const f = flat(v);
  if (!node || v == null || !f.data.length || !Number.isFinite(f.data[0])) return null;
  const name = node.name || node.label || node.id;
  const element = f.shape.length ? `${name}[${f.shape.map(() => 0).join(", ")}]` : name;
  return { answer: f.data[0], label: kind === "value" ? element : `∂L/∂${element}`, node: state.selected };
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
  session.question = body;
  $("class-question").hidden = false;
  $("class-question-label").textContent = `${body.label} = ?`;
  $("class-answer").textContent = "";
  $("class-reveal").disabled = false;
  showTally({ question: body.id, count: 0, values: [] });
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
  $("class-reveal").disabled = true;
  $("class-answer").textContent = `answer: ${Number(q.answer.toPrecision(6))}`;
  showTally({ question: q.id, count: q.values.length, values: q.values });
}

function endSession() {
  clearInterval(session.countTimer);
  if (session.tallyAbort) session.tallyAbort.abort();
  Object.assign(session, { role: null, code: null, token: null, question: null, tallyAbort: null });
  $("class-panel").hidden = true;
  $("class-start").setAttribute("aria-pressed", "false");
  $("class-start").textContent = "Class";
}

// ---------------------------------------------------------------- follower

async function apply(sent) {
  if (session.applying) {  // a run is in flight: apply the newest state once it is done
    session.pending = true;
    return;
  }
  session.applying = true;
  try {
    if (sent.program !== session.ranProgram || sent.run !== session.ranRun || !state.model) {
      session.ranProgram = sent.program;
      session.ranRun = sent.run;
      if (state.editor.text !== sent.program) state.editor.text = sent.program;
      await run({ pass: sent.pass, step: sent.step, node: sent.node, noAutoplay: true, noStream: true });
    } else {
      if (sent.pass !== state.passIndex) openPass(sent.pass, { step: sent.step, node: sent.node, autoplay: false });
      else if (sent.step !== state.step) setStep(sent.step, { animate: true, toast: false });
      if (sent.node !== state.selected) select(sent.node);
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

function setFollowing(on) {
  session.following = on;
  $("follow-banner").classList.toggle("exploring", !on);
  $("follow-text").textContent = on ? `Following the teacher (class ${session.code})` : `Exploring on your own (class ${session.code})`;
  $("follow-explore").hidden = !on;
  $("follow-again").hidden = on;
  if (on && session.latest) apply(session.latest);
}

function showQuestion(q) {
  const box = $("question-box");
  session.question = q;
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
    }
    input.disabled = false;
    $("question-send").disabled = false;
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

async function sendAnswer(e) {
  e.preventDefault();
  const q = session.question;
  const value = parseFloat($("question-input").value);
  if (!q || !Number.isFinite(value)) return;
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

async function follow(code, fresh = false) {
  Object.assign(session, { role: "follower", code });
  $("follow-banner").hidden = false;
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
    session.latest = ev.state;
    session.seq = ev.seq;
    showQuestion(ev.question);
    if (session.following) apply(ev.state);
  };
  es.onerror = () => {
    $("follow-text").textContent = `Reconnecting to class ${code}…`;
    // refused for good (EventSource gives up on a 4xx, e.g. a token from before a server restart): join again
    if (es.readyState === EventSource.CLOSED && !fresh) {
      session.source = null;
      setTimeout(() => follow(code, true), 1000);
    }
  };
  es.onopen = () => setFollowing(session.following);
}

export async function bindClassroom() {
  $("class-start").addEventListener("click", () => (session.role === "presenter" ? ($("class-panel").hidden = !$("class-panel").hidden) : startSession()));
  $("class-end").addEventListener("click", endSession);
  $("class-ask-value").addEventListener("click", () => ask("value"));
  $("class-ask-grad").addEventListener("click", () => ask("gradient"));
  $("class-reveal").addEventListener("click", reveal);
  $("follow-explore").addEventListener("click", () => setFollowing(false));
  $("follow-again").addEventListener("click", () => setFollowing(true));
  $("question-box").addEventListener("submit", sendAnswer);
  subscribe(SENT_FIELDS, classStateChanged);
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
  return false;
}
