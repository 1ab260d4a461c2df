// The page's state: every field declared here with its initial value; `state` reads, `set(patch)` writes,
// `subscribe(keys, fn)` follows changes (the URL and a class session are subscribers). Imports nothing.

const FIELDS = {
  // ---- the run shown
  trace: null,            // the trace shown (docs/trace.md); a streamed run's grows as its pieces come
  runSeq: 0,              // bumped by every run and cancel: the answers of an older run are ignored
  lastSource: null,       // the program text the trace shown was recorded from (null before the first run)
  program: "",            // the editor's text, set on every edit (the URL and a class session follow it)
  streamPaused: false,    // the user paused a long run's stream: its messages wait until resumed
  // ---- the pass shown
  model: null,            // the open pass's PassModel (replay.js); null when the run built no graph
  passIndex: 0,           // the open pass's index in trace.passes
  step: 0,                // the timeline's step: 0 nothing run, model.resultStep the pass's result
  playing: false,         // the player is stepping on its own
  speed: 1,               // playback speed, one of SPEEDS (config.js)
  selected: null,         // the node open in the inspector (its id), null when none
  // ---- the look
  theme: "light",         // "light" | "dark"
  themeFromUrl: false,    // the theme was chosen (a link, the button), not the system's: the URL keeps it
  projector: false,       // projector mode: bigger text, thicker lines, the code pane folded away
  // ---- the examples
  examples: [],           // GET /api/examples: [{id, title, source}]
  exampleId: null,        // the example last loaded (its title names the program while it resembles it)
  // ---- measured for the benchmark (bench/page.py)
  metrics: { runs: [], current: null },  // runs: ms to the first frame of each run; current: the run under way
  // ---- the components, set once by main.js
  editor: null,           // Editor (editor.js)
  graph: null,            // GraphView (graph.js)
  inspector: null,        // Inspector (inspector.js)
  lossChart: null,        // LossChart (losschart.js)
};

export const FIELD_NAMES = Object.freeze(Object.keys(FIELDS));

const values = { ...FIELDS };
const subscribers = [];  // {keys: Set, fn}

// Read-only: a field is written with set(), never assigned (an assignment throws in a module, strict mode).
export const state = Object.freeze(Object.defineProperties({}, Object.fromEntries(
  FIELD_NAMES.map((key) => [key, { get: () => values[key], enumerable: true }]))));

// Writes the fields of `patch`; each subscriber to a field that changed is called once, with the changed keys.
export function set(patch) {
  const changed = [];
  for (const [key, value] of Object.entries(patch)) {
    if (!(key in FIELDS)) throw new Error(`store: ${key} is not a declared field (static/js/store.js)`);
    if (values[key] === value) continue;
    values[key] = value;
    changed.push(key);
  }
  if (!changed.length) return;
  for (const sub of subscribers.slice()) if (changed.some((k) => sub.keys.has(k))) sub.fn(changed, state);
}

// Calls fn(changedKeys, state) after every set() that changes one of `keys`; returns the unsubscribe.
export function subscribe(keys, fn) {
  for (const key of keys) if (!(key in FIELDS)) throw new Error(`store: cannot subscribe to ${key}: not a declared field`);
  const sub = { keys: new Set(keys), fn };
  subscribers.push(sub);
  return () => subscribers.splice(subscribers.indexOf(sub), 1);
}

// window.__fg for the tests and the benchmark: each field (reading it, assigning it goes through set) and
// `extras` (the page's main actions), as before the store.
export function testHandle(extras) {
  const handle = { ...extras };
  for (const key of FIELD_NAMES) {
    Object.defineProperty(handle, key, { get: () => values[key], set: (value) => set({ [key]: value }), enumerable: true });
  }
  return handle;
}
