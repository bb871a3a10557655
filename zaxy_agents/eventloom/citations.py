"""Citations: ``eventloom://<session>/events/<seq>#<first 12 hex of hash>``.

A citation names one event and pins its content: resolving it refuses an event whose hash does not start
with the cited prefix. Stdlib only.
"""

from __future__ import annotations

import re

from zaxy_agents.errors import InvalidRequestError

from .canonical import CITATION_HASH_PREFIX_LENGTH

CITATION_SCHEME = "eventloom://"
_CITATION_RE = re.compile(
    r"^eventloom://(?P<session>[A-Za-z0-9_.-]{1,128})/events/(?P<seq>[1-9][0-9]{0,18})#(?P<prefix>[0-9a-f]{12,64})$"
)


class Citation:
    """A parsed citation: which session, which seq, and the hash prefix it pins (immutable value)."""

    __slots__ = ("hash_prefix", "seq", "session")

    def __init__(self, session: str, seq: int, hash_prefix: str) -> None:
        object.__setattr__(self, "session", session)
        object.__setattr__(self, "seq", seq)
        object.__setattr__(self, "hash_prefix", hash_prefix)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Citation is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Citation) and (self.session, self.seq, self.hash_prefix) == (
            other.session,
            other.seq,
            other.hash_prefix,
        )

    def __hash__(self) -> int:
        return hash((self.session, self.seq, self.hash_prefix))

    def __repr__(self) -> str:
        return f"Citation({self.session!r}, {self.seq}, {self.hash_prefix!r})"

    def __str__(self) -> str:
        return f"{CITATION_SCHEME}{self.session}/events/{self.seq}#{self.hash_prefix}"

    def matches(self, event_hash: str) -> bool:
        """True when ``event_hash`` is the hash this citation pins."""
        return event_hash.startswith(self.hash_prefix)


def format_citation(session: str, seq: int, event_hash: str) -> str:
    """The canonical citation string for an event."""
    return f"{CITATION_SCHEME}{session}/events/{seq}#{event_hash[:CITATION_HASH_PREFIX_LENGTH]}"


def parse_citation(text: str, *, field: str = "citation") -> Citation:
    """Parse a citation string, raising a structured error that shows the expected shape."""
    match = _CITATION_RE.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise InvalidRequestError(
            f"not an Eventloom citation: {text!r}",
            field=field,
            remediation="Use the form eventloom://<session>/events/<seq>#<12+ lowercase hex of the event hash>.",
        )
    return Citation(match["session"], int(match["seq"]), match["prefix"])
