"""The answer's shape is written once (app/core/answer.py); the API schema (app/api/schemas.py ``Trace``) and
the answers the server sends say the same."""

from __future__ import annotations

import orjson

from app.api.schemas import Trace
from app.core.answer import ANSWER_KEYS, TIMING_KEYS, failed_answer, run_answer, stamp_timing
from app.core.problems import problem


def _finished(**kw) -> dict:
    answer = run_answer(**kw)
    stamp_timing(answer, 1.5, {"start": 0.1, "run": 1.0, "trace": 0.4})
    return answer


def test_the_schema_has_every_key_the_builder_writes_and_no_other():
    assert list(_finished()) == [*ANSWER_KEYS, *TIMING_KEYS]
    assert set(Trace.model_fields) == set(_finished())
    Trace.model_validate(_finished(error=problem("Cancelled", "the run was cancelled")))


def test_the_stream_done_is_the_answer_without_passes_with_its_type_first():
    done = _finished(stream=True)
    assert next(iter(done)) == "type" and done["type"] == "done", "the stream reads 'type' from the first bytes"
    assert [k for k in done if k != "type"] == [k for k in _finished() if k != "passes"]


def test_a_failed_run_answers_only_its_error():
    err = problem("WorkerError", "the run failed")
    t = orjson.loads(failed_answer(err))
    assert t == {"stdout": "", "error": err, "variables": {}, "ops": {}, "passes": [], "steps": [], "modules": {},
                 "figures": [], "truncated": False, "truncated_reason": None}
    Trace.model_validate(t)
    done = orjson.loads(failed_answer(err, stream=True))
    assert list(done) == ["type", *(k for k in t if k != "passes")]
    assert run_answer()["variables"] is not run_answer()["variables"]
