// The program editor: CodeMirror 6 with Python, Ctrl/Cmd+Enter runs, errors marked at their line.
import {
  EditorView, basicSetup, EditorState, Compartment, keymap, python, oneDark, setDiagnostics, indentWithTab,
  StateEffect, StateField, Decoration,
} from "../vendor/codemirror.js";

import { PAGE } from "./config.js";

const STEP_LINES_MAX = PAGE.stepLinesMax;
const setErrorLine = StateEffect.define();
const setStepLine = StateEffect.define();
// the line that produced the step shown in the graph (soft highlight)
const stepLineField = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(setStepLine)) continue;
      // a line, or [first, last]: the lines of a program function the engine ran (hook, custom backward)
      const [a, b] = Array.isArray(e.value) ? e.value : [e.value, e.value];
      if (a == null || a < 1 || a > tr.state.doc.lines) deco = Decoration.none;
      else {
        const last = Math.min(Math.max(a, b), tr.state.doc.lines, a + STEP_LINES_MAX);
        const marks = [];
        for (let n = a; n <= last; n++) marks.push(Decoration.line({ class: "cm-step-line" }).range(tr.state.doc.line(n).from));
        deco = Decoration.set(marks);
      }
    }
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});
const errorLineField = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (e.is(setErrorLine)) {
        if (e.value == null) deco = Decoration.none;
        else {
          const line = tr.state.doc.line(Math.max(1, Math.min(e.value, tr.state.doc.lines)));
          deco = Decoration.set([Decoration.line({ class: "cm-error-line" }).range(line.from)]);
        }
      }
    }
    if (tr.docChanged) deco = Decoration.none;
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export class Editor {
  constructor(parent, { onRun, onChange } = {}) {
    this.themeC = new Compartment();
    this.fontC = new Compartment();
    const run = () => {
      onRun && onRun();
      return true;
    };
    this.view = new EditorView({
      parent,
      state: EditorState.create({
        doc: "",
        extensions: [
          keymap.of([{ key: "Mod-Enter", run, preventDefault: true }, { key: "Shift-Enter", run }, indentWithTab]),
          basicSetup,
          python(),
          EditorView.lineWrapping,
          errorLineField,
          stepLineField,
          this.themeC.of([]),
          EditorView.updateListener.of((u) => u.docChanged && onChange && onChange(this.text)),
          // the way out is said on screen (#editor-keys) and to screen readers
          EditorView.contentAttributes.of({ "aria-label": "Program editor", "aria-describedby": "editor-keys" }),
        ],
      }),
    });
  }

  get text() {
    return this.view.state.doc.toString();
  }

  set text(value) {
    this.view.dispatch({ changes: { from: 0, to: this.view.state.doc.length, insert: value } });
  }

  setTheme(theme) {
    this.view.dispatch({ effects: this.themeC.reconfigure(theme === "dark" ? oneDark : []) });
  }

  showError(err) {
    if (!err || !err.line) {
      this.clearError();
      return;
    }
    const doc = this.view.state.doc;
    const line = doc.line(Math.max(1, Math.min(err.line, doc.lines)));
    const from = Math.min(line.to, line.from + Math.max(0, err.column || 0));
    this.view.dispatch(
      setDiagnostics(this.view.state, [{ from, to: Math.max(from, line.to), severity: "error", message: `${err.type}: ${err.message}` }]),
    );
    this.view.dispatch({ effects: setErrorLine.of(err.line) });
  }

  clearError() {
    this.view.dispatch(setDiagnostics(this.view.state, []));
    this.view.dispatch({ effects: setErrorLine.of(null) });
  }

  goToLine(n) {
    const doc = this.view.state.doc;
    const line = doc.line(Math.max(1, Math.min(n, doc.lines)));
    this.view.dispatch({ selection: { anchor: line.from }, scrollIntoView: true });
    this.view.focus();
  }

  highlightLine(n) {
    const key = Array.isArray(n) ? n.join("-") : n;
    if (this._hl === key) return;
    this._hl = key;
    this.view.dispatch({ effects: setStepLine.of(n ?? null) });
  }

  lineText(n) {
    const doc = this.view.state.doc;
    return n >= 1 && n <= doc.lines ? doc.line(n).text : "";
  }

  focus() {
    this.view.focus();
  }
}
