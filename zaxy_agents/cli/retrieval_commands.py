"""`zaxy memory query | verbatim | re-embed`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from .common import (
    AsOf,
    CueOption,
    EventloomPath,
    JsonFlag,
    RetrievalProfileOption,
    console,
    emit_json,
    handled,
    open_fabric,
    parse_cues,
)

Sessions = Annotated[
    list[str] | None, typer.Option("--session-id", "-s", help="Restrict to these sessions (repeatable).")
]


def register(memory_app: typer.Typer) -> None:
    memory_app.command("query")(query_command)
    memory_app.command("verbatim")(verbatim_command)
    memory_app.command("re-embed")(re_embed_command)


def query_command(
    text: Annotated[str, typer.Argument(help="What to look for.")],
    session_id: Sessions = None,
    k: Annotated[int, typer.Option("--k", min=1, max=100)] = 10,
    profile: Annotated[str, typer.Option("--profile")] = "balanced",
    as_of: AsOf = None,
    include_superseded: Annotated[bool, typer.Option("--include-superseded")] = False,
    retrieval_profile: RetrievalProfileOption = None,
    cue: CueOption = None,
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Fused retrieval (exact, keyword, vector, graph, PageRank, verbatim); every hit is cited."""
    with handled(json_output):
        cues = parse_cues(cue)
    with (
        handled(json_output),
        open_fabric(eventloom_path, reads=True, sessions=session_id, check_as_of=as_of) as fabric,
    ):
        response = fabric.query(
            text,
            sessions=session_id,
            k=k,
            profile=profile,
            as_of=as_of,
            include_superseded=include_superseded,
            retrieval_profile=retrieval_profile,
            cues=cues,
        )
        _render(response, json_output)


def verbatim_command(
    text: Annotated[str, typer.Argument(help="What to look for.")],
    session_id: Sessions = None,
    k: Annotated[int, typer.Option("--k", min=1, max=100)] = 10,
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Lexical search over raw event text from the log only."""
    with handled(json_output), open_fabric(eventloom_path, reads=True, sessions=session_id) as fabric:
        _render(fabric.verbatim(text, sessions=session_id, k=k), json_output)


def re_embed_command(eventloom_path: EventloomPath = None, json_output: JsonFlag = False) -> None:
    """Re-embed every searchable event with the configured embedder (after a model change)."""
    with handled(json_output), open_fabric(eventloom_path, reads=True) as fabric:
        result = fabric.re_embed()
        if json_output:
            emit_json(result)
        else:
            console.print(f"re-embedded {result['embedded']} texts with {result['model']}")


def _render(response, json_output: bool) -> None:
    if json_output:
        emit_json(response)
        return
    ranking = response.retrieval_profile.get("name")
    title = f"{response.query!r} ({response.profile}{f', retrieval profile {ranking}' if ranking else ''}"
    table = Table(title=f"{title}, {response.took_ms:.1f} ms)")
    for column in ("score", "status", "type", "text", "citation"):
        table.add_column(column, overflow="fold")
    for hit in response.hits:
        status = f"{hit.status}, attenuated" if hit.attenuated else hit.status
        table.add_row(f"{hit.score:.4f}", status, hit.event_type, hit.text[:100], hit.citation)
    console.print(table)
    for warning in response.warnings:
        console.print(f"[yellow]warning:[/] {warning}")
    if response.superseded_excluded:
        console.print(f"{response.superseded_excluded} superseded or invalidated results excluded")
