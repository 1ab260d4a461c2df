"""``%%flowgrad``: the cell's program run as the page runs it; its output printed, its graph shown as the widget."""

from __future__ import annotations

import sys

from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from flowgrad.tracing import trace


@magics_class
class FlowgradMagics(Magics):
    @magic_arguments()
    @argument("--values", choices=("full", "summary"), default="full", help="variables in full or summarised")
    @argument("--height", type=int, default=None, help="the widget's height in pixels")
    @argument("--no-widget", action="store_true", help="print the output only")
    @argument("name", nargs="?", help="also bind the Trace to this name in the notebook")
    @cell_magic
    def flowgrad(self, line: str, cell: str):
        """Run the cell's PyTorch program on flowgrad's engine (``import torch`` is the engine, in the sandbox):
        print what it prints, show its error with the line, and show the graph to step forward and backward."""
        args = parse_argstring(self.flowgrad, line)
        t = trace(cell, values=args.values)
        sys.stdout.write(t.stdout)  # exactly the program's print output, as PyTorch prints it
        sys.stdout.flush()
        if t.error:
            sys.stderr.write(t.error_text() + "\n")
            sys.stderr.flush()
        if args.name:
            self.shell.user_ns[args.name] = t
        if not args.no_widget:
            t.height = args.height
            display(t)
