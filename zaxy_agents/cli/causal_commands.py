"""`zaxy memory causal successors | predecessors | explain`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.table import Table

from .common import AsOf, EventloomPath, JsonFlag, SessionId, console, emit_json, handled, open_fabric

causal_app = typer.Typer(
    name="causal", help="Causal memory: why things happened (proposed, non-authoritative).", no_args_is_help=True
)

EntityType = Annotated[str | None, typer.Option("--entity-type", "-t", help="Entity type (default: any type).")]
Relations = Annotated[
    list[str] | None,
    typer.Option("--relation", "-r", help="Only these relations (repeatable): caused, enabled, blocked, ..."),
]
Depth = Annotated[int, typer.Option("--depth", help="Hops to follow (1-6).")]
IncludeStale = Annotated[
    bool, typer.Option("--include-stale", help="Also show edges whose endpoints have since been invalidated.")
]


def register(memory_app: typer.Typer) -> None:
    causal_app.command("successors")(successors_command)
    causal_app.command("predecessors")(predecessors_command)
    causal_app.command("explain")(explain_command)
    memory_app.add_typer(causal_app)


def _walk_command(direction: str, doc: str) -> Callable[..., None]:
    """The ``successors`` / ``predecessors`` command: one signature, the fabric walk of that direction."""

    def command(
        entity: Annotated[str, typer.Argument(help="Entity name, as a checkout or query showed it.")],
        session_id: SessionId,
        entity_type: EntityType = None,
        relation: Relations = None,
        depth: Depth = 2,
        as_of: AsOf = None,
        include_stale: IncludeStale = False,
        eventloom_path: EventloomPath = None,
        json_output: JsonFlag = False,
    ) -> None:
        with (
            handled(json_output),
            open_fabric(eventloom_path, reads=True, sessions=session_id, check_as_of=as_of) as fabric,
        ):
            walk = fabric.causal_successors if direction == "successors" else fabric.causal_predecessors
            result = walk(
                session_id,
                entity,
                entity_type=entity_type,
                relation_type=relation,
                depth=depth,
                as_of=as_of,
                include_stale=include_stale,
            )
            _render(result, json_output)

    command.__doc__ = doc
    command.__name__ = f"{direction}_command"
    return command


successors_command = _walk_command(
    "successors", "What an entity caused, enabled, blocked, prevented, regressed, fixed or explained (outgoing edges)."
)
predecessors_command = _walk_command(
    "predecessors", "What caused, enabled, blocked, ... an entity (incoming edges, walked in reverse)."
)


def explain_command(
    session_id: SessionId,
    cause: Annotated[str, typer.Option("--cause", help="Cause entity name.")],
    cause_type: Annotated[str, typer.Option("--cause-type", help="Cause entity type.")],
    effect: Annotated[str, typer.Option("--effect", help="Effect entity name.")],
    effect_type: Annotated[str, typer.Option("--effect-type", help="Effect entity type.")],
    relation: Annotated[str, typer.Option("--relation", "-r", help="caused, enabled, blocked, ...")],
    confidence: Annotated[float, typer.Option("--confidence", help="0..1")],
    evidence: Annotated[str, typer.Option("--evidence", help="Citation of the event that shows it.")],
    explanation: Annotated[str | None, typer.Option("--explanation", help="Free-text explanation.")] = None,
    actor: Annotated[str, typer.Option("--actor")] = "agent",
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Record an outcome explanation; with resolvable evidence it becomes a proposed causal edge."""
    with handled(json_output), open_fabric(eventloom_path) as fabric:
        result = fabric.explain_outcome(
            session_id,
            cause={"name": cause, "entity_type": cause_type},
            effect={"name": effect, "entity_type": effect_type},
            relation=relation,
            confidence=confidence,
            evidence=evidence,
            explanation=explanation,
            actor=actor,
        )
        if json_output:
            emit_json(result)
            return
        console.print(f"explanation {result['explanation']}")
        if result["causal_edge"]:
            console.print(f"causal edge {result['causal_edge']} (proposed, non-authoritative)")
        else:
            console.print("[yellow]no causal edge[/]: the evidence did not qualify")


def _render(result: dict[str, Any], json_output: bool) -> None:
    if json_output:
        emit_json(result)
        return
    table = Table(title=f"{result['direction']} of {result['entity_name']!r} (non-authoritative, proposed)")
    for column in ("hops", "source", "relation", "target", "confidence", "method", "evidence", "citation"):
        table.add_column(column, overflow="fold")
    for hit in result["results"]:
        flags = (" weak" if hit["weak"] else "") + ("" if hit["evidence_resolves"] else " uncited")
        table.add_row(
            str(hit["path_length"]),
            hit["source"]["name"],
            f"{hit['relation_type']}{flags}",
            hit["target"]["name"],
            f"{hit['confidence']:.2f}",
            hit["method"],
            hit["evidence"]["citation"],
            hit["citation"],
        )
    console.print(table)
    if result["stale_excluded"]:
        console.print(f"{result['stale_excluded']} stale edges excluded (--include-stale shows them)")
