"""``FlowgradWidget``: the page's graph, transport and inspector in a notebook (anywidget: JupyterLab, Notebook 7,
VS Code, Colab). Its ES module is built from the page's own modules (``flowgrad/page.py``); the trace is a traitlet."""

from __future__ import annotations

import anywidget
import traitlets

from flowgrad.page import widget_esm


class FlowgradWidget(anywidget.AnyWidget):
    _esm = widget_esm()
    trace = traitlets.Unicode("{}", help="the trace as JSON text: exactly what POST /api/run answers").tag(sync=True)
    source = traitlets.Unicode("", help="the program, shown in the page's editor").tag(sync=True)
    view = traitlets.Dict(help="where it opens: {pass, step, node, theme: 'light'|'dark', projector}").tag(sync=True)
    height = traitlets.Int(620, help="the widget's height in pixels").tag(sync=True)
