"""Fabric operations of the front door: checkout, bootstrap, context assembly, feedback, invalidation,
capabilities."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from zaxy_agents.checkout.assemble import assemble
from zaxy_agents.checkout.assembly import assemble_context
from zaxy_agents.checkout.models import CheckoutPacket
from zaxy_agents.checkout.purpose import PRESETS, resolve_purpose
from zaxy_agents.checkout.replay import MAX_RECENT_EVENTS, recent_events
from zaxy_agents.checkout.tokens import DEFAULT_ENCODING, SUPPORTED_ENCODINGS
from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.models import Event, SessionSummary
from zaxy_agents.eventloom.scope_patterns import check_patterns, expand, is_pattern
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.instants import parse_instant
from zaxy_agents.projection.model import entity_key
from zaxy_agents.projection.records import EntityVersion
from zaxy_agents.retrieval.cues import checked_cues
from zaxy_agents.retrieval.profiles import PROFILES
from zaxy_agents.retrieval.ranking import DEFAULT_RETRIEVAL_PROFILE, RETRIEVAL_PROFILES, get_retrieval_profile
from zaxy_agents.salience.contracts import SURFACED_EVENT

from .feedback_fields import feedback_details, invalid_at_for
from .service import FabricCore, FabricService

DEFAULT_REPLAY = 8  # recent events when only replay_from_seq is given
SURFACED_LIMIT = 200  # memories one memory.surfaced event names (its contract's bound)

if TYPE_CHECKING:
    from zaxy_agents.checkout.models import EvidenceItem, PurposePolicy

    from .integrity_ops import IntegrityService
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
        self,
        core: FabricCore,
        events: LogService,
        projection: ProjectionService,
        retrieval: RetrievalService,
        integrity: IntegrityService,
    ) -> None:
        """``integrity``: ``capabilities`` reports the sessions that cannot be read."""
        super().__init__(core)
        self.events = events
        self.projection = projection
        self.retrieval = retrieval
        self.integrity = integrity

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
        replay_from_seq: int | None = None,
        max_recent_events: int | None = None,
        retrieval_profile: str | None = None,
        cues: dict[str, str] | None = None,
    ) -> CheckoutPacket:
        """The front door: current facts, cited evidence, working set, answerability and guidance, budgeted.

        ``session`` is the caller's thread (its working state and feedback target); ``scope`` the sessions to
        recall from, as ids or ``fnmatch`` patterns (``"langgraph.*"``) like the LangGraph middleware's
        (default: just ``session``; with neither, all sessions).
        ``ref`` checks memory out as of a memory ref (``refs/tags/v1``) or a seq of ``session``.
        ``max_recent_events`` / ``replay_from_seq`` add the session's latest events (from that seq on; 8 when only
        the seq is given) as the ``replay`` lane.
        ``retrieval_profile``: which 2.2 ranking features apply (``plain``, ``balanced``, ``full``; see
        docs/retrieval.md); shown in ``diagnostics.retrieval_profile``. ``cues``: the caller's context (``mission``,
        ``workspace``, ``tool``, ``phase``), blended by overlap with the cues events recorded (``full`` profile).
        """
        _check_query(query, max_tokens, k)
        ranking = get_retrieval_profile(retrieval_profile)
        cues = checked_cues(cues)
        as_of = parse_instant(as_of)
        policy = resolve_purpose(purpose)
        sessions = self._scope(session, scope)
        moment, ref_label = self._resolve_ref(session, ref, as_of)
        recent = self._recent(session, replay_from_seq, max_recent_events, moment, policy.suppress_event_types)
        # Lag is measured against the log as it was when the checkout started: events another writer appends
        # meanwhile (a checkpointer saving the previous step) are newer than the question, not missing memory.
        listing = self.log.sessions() if sessions is None else None  # a whole memory: one listing for both
        heads = self._event_counts(sessions, listing)
        self.projection.project(sessions, listing)
        self.retrieval.retriever.vectors.embed_pending(32)
        projector = self.projection.projector
        lag = self._projection_lag(heads)
        packet = assemble(
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
            recent=recent,
            damaged=projector.damaged,
            ranking=ranking,
            cues=cues,
        )
        if ranking.salience and session is not None and moment is None:
            self._record_surfacing(session, packet)
        return packet

    def _record_surfacing(self, session: str, packet: CheckoutPacket) -> None:
        """Seed 004's weak reinforcement: under a profile that ranks by salience, the session's current facts a
        checkout showed get a ``memory.surfaced`` event (so salience is rebuilt by replay, like every signal)."""
        shown = [
            {"entity_name": fact.name, "entity_type": fact.entity_type}
            for fact in packet.current_facts
            if fact.session == session
        ][:SURFACED_LIMIT]
        if shown:
            payload = {"memories": shown, **({"query": packet.query} if packet.query else {})}
            self.events.append(session, SURFACED_EVENT, payload, actor="zaxy-checkout")

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
        queries: str | list[str],
        *,
        session: str | None = None,
        scope: list[str] | None = None,
        max_tokens: int = 4000,
        purpose: str | dict[str, Any] | None = None,
        encoding: str = DEFAULT_ENCODING,
        limit: int = 8,
        replay_from_seq: int | None = None,
        max_recent_events: int = 5,
        retrieval_profile: str | None = None,
        cues: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """One budgeted, prompt-ready bundle for one or several questions (each checked out on its share of the
        budget, citations de-duplicated), starting with the session's active working set, plus the session's
        latest events (the replay lane) and assembly metadata: each item's lane, the policy, per-lane counts."""
        questions = [queries] if isinstance(queries, str) else list(queries or [])
        if not questions or not all(isinstance(q, str) and q.strip() for q in questions) or len(questions) > 8:
            raise InvalidRequestError(
                "the query must be 1-8 non-empty strings",
                field="query",
                remediation="Pass the question (or the questions) the next turn needs answered.",
            )
        share = max(200, max_tokens // len(questions))
        packets = [
            self.checkout(
                q,
                session=session,
                scope=scope,
                max_tokens=share,
                purpose=purpose,
                encoding=encoding,
                k=limit,
                retrieval_profile=retrieval_profile,
                cues=cues,
                **({"replay_from_seq": replay_from_seq, "max_recent_events": max_recent_events} if i == 0 else {}),
            )
            for i, q in enumerate(questions)
        ]
        replay = {"from_seq": replay_from_seq, "max_recent_events": max_recent_events if session else 0}
        return assemble_context(
            questions, packets, max_tokens=max_tokens, share=share, limit=limit, replay=replay, encoding=encoding
        )

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
        **details: Any,
    ) -> Event:
        """Record how a cited fact was used: positive signals reinforce salience, negative ones are audit-only.

        Written in the seed's shape: ``{entity_name, entity_type, feedback, weight, citation?, reason?, ...}``.
        ``details`` are the seed's optional context fields (``importance``, ``query``, ``source``, ``score``,
        ``purpose``, ``outcome``; ``reason`` is the same as ``note``). ``message_id`` names the agent message that
        used the fact (feedback derived from an answer's citations is recorded once per message and citation).
        """
        if signal not in FEEDBACK_SIGNALS:
            raise InvalidRequestError(
                f"unknown feedback value {signal!r}",
                field="signal",
                remediation=f"Use one of {', '.join(FEEDBACK_SIGNALS)}.",
            )
        if not 0.0 < weight <= 10.0:
            raise InvalidRequestError("weight must be in (0, 10]", field="weight", remediation="Use 1.0 by default.")
        extra = feedback_details(details, reason=note)
        self._require_entity(session, entity, entity_type)
        if citation is not None:
            self.log.resolve(citation)
        payload = {
            "entity_name": entity,
            "entity_type": entity_type,
            "feedback": signal,
            "weight": weight,
            **({"citation": citation} if citation else {}),
            **extra,
            **({"message_id": message_id} if message_id else {}),
        }
        kind = "memory.reinforced" if FEEDBACK_SIGNALS[signal] else "memory.feedback"
        return self.events.append(session, kind, payload, actor=actor)

    def invalidate(
        self,
        session: str,
        entity: str,
        entity_type: str,
        *,
        reason: str | None = None,
        invalid_at: str | None = None,
        actor: str = "agent",
    ) -> Event:
        """Close the validity window of an entity's current version at ``invalid_at`` (default: now); nothing is
        deleted. ``invalid_at`` may not be in the future nor before the current version's ``valid_from``."""
        if reason is not None and not reason.strip():
            raise InvalidRequestError(
                "reason must not be blank",
                field="reason",
                remediation="Say why the fact is no longer true, or omit it.",
            )
        current = self._require_entity(session, entity, entity_type)
        payload: dict[str, Any] = {"entity_name": entity, "entity_type": entity_type}
        if invalid_at is not None:
            payload["invalid_at"] = invalid_at_for(invalid_at, current.valid_from)
        if reason:
            payload["reason"] = reason
        return self.events.append(session, "memory.invalidated", payload, actor=actor)

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
            "damaged_sessions": self.integrity.damaged_sessions(),
            "eventloom_path": str(self.settings.eventloom_path),
            "embedder": vectors.model_id,
            "retrieval_profiles": sorted(PROFILES),
            "ranking_profiles": {
                "default": DEFAULT_RETRIEVAL_PROFILE,
                "profiles": {name: policy.to_dict() for name, policy in RETRIEVAL_PROFILES.items()},
            },
            "purposes": sorted(PRESETS),
            "token_encodings": list(SUPPORTED_ENCODINGS),
            "extractors": self.features.extractors.registered_types(),
            "answerability": ["answer_from_memory", "refresh_recommended", "ask_user"],
        }

    # ------------------------------------------------------------------ internals
    def _recent(
        self,
        session: str | None,
        from_seq: int | None,
        limit: int | None,
        until: str | None,
        skip_types: list[str],
    ) -> list[EvidenceItem]:
        if from_seq is None and not limit:
            return []
        if limit is not None and not 0 <= limit <= MAX_RECENT_EVENTS:
            raise InvalidRequestError(
                f"max_recent_events must be between 0 and {MAX_RECENT_EVENTS}",
                field="max_recent_events",
                remediation="Ask for a handful of recent events (default 5 for context_assemble).",
            )
        if from_seq is not None and from_seq < 1:
            raise InvalidRequestError("replay_from_seq must be >= 1", field="replay_from_seq", remediation="Use 1.")
        if session is None:
            return []
        return recent_events(
            self.log,
            session,
            limit=limit if limit is not None else DEFAULT_REPLAY,
            from_seq=from_seq,
            until=until,
            skip_types=skip_types,
        )

    def _require_entity(self, session: str, entity: str, entity_type: str) -> EntityVersion:
        validate_session_id(session)
        self.projection.project([session])
        current = self.projection.projector.catalog.current(entity_key(session, entity_type, entity))
        if current is None:
            raise NotFoundError(
                f"no current {entity_type} {entity!r} in session {session!r}",
                field="entity",
                remediation="Use the entity name and type exactly as a checkout returned them (current facts only).",
            )
        return current

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

    def _event_counts(
        self, sessions: list[str] | None, listing: Sequence[SessionSummary] | None = None
    ) -> dict[str, int]:
        if sessions is not None:  # only the sessions asked about: O(scope), not O(every session in the folder)
            heads = {session: self.log.head(session) for session in sessions}
            return {session: head.seq for session, head in heads.items() if head is not None}
        return {summary.session: summary.event_count for summary in (listing or self.log.sessions())}

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
