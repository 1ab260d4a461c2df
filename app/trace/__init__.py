"""Recorder events → the API trace (``build``), folded passes (``hierarchy``, ``folded``, ``payloads``), the
pass policy shared with the recorder (``policy``) and the answer budget (``budget``). Import the modules
themselves: this package loads nothing, so the server process takes only what it uses (``payloads``)."""
