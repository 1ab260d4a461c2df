// Share: the URL hash follows the program, pass, step and node shown; copy link, copy program.
import { classStateChanged } from "./classroom.js";
import { DURATIONS } from "./config.js";
import { $, app, setStatus } from "./state.js";
import { encodeProgram, shareUrl, writeUrl } from "./urlstate.js";

let urlTimer = null;
let encodedFor = null, encoded = null;

export function scheduleUrl() {
  classStateChanged();  // a class session's followers see every change, not only the URL
  clearTimeout(urlTimer);
  urlTimer = setTimeout(updateUrl, DURATIONS.urlWrite);
}

async function currentUrlState() {
  const text = app.editor.text;
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

export function bindShare() {
  $("copy-link").addEventListener("click", async () => copyText(shareUrl(await currentUrlState()), "Link"));
  $("copy-program").addEventListener("click", () => copyText(app.editor.text, "Program"));
}
