"""A run the presenter's page already streamed, as the answer followers load (issue 24: starting a class, or
sharing a program the page just ran, is not one more run).

A streamed run's events hold its whole answer: each ``pass`` event (a pass sent again with the same ``index``
replaces the first: the summary of a training loop's pass, then its full graph) and ``done`` (every other
field of the answer). ``answer_of_events`` puts them together as ``POST /api/run`` answers the same run.
"""

from __future__ import annotations

import orjson

from app.core.answer import EVENT_SEPARATOR


def answer_of_events(events: bytes) -> bytes | None:
    """The answer of one complete streamed run (its events, one JSON per line); None when they are not one
    (no ``done`` last, a line that is not an event, a pass without an index)."""
    passes: dict[int, dict] = {}
    done = None
    for line in events.split(EVENT_SEPARATOR):
        if done is not None:
            return None  # anything after done: not one run's events
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(event, dict):
            return None
        kind = event.get("type")
        if kind == "pass":
            shown = event.get("pass")
            index = shown.get("index") if isinstance(shown, dict) else None
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                return None
            passes[index] = shown
        elif kind == "done":
            done = event
    if done is None:
        return None
    answer = {k: v for k, v in done.items() if k != "type"}
    answer["passes"] = [passes[i] for i in sorted(passes)]
    return orjson.dumps(answer)
