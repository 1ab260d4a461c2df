// Share: the URL hash follows the program, pass, step and node shown (a store subscriber); copy link, copy program.
import { DURATIONS } from "./config.js";
import { $, setStatus } from "./dom.js";
import { state, subscribe } from "./store.js";
import { encodeProgram, shareUrl, writeUrl } from "./urlstate.js";

// the fields the URL is made of (urlstate.js PROPS)
const URL_FIELDS = ["program", "examples", "exampleId", "model", "passIndex", "step", "selected", "speed", "projector", "theme", "themeFromUrl"];

let urlTimer = null;
let encodedFor = null, encoded = null;

function scheduleUrl() {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(updateUrl, DURATIONS.urlWrite);
}

async function currentUrlState() {
  const text = state.editor.text;
  const ex = state.examples.find((e) => e.id === state.exampleId);
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
    pass: state.model ? state.passIndex : 0,
    step: state.model && state.step !== state.model.resultStep ? state.step : null,
    node: state.selected,
    speed: state.speed,
    projector: state.projector,
    theme: state.themeFromUrl ? state.theme : null,
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

export function bindShare() {
  subscribe(URL_FIELDS, scheduleUrl);
  $("copy-link").addEventListener("click", async () => copyText(shareUrl(await currentUrlState()), "Link"));
  $("copy-program").addEventListener("click", () => copyText(state.editor.text, "Program"));
}
