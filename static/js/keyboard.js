// Keyboard shortcuts on the page (outside the editor and form fields): transport, passes, fit, close.
import { $ } from "./dom.js";
import { jumpTo, stepBy, stepPass, togglePlay } from "./player.js";
import { cancelRun } from "./run.js";
import { select } from "./selection.js";
import { state } from "./store.js";

// key -> [action, prevent the browser's default (scrolling)]
const KEYS = {
  " ": [togglePlay, true],
  ArrowRight: [() => stepBy(1), true],
  ArrowLeft: [() => stepBy(-1), true],
  Home: [() => jumpTo(false), true],
  End: [() => jumpTo(true), true],
  f: [() => state.graph.overview(), false],
  PageDown: [() => stepPass(1), true],
  PageUp: [() => stepPass(-1), true],
  Escape: [() => ($("run").disabled ? cancelRun() : select(null)), false],
};

export function bindKeyboard() {
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || $("gallery").open) return;
    const t = e.target;
    if (t.closest && t.closest(".cm-editor")) return;
    const tag = (t.tagName || "").toLowerCase();
    const formish = tag === "input" || tag === "select" || tag === "textarea";
    if (formish) return;
    const key = KEYS[e.key];
    if (!key || (e.key === " " && (tag === "button" || tag === "a"))) return;
    if (key[1]) e.preventDefault();
    key[0]();
  });
}
