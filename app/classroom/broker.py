"""Where sessions live: ``MemoryBroker`` (one process, the default) or ``RedisBroker`` (``broker_url``).

Both keep, per session: the presenter token's digest, ``seq`` (one counter for everything followers
see), the latest state, the current question and its answers, and who follows. Every change a
follower must see is *published*: ``seq`` goes up by one and a frame ``{"seq", "state", "question"}``
reaches every process's ``Hub`` in order. Answers go to the presenter's ``tally`` channel instead
(thirty answers are not thirty broadcasts to the class).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import time
from dataclasses import dataclass, field

import orjson

from app.classroom.codes import new_code
from app.classroom.hub import Hub, sse_frame


class ClassroomError(Exception):
    """A refusal the routes turn into an HTTP status with the message (and ``retry_after``, when trying again
    later can work)."""
    status = 400
    kind = "SessionError"

    def __init__(self, message: str = "", retry_after: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after


# each refusal and its HTTP status (the routes answer problem_response(status, kind, message))
class NoSuchSession(ClassroomError): status, kind = 404, "NotFound"  # noqa: E701
class TooManySessions(ClassroomError): status, kind = 503, "Busy"  # noqa: E701
class TooManyOwnSessions(ClassroomError): status, kind = 429, "TooManySessions"  # noqa: E701
class TooManyOwnFollowers(ClassroomError): status, kind = 429, "TooManyFollowers"  # noqa: E701
class UnknownFollower(ClassroomError): status, kind = 403, "UnknownFollower"  # noqa: E701
class TooManyStreams(ClassroomError): status, kind = 429, "TooManyStreams"  # noqa: E701
class SessionFull(ClassroomError): status, kind = 429, "SessionFull"  # noqa: E701
class NoSuchQuestion(ClassroomError): status, kind = 404, "NotFound"  # noqa: E701
class QuestionClosed(ClassroomError): status, kind = 409, "QuestionClosed"  # noqa: E701
class TooManyAnswers(ClassroomError): status, kind = 429, "TooManyAnswers"  # noqa: E701
class BrokerDown(ClassroomError): status, kind = 503, "BrokerUnavailable"  # noqa: E701
class Unauthorized(ClassroomError): status, kind = 401, "Unauthorized"  # noqa: E701
class Forbidden(ClassroomError): status, kind = 403, "Forbidden"  # noqa: E701
class TooLarge(ClassroomError): status, kind = 413, "RequestError"  # noqa: E701
class BadState(ClassroomError): status, kind = 422, "RequestError"  # noqa: E701


NOT_PRESENTER = "this token is not the presenter's token of this session"
NOT_FOUND = "no class session with this code (it may have ended: sessions end after 3 hours idle)"


@dataclass(frozen=True)
class Limits:
    max_sessions: int
    max_followers: int
    idle_s: float
    code_length: int
    max_questions: int
    max_answer_changes: int
    follower_timeout_s: float  # a follower not seen for this long no longer counts
    max_sessions_per_identity: int = 3
    unjoined_s: float = 600.0  # a session no follower joined is forgotten this long after it was made
    max_followers_per_identity: int = 3  # follower tokens one identity may take in one session
    presenter_quiet_s: float = 30.0  # a presenter not heard from this long is "away" to its followers
    shared_runs_max_bytes: int = 256_000_000  # the presenters' shared runs (compressed) this process keeps


def own_sessions_message(limits: Limits) -> str:
    return (f"you already hold {limits.max_sessions_per_identity} class sessions (max_sessions_per_identity); "
            f"a session nobody joins ends after {limits.unjoined_s:g} s, any other after "
            f"{limits.idle_s:g} s untouched")


def own_followers_message(limits: Limits) -> str:
    return (f"this browser already joined this session {limits.max_followers_per_identity} times "
            f"(max_followers_per_identity): reload the page you joined with instead of joining again")


def state_channel(code: str) -> str:
    return "state:" + code


def tally_channel(code: str) -> str:
    return "tally:" + code


def state_payload(seq: int, state: bytes, question: bytes, away: bool = False, ended: bool = False,
                  progress: bytes = b"") -> bytes:
    """One frame's JSON; ``"away": true`` while the presenter is quiet, ``"ended": true`` on the last one,
    ``"progress"`` while the class's run streams (app/classroom/progress.py)."""
    tail = (b',"away":true' if away else b"") + (b',"ended":true' if ended else b"") + \
        (b',"progress":' + progress if progress else b"")
    return b'{"seq":' + str(seq).encode() + b',"state":' + state + b',"question":' + question + tail + b"}"


def run_id_of(answer: bytes) -> str:
    """A shared run's id: its answer's digest (the same answer twice is the same run)."""
    return hashlib.sha256(answer).hexdigest()[:16]


def public_question(q: dict | None) -> dict | None:
    """What followers may see: the true value only once revealed."""
    if q is None:
        return None
    shown = {k: q[k] for k in ("id", "node", "kind", "label", "tolerance", "status")}
    if q["status"] == "revealed":
        shown["answer"] = q["answer"]
    return shown


def is_correct(value: float, answer: float, tolerance: float) -> bool:
    """Right within ``tolerance`` × max(1, |answer|): absolute near zero, relative for big values."""
    return abs(value - answer) <= tolerance * max(1.0, abs(answer))


def new_question(spec: dict) -> dict:
    return {"id": secrets.token_hex(4), "node": spec["node"], "kind": spec["kind"], "label": spec.get("label", ""),
            "tolerance": spec["tolerance"], "answer": spec["answer"], "status": "open", "opened": time.time()}


def tally_payload(seq: int, qid: str, values: list[float]) -> bytes:
    return orjson.dumps({"seq": seq, "question": qid, "count": len(values), "values": values})


@dataclass
class _Session:
    code: str
    digest: str
    created: float
    touched: float
    owner: str = ""
    joined: bool = False  # a follower came (until then the session lives unjoined_s, not idle_s)
    minted: dict = field(default_factory=dict)  # identity → follower tokens it took
    seq: int = 0
    state: bytes = b"null"
    question: dict | None = None
    questions: dict = field(default_factory=dict)  # id → question (with "answers", "changes")
    followers: dict = field(default_factory=dict)  # connection id → last seen
    tally_seq: int = 0
    presenter_seen: float = 0.0  # the presenter's last call (state, presence, question…)
    away: bool = False  # followers were told the presenter is quiet
    run_id: str | None = None  # the presenter's shared run (what followers load instead of running)
    run_answer: bytes = b""  # its answer, gzip-compressed
    progress: bytes = b""  # the class's run under way (JSON), shown by followers until its answer comes


class MemoryBroker:
    """Everything in this process's memory: the out-of-the-box broker."""

    def __init__(self, limits: Limits, hub: Hub):
        self.limits = limits
        self.hub = hub
        self.sessions: dict[str, _Session] = {}
        self.run_bytes = 0  # shared runs held, across sessions (bounded by shared_runs_max_bytes)

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    def _expires(self, s: _Session) -> float:
        return s.touched + self.limits.idle_s if s.joined else min(s.touched + self.limits.idle_s,
                                                                   s.created + self.limits.unjoined_s)

    def _expire(self, now: float) -> None:
        for code in [c for c, s in self.sessions.items() if self._expires(s) <= now]:
            self._forget(code)

    def _forget(self, code: str) -> None:
        s = self.sessions.pop(code, None)
        if s is not None:
            self.run_bytes -= len(s.run_answer)

    def _must(self, code: str) -> _Session:
        s = self._get(code)
        if s is None:
            raise NoSuchSession(NOT_FOUND)
        return s

    def _get(self, code: str) -> _Session | None:
        s = self.sessions.get(code)
        if s is not None and self._expires(s) <= time.time():
            self._forget(code)
            return None
        return s

    async def create(self, digest: str, owner: str = "") -> str:
        now = time.time()
        self._expire(now)
        mine = [self._expires(s) for s in self.sessions.values() if s.owner == owner]
        if owner and len(mine) >= self.limits.max_sessions_per_identity:
            raise TooManyOwnSessions(own_sessions_message(self.limits), retry_after=max(1, math.ceil(min(mine) - now)))
        if len(self.sessions) >= self.limits.max_sessions:
            soonest = min(self._expires(s) for s in self.sessions.values())
            raise TooManySessions(f"the server holds its limit of {self.limits.max_sessions} class sessions "
                                  f"(max_sessions); try again when one ends", retry_after=max(1, math.ceil(soonest - now)))
        while True:
            code = new_code(self.limits.code_length)
            if code not in self.sessions:
                break
        self.sessions[code] = _Session(code, digest, now, now, owner, presenter_seen=now)
        return code

    async def mint_follower(self, code: str, identity: str) -> None:
        """``identity`` takes one more follower token of this session: at most max_followers_per_identity."""
        s = self._must(code)
        taken = s.minted.get(identity, 0)
        if taken >= self.limits.max_followers_per_identity:
            raise TooManyOwnFollowers(own_followers_message(self.limits))
        if identity not in s.minted and len(s.minted) >= 4 * self.limits.max_followers:
            raise SessionFull("this session has been joined from too many browsers (4 x max_followers)")
        s.minted[identity] = taken + 1

    async def alive(self, code: str) -> bool:
        return self._get(code) is not None

    async def digest(self, code: str) -> str | None:
        """The presenter token's digest, or None when there is no such session."""
        s = self._get(code)
        return None if s is None else s.digest

    async def info(self, code: str) -> dict | None:
        s = self._get(code)
        if s is None:
            return None
        return {"code": code, "digest": s.digest, "seq": s.seq, "created": s.created,
                "followers": self._count(s, time.time()), "question": public_question(s.question),
                "presenter_seen": s.presenter_seen, "away": s.away, "run": s.run_id,
                "progress": orjson.loads(s.progress) if s.progress else None}

    async def latest(self, code: str) -> tuple[int, bytes] | None:
        s = self._get(code)
        if s is None or s.seq == 0:
            return None
        return s.seq, state_payload(s.seq, s.state, orjson.dumps(public_question(s.question)), s.away,
                                    progress=s.progress)

    def _publish(self, s: _Session, ended: bool = False) -> int:
        s.seq += 1
        s.touched = time.time()
        payload = state_payload(s.seq, s.state, orjson.dumps(public_question(s.question)), s.away, ended, s.progress)
        self.hub.put(state_channel(s.code), s.seq, sse_frame(s.seq, payload))
        return s.seq

    def _heard(self, s: _Session) -> bool:
        """The presenter spoke: seen now; True when followers had been told it was away (they hear it is back)."""
        s.presenter_seen = time.time()
        back, s.away = s.away, False
        return back

    async def post_state(self, code: str, state: bytes, digest: str = "") -> int:
        """The presenter's new state; with ``digest`` (its token's), checked here (RedisBroker: in the same script)."""
        s = self._must(code)
        if digest and not hmac.compare_digest(digest, s.digest):
            raise Forbidden(NOT_PRESENTER)
        s.state = state
        self._heard(s)
        return self._publish(s)

    async def presence(self, code: str, here: bool = True) -> None:
        """The presenter's page is open (``here``) or is closing: followers hear of a change at once."""
        s = self._must(code)
        if here:
            if self._heard(s):
                self._publish(s)
        elif not s.away:
            s.away = True
            self._publish(s)

    async def check_presenter(self, code: str) -> None:
        """A follower's stream asks on its heartbeat: a presenter quiet past presenter_quiet_s becomes away."""
        s = self._get(code)
        if s is not None and not s.away and time.time() - s.presenter_seen > self.limits.presenter_quiet_s:
            s.away = True
            self._publish(s)

    async def end(self, code: str) -> int:
        """The presenter ends the class: a last frame says so to every follower, then the session is gone."""
        s = self._must(code)
        seq = self._publish(s, ended=True)
        self._forget(code)
        return seq

    async def put_run(self, code: str, run_id: str, compressed: bytes) -> None:
        """The presenter's latest run, kept for followers to load (one per session; the oldest go past the budget)."""
        s = self._must(code)
        self._heard(s)
        self.run_bytes += len(compressed) - len(s.run_answer)
        s.run_id, s.run_answer = run_id, compressed
        for other in sorted(self.sessions.values(), key=lambda o: o.touched):
            if self.run_bytes <= self.limits.shared_runs_max_bytes:
                break
            if other is not s and other.run_answer:
                self.run_bytes -= len(other.run_answer)
                other.run_id, other.run_answer = None, b""

    async def progress(self, code: str, progress: bytes | None) -> int:
        """The class's run under way (``None``: it ended): one frame to every follower."""
        s = self._must(code)
        s.progress = progress or b""
        return self._publish(s)

    async def get_run(self, code: str, run_id: str) -> bytes | None:
        s = self._must(code)
        return s.run_answer if s.run_id == run_id and s.run_answer else None

    def _count(self, s: _Session, now: float) -> int:
        cutoff = now - self.limits.follower_timeout_s
        for conn in [c for c, seen in s.followers.items() if seen < cutoff]:
            del s.followers[conn]
        return len(s.followers)

    async def join(self, code: str, conn: str) -> None:
        s = self._must(code)
        now = time.time()
        if conn not in s.followers and self._count(s, now) >= self.limits.max_followers:
            raise SessionFull(f"this session already has {self.limits.max_followers} followers (max_followers)")
        s.followers[conn] = now
        s.touched = now
        s.joined = True

    async def heartbeat(self, code: str, conn: str) -> None:
        s = self._get(code)
        if s is not None:
            s.followers[conn] = s.touched = time.time()

    async def leave(self, code: str, conn: str) -> None:
        s = self.sessions.get(code)
        if s is not None:
            s.followers.pop(conn, None)

    async def open_question(self, code: str, spec: dict) -> dict:
        s = self._must(code)
        self._heard(s)
        q = new_question(spec)
        q["answers"], q["changes"] = {}, {}
        s.questions[q["id"]] = q
        while len(s.questions) > self.limits.max_questions:  # the oldest are forgotten
            del s.questions[next(iter(s.questions))]
        s.question = q
        self._publish(s)
        self._tally(s, q)
        return q

    def _question(self, s: _Session, qid: str) -> dict:
        q = s.questions.get(qid)
        if q is None:
            raise NoSuchQuestion(f"no question {qid!r} in this session")
        return q

    def _tally(self, s: _Session, q: dict) -> None:
        s.tally_seq += 1
        payload = tally_payload(s.tally_seq, q["id"], list(q["answers"].values()))
        self.hub.put(tally_channel(s.code), s.tally_seq, sse_frame(s.tally_seq, payload, "tally"))

    async def answer(self, code: str, qid: str, follower: str, value: float) -> None:
        s = self._must(code)
        q = self._question(s, qid)
        if q["status"] != "open":
            raise QuestionClosed("this question is closed: the answer has been revealed")
        changes = q["changes"].get(follower, 0)
        if changes >= self.limits.max_answer_changes:
            raise TooManyAnswers(f"at most {self.limits.max_answer_changes} answers per question (max_answer_changes)")
        if follower not in q["answers"] and len(q["answers"]) >= self.limits.max_followers:
            raise SessionFull(f"this question already has {self.limits.max_followers} answers (max_followers)")
        q["changes"][follower] = changes + 1
        q["answers"][follower] = value  # latest wins
        s.touched = time.time()
        self._tally(s, q)

    async def reveal(self, code: str, qid: str) -> dict:
        s = self._must(code)
        self._heard(s)
        q = self._question(s, qid)
        q["status"] = "revealed"
        if s.question is q:
            self._publish(s)
        return q

    async def question(self, code: str, qid: str) -> dict:
        """The whole question, with the true value and its answers (presenter), or raises."""
        s = self._must(code)
        q = self._question(s, qid)
        return {**{k: v for k, v in q.items() if k not in ("answers", "changes")},
                "values": list(q["answers"].values()), "_answers": dict(q["answers"])}

    async def tally(self, code: str, qid: str) -> tuple[int, bytes]:
        s = self._must(code)
        q = self._question(s, qid)
        return s.tally_seq, tally_payload(s.tally_seq, qid, list(q["answers"].values()))


def finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
