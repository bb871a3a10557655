"""`zaxy memory consolidation propose | propose-from-log | review | status` and `zaxy memory mine-procedures`."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from .common import (
    AsOf,
    EventloomPath,
    JsonFlag,
    SessionId,
    console,
    emit_json,
    handled,
    open_fabric,
    parse_json_option,
)

consolidation_app = typer.Typer(
    name="consolidation",
    help="Review-gated consolidation: cited candidate summaries that only a review can accept.",
    no_args_is_help=True,
)
Purpose = Annotated[str, typer.Option("--purpose", help="Why the candidates are proposed (recorded).")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show the proposals without appending them.")]


def register(memory_app: typer.Typer) -> None:
    consolidation_app.command("propose")(propose_command)
    consolidation_app.command("propose-from-log")(propose_from_log_command)
    consolidation_app.command("review")(review_command)
    consolidation_app.command("status")(status_command)
    memory_app.add_typer(consolidation_app)
    memory_app.command("mine-procedures")(mine_procedures_command)


def propose_command(
    session_id: SessionId,
    candidate_type: Annotated[str, typer.Option("--type", help="episode, claim or procedure.")],
    title: Annotated[str, typer.Option("--title")],
    summary: Annotated[str, typer.Option("--summary")],
    source: Annotated[list[str], typer.Option("--source", help="Citation of a source event (repeatable).")],
    confidence: Annotated[float, typer.Option("--confidence", help="0..1")] = 0.6,
    method: Annotated[str, typer.Option("--method")] = "manual",
    purpose: Purpose = "general",
    details: Annotated[str | None, typer.Option("--details", help="JSON object of extra details.")] = None,
    actor: Annotated[str, typer.Option("--actor")] = "agent",
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Propose one cited summary for review (same type, title and sources -> same candidate id)."""
    with handled(json_output), open_fabric(eventloom_path) as fabric:
        result = fabric.consolidation_candidate(
            session_id,
            candidate_type=candidate_type,
            title=title,
            summary=summary,
            source_events=list(source),
            confidence=confidence,
            method=method,
            purpose=purpose,
            details=parse_json_option(details, field="--details") if details else None,
            actor=actor,
        )
        if json_output:
            emit_json(result)
            return
        state = "proposed" if result["created"] else "already proposed"
        console.print(f"{state} {result['candidate_id']} ({result['citation']}), review pending")


def propose_from_log_command(
    session_id: SessionId,
    window_size: Annotated[int, typer.Option("--window-size", help="Actionable events per segment window.")] = 8,
    purpose: Purpose = "general",
    max_events: Annotated[int, typer.Option("--max-events", help="Scan at most this many recent events.")] = 500,
    dry_run: DryRun = False,
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Deterministic episode, claim and procedure proposals from the session's actionable events."""
    with handled(json_output), open_fabric(eventloom_path, sessions=session_id) as fabric:
        result = fabric.consolidation_propose_from_log(
            session_id, window_size=window_size, purpose=purpose, max_events=max_events, dry_run=dry_run
        )
        if json_output:
            emit_json(result)
            return
        console.print(
            f"{len(result['segments'])} segments, {len(result['proposals'])} proposals, {result['created']} new"
            + (" (dry run)" if dry_run else "")
        )
        _proposal_table(result["proposals"])


def review_command(
    session_id: SessionId,
    candidate_id: Annotated[str, typer.Argument(help="cand_... id.")],
    decision: Annotated[
        str, typer.Option("--status", "--decision", help="accepted, rejected, deferred or conflicted.")
    ],
    rationale: Annotated[str, typer.Option("--rationale", help="Why.")],
    reviewer: Annotated[str | None, typer.Option("--reviewer")] = None,
    conflicts_with: Annotated[
        list[str] | None, typer.Option("--conflicts-with", help="Citation of a conflicting event (repeatable).")
    ] = None,
    actor: Annotated[str, typer.Option("--actor")] = "reviewer",
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Record a review disposition; an acceptance is never an authority promotion."""
    with handled(json_output), open_fabric(eventloom_path, sessions=session_id) as fabric:
        result = fabric.consolidation_review(
            session_id,
            candidate_id,
            decision=decision,
            rationale=rationale,
            reviewer=reviewer,
            conflicts_with=conflicts_with,
            actor=actor,
        )
        if json_output:
            emit_json(result)
            return
        console.print(f"{candidate_id}: {decision} ({result['citation']}), authority: non-authoritative")
        if result["revoked_acceptance"]:
            console.print("the earlier acceptance was revoked: the memory's validity window is closed")


def status_command(
    session_id: Annotated[str | None, typer.Option("--session-id", "-s", help="One session (default: all).")] = None,
    as_of: AsOf = None,
    limit: Annotated[int, typer.Option("--limit", help="Candidates to list (0-200).")] = 50,
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Pending, accepted, rejected, conflicted, stale, superseded and valid_to-closed counts."""
    with (
        handled(json_output),
        open_fabric(eventloom_path, reads=True, sessions=session_id, check_as_of=as_of) as fabric,
    ):
        status = fabric.consolidation_status(session_id, as_of=as_of, limit=limit)
        if json_output:
            emit_json(status)
            return
        counts = ("pending", "deferred", "accepted", "rejected", "conflicted", "stale", "superseded")
        console.print(
            f"{status['total']} candidates: "
            + ", ".join(f"{status[name]} {name}" for name in counts)
            + f"; {status['valid_to_closed']} accepted memories closed"
        )
        table = Table()
        for column in ("id", "type", "status", "title", "flags", "citation"):
            table.add_column(column, overflow="fold")
        for item in status["candidates"]:
            flags = ("stale " if item["stale"] else "") + ("superseded" if item["superseded_by"] else "")
            table.add_row(
                item["candidate_id"],
                item["candidate_type"],
                item["review_status"],
                item["title"],
                flags,
                item["citation"],
            )
        console.print(table)


def mine_procedures_command(
    min_support: Annotated[int, typer.Option("--min-support", help="Sessions a sequence must succeed in.")] = 2,
    session_id: Annotated[
        list[str] | None, typer.Option("--session-id", "-s", help="Sessions to mine (repeatable; default all).")
    ] = None,
    into: Annotated[str, typer.Option("--into", help="Session that records the candidates.")] = "procedures",
    max_length: Annotated[int, typer.Option("--max-length", help="Longest sequence (2-12).")] = 6,
    max_candidates: Annotated[int, typer.Option("--max-candidates")] = 20,
    purpose: Purpose = "procedure_mining",
    dry_run: DryRun = False,
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Successful multi-step sequences recurring across sessions -> review-pending procedure candidates."""
    with handled(json_output), open_fabric(eventloom_path, sessions=session_id) as fabric:
        result = fabric.mine_procedures(
            min_support=min_support,
            sessions=session_id,
            into=into,
            max_length=max_length,
            max_candidates=max_candidates,
            purpose=purpose,
            dry_run=dry_run,
        )
        if json_output:
            emit_json(result)
            return
        console.print(
            f"{len(result['procedures'])} recurring procedures in {result['sessions_scanned']} sessions, "
            f"{result['created']} new candidates in {result['into']!r}" + (" (dry run)" if dry_run else "")
        )
        _proposal_table(result["procedures"])


def _proposal_table(rows: list[dict[str, Any]]) -> None:
    table = Table()
    for column in ("id", "type", "title", "sources", "new"):
        table.add_column(column, overflow="fold")
    for row in rows:
        title = row["title"] + (f" (support {row['support']})" if "support" in row else "")
        table.add_row(
            row["candidate_id"], row["candidate_type"], title, str(row["sources"]), "yes" if row["created"] else ""
        )
    console.print(table)
