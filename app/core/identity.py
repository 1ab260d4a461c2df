"""Who is asking, as the server decides it (issue 22): the key every fairness limit counts by.

* A signed cookie (``identity_cookie``: ``<16 hex id>.<HMAC-SHA256 of it>``) minted by the server on the first
  request that has none; the key of ``identity_secret`` (a setting; unset: random per process). In a cluster
  (``broker_url``) every process must be given the same ``identity_secret``, or a cookie (and a follower token)
  from one process is unknown to the others.
* A request without a valid cookie (a first visit, or a client that refuses cookies) is its client address:
  whoever drops the cookie is counted with everyone else at that address, never as someone new. Minting is
  free (nothing is stored), but one address is honoured at most ``identities_per_address`` distinct cookies
  seen within ``identity_window_s`` (a classroom behind one NAT fits; a client collecting cookies to look like
  many does not): a further cookie from that address counts as the address.
* The request's own ``client_id`` (a tab) refines an identity (``Identity.tab``: a tab's new run cancels its
  previous one) but never escapes it: every limit counts ``Identity.key``.

``IdentityCookie`` (pure ASGI middleware) mints and checks the cookie and leaves the result in
``scope["state"]["identity"]``; ``app.api.deps.IdentityDep`` hands it to the routes.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass

ID_HEX = 16  # characters of a minted id (64 random bits)
SIG_HEX = 32  # characters of its signature (128 bits of HMAC-SHA256)
ADDRESSES_KEPT = 4_096  # addresses whose recent identities are remembered (the least recently seen go first)
COOKIE_MAX_AGE_S = 30 * 24 * 3600

_PROCESS_SECRET = secrets.token_bytes(32)  # used when identity_secret is unset: one process, one key


def secret_of(settings) -> bytes:
    """The signing key: the configured one, else this process's random one."""
    configured = getattr(settings, "identity_secret", None)
    return configured.encode() if configured else _PROCESS_SECRET


def sign(secret: bytes, purpose: str, text: str) -> str:
    """A hex signature of ``text`` for ``purpose`` (a cookie and a follower token never stand for each other)."""
    return hmac.new(secret, purpose.encode() + b"\0" + text.encode(), hashlib.sha256).hexdigest()[:SIG_HEX]


def new_id() -> str:
    return secrets.token_hex(ID_HEX // 2)


def signed_token(secret: bytes, purpose: str, ident: str) -> str:
    """``ident`` + its signature: only this server could have made it."""
    return ident + sign(secret, purpose, ident)


def token_ident(secret: bytes, purpose: str, token: str | None) -> str | None:
    """The id inside a ``signed_token``, or None when the token is not one of ours (compared in constant time)."""
    if not token or len(token) != ID_HEX + SIG_HEX:
        return None
    ident, sig = token[:ID_HEX], token[ID_HEX:]
    if not hmac.compare_digest(sign(secret, purpose, ident), sig):
        return None
    return ident


def cookie_value(secret: bytes, ident: str) -> str:
    return ident + "." + sign(secret, "identity", ident)


def cookie_ident(secret: bytes, value: str | None) -> str | None:
    if not value or len(value) != ID_HEX + 1 + SIG_HEX or value[ID_HEX] != ".":
        return None
    ident = value[:ID_HEX]
    return ident if hmac.compare_digest(sign(secret, "identity", ident), value[ID_HEX + 1:]) else None


@dataclass(frozen=True)
class Identity:
    """``key``: whom every limit counts (``c:<id>`` from the cookie, ``a:<address>`` without one); ``tab``: the
    client's own refinement (its ``client_id``), used only so a tab's new run replaces its previous one."""

    key: str
    tab: str | None = None

    def refined(self, client_id: str | None) -> Identity:
        return Identity(self.key, client_id[:128] if client_id else self.tab)

    @property
    def run_slot(self) -> str | None:
        """One run per tab: a tab's new run cancels this slot's previous one (no tab: runs queue instead)."""
        return None if self.tab is None else self.key + "/" + self.tab


class AddressShare:
    """At most ``limit`` distinct identities honoured per address, each for ``window_s`` after it was last seen
    there; remembers at most ADDRESSES_KEPT addresses."""

    def __init__(self, limit: int, window_s: float, clock=time.monotonic):
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.recent: OrderedDict[str, OrderedDict[str, float]] = OrderedDict()  # address → identity → last seen

    def allow(self, address: str, ident: str) -> bool:
        now = self.clock()
        seen = self.recent.pop(address, None) or OrderedDict()
        while seen and now - next(iter(seen.values())) > self.window_s:
            seen.popitem(last=False)
        allowed = ident in seen or len(seen) < self.limit
        if allowed:
            seen.pop(ident, None)
            seen[ident] = now  # most recently seen last
        self.recent[address] = seen
        while len(self.recent) > ADDRESSES_KEPT:
            self.recent.popitem(last=False)
        return allowed


def _cookie(headers, name: bytes) -> str | None:
    for k, v in headers:
        if k == b"cookie":
            for part in v.decode("latin-1").split(";"):
                key, _, value = part.strip().partition("=")
                if key.encode("latin-1") == name:
                    return value
    return None


class IdentityCookie:
    """Pure ASGI middleware: every HTTP request gets ``scope["state"]["identity"]``; a request without a valid
    cookie is its address, and its answer carries a freshly minted cookie (when the address may have one)."""

    def __init__(self, app, settings):
        self.app = app
        self.secret = secret_of(settings)
        self.name = settings.identity_cookie.encode("latin-1")
        self.share = AddressShare(settings.identities_per_address, settings.identity_window_s)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        ident = cookie_ident(self.secret, _cookie(scope.get("headers") or [], self.name))
        address = str((scope.get("client") or ("unknown",))[0])
        set_cookie: bytes | None = None
        if ident is not None and self.share.allow(address, ident):
            identity = Identity("c:" + ident)
        else:
            identity = Identity("a:" + address)
            if ident is None:
                fresh = cookie_value(self.secret, new_id())
                set_cookie = (self.name + b"=" + fresh.encode() + b"; Path=/; HttpOnly; SameSite=Lax; Max-Age="
                              + str(COOKIE_MAX_AGE_S).encode() + (b"; Secure" if scope.get("scheme") == "https" else b""))
        scope.setdefault("state", {})["identity"] = identity
        if set_cookie is None:
            await self.app(scope, receive, send)
            return

        async def with_cookie(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*(message.get("headers") or []), (b"set-cookie", set_cookie)]}
            await send(message)

        await self.app(scope, receive, with_cookie)
