"""Git-style memory refs: named pointers at a (seq, hash), stored as events in the log itself.

``refs/heads/<name>`` and ``refs/tags/<name>`` are set with ``memory.ref.updated`` events and removed with
``memory.ref.deleted`` events, so refs are replayable and cited like everything else. ``HEAD`` resolves to
the log tail unless it was explicitly pinned (detached) with an update; deleting ``HEAD`` re-attaches it to
the tail. Later features check memory out "as of" a ref.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from zaxy_agents.errors import InvalidRequestError, NotFoundError

from .citations import format_citation
from .protocol import EventLog

REF_UPDATED = "memory.ref.updated"
REF_DELETED = "memory.ref.deleted"
_REF_NAME = re.compile(r"^(HEAD|refs/(heads|tags)/[A-Za-z0-9_][A-Za-z0-9_.\-/]{0,99})$")


class RefTarget(BaseModel):
    """Where a ref points."""

    name: str
    session: str
    seq: int
    hash: str
    symbolic: bool = False

    @property
    def citation(self) -> str:
        return format_citation(self.session, self.seq, self.hash)


def validate_ref_name(name: object) -> str:
    """``HEAD``, ``refs/heads/<name>`` or ``refs/tags/<name>`` (no ``..``)."""
    if not isinstance(name, str) or not _REF_NAME.fullmatch(name) or ".." in name or name.endswith("/"):
        raise InvalidRequestError(
            f"invalid ref name {name!r}",
            field="ref",
            remediation="Use HEAD, refs/heads/<name> or refs/tags/<name> with [A-Za-z0-9_.-/] and no '..'.",
        )
    return name


@dataclass
class _SessionRefs:
    scanned_to: int = 0
    refs: dict[str, tuple[int, str]] = field(default_factory=dict)


class MemoryRefs:
    """Read and move refs of one :class:`EventLog`; the ref table is rebuilt incrementally from the log."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._cache: dict[str, _SessionRefs] = {}

    def set(self, session: str, name: str, seq: int | None = None, *, actor: str = "agent") -> RefTarget:
        """Point ``name`` at ``seq`` (default: the current tail) by appending a ``memory.ref.updated`` event."""
        validate_ref_name(name)
        head = self.log.head(session)
        if head is None:
            raise NotFoundError(
                f"session {session!r} has no events to point at",
                field="session",
                remediation="Append events first.",
            )
        target = self.log.get(session, head.seq if seq is None else seq)
        previous = self._table(session).get(name)
        payload: dict[str, Any] = {"ref": name, "target_seq": target.seq, "target_hash": target.hash}
        if previous is not None:
            payload["previous_seq"], payload["previous_hash"] = previous
        self.log.append(session, REF_UPDATED, payload, actor=actor)
        return RefTarget(name=name, session=session, seq=target.seq, hash=target.hash)

    def delete(self, session: str, name: str, *, actor: str = "agent") -> None:
        """Remove a ref (an event records it; the history keeps every past position)."""
        validate_ref_name(name)
        if name not in self._table(session):
            raise NotFoundError(f"no ref {name!r} in session {session!r}", field="ref", remediation="List refs.")
        self.log.append(session, REF_DELETED, {"ref": name}, actor=actor)

    def get(self, session: str, name: str) -> RefTarget:
        """Resolve a ref name; ``HEAD`` falls back to the tail when not pinned."""
        validate_ref_name(name)
        stored = self._table(session).get(name)
        if stored is not None:
            return RefTarget(name=name, session=session, seq=stored[0], hash=stored[1])
        if name == "HEAD":
            head = self.log.head(session)
            if head is not None:
                return RefTarget(name=name, session=session, seq=head.seq, hash=head.hash, symbolic=True)
        raise NotFoundError(
            f"no ref {name!r} in session {session!r}",
            field="ref",
            remediation="Create it with MemoryRefs.set(...) or list refs with MemoryRefs.list(...).",
        )

    def list(self, session: str) -> list[RefTarget]:
        """All stored refs of a session, plus HEAD."""
        table = self._table(session)
        refs = [RefTarget(name=n, session=session, seq=s, hash=h) for n, (s, h) in sorted(table.items())]
        if "HEAD" not in table and self.log.head(session) is not None:
            refs.insert(0, self.get(session, "HEAD"))
        return refs

    def _table(self, session: str) -> dict[str, tuple[int, str]]:
        state = self._cache.setdefault(session, _SessionRefs())
        for envelope in self.log.replay_envelopes(session, state.scanned_to + 1):
            state.scanned_to = envelope["seq"]
            kind = envelope["type"]
            if kind == REF_UPDATED:
                payload = envelope["payload"]
                state.refs[payload["ref"]] = (payload["target_seq"], payload["target_hash"])
            elif kind == REF_DELETED:
                state.refs.pop(envelope["payload"]["ref"], None)
        return state.refs
