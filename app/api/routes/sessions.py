"""Class sessions (docs/classroom.md): the presenter drives, followers' pages follow, the class answers.

``POST /api/sessions`` → 201 ``{code, presenter_token, join_url}``; ``GET /api/sessions/{code}``;
``POST …/join`` → ``{follower}`` (a follower token the server signs: the only way to follow and answer);
``GET …/events?follower=TOKEN`` (text/event-stream of ``{"seq", "state", "question"}``, the latest first);
``POST …/state`` (presenter); questions: ``POST …/questions`` (presenter), ``POST …/questions/{id}/answers``
(followers, latest wins), ``POST …/questions/{id}/reveal`` (presenter), ``GET …/questions/{id}``,
``GET …/tally`` (presenter's live stream of answers); issue 24: ``POST …/end`` (presenter: followers get a last
frame ``"ended": true``), ``POST …/presence`` (presenter's page is open, or ``{"here": false}`` as it closes;
followers' frames carry ``"away": true`` while the presenter is quiet), ``POST …/run`` (presenter: the server runs
the program once and keeps its answer) and ``GET …/runs/{id}`` (that answer: what followers load instead of
running the program themselves). The presenter proves itself with
``Authorization: Bearer <presenter_token>``: missing → 401, wrong → 403 (compared in constant time).

Shares (issue 22), each a setting, counted by the server-minted identity (app/core/identity.py):
``max_sessions_per_identity`` live sessions (429 with Retry-After), ``max_followers_per_identity`` follower
tokens per session (429), ``max_streams_per_identity`` open event streams in this process (429). An answer or
stream with a follower token the server did not sign for this session is 403 ``UnknownFollower``.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import AsyncIterator
from typing import Annotated, Literal

import orjson
from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi import Path as FastPath
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse
from pydantic import AfterValidator, BaseModel, Field

from app.api.deps import ClassroomDep, IdentityDep, RunsDep, SettingsDep
from app.api.schemas import RunRequest
from app.classroom.broker import (
    NOT_FOUND,
    NOT_PRESENTER,
    BadState,
    BrokerDown,
    ClassroomError,
    Forbidden,
    NoSuchSession,
    TooLarge,
    TooManyStreams,
    Unauthorized,
    UnknownFollower,
    is_correct,
    run_id_of,
    state_channel,
    tally_channel,
)
from app.classroom.codes import new_token, normalise_code, token_digest, token_matches
from app.classroom.hub import sse_frame
from app.classroom.progress import RunProgress
from app.classroom.shared_runs import answer_of_events
from app.core.answer import EVENT_SEPARATOR
from app.core.compression import gunzip, gzip_small
from app.core.errors import busy_response, problem_response
from app.core.identity import new_id, secret_of, signed_token, token_ident

router = APIRouter(prefix="/api/sessions", tags=["sessions"])

FOLLOWER_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def install_errors(app) -> None:
    @app.exception_handler(ClassroomError)
    async def _classroom(request: Request, exc: ClassroomError):
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else {}
        if exc.retry_after is not None:
            headers["Retry-After"] = str(exc.retry_after)
        return problem_response(exc.status, exc.kind, str(exc), headers=headers or None)


def _finite(v: float) -> float:
    if not math.isfinite(v):
        raise ValueError("must be a finite number")
    return v


Finite = Annotated[float, AfterValidator(_finite)]  # the true answer and every answer: no NaN, no infinity


class QuestionSpec(BaseModel):
    node: str = Field(..., min_length=1, max_length=200, description="the node asked about (its data-node-id)")
    kind: Literal["value", "gradient"] = "gradient"
    label: str = Field("", max_length=200, description="how the question reads, e.g. '∂L/∂w'")
    answer: Finite = Field(..., description="the true number, shown to followers only when revealed")
    tolerance: float = Field(0.05, ge=0, le=1e6, description="right within tolerance × max(1, |answer|)")


class AnswerBody(BaseModel):
    follower: str = Field(..., pattern=FOLLOWER_ID.pattern)
    value: Finite


async def session_code(code: str, classroom: ClassroomDep) -> str:
    """The path's code, canonical (typed codes are case-insensitive), of a live session: else 404."""
    canonical = normalise_code(code)
    if canonical is None or not await classroom.broker.alive(canonical):  # every follower call: one cheap read
        raise NoSuchSession(NOT_FOUND)
    return canonical


CodeDep = Annotated[str, Depends(session_code)]


async def presenter(code: CodeDep, classroom: ClassroomDep,
                    authorization: Annotated[str | None, Header()] = None) -> str:
    """The session's code once the bearer token is its presenter's: 401 without one, 403 for a wrong one."""
    if not authorization or not authorization.lower().startswith("bearer "):
        raise Unauthorized("the presenter's token is needed: Authorization: Bearer <presenter_token>")
    digest = await classroom.broker.digest(code)
    if digest is None:
        raise NoSuchSession(NOT_FOUND)
    if not token_matches(authorization[7:].strip(), digest):
        raise Forbidden(NOT_PRESENTER)
    return code


PresenterDep = Annotated[str, Depends(presenter)]


async def presenter_claim(code: str, classroom: ClassroomDep,
                          authorization: Annotated[str | None, Header()] = None) -> tuple[str, str]:
    """The path's code and the bearer token's digest, unchecked: the broker checks it as it takes the state (the
    presenter's 10 states a second each cost one broker round trip, not three). Same answers as ``presenter``."""
    canonical = normalise_code(code)
    if canonical is None:
        raise NoSuchSession(NOT_FOUND)
    if not authorization or not authorization.lower().startswith("bearer ") or not authorization[7:].strip():
        if not await classroom.broker.alive(canonical):  # 404 before 401, as for every other presenter call
            raise NoSuchSession(NOT_FOUND)
        raise Unauthorized("the presenter's token is needed: Authorization: Bearer <presenter_token>")
    return canonical, token_digest(authorization[7:].strip())


PresenterClaimDep = Annotated[tuple[str, str], Depends(presenter_claim)]

JOIN_FIRST = "this follower token is not one this server gave for this session: join first (POST /api/sessions/{}/join)"


def _purpose(code: str) -> str:
    return "follower:" + code  # a token of one session is no token of another


def follower_id(code: str, token: str | None, settings) -> str | None:
    """The follower id inside ``token`` when the server signed it for session ``code``; else None."""
    return token_ident(secret_of(settings), _purpose(code), token)


def must_follower(code: str, token: str | None, settings) -> str:
    follower = follower_id(code, token, settings)
    if follower is None:
        raise UnknownFollower(JOIN_FIRST.format(code))
    return follower


class StreamSlot:
    """One of an identity's ``max_streams_per_identity`` open class streams in this process; given back once."""

    def __init__(self, counts: dict[str, int], key: str, limit: int):
        if counts.get(key, 0) >= limit:
            raise TooManyStreams(f"this browser already has {limit} class streams open (max_streams_per_identity); "
                                 "close a tab", retry_after=5)
        counts[key] = counts.get(key, 0) + 1
        self.counts, self.key, self.open = counts, key, True

    def release(self) -> None:
        if getattr(self, "open", False):  # (also from __del__ of a slot whose __init__ refused)
            self.open = False
            left = self.counts.get(self.key, 1) - 1
            if left > 0:
                self.counts[self.key] = left
            else:
                self.counts.pop(self.key, None)

    __del__ = release  # a stream whose body never started (its client left at once) still gives its slot back


async def _held(slot: StreamSlot, stream: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    try:
        async for chunk in stream:
            yield chunk
    finally:
        slot.release()


@router.post("", status_code=201, responses={429: {"description": "this identity holds max_sessions_per_identity "
                                                               "sessions (Retry-After: when the first ends)"}})
async def create_session(request: Request, classroom: ClassroomDep, identity: IdentityDep) -> dict:
    token = new_token()
    code = await classroom.broker.create(token_digest(token), identity.key)
    return {"code": code, "presenter_token": token, "join_url": str(request.base_url) + "s/" + code}


@router.post("/{code}/join", responses={429: {"description": "this identity took max_followers_per_identity "
                                                             "tokens of this session"}})
async def join(code: CodeDep, classroom: ClassroomDep, identity: IdentityDep, settings: SettingsDep) -> dict:
    """A follower token for this session, signed by the server: ``/events?follower=TOKEN`` and answers take it."""
    await classroom.broker.mint_follower(code, identity.key)
    return {"code": code, "follower": signed_token(secret_of(settings), _purpose(code), new_id())}


@router.get("/{code}")
async def session_info(code: CodeDep, classroom: ClassroomDep) -> dict:
    info = await classroom.broker.info(code)
    if info is None:
        raise NoSuchSession(NOT_FOUND)
    return {k: v for k, v in info.items() if k != "digest"}


@router.post("/{code}/state")
async def post_state(claim: PresenterClaimDep, request: Request, classroom: ClassroomDep, settings: SettingsDep) -> dict:
    code, digest = claim
    body = await request.body()
    if len(body) > settings.max_state_bytes:
        raise TooLarge(f"a state is at most {settings.max_state_bytes} bytes (max_state_bytes); this one has {len(body)}")
    try:
        state = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise BadState("the state must be a JSON object") from None
    if not isinstance(state, dict):
        raise BadState(f"the state must be a JSON object, not {type(state).__name__}")
    # re-encoded: one line of JSON, whatever whitespace came in (an SSE data: field cannot hold a newline)
    seq = await classroom.broker.post_state(code, orjson.dumps(state), digest)
    return {"seq": seq}


async def _follow(classroom, channel: str, code: str, conn: str | None, cursor: int, latest, heartbeat_s: float,
                  event: str | None = None, watch_presenter: bool = False) -> AsyncIterator[bytes]:
    """One follower's stream: the latest first (a late joiner catches up at once), then every later event
    in order; a follower that fell behind the hub's buffer gets the latest again instead of a gap.
    Its heartbeat is one timer every ``heartbeat_s``, armed again only when it fires: a timeout around each wait
    cost a timer heap push and cancel per frame and stream (a tenth of the server's CPU at 300 followers)."""
    broker, hub = classroom.broker, classroom.hub
    loop = asyncio.get_running_loop()
    beat = {"due": False, "waiting": None, "sent": False}  # sent: frames went out since the last beat

    def ring() -> None:
        beat["due"] = True
        waiting = beat["waiting"]
        if waiting is not None and not waiting.done():
            waiting.set_result(None)
        beat["timer"] = loop.call_later(heartbeat_s, ring)

    beat["timer"] = loop.call_later(heartbeat_s, ring)
    listening = hub.listen(channel)  # before reading the latest: nothing published in between is missed
    try:
        yield b"retry: 1000\n\n"
        first = await latest()
        if first is not None and first[0] > cursor:
            cursor = first[0]
            yield sse_frame(first[0], first[1], event)
        while True:
            frames, newest, gap = listening.after(cursor)
            if gap:
                try:
                    again = await latest()
                except BrokerDown:
                    again = None
                if again is not None and again[0] > cursor:
                    cursor = again[0]
                    yield sse_frame(again[0], again[1], event)
                frames, newest, _ = listening.after(cursor)
            if frames:
                cursor = newest
                beat["sent"] = True
                yield frames[0] if len(frames) == 1 else b"".join(frames)  # the hub's bytes, as encoded once
                continue
            if beat["due"]:
                beat["due"] = False
                if beat["sent"]:  # a busy stream: presence only (never delaying delivery), no ping needed
                    beat["sent"] = False
                    if conn is not None:
                        _background(broker.heartbeat(code, conn))
                    continue
                try:
                    if not await broker.alive(code):  # the session ended: so does the stream
                        return
                    if watch_presenter:  # a presenter quiet too long: its followers are told (one frame for all)
                        await broker.check_presenter(code)
                    # an event lost while the broker was away: the latest state repairs it within a heartbeat
                    again = await latest()
                    if again is not None and again[0] > cursor:
                        cursor = again[0]
                        yield sse_frame(again[0], again[1], event)
                except BrokerDown:
                    pass  # the broker is away: keep the follower's stream (and its last state) open
                if conn is not None:
                    await broker.heartbeat(code, conn)
                yield b": ping\n\n"
                continue
            waiting = beat["waiting"] = listening.wait()
            try:
                await waiting  # the next frame, or the heartbeat
            finally:
                beat["waiting"] = None
                listening.forget(waiting)
    finally:
        beat["timer"].cancel()
        hub.leave(channel)
        if conn is not None:
            await broker.leave(code, conn)


_pending: set = set()


def _background(coro) -> None:
    task = asyncio.create_task(coro)
    _pending.add(task)  # held until done: the event loop keeps only weak references to tasks
    task.add_done_callback(_pending.discard)


def _last_event_id(request: Request) -> int:
    try:
        return max(0, int(request.headers.get("last-event-id", "0")))
    except ValueError:
        return 0


@router.get("/{code}/events", response_class=StreamingResponse)
async def events(code: CodeDep, request: Request, classroom: ClassroomDep, settings: SettingsDep,
                 identity: IdentityDep, follower: Annotated[str | None, Query(pattern=FOLLOWER_ID.pattern)] = None):
    """The session's states for the follower whose token this is (``POST …/join``); 403 for any other token."""
    conn = must_follower(code, follower, settings)
    slot = StreamSlot(classroom.streams, identity.key, settings.max_streams_per_identity)
    try:
        await classroom.broker.join(code, conn)
    except BaseException:
        slot.release()
        raise
    stream = _follow(classroom, state_channel(code), code, conn, _last_event_id(request),
                     lambda: classroom.broker.latest(code), settings.follower_heartbeat_s, watch_presenter=True)
    return StreamingResponse(_held(slot, stream), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.get("/{code}/tally", response_class=StreamingResponse)
async def tally(code: PresenterDep, request: Request, classroom: ClassroomDep, settings: SettingsDep,
                identity: IdentityDep):
    """The presenter's live answers: ``event: tally`` ``{"seq", "question", "count", "values"}``."""
    slot = StreamSlot(classroom.streams, identity.key, settings.max_streams_per_identity)
    async def latest():
        info = await classroom.broker.info(code)
        if info is None or info["question"] is None:
            return None
        return await classroom.broker.tally(code, info["question"]["id"])

    stream = _follow(classroom, tally_channel(code), code, None, _last_event_id(request), latest,
                     settings.follower_heartbeat_s, event="tally")
    return StreamingResponse(_held(slot, stream), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.post("/{code}/questions", status_code=201)
async def open_question(code: PresenterDep, spec: QuestionSpec, classroom: ClassroomDep) -> dict:
    q = await classroom.broker.open_question(code, spec.model_dump())
    return {k: q[k] for k in ("id", "node", "kind", "label", "tolerance", "answer", "status")}


@router.post("/{code}/questions/{qid}/answers")
async def answer(code: CodeDep, qid: str, body: AnswerBody, classroom: ClassroomDep, settings: SettingsDep) -> dict:
    """A follower's answer (``follower``: its token from ``POST …/join``; 403 for a token the server did not give)."""
    await classroom.broker.answer(code, qid[:32], must_follower(code, body.follower, settings), body.value)
    return {"accepted": True, "question": qid, "value": body.value}


@router.post("/{code}/questions/{qid}/reveal")
async def reveal(code: PresenterDep, qid: str, classroom: ClassroomDep) -> dict:
    await classroom.broker.reveal(code, qid[:32])
    return _presenter_view(await classroom.broker.question(code, qid[:32]))


def _presenter_view(q: dict) -> dict:
    return {k: v for k, v in q.items() if not k.startswith("_") and k != "opened"}


@router.get("/{code}/questions/{qid}")
async def question(code: CodeDep, qid: str, classroom: ClassroomDep, settings: SettingsDep,
                   follower: Annotated[str | None, Query(pattern=FOLLOWER_ID.pattern)] = None,
                   authorization: Annotated[str | None, Header()] = None) -> dict:
    """Followers see the question (and, once revealed, the answer and whether theirs was right); the
    presenter (bearer token) also sees every answer."""
    q = await classroom.broker.question(code, qid[:32])
    info = await classroom.broker.info(code)
    if authorization and authorization.lower().startswith("bearer ") and \
            token_matches(authorization[7:].strip(), info["digest"]):
        return _presenter_view(q)
    shown = {k: q[k] for k in ("id", "node", "kind", "label", "tolerance", "status")}
    shown["count"] = len(q["values"])
    who = follower_id(code, follower, settings)
    mine = q["_answers"].get(who) if who else None
    shown["your_answer"] = mine
    if q["status"] == "revealed":
        shown["answer"] = q["answer"]
        shown["correct"] = None if mine is None else is_correct(mine, q["answer"], q["tolerance"])
    return shown


class PresenceBody(BaseModel):
    here: bool = True


@router.post("/{code}/presence")
async def presence(code: PresenterDep, classroom: ClassroomDep, body: PresenceBody | None = None) -> dict:
    """The presenter's page beats while open; ``{"here": false}`` as it closes tells followers at once."""
    here = True if body is None else body.here
    await classroom.broker.presence(code, here)
    return {"here": here}


@router.post("/{code}/end")
async def end_session(code: PresenterDep, classroom: ClassroomDep) -> dict:
    """Only the presenter ends a class: followers get a last frame ``"ended": true``; the code stops working."""
    return {"ended": True, "seq": await classroom.broker.end(code)}


@router.post("/{code}/run", responses={429: {"description": "busy: the run queue is full (Retry-After)"}})
async def share_run(code: PresenterDep, body: RunRequest, classroom: ClassroomDep, runs: RunsDep,
                    identity: IdentityDep, settings: SettingsDep) -> Response:
    """The server runs the presenter's program once (runs are deterministic: the presenter's own run shows the same)
    and keeps the answer: ``{"run"}``, the id followers load with ``GET …/runs/{run}`` instead of running it. A
    deterministic program the page has just streamed is not run again: its streamed answer is the class's.
    The run streams: while a long loop runs, its progress ("running…", passes, the loss curve) goes to the class
    in its frames (``"progress"``) and to the presenter's ``GET /api/sessions/{code}`` (issue 24)."""
    opened = await runs.open_stream(body.source, client=identity.refined("class:" + code), values=body.values)
    if opened.events is None:
        return busy_response(opened.busy, opened.retry_after)
    progress = RunProgress(every_s=settings.class_progress_every_s)
    events: list[bytes] = []
    try:
        async for chunk in opened.events:
            for event in chunk.split(EVENT_SEPARATOR):
                events.append(event)
                progress.take(event)
            if progress.due():
                try:
                    await classroom.broker.progress(code, progress.payload())
                except (BrokerDown, NoSuchSession):
                    pass  # progress is best effort: the run goes on (its end says whether the class can have it)
    finally:
        if progress.sent_any:  # the class stops showing it as running (the run's id follows in the next state)
            try:
                await classroom.broker.progress(code, None)
            except (BrokerDown, NoSuchSession):
                pass  # the class ended or the broker is away: its frames carry nothing more of this run
    busy = _waited_past_queue(events[-1] if events else b"")
    if busy is not None:  # nothing ran: the presenter's page asks again, as for a full queue
        return busy_response(busy, 1)
    answer = await run_in_threadpool(answer_of_events, EVENT_SEPARATOR.join(events))
    if answer is None:
        return Response(status_code=204)
    run_id = run_id_of(answer)
    compressed = await run_in_threadpool(gzip_small, answer)  # once, for every follower
    await classroom.broker.put_run(code, run_id, compressed)
    return Response(orjson.dumps({"run": run_id, "bytes": len(answer)}), media_type="application/json")


def _waited_past_queue(last_event: bytes) -> str | None:
    """The message of a stream that ended ``Busy`` (it waited in the queue past queue_timeout_s), else None."""
    if b'"Busy"' not in last_event:
        return None
    done = orjson.loads(last_event)
    error = done.get("error") if isinstance(done, dict) and done.get("type") == "done" else None
    return str(error.get("message", "")) if isinstance(error, dict) and error.get("type") == "Busy" else None


def _etag_matches(if_none_match: str | None, etag: str) -> bool:
    """``If-None-Match`` names this ETag (or ``*``): weak or strong, one of a list."""
    if not if_none_match:
        return False
    return any(tag.strip().removeprefix("W/") in (etag, "*") for tag in if_none_match.split(","))


@router.get("/{code}/runs/{run_id}", responses={304: {"description": "the follower already has this run (ETag)"},
                                                404: {"description": "RunExpired: not this session's latest run"}})
async def shared_run(code: str, run_id: Annotated[str, FastPath(pattern=r"^[0-9a-f]{16}$")], request: Request,
                     classroom: ClassroomDep) -> Response:
    """The presenter's run as ``POST /api/run`` answered it: the bytes stored gzip-encoded once are sent as they are
    (``Content-Encoding: gzip``; decompressed only for a client that does not take gzip). A run id names one answer
    (its digest), so the answer is immutable: ``ETag`` is the id and ``If-None-Match`` gets 304 with no body.
    A whole class asks at the same moment: one broker read per request, nothing else (no session info, no decode)."""
    canonical = normalise_code(code)
    if canonical is None:
        raise NoSuchSession(NOT_FOUND)
    etag = f'"{run_id}"'
    headers = {"Cache-Control": "private, max-age=3600, immutable", "Vary": "Accept-Encoding", "ETag": etag}
    compressed = await classroom.broker.get_run(canonical, run_id)  # NoSuchSession (404) once the class ended
    if compressed is None:
        return problem_response(404, "RunExpired", "the teacher's run is no longer on the server: it ran again since")
    if _etag_matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    if "gzip" in request.headers.get("accept-encoding", "").lower():
        return Response(compressed, media_type="application/json", headers={**headers, "Content-Encoding": "gzip"})
    return Response(await run_in_threadpool(gunzip, compressed), media_type="application/json",
                    headers=headers)
