"""`zaxy memory checkout | bootstrap | append | feedback | invalidate | capabilities | fok`: the front door and
memory upkeep from the command line (the same fabric calls the MCP tools make)."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Annotated, Any

import typer
from rich.panel import Panel
from rich.table import Table

from zaxy_agents.errors import InvalidRequestError

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
    parse_json_option,
)

Session = Annotated[str, typer.Option("--session-id", "-s", envvar="ZAXY_SESSION_ID", help="Session (thread) id.")]
Scope = Annotated[list[str] | None, typer.Option("--scope", help="Other sessions to recall from (repeatable).")]
MaxTokens = Annotated[int | None, typer.Option("--max-tokens", min=64, help="Token budget of the prompt.")]
Purpose = Annotated[
    str | None,
    typer.Option("--purpose", help="general, coding, review, release, security, research or coordinate."),
]
KINDS = {
    "fact": ("fact.asserted", "fact"),
    "decision": ("decision.recorded", "decision"),
    "task": ("task.created", "title"),
    "note": ("note.recorded", "text"),
}


def register(memory_app: typer.Typer) -> None:
    memory_app.command("checkout")(checkout_command)
    memory_app.command("bootstrap")(bootstrap_command)
    memory_app.command("append")(append_command)
    memory_app.command("feedback")(feedback_command)
    memory_app.command("invalidate")(invalidate_command)
    memory_app.command("capabilities")(capabilities_command)
    memory_app.command("fok")(fok_command)


def checkout_command(
    query: Annotated[str, typer.Argument(help="The question or task (empty: current state only).")] = "",
    session_id: Session = ...,  # type: ignore[assignment]
    scope: Scope = None,
    max_tokens: MaxTokens = 2000,
    purpose: Purpose = None,
    ref: Annotated[str | None, typer.Option("--ref", help="A memory ref (refs/tags/v1) or a seq.")] = None,
    as_of: AsOf = None,
    k: Annotated[int, typer.Option("--k", min=1, max=50, help="Evidence items to retrieve.")] = 8,
    retrieval_profile: RetrievalProfileOption = None,
    cue: CueOption = None,
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """The Memory Checkout: current facts, cited evidence, working set, answerability, a budgeted prompt."""
    with handled(json_output):
        cues = parse_cues(cue)
    with (
        handled(json_output),
        open_fabric(eventloom_path, reads=True, sessions=[session_id, *(scope or [])], check_as_of=as_of) as fabric,
    ):
        with _working("checking out memory", json_output):
            packet = fabric.checkout(
                query,
                session=session_id,
                scope=scope,
                max_tokens=max_tokens,
                purpose=purpose,
                ref=ref,
                as_of=as_of,
                k=k,
                retrieval_profile=retrieval_profile,
                cues=cues,
            )
        _render_packet(packet, json_output)


def bootstrap_command(
    session_id: Session = ...,  # type: ignore[assignment]
    scope: Scope = None,
    max_tokens: MaxTokens = 2000,
    purpose: Purpose = None,
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """A question-free packet for the start of a session: stable memory and the session's working state."""
    with (
        handled(json_output),
        open_fabric(eventloom_path, reads=True, sessions=[session_id, *(scope or [])]) as fabric,
    ):
        with _working("bootstrapping", json_output):
            packet = fabric.bootstrap(session_id, scope=scope, max_tokens=max_tokens, purpose=purpose)
        _render_packet(packet, json_output)


def append_command(
    text: Annotated[str | None, typer.Argument(help="What to remember (with --kind).")] = None,
    session_id: Session = ...,  # type: ignore[assignment]
    kind: Annotated[str, typer.Option("--kind", "-k", help="fact, decision, task or note.")] = "fact",
    subject: Annotated[str | None, typer.Option("--subject", help="fact: what it is about.")] = None,
    predicate: Annotated[
        str | None,
        typer.Option(
            "--predicate",
            help="fact: which property of --subject it states (subject + predicate is its "
            "identity: re-asserting supersedes).",
        ),
    ] = None,
    key: Annotated[str | None, typer.Option("--key", help="fact: identity; re-asserting a key supersedes.")] = None,
    rationale: Annotated[str | None, typer.Option("--rationale", help="decision: why.")] = None,
    task_id: Annotated[str | None, typer.Option("--task-id", help="task: its id (default: the title).")] = None,
    event_type: Annotated[
        str | None, typer.Option("--type", "-t", help="Any event type instead of --kind (with --payload).")
    ] = None,
    payload: Annotated[str | None, typer.Option("--payload", "-p", help="JSON object (with --type).")] = None,
    actor: Annotated[str, typer.Option("--actor", "-a")] = "user",
    encoding_gate: Annotated[
        bool,
        typer.Option("--encoding-gate", help="Tag it novel, reinforcing or redundant (tagging only; always appended)."),
    ] = False,
    cue: CueOption = None,
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Remember something: a fact, decision, task or note (or any --type with a --payload). Prints its citation."""
    with handled(json_output):
        kind_type, body = _append_body(
            text,
            kind,
            {"subject": subject, "predicate": predicate, "key": key, "rationale": rationale},
            task_id,
            event_type,
            payload,
        )
        cues = parse_cues(cue)
        with open_fabric(eventloom_path) as fabric:
            if cues is not None:  # the context it was written in, stored as payload.cues (names checked)
                given = body.get("cues") if isinstance(body.get("cues"), dict) else {}
                body = {**body, "cues": {**cues, **given}}
            append = fabric.append_gated if encoding_gate else fabric.append
            event = append(session_id, kind_type, body, actor=actor)
        if json_output:
            emit_json({"event": event, "citation": event.citation})
        else:
            console.print(f"remembered [bold]{event.type}[/] seq {event.seq}  [cyan]{event.citation}[/]")
            if encoding_gate:
                gate = event.payload["encoding_gate"]
                console.print(f"encoding gate: {gate['tag']} (similarity {gate['similarity']})")
            if event.security:
                console.print(f"[yellow]redacted:[/] {', '.join(event.security.redacted_paths)}")


def _append_body(
    text: str | None,
    kind: str,
    extras: dict[str, str | None],
    task_id: str | None,
    event_type: str | None,
    payload: str | None,
) -> tuple[str, dict[str, Any]]:
    if event_type is not None:
        if text is not None:
            raise InvalidRequestError(
                "pass either TEXT (with --kind) or --type with --payload, not both",
                field="--type",
                remediation="Put the text inside --payload, or drop --type.",
            )
        value = parse_json_option(payload or "{}", field="--payload")
        if not isinstance(value, dict):
            raise InvalidRequestError(
                "--payload must be a JSON object", field="--payload", remediation='Use {"k": "v"}.'
            )
        return event_type, value
    if kind not in KINDS:
        raise InvalidRequestError(
            f"unknown kind {kind!r}", field="--kind", remediation=f"Use one of {', '.join(KINDS)}."
        )
    if not text or not text.strip():
        raise InvalidRequestError("nothing to remember", field="TEXT", remediation="Pass the text to remember.")
    kind_type, field_name = KINDS[kind]
    body: dict[str, Any] = {field_name: text}
    if extras.get("predicate") and not extras.get("subject"):
        raise InvalidRequestError(
            "--predicate needs --subject", field="--predicate", remediation="Say what the fact is about: --subject S."
        )
    if kind == "task":
        body["task_id"] = task_id or text
    body.update({name: value for name, value in extras.items() if value})
    return kind_type, body


def feedback_command(
    entity: Annotated[str, typer.Argument(help="Entity name as a checkout showed it.")],
    signal: Annotated[str, typer.Option("--signal", help="used, helpful, confirmed, irrelevant, wrong, outdated.")],
    session_id: Session = ...,  # type: ignore[assignment]
    entity_type: Annotated[str, typer.Option("--type", "-t", help="Its entity_type.")] = "fact",
    weight: Annotated[float, typer.Option("--weight", min=0.0, max=10.0)] = 1.0,
    citation: Annotated[str | None, typer.Option("--citation", help="The citation you relied on.")] = None,
    note: Annotated[str | None, typer.Option("--note")] = None,
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Record how a cited fact worked out (positive signals reinforce it)."""
    with handled(json_output), open_fabric(eventloom_path, sessions=session_id) as fabric:
        event = fabric.feedback(
            session_id, entity, entity_type, signal, weight=weight, citation=citation, note=note, actor="user"
        )
        if json_output:
            emit_json({"event": event, "citation": event.citation})
        else:
            console.print(f"recorded [bold]{event.type}[/] ({signal}) for {entity_type} {entity!r}  {event.citation}")


def invalidate_command(
    entity: Annotated[str, typer.Argument(help="Entity name as a checkout showed it.")],
    reason: Annotated[str, typer.Option("--reason", help="Why it is no longer true.")],
    session_id: Session = ...,  # type: ignore[assignment]
    entity_type: Annotated[str, typer.Option("--type", "-t", help="Its entity_type.")] = "fact",
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Retract a fact: close its current version's validity window (history kept)."""
    with handled(json_output), open_fabric(eventloom_path, sessions=session_id) as fabric:
        event = fabric.invalidate(session_id, entity, entity_type, reason=reason, actor="user")
        if json_output:
            emit_json({"event": event, "citation": event.citation})
        else:
            console.print(f"invalidated {entity_type} {entity!r}  {event.citation}")


def capabilities_command(eventloom_path: EventloomPath = None, json_output: JsonFlag = False) -> None:
    """Backends, degraded modes, embedder, profiles, purposes, encodings and extractors."""
    with handled(json_output), open_fabric(eventloom_path, reads=True) as fabric:
        capabilities = fabric.capabilities()
        if json_output:
            emit_json(capabilities)
            return
        table = Table(title=f"capabilities of {capabilities['eventloom_path']}", show_header=False)
        table.add_column("what", style="bold")
        table.add_column("value", overflow="fold")
        backend = capabilities["backend"]
        table.add_row("eventloom", str(backend["eventloom"]))
        table.add_row("graph", str(backend["graph"]))
        table.add_row("degraded", f"[yellow]{capabilities['degraded']}[/]" if capabilities["degraded"] else "no")
        table.add_row("embedder", str(capabilities["embedder"]))
        for name in ("retrieval_profiles", "purposes", "token_encodings", "answerability"):
            table.add_row(name.replace("_", " "), ", ".join(capabilities[name]))
        table.add_row("extractors", ", ".join(capabilities["extractors"]))
        console.print(table)


def fok_command(
    query: Annotated[str, typer.Argument(help="The question you are about to answer.")],
    session_id: Session = ...,  # type: ignore[assignment]
    scope: Scope = None,
    record: Annotated[bool, typer.Option("--record/--no-record", help="Append the prediction marker.")] = True,
    cue: CueOption = None,
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Feeling of knowing (experimental): likely / possible / unlikely that memory can answer, without retrieval."""
    with handled(json_output):
        cues = parse_cues(cue)
    with (
        handled(json_output),
        open_fabric(eventloom_path, reads=True, sessions=[session_id, *(scope or [])]) as fabric,
    ):
        result = fabric.feeling_of_knowing(query, session=session_id, scope=scope, record=record, cues=cues)
        if json_output:
            emit_json(result)
            return
        colour = {"likely": "green", "possible": "yellow", "unlikely": "red"}[result["verdict"]]
        signals = result["signals"]
        console.print(
            f"[bold {colour}]{result['verdict']}[/] (score {result['score']}, {result['took_us']:.0f} µs): "
            + "; ".join(result["reasons"])
        )
        console.print(
            f"[dim]terms known {signals['known_terms']}/{signals['query_term_count']}, "
            f"coverage {signals['term_coverage']:.0%}, "
            f"entity matches {', '.join(signals['entity_matches']) or 'none'}, "
            f"projection lag {result['projection_lag']}[/]"
        )


def _working(label: str, json_output: bool) -> Any:
    return nullcontext() if json_output else console.status(label + "…", spinner="dots")


def _ranking_line(profile: dict[str, Any]) -> str:
    """``balanced (salience, ppr)``: the retrieval profile in effect and the 2.2 features it switched on."""
    features = [name for name in ("salience", "ppr") if profile.get(name)]
    if profile.get("attenuation_floor"):
        features.append(f"attenuation floor {profile['attenuation_floor']}")
    if profile.get("cue_weight"):
        features.append(f"cues {profile['cue_weight']}")
    return f"{profile.get('name')} ({', '.join(features) or 'no 2.2 feature'})"


def _render_packet(packet: Any, json_output: bool) -> None:
    if json_output:
        emit_json(packet)
        return
    console.print(packet.prompt, markup=False, highlight=False, soft_wrap=True)
    quality, diagnostics, retention = packet.quality, packet.diagnostics, packet.retention
    colour = {"answer_from_memory": "green", "refresh_recommended": "yellow", "ask_user": "red"}[quality.answerability]
    lines = [
        f"answerability [bold {colour}]{quality.answerability}[/] (confidence {quality.confidence:.2f})",
        "reasons: " + "; ".join(quality.reasons),
        f"facts {len(packet.current_facts)} · evidence {len(packet.evidence)} · citations {diagnostics.citation_count}"
        f" · budget {diagnostics.budget_used}/{diagnostics.budget_requested or '∞'} tokens ({diagnostics.encoding})",
        f"excluded: {retention.superseded_excluded} superseded, {retention.invalidated_excluded} invalidated, "
        f"{retention.elided_by_budget} over budget, {retention.attenuated_excluded} attenuated · "
        f"projection lag {diagnostics.projection_lag} · {diagnostics.took_ms:.0f} ms",
        "retrieval profile " + _ranking_line(diagnostics.retrieval_profile),
    ]
    if quality.required_action is not None:
        action = quality.required_action
        lines.append(f"next: {action.tool}({action.query!r}) because {action.reason}")
    if quality.missing_slots:
        lines.append("missing: " + ", ".join(quality.missing_slots))
    if diagnostics.degraded:
        lines.append(f"[yellow]degraded:[/] {diagnostics.degraded}")
    console.print(Panel("\n".join(lines), title="quality and diagnostics", expand=False))
