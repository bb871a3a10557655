"""Progressive disclosure: search a cheap index, look around a hit, open only the events you need.

An agent pays tokens for what it reads. Instead of one big result, three steps over the same engine:

1. :meth:`search_index` — hits as one-line index rows: ``id`` (the event's citation), type, a short title, status,
   score, and ``tokens``: what opening that event costs (tiktoken, the JSON :meth:`get_events` returns).
2. :meth:`timeline` — the events just before and after a hit in its session, as the same rows.
3. :meth:`get_events` — the full events by id, each re-verified against its hash first (an event whose content
   does not match its citation is reported, never returned), within an optional token budget.

Ids are citations (``eventloom://<session>/events/<seq>#<hash12>``), so every step is resolvable, replayable and
checked the way every citation is.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from zaxy_agents.checkout.tokens import DEFAULT_ENCODING, count_tokens
from zaxy_agents.errors import InvalidRequestError, ZaxyError
from zaxy_agents.eventloom.canonical import event_hash
from zaxy_agents.eventloom.citations import format_citation, parse_citation

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from .retrieval_ops import RetrievalService

TITLE_MAX_CHARS = 120
MAX_TIMELINE_SPAN = 25
MAX_GET = 20
_TITLE_KEYS = (
    "title",
    "fact",
    "decision",
    "text",
    "prompt",
    "question",
    "finding",
    "summary",
    "command",
    "path",
    "task_id",
    "tool",
    "reason",
    "last_assistant_message",
    "compact_summary",
)


def event_title(envelope: dict[str, Any]) -> str:
    """A one-line title for an index row: the payload's most telling field, cut to 120 characters."""
    payload = envelope.get("payload") if isinstance(envelope.get("payload"), dict) else {}
    value = next((payload[key] for key in _TITLE_KEYS if payload.get(key) not in (None, "")), None)
    text = value if isinstance(value, str) else json.dumps(value if value is not None else payload, sort_keys=True)
    flat = " ".join(text.split())
    return flat if len(flat) <= TITLE_MAX_CHARS else flat[: TITLE_MAX_CHARS - 1] + "…"


def opened(envelope: dict[str, Any]) -> dict[str, Any]:
    """An event as :meth:`DisclosureService.get_events` returns it (and what ``tokens`` counts)."""
    return {
        "id": format_citation(envelope["session"], int(envelope["seq"]), str(envelope["hash"])),
        "type": envelope["type"],
        "actor": envelope.get("actor"),
        "timestamp": envelope.get("timestamp"),
        "payload": envelope.get("payload"),
    }


def opening_cost(envelope: dict[str, Any], encoding: str = DEFAULT_ENCODING) -> int:
    return count_tokens(json.dumps(opened(envelope), ensure_ascii=False, sort_keys=True), encoding)


def index_row(envelope: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": format_citation(envelope["session"], int(envelope["seq"]), str(envelope["hash"])),
        "session": envelope["session"],
        "seq": int(envelope["seq"]),
        "type": envelope["type"],
        "timestamp": envelope.get("timestamp"),
        "title": event_title(envelope),
        "tokens": opening_cost(envelope),
        **extra,
    }


class DisclosureService(FabricService):
    """Service: the progressive-disclosure part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def __init__(self, core: FabricCore, retrieval: RetrievalService) -> None:
        super().__init__(core)
        self.retrieval = retrieval

    def _envelope(self, session: str, seq: int) -> dict[str, Any] | None:
        for envelope in self.log.replay_envelopes(session, seq, seq):
            return envelope
        return None

    def search_index(
        self, text: str, *, sessions: list[str] | None = None, k: int = 10, as_of: str | None = None
    ) -> dict[str, Any]:
        """Step 1: the hits of a fused search as cheap index rows (``tokens``: the cost of opening each)."""
        response = self.retrieval.query(text, sessions=sessions, k=k, as_of=as_of)
        rows = []
        for hit in response.hits:
            envelope = self._envelope(hit.session, hit.seq)
            if envelope is None:
                continue
            rows.append(index_row(envelope, score=hit.score, status=hit.status))
        return {
            "query": text,
            "hits": rows,
            "tokens_to_open_all": sum(row["tokens"] for row in rows),
            "next": "memory_timeline(id) for context around a hit; memory_get(ids) to open the ones you need",
            "warnings": list(response.warnings),
        }

    def timeline(self, event_id: str, *, before: int = 5, after: int = 5) -> dict[str, Any]:
        """Step 2: the events around ``event_id`` (a citation) in its session, as index rows."""
        for name, value in (("before", before), ("after", after)):
            if not 0 <= value <= MAX_TIMELINE_SPAN:
                raise InvalidRequestError(
                    f"{name} must be between 0 and {MAX_TIMELINE_SPAN}",
                    field=name,
                    remediation="Ask for a few events around the hit; page with another timeline call.",
                )
        anchor = self.log.resolve(event_id)  # refuses an id whose hash prefix does not match
        head = self.log.head(anchor.session)
        last = head.seq if head is not None else anchor.seq
        start, end = max(1, anchor.seq - before), min(last, anchor.seq + after)
        rows = [
            index_row(envelope, anchor=int(envelope["seq"]) == anchor.seq)
            for envelope in self.log.replay_envelopes(anchor.session, start, end)
        ]
        return {
            "anchor": anchor.citation,
            "session": anchor.session,
            "events": rows,
            "has_earlier": start > 1,
            "has_later": end < last,
            "tokens_to_open_all": sum(row["tokens"] for row in rows),
        }

    def get_events(self, ids: list[str], *, max_tokens: int | None = None) -> dict[str, Any]:
        """Step 3: the full events, each verified against its hash, until ``max_tokens`` would be exceeded."""
        if not ids or len(ids) > MAX_GET:
            raise InvalidRequestError(
                f"ids must list 1 to {MAX_GET} event ids", field="ids", remediation="Open a few events at a time."
            )
        events: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        not_returned: list[str] = []
        used = 0
        for event_id in ids:
            try:
                citation = parse_citation(event_id)
                self.log.resolve(event_id)
                envelope = self._envelope(citation.session, citation.seq)
            except ZaxyError as exc:
                errors.append({"id": event_id, **exc.to_dict()["error"]})
                continue
            if envelope is None:
                continue
            if event_hash(envelope) != envelope.get("hash"):
                errors.append(
                    {
                        "id": event_id,
                        "code": "integrity_error",
                        "message": f"event {citation.seq} of {citation.session} does not match its hash: not served",
                        "remediation": f"Run `zaxy verify -s {citation.session}` (and `zaxy doctor`).",
                    }
                )
                continue
            event = opened(envelope)
            cost = opening_cost(envelope)
            if max_tokens is not None and used + cost > max_tokens:
                not_returned.append(event_id)
                continue
            used += cost
            events.append({**event, "tokens": cost})
        return {"events": events, "tokens": used, "not_returned": not_returned, "errors": errors}
