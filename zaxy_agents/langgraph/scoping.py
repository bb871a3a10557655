"""Which memory session an agent writes to and which sessions it recalls from.

Scoping is decided by the developer — the node/middleware/tool constructor and the graph config — never by
the model: tools take no session argument a prompt injection could spoof.

Write session, first match wins:

1. ``config["configurable"]["zaxy_session"]`` (an explicit per-run session);
2. ``session=`` given to the constructor (one fixed session for every thread);
3. the LangGraph thread: ``configurable["thread_id"]`` mapped exactly as ZaxyCheckpointer maps it
   (``langgraph.<thread_id>``; an attached ZaxyCheckpointer's own ``session_prefix`` is honoured), so nodes,
   tools and checkpointer share one session per thread.

Recall scope: the write session plus ``scope=`` (session ids or ``fnmatch`` patterns such as
``"langgraph.*"`` for every thread, ``"langgraph-store"`` for ZaxyStore items, ``"*"`` for everything in the
Eventloom folder), replaced per run by ``configurable["zaxy_scope"]``. The default is the thread alone: memory
crosses threads only where the developer says so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zaxy_agents.checkpoints import DEFAULT_SESSION_PREFIX, thread_session
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.scope_patterns import check_patterns, expand, is_pattern
from zaxy_agents.eventloom.validation import validate_session_id

if TYPE_CHECKING:
    from zaxy_agents.fabric import MemoryFabric

SESSION_KEY = "zaxy_session"
SCOPE_KEY = "zaxy_scope"
# LangGraph puts the compiled graph's checkpointer and durability mode into every node's config.
_CHECKPOINTER_KEY = "__pregel_checkpointer"
_DURABILITY_KEY = "__pregel_durability"


@dataclass(frozen=True)
class ResolvedScope:
    """The sessions one call works with."""

    session: str  # where turns, tool calls, checkouts, compactions and appends are written
    recall: list[str]  # sessions checkouts and queries read (always includes ``session``)
    thread_id: str | None
    checkpointer_captures: bool  # an attached ZaxyCheckpointer records this thread's turns itself

    def allows(self, session: str) -> bool:
        return session in self.recall


@dataclass(frozen=True)
class MemoryScope:
    """The developer's scoping policy (see the module docstring)."""

    session: str | None = None
    scope: tuple[str, ...] = field(default_factory=tuple)
    session_prefix: str = DEFAULT_SESSION_PREFIX

    def __post_init__(self) -> None:
        if self.session is not None:
            validate_session_id(self.session, field="session")
        object.__setattr__(self, "scope", _check_patterns(self.scope, "scope"))

    def resolve(self, fabric: MemoryFabric, config: Mapping[str, Any] | None) -> ResolvedScope:
        configurable = dict((config or {}).get("configurable") or {})
        thread = configurable.get("thread_id")
        thread_id = str(thread) if thread is not None else None
        saver = _zaxy_checkpointer(configurable, fabric)
        explicit = configurable.get(SESSION_KEY)
        if explicit is not None:
            session = validate_session_id(explicit, field=f"configurable.{SESSION_KEY}")
        elif self.session is not None:
            session = self.session
        elif thread_id is not None:
            session = (
                saver.session_of(thread_id) if saver is not None else thread_session(thread_id, self.session_prefix)
            )
        else:
            raise InvalidRequestError(
                "no memory session: the graph config has no thread_id",
                field="configurable.thread_id",
                remediation='Invoke with config={"configurable": {"thread_id": "..."}} (or "zaxy_session"), or pass '
                "session= to the Zaxy node, middleware or tools.",
            )
        patterns = configurable.get(SCOPE_KEY)
        wanted = _check_patterns(patterns, f"configurable.{SCOPE_KEY}") if patterns is not None else self.scope
        captures = (
            saver is not None
            and saver.captures_transcripts
            and thread_id is not None
            and saver.session_of(thread_id) == session
            and configurable.get(_DURABILITY_KEY, "async") != "exit"
        )
        return ResolvedScope(session, _expand(fabric, wanted, session), thread_id, captures)


def memory_session(
    fabric: MemoryFabric,
    config: Mapping[str, Any] | None,
    *,
    session: str | None = None,
    session_prefix: str = DEFAULT_SESSION_PREFIX,
) -> str:
    """The session Zaxy's nodes, middleware and tools write to in this run: for your own tools that record
    events (``file.edit.applied``, ``command.completed``, ...) next to the conversation."""
    return MemoryScope(session=session, session_prefix=session_prefix).resolve(fabric, config).session


def _check_patterns(values: Any, where: str) -> tuple[str, ...]:
    return check_patterns(values, where)


def _expand(fabric: MemoryFabric, patterns: Sequence[str], session: str) -> list[str]:
    existing = (summary.session for summary in fabric.sessions()) if any(map(is_pattern, patterns)) else ()
    return sorted(expand(patterns, existing) | {session})


def _zaxy_checkpointer(configurable: Mapping[str, Any], fabric: MemoryFabric) -> Any:
    """The graph's ZaxyCheckpointer when it writes to the same Eventloom folder as ``fabric``."""
    from .checkpointer import ZaxyCheckpointer

    saver = configurable.get(_CHECKPOINTER_KEY)
    if not isinstance(saver, ZaxyCheckpointer):
        return None
    same = saver.fabric is fabric or _same_folder(saver.fabric.settings.eventloom_dir, fabric.settings.eventloom_dir)
    return saver if same else None


def _same_folder(left: str, right: str) -> bool:
    try:
        return os.path.samefile(left, right)
    except OSError:
        return os.path.abspath(left) == os.path.abspath(right)
