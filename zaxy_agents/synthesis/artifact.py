"""Reading a checkout's synthesis bundle back (what memory_synthesis_artifact / _evidence receive) and matching
a caller's candidate or row to it.

A client hands back the checkout it got; nothing in it is trusted as is: the bundle is parsed against the event
contracts, each candidate is recomputed from the ledger rows (a candidate that does not follow from them is
refused), and the fabric then re-reads each row's cited event (see fabric/synthesis_ops.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from zaxy_agents.errors import ConflictError, InvalidRequestError

from .contracts import AnswerCandidate, LedgerRow, SourceGroup, artifact_id
from .ledger import QUESTION_TYPES, candidates_of

SYNTHESIS = "checkout.diagnostics.synthesis"


@dataclass(frozen=True)
class Bundle:
    """A checkout's synthesis bundle, parsed and self-consistent (candidates follow from the rows)."""

    session: str | None
    query: str
    scope: list[str] | None
    as_of: str | None
    purpose: str
    question_type: str
    unit_cue: str | None
    candidates: list[dict[str, Any]]
    rows: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    quality: dict[str, Any]
    slot_plan: list[dict[str, Any]] | None

    @property
    def artifact_id(self) -> str:
        return artifact_id(self.query, self.candidates, self.rows)

    def payload(self) -> dict[str, Any]:
        """The ``memory.synthesis.artifact.created`` payload."""
        return {
            "artifact_id": self.artifact_id,
            "query": self.query,
            "checkout_session": self.session,
            "scope": self.scope,
            "as_of": self.as_of,
            "purpose": self.purpose,
            "question_type": self.question_type,
            "unit_cue": self.unit_cue,
            "answer_candidates": self.candidates,
            "ledger_rows": self.rows,
            "source_groups": self.groups,
            "quality": self.quality,
            "slot_plan": self.slot_plan,
            "authority_status": "non_authoritative",
        }


def _invalid(message: str, field: str, remediation: str) -> InvalidRequestError:
    return InvalidRequestError(message, field=field, remediation=remediation)


def _parsed(model: type, items: Any, field: str) -> list[dict[str, Any]]:
    if not isinstance(items, list):
        raise _invalid(f"{field} must be a list", field, "Pass the checkout response unchanged.")
    out = []
    for index, item in enumerate(items):
        try:
            out.append(model.model_validate(item).model_dump())
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise _invalid(
                f"{field}[{index}] is not a checkout {model.__name__}: {where}: {first['msg']}",
                f"{field}[{index}]" + (f".{where}" if where else ""),
                "Pass the checkout response (memory_checkout) unchanged.",
            ) from None
    return out


def read_bundle(checkout: Any) -> Bundle:
    """The synthesis bundle of ``checkout`` (a memory_checkout response), or a structured error naming the field."""
    if not isinstance(checkout, dict):
        raise _invalid("checkout must be the JSON object memory_checkout returned", "checkout", "Pass it unchanged.")
    query = checkout.get("query")
    if not isinstance(query, str) or not query.strip():
        raise _invalid("checkout.query is missing", "checkout.query", "Pass the checkout response unchanged.")
    diagnostics = checkout.get("diagnostics")
    synthesis = diagnostics.get("synthesis") if isinstance(diagnostics, dict) else None
    if not isinstance(synthesis, dict):
        raise _invalid("the checkout has no diagnostics.synthesis block", SYNTHESIS, "Pass a memory_checkout response.")
    if not synthesis.get("answer_candidates"):
        raise _invalid(
            "the checkout has no synthesis answer candidates (its question asks for no number, or no cited value "
            "matched it)",
            f"{SYNTHESIS}.answer_candidates",
            "Only a checkout whose diagnostics.synthesis.answer_candidates is non-empty can be recorded.",
        )
    question_type = synthesis.get("question_type")
    if question_type not in QUESTION_TYPES:
        raise _invalid(
            f"unknown question_type {question_type!r}", f"{SYNTHESIS}.question_type", "Pass the checkout unchanged."
        )
    unit_cue = synthesis.get("unit_cue")
    rows = _parsed(LedgerRow, synthesis.get("ledger_rows"), f"{SYNTHESIS}.ledger_rows")
    candidates = _parsed(AnswerCandidate, synthesis.get("answer_candidates"), f"{SYNTHESIS}.answer_candidates")
    groups = _parsed(SourceGroup, synthesis.get("source_groups", []), f"{SYNTHESIS}.source_groups")
    expected = candidates_of(rows, {"question_type": question_type, "unit_cue": unit_cue})
    if expected != candidates:
        raise ConflictError(
            "the answer candidates do not follow from the ledger rows (edited, or from another checkout)",
            field=f"{SYNTHESIS}.answer_candidates",
            remediation="Pass the checkout response unchanged; record a different answer as outcome 'corrected'.",
        )
    purpose = checkout.get("purpose")
    quality = checkout.get("quality") if isinstance(checkout.get("quality"), dict) else {}
    slot_plan = diagnostics.get("slot_plan") if isinstance(diagnostics, dict) else None
    session, scope, as_of = checkout.get("session"), checkout.get("scope"), checkout.get("as_of")
    return Bundle(
        session=session if isinstance(session, str) else None,
        query=query,
        scope=scope if isinstance(scope, list) and all(isinstance(s, str) for s in scope) else None,
        as_of=as_of if isinstance(as_of, str) else None,
        purpose=str(purpose.get("name", "general")) if isinstance(purpose, dict) else "general",
        question_type=question_type,
        unit_cue=unit_cue if isinstance(unit_cue, str) else None,
        candidates=candidates,
        rows=rows,
        groups=groups,
        quality={
            key: quality[key] for key in ("answerability", "confidence", "missing_slots", "reasons") if key in quality
        },
        slot_plan=slot_plan if isinstance(slot_plan, list) else None,
    )


def match_candidate(bundle: Bundle, candidate: Any, field: str = "candidate") -> dict[str, Any]:
    """The bundle's own copy of the candidate the caller names (by ``candidate_id``, by its rank, or as the
    object; an object must agree with the checkout's candidate on every field it gives)."""
    by_id = {item["candidate_id"]: item for item in bundle.candidates}
    if isinstance(candidate, str):
        found = by_id.get(candidate)
    elif isinstance(candidate, int) and not isinstance(candidate, bool):
        found = next((item for item in bundle.candidates if item["rank"] == candidate), None)
    elif isinstance(candidate, dict):
        key = candidate.get("candidate_id")
        found = by_id.get(key) if key is not None else None
        if found is None and key is None:
            found = next(
                (
                    item
                    for item in bundle.candidates
                    if all(
                        item.get(name) == candidate[name] for name in ("rank", "candidate_type") if name in candidate
                    )
                    and ("rank" in candidate or "candidate_type" in candidate)
                ),
                None,
            )
        if found is not None:
            differing = sorted(name for name, value in candidate.items() if name in found and found[name] != value)
            if differing:
                raise ConflictError(
                    f"{field} differs from the checkout's candidate {found['candidate_id']} in {', '.join(differing)}",
                    field=f"{field}.{differing[0]}",
                    remediation="Pass the candidate as the checkout gave it; record a different answer as 'corrected'.",
                )
    else:
        found = None
    if found is None:
        raise _invalid(
            f"{field} matches none of diagnostics.synthesis.answer_candidates",
            field,
            "Pass one of the checkout's answer_candidates (the object, its candidate_id or its rank).",
        )
    return found


def match_row(bundle: Bundle, row: Any, field: str = "row") -> dict[str, Any]:
    """The bundle's own copy of the ledger row the caller names (by ``row_id`` or as the object)."""
    key = row if isinstance(row, str) else row.get("row_id") if isinstance(row, dict) else None
    found = next((item for item in bundle.rows if item["row_id"] == key), None)
    if found is None:
        raise _invalid(
            f"{field} matches none of diagnostics.synthesis.ledger_rows",
            field,
            "Pass one of the checkout's ledger_rows (the object or its row_id).",
        )
    if isinstance(row, dict):
        differing = sorted(name for name, value in row.items() if name in found and found[name] != value)
        if differing:
            raise ConflictError(
                f"{field} differs from the checkout's row {key} in {', '.join(differing)}",
                field=f"{field}.{differing[0]}",
                remediation="Pass the row as the checkout gave it.",
            )
    return found
