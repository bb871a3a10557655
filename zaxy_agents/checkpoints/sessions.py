"""LangGraph thread ids -> Eventloom session ids (deterministic, injective, documented in docs/langgraph.md).

A thread id may contain any characters; a session id must match ``^[A-Za-z0-9_.-]{1,128}$``.

* ``<prefix>.<thread_id>`` when the thread id is 1-100 characters from ``A-Z a-z 0-9 _ -`` (UUIDs, slugs);
* ``<prefix>.<slug>.<sha256(thread_id)[:20]>`` otherwise (the empty thread id too, as LangGraph's savers accept
  it), where ``slug`` is the thread id with every run of
  other characters replaced by ``-`` and cut to 48 characters (``"t"`` when nothing is left).

The first form has exactly one dot after the prefix and the second two, so the forms never collide; the
hash makes the second injective in practice. The original thread id is kept in every event payload.
"""

from __future__ import annotations

import hashlib
import re

from zaxy_agents.errors import InvalidRequestError

DEFAULT_SESSION_PREFIX = "langgraph"
_PLAIN_THREAD = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
_PREFIX = re.compile(r"^[A-Za-z0-9_-]{1,24}$")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9_-]+")


def check_prefix(prefix: str) -> str:
    if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
        raise InvalidRequestError(
            f"invalid session prefix {prefix!r}",
            field="session_prefix",
            remediation="Use 1-24 characters from A-Z, a-z, 0-9, '_' and '-' (no dots).",
        )
    return prefix


def thread_session(thread_id: str, prefix: str = DEFAULT_SESSION_PREFIX) -> str:
    """The session holding ``thread_id``'s checkpoints, writes and transcript turns."""
    if not isinstance(thread_id, str):
        raise InvalidRequestError(
            f"thread_id must be a string, got {thread_id!r}",
            field="configurable.thread_id",
            remediation='Pass config={"configurable": {"thread_id": "..."}}.',
        )
    if _PLAIN_THREAD.fullmatch(thread_id):
        return f"{prefix}.{thread_id}"
    slug = _UNSAFE_RUN.sub("-", thread_id)[:48].strip("-") or "t"
    digest = hashlib.sha256(thread_id.encode("utf-8")).hexdigest()[:20]
    return f"{prefix}.{slug}.{digest}"


def is_thread_session(session: str, prefix: str = DEFAULT_SESSION_PREFIX) -> bool:
    return session.startswith(prefix + ".") and len(session) > len(prefix) + 1
