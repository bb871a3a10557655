"""Fabric operations of the front door: checkout, bootstrap, context assembly, feedback, invalidation,
capabilities."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from zaxy_agents.checkout.assemble import assemble
from zaxy_agents.checkout.models import CheckoutPacket
from zaxy_agents.checkout.purpose import PRESETS, resolve_purpose
from zaxy_agents.checkout.tokens import DEFAULT_ENCODING, SUPPORTED_ENCODINGS
from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.models import Event
from zaxy_agents.eventloom.scope_patterns import check_patterns, expand, is_pattern
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.instants import parse_instant
from zaxy_agents.projection.model import entity_key
from zaxy_agents.retrieval.profiles import PROFILES

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from zaxy_agents.checkout.models import PurposePolicy

    from .log_ops import LogService
    from .projection_ops import ProjectionService
    from .retrieval_ops import RetrievalService

FEEDBACK_SIGNALS = {
    "used": True,
    "helpful": True,
    "confirmed": True,
    "irrelevant": False,
    "wrong": False,
    "outdated": False,
}
MAX_QUERY_CHARS = 4000
MAX_TOKENS_LIMIT = 200_000


class CheckoutService(FabricService):
    """Service: the Memory Checkout part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def __init__(
        self, core: FabricCore, events: LogService, projection: ProjectionService, retrieval: RetrievalService
    ) -> None:
        super().__init__(core)
        self.events = events
        self.projection = projection
        self.retrieval = retrieval

    def checkout(
        self,
        query: str,
        *,
        session: str | None = None,
        scope: list[str] | None = None,
        max_tokens: int | None = None,
        purpose: str | dict[str, Any] | PurposePolicy | None = None,
        ref: str | int | None = None,
        as_of: str | None = None,
        k: int = 8,
        encoding: str = DEFAULT_ENCODING,
    ) -> CheckoutPacket:
        """The front door: current facts, cited evidence, working set, answerability and guidance, budgeted.

        ``session`` is the caller's thread (its working state and feedback target); ``scope`` the sessions to
        recall from, as ids or ``fnmatch`` patterns (``"langgraph.*"``) like the LangGraph middleware's
        (default: just ``session``; with neither, all sessions).
        ``ref`` checks memory out as of a memory ref (``refs/tags/v1``) or a seq of ``session``.
        """
        _check_query(query, max_tokens, k)
        as_of = parse_instant(as_of)
        policy = resolve_purpose(purpose)
        sessions = self._scope(session, scope)
        moment, ref_label = self._resolve_ref(session, ref, as_of)
        # Lag is measured against the log as it was when the checkout started: events another writer appends
        # meanwhile (a checkpointer saving the previous step) are newer than the question, not missing memory.
        heads = self._event_counts(sessions)
        self.projection.project(sessions)
        self.retrieval.retriever.vectors.embed_pending(32)
        projector = self.projection.projector
        lag = self._projection_lag(heads)
        return assemble(
            query=query.strip(),
            session=session,
            scope=sessions,
            catalog=projector.catalog,
            retriever=self.retrieval.retriever,
            log=self.log,
            purpose=policy,
            max_tokens=max_tokens,
            encoding=encoding,
            as_of=moment,
            ref=ref_label,
            k=k,
            projection_lag=lag,
            embedding_lag=self.retrieval.retriever.vectors.lag(),
            degraded=projector.degraded or projector.writer_error(),
            extensions=self.features.checkout_extensions,
            evidence_resolves=self.evidence_check,
            notices=projector.take_notices(),
        )

    def bootstrap(
        self,
        session: str,
        *,
        scope: list[str] | None = None,
        max_tokens: int | None = 2000,
        purpose: str | dict[str, Any] | None = None,
        encoding: str = DEFAULT_ENCODING,
    ) -> CheckoutPacket:
        """A question-free packet for the start of a session: stable memory and session state, no retrieval."""
        return self.checkout(
            "", session=session, scope=scope, max_tokens=max_tokens, purpose=purpose, encoding=encoding
        )

    def context_assemble(
        self,
        queries: list[str],
        *,
        session: str | None = None,
        scope: list[str] | None = None,
        max_tokens: int = 4000,
        purpose: str | dict[str, Any] | None = None,
        encoding: str = DEFAULT_ENCODING,
    ) -> dict[str, Any]:
        """One budgeted context block for several questions: each checked out, citations de-duplicated."""
        if not queries or not all(isinstance(q, str) and q.strip() for q in queries) or len(queries) > 8:
            raise InvalidRequestError(
                "queries must be 1-8 non-empty strings",
                field="queries",
                remediation="Pass the questions the next turn needs answered.",
            )
        share = max(200, max_tokens // len(queries))
        packets = [
            self.checkout(q, session=session, scope=scope, max_tokens=share, purpose=purpose, encoding=encoding)
            for q in queries
        ]
        seen: set[str] = set()
        blocks = []
        for packet in packets:
            lines = [
                line
                for line in packet.prompt.splitlines()
                if "eventloom://" not in line or _citation_in(line) not in seen
            ]
            seen.update(_citation_in(line) for line in packet.prompt.splitlines() if "eventloom://" in line)
            blocks.append("\n".join(lines))
        return {
            "context": "\n\n".join(blocks),
            "citations": sorted(seen),
            "answerability": {p.query: p.quality.answerability for p in packets},
            "budget_requested": max_tokens,
            "budget_used": sum(p.diagnostics.budget_used for p in packets),
        }

    def feedback(
        self,
        session: str,
        entity: str,
        entity_type: str,
        signal: str,
        *,
        weight: float = 1.0,
        citation: str | None = None,
        note: str | None = None,
        actor: str = "agent",
        message_id: str | None = None,
    ) -> Event:
        """Record how a cited fact was used: positive signals reinforce salience, negative ones are audit-only.

        ``message_id`` names the agent message that used the fact (feedback derived from an answer's citations
        is recorded once per message and citation).
        """
        if signal not in FEEDBACK_SIGNALS:
            raise InvalidRequestError(
                f"unknown feedback signal {signal!r}",
                field="signal",
                remediation=f"Use one of {', '.join(FEEDBACK_SIGNALS)}.",
            )
        if not 0.0 < weight <= 10.0:
            raise InvalidRequestError("weight must be in (0, 10]", field="weight", remediation="Use 1.0 by default.")
        self._require_entity(session, entity, entity_type)
        if citation is not None:
            self.log.resolve(citation)
        payload = {
            "entity": entity,
            "entity_type": entity_type,
            "signal": signal,
            "weight": weight,
            **({"citation": citation} if citation else {}),
            **({"note": note} if note else {}),
            **({"message_id": message_id} if message_id else {}),
        }
        kind = "memory.reinforced" if FEEDBACK_SIGNALS[signal] else "memory.feedback"
        return self.events.append(session, kind, payload, actor=actor)

    def invalidate(self, session: str, entity: str, entity_type: str, *, reason: str, actor: str = "agent") -> Event:
        """Close the validity window of an entity's current version (nothing is deleted)."""
        if not reason or not reason.strip():
            raise InvalidRequestError(
                "a reason is required to invalidate memory",
                field="reason",
                remediation="Say why the fact is no longer true.",
            )
        self._require_entity(session, entity, entity_type)
        return self.events.append(
            session, "memory.invalidated", {"entity": entity, "entity_type": entity_type, "reason": reason}, actor=actor
        )

    def capabilities(self) -> dict[str, Any]:
        """What this memory can do right now, including degraded modes (never silently degraded)."""
        projector = self.projection.projector
        vectors = self.retrieval.retriever.vectors
        return {
            "backend": {
                "eventloom": type(self.log).__name__,
                "graph": projector.graph_backend,
            },
            "degraded": projector.degraded or projector.writer_error(),
            "eventloom_path": str(self.settings.eventloom_path),
            "embedder": vectors.model_id,
            "retrieval_profiles": sorted(PROFILES),
            "purposes": sorted(PRESETS),
            "token_encodings": list(SUPPORTED_ENCODINGS),
            "extractors": self.features.extractors.registered_types(),
            "answerability": ["answer_from_memory", "refresh_recommended", "ask_user"],
        }

    # ------------------------------------------------------------------ internals
    def _require_entity(self, session: str, entity: str, entity_type: str) -> None:
        validate_session_id(session)
        self.projection.project([session])
        if self.projection.projector.catalog.current(entity_key(session, entity_type, entity)) is None:
            raise NotFoundError(
                f"no current {entity_type} {entity!r} in session {session!r}",
                field="entity",
                remediation="Use the entity name and type exactly as a checkout returned them (current facts only).",
            )

    def _resolve_ref(
        self, session: str | None, ref: str | int | None, as_of: str | None
    ) -> tuple[str | None, str | None]:
        if ref is None:
            return as_of, None
        if session is None:
            raise InvalidRequestError("ref needs a session", field="ref", remediation="Pass session= with ref=.")
        seq = ref if isinstance(ref, int) else int(ref) if isinstance(ref, str) and ref.isdigit() else None
        target = (
            self.log.get(session, seq) if seq is not None else self.log.get(session, self.refs.get(session, ref).seq)
        )
        return target.timestamp, f"{ref}@{target.citation}"

    def _event_counts(self, sessions: list[str] | None) -> dict[str, int]:
        return {
            summary.session: summary.event_count
            for summary in self.log.sessions()
            if sessions is None or summary.session in sessions
        }

    def _scope(self, session: str | None, scope: list[str] | None) -> list[str] | None:
        return _scope_of(session, scope, lambda: (summary.session for summary in self.log.sessions()))

    def _projection_lag(self, heads: dict[str, int]) -> int:
        cursors = self.projection.projector.catalog.cursors
        return sum(max(0, count - cursors.get(session, (0, ""))[0]) for session, count in heads.items())


def _scope_of(session: str | None, scope: list[str] | None, existing: Callable[[], Iterable[str]]) -> list[str] | None:
    """``session`` plus ``scope`` (session ids or patterns such as ``"langgraph.*"``, as the LangGraph
    middleware takes them); ``None`` (everything) when neither is given."""
    if session is not None:
        validate_session_id(session)
    if scope is not None:
        patterns = check_patterns(scope, "scope")
        found = expand(patterns, existing() if any(map(is_pattern, patterns)) else ())
        return sorted(found | ({session} if session else set()))
    return [session] if session is not None else None


def _check_query(query: str, max_tokens: int | None, k: int) -> None:
    if not isinstance(query, str) or len(query) > MAX_QUERY_CHARS:
        raise InvalidRequestError(
            f"query must be a string of at most {MAX_QUERY_CHARS} characters",
            field="query",
            remediation="Shorten the question.",
        )
    if max_tokens is not None and not 64 <= max_tokens <= MAX_TOKENS_LIMIT:
        raise InvalidRequestError(
            f"max_tokens must be between 64 and {MAX_TOKENS_LIMIT}",
            field="max_tokens",
            remediation="Omit it for an unbounded packet.",
        )
    if not 1 <= k <= 50:
        raise InvalidRequestError("k must be between 1 and 50", field="k", remediation="Use 8 by default.")


def _citation_in(line: str) -> str:
    start = line.find("eventloom://")
    end = line.find(")", start)
    return line[start : end if end > 0 else None]
