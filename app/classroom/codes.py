"""Join codes a teacher can read aloud and presenter tokens nobody can guess."""

from __future__ import annotations

import hashlib
import hmac
import secrets

# No 0/O, 1/l/I: a code read aloud or copied from a projector is typed right the first time.
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"


def new_code(length: int) -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))


def normalise_code(code: str) -> str | None:
    """A code as typed (any case, stray spaces) → its canonical form, or None if it cannot be one."""
    code = code.strip().upper()
    if not code or len(code) > 16 or any(c not in CODE_ALPHABET for c in code):
        return None
    return code


def new_token() -> str:
    """The presenter's secret: 192 random bits, URL-safe (never part of a student's URL)."""
    return secrets.token_urlsafe(24)


def token_digest(token: str) -> str:
    """Only a digest is stored, so a leaked broker dump does not hand out presenter rights."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str | None, digest: str) -> bool:
    if not token:
        return False
    return hmac.compare_digest(token_digest(token), digest)  # constant time
