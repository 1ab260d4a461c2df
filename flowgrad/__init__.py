"""flowgrad in Python and notebooks: ``flowgrad.trace(source)`` and the ``%%flowgrad`` cell magic (``%load_ext flowgrad``).

The program runs in the server's own worker and sandbox (``flowgrad/runner.py``); the trace shows as the page's
graph, transport and inspector in an anywidget (``flowgrad/widget.py``)."""

from flowgrad.tracing import Trace, trace

__all__ = ["Trace", "trace", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython) -> None:
    """``%load_ext flowgrad``: registers the ``%%flowgrad`` cell magic."""
    from flowgrad.magic import FlowgradMagics

    ipython.register_magics(FlowgradMagics)


def unload_ipython_extension(ipython) -> None:
    """``%unload_ext flowgrad``: removes the ``%%flowgrad`` cell magic."""
    ipython.magics_manager.magics["cell"].pop("flowgrad", None)
