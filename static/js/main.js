// The page's wiring: creates the components, connects them to the modules that do the jobs, boots.
import { DURATIONS, PAGE, SPEEDS } from "./config.js";
import { runProgram } from "./api.js";
import { bindClassroom } from "./classroom.js";
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
import { OFFLINE, offlineView, showRecorded } from "./offline.js";
import { bindTransport, nearestGraphPass, openPass, play, setStep, stopPlaying } from "./player.js";
import { bindRun, run } from "./run.js";
import { select } from "./selection.js";
import { bindShare, scheduleUrl } from "./share.js";
import { $, app } from "./state.js";
import { decodeProgram, readUrl } from "./urlstate.js";
import { loadTrace } from "./views.js";

function initComponents() {
  const graph = new GraphView($("graph"), { onSelect: (id) => select(id) });
  graph.onViewChange = (out) => $("zoom-fit").classList.toggle("attention", out);
  graph.getInsets = graphInsets;
  const editor = new Editor($("editor"), {
    onRun: () => {
      if (OFFLINE) return;  // an offline copy has no server to run on
      run();
      // Ctrl+Enter: the keys now drive the player (Space plays), they no longer type into the program
      $("graph-wrap").focus({ preventScroll: true });
    },
    onChange: (text) => {
      updateExampleTitle(text);
      scheduleUrl();
    },
  });
  const inspector = new Inspector($("inspector"), {
    onCheckGradient: (id) => checkGradient({
      trace: app.trace, model: app.model, nodeId: id, source: app.lastSource, run: (src) => runProgram(src),
    }),
    onGoToLine: (n) => editor.goToLine(n),
    onClose: () => select(null),
  });
  // the pass clicked, whatever it is: a middle pass is recorded on demand
  const lossChart = new LossChart($("loss-chart"), {
    onPick: (x) => openPass(app.trace && app.trace.passes[Math.round(x)] ? Math.round(x) : nearestGraphPass(x)),
  });
  // the components, and for the tests and the benchmark (window.__fg) the page's main actions
  Object.assign(app, { editor, graph, inspector, lossChart, run, setStep, openPass, select, loadTrace, play, stopPlaying });
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
  $("zoom-in").addEventListener("click", () => app.graph.zoomBy(PAGE.zoomStep));
  $("zoom-out").addEventListener("click", () => app.graph.zoomBy(1 / PAGE.zoomStep));
  $("zoom-fit").addEventListener("click", () => {
    // a second press shows the whole graph even when it is too big to read
    app.graph.forceWhole = app.graph.lastFitWasReadable === true;
    app.graph.fit();
  });
  $("graph").addEventListener("click", (e) => {
    if (e.target.closest("[data-node-id]") == null && app.selected) select(null);
  });
  window.addEventListener("resize", () => {
    clearTimeout(app.resizeTimer);
    app.resizeTimer = setTimeout(() => app.graph.fit(false), DURATIONS.resize);
  });
}

async function boot() {
  const url = readUrl();
  const saved = OFFLINE && offlineView(url);
  if (saved) Object.assign(url, { theme: url.theme || saved.theme, projector: url.projector || saved.projector, node: saved.node });
  app.themeFromUrl = !!url.theme;
  app.theme = url.theme || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
  app.projector = url.projector;
  app.speed = SPEEDS.includes(url.speed) ? url.speed : 1;
  initComponents();
  $("layout").classList.toggle("no-inspector", !url.node);
  if (app.projector) projectorRoom();
  applyLook();
  document.documentElement.classList.remove("fg-loading");
  bindControls();
  if (saved) return showRecorded({ loadTrace, updateExampleTitle }, saved);
  const examplesReady = loadExamples();
  if (await bindClassroom()) {  // a follower's page (/s/CODE): the teacher's states drive it
    app.editor.text = "";
    await examplesReady;
    return;
  }
  let source = await decodeProgram(url.program);
  await examplesReady;
  if (source == null) {
    const ex = app.examples.find((e) => e.id === url.example) || (url.program ? null : app.examples[0]);
    if (ex) {
      app.exampleId = ex.id;
      source = ex.source;
    }
  }
  app.editor.text = source || "import torch\n\nx = torch.tensor(2.0, requires_grad=True)\ny = (x + 1) ** 2\ny.backward()\nprint(x.grad)\n";
  updateExampleTitle(app.editor.text);
  const fromLink = url.program != null || url.example != null;
  await run({ pass: url.pass, step: url.step, node: url.node, noAutoplay: fromLink && url.step != null });
}

boot();
