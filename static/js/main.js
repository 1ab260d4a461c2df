// The page's wiring: creates the components, connects them to the modules that do the jobs, boots.
import { exportAnimation } from "./animation.js";
import { traceSource } from "./api.js";
import { DURATIONS, PAGE, SPEEDS } from "./config.js";
import { bindClassroom, classSession } from "./classroom.js";
import { $, setStatus } from "./dom.js";
import { Editor } from "./editor.js";
import { bindExport } from "./export.js";
import { checkGradient } from "./fdcheck.js";
import { bindGallery, loadExamples, updateExampleTitle } from "./gallery.js";
import { GraphView } from "./graph.js";
import { Inspector } from "./inspector.js";
import { bindKeyboard } from "./keyboard.js";
import "./minimap.js";
import "./search.js";
import "./breadcrumbs.js";
import { applyLook, bindLook, graphInsets, projectorRoom } from "./look.js";
import { LossChart } from "./losschart.js";
import { offlineView } from "./offline.js";
import { bindTransport, nearestGraphPass, openPass, play, setStep, stopPlaying } from "./player.js";
import { bindRun, run } from "./run.js";
import { select } from "./selection.js";
import { bindShare } from "./share.js";
import { set, state, testHandle } from "./store.js";
import { decodeProgram, readUrl } from "./urlstate.js";
import { loadTrace } from "./views.js";

const OFFLINE = traceSource.offline;

// the state, and for the tests and the benchmark the page's main actions
window.__fg = testHandle({ run, setStep, openPass, select, loadTrace, play, stopPlaying, exportAnimation, classroom: classSession });

function initComponents() {
  const graph = new GraphView($("graph"), { onSelect: (id) => select(id) });
  graph.onViewChange = (out) => $("zoom-fit").classList.toggle("attention", out);
  graph.getInsets = graphInsets;
  graph.runAgain = () => run();  // a folded pass whose run left the server's store
  const editor = new Editor($("editor"), {
    onRun: () => {
      if (OFFLINE) return;  // an offline copy has no server to run on
      run();
      // Ctrl+Enter: the keys now drive the player (Space plays), they no longer type into the program
      $("graph-wrap").focus({ preventScroll: true });
    },
    onChange: (text) => {
      updateExampleTitle(text);
      set({ program: text });
    },
  });
  const inspector = new Inspector($("inspector"), {
    onCheckGradient: (id) => checkGradient({
      trace: state.trace, model: state.model, nodeId: id, source: state.lastSource, run: (src) => traceSource.run(src),
    }),
    onGoToLine: (n) => editor.goToLine(n),
    onClose: () => select(null),
  });
  // the pass clicked, whatever it is: a middle pass is recorded on demand
  const lossChart = new LossChart($("loss-chart"), {
    onPick: (x) => openPass(state.trace && state.trace.passes[Math.round(x)] ? Math.round(x) : nearestGraphPass(x)),
  });
  set({ editor, graph, inspector, lossChart });
}

function bindControls() {
  if (!OFFLINE) bindRun();
  bindTransport();
  bindLook();
  bindShare();
  bindExport();
  bindGallery();
  bindKeyboard();
  $("toggle-editor").addEventListener("click", () => {
    const hidden = $("layout").classList.toggle("no-editor");
    $("toggle-editor").setAttribute("aria-pressed", String(!hidden));
    $("toggle-editor").setAttribute("aria-label", hidden ? "Show program editor" : "Hide program editor");
  });
  $("zoom-in").addEventListener("click", () => state.graph.zoomBy(PAGE.zoomStep));
  $("zoom-out").addEventListener("click", () => state.graph.zoomBy(1 / PAGE.zoomStep));
  // the explicit overview: the page opens readable on the step, this shows all of it
  $("zoom-fit").addEventListener("click", () => state.graph.overview());
  $("graph").addEventListener("click", (e) => {
    if (e.target.closest("[data-node-id]") == null && state.selected) select(null);
  });
  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => state.graph.fit(false), DURATIONS.resize);
  });
}

async function boot() {
  const url = readUrl();
  const saved = OFFLINE && offlineView(url);
  if (saved) Object.assign(url, { theme: url.theme || saved.theme, projector: url.projector || saved.projector, node: saved.node });
  set({
    themeFromUrl: !!url.theme,
    theme: url.theme || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"),
    projector: url.projector,
    speed: SPEEDS.includes(url.speed) ? url.speed : 1,
  });
  initComponents();
  $("layout").classList.toggle("no-inspector", !url.node);
  if (state.projector) projectorRoom();
  applyLook();
  document.documentElement.classList.remove("fg-loading");
  bindControls();
  if (saved) return showRecorded(saved);
  const examplesReady = loadExamples();
  if (await bindClassroom()) {  // a follower's page (/s/CODE): the teacher's states drive it
    state.editor.text = "";
    await examplesReady;
    return;
  }
  let source = await decodeProgram(url.program);
  await examplesReady;
  if (source == null) {
    const ex = state.examples.find((e) => e.id === url.example) || (url.program ? null : state.examples[0]);
    if (ex) {
      set({ exampleId: ex.id });
      source = ex.source;
    }
  }
  state.editor.text = source || "import torch\n\nx = torch.tensor(2.0, requires_grad=True)\ny = (x + 1) ** 2\ny.backward()\nprint(x.grad)\n";
  updateExampleTitle(state.editor.text);
  const fromLink = url.program != null || url.example != null;
  await run({ pass: url.pass, step: url.step, node: url.node, noAutoplay: fromLink && url.step != null });
}

// The offline file: the run recorded in it, at the view it was saved at (or its reader's bookmark).
function showRecorded(view) {
  const { source, trace } = traceSource.recordedRun();
  set({ lastSource: source });
  state.editor.text = source;
  updateExampleTitle(source);
  loadTrace(trace, { pass: view.pass, step: view.step, node: view.node, noAutoplay: view.step != null });
  setStatus("recorded · offline copy", !!trace.error);
}

boot();
