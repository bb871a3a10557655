"""Checkout extensions for procedural memory (seed 003 Skill Analytics, seed 002 beta.2).

- ``skills``: the applicable skills matching the question (``count``, ``items`` with skill id, version, status,
  procedure steps, citation), and the "Applicable Skills" lines that close the prompt, each step cited;
- ``skill_analytics``: outcome, application and contradiction counts, scores, read-only promotion and rollback
  candidates of the skills matching the question;
- ``procedural_memory``: the matching skills and procedure candidates as applicable, diagnostic or excluded, with
  the reasons.

Read-only: following a skill is the model's choice, revising one is a new memory_skill event.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.checkout.extensions.context import CheckoutContext

from .memory import Procedure, analytics, classified, procedures, relevant

GUIDANCE = (
    "skills: applicable skills are validated, cited procedures; follow them when they fit, but they are read-only "
    "guidance (revise a skill with memory_skill); diagnostic and excluded procedures are not instructions."
)
MAX_SKILLS = 5
_CACHE_KEY = "_procedures"


def _matching(context: CheckoutContext) -> list[Procedure]:
    """The procedures matching the question, computed once per checkout (the three extensions share them)."""
    cached = getattr(context, _CACHE_KEY, None)
    if cached is None:
        if not context.query:
            cached = []
        else:
            sessions = sorted(context.scope if context.scope is not None else context.catalog.sessions)
            items = procedures(
                context.catalog, sessions, context.as_of, context.log, context.evidence_resolves, context.query
            )
            cached = [procedure for _, procedure in relevant(items, context.query)]
        object.__setattr__(context, _CACHE_KEY, cached)
    return cached


def _line(skill: Procedure) -> str:
    steps = " ".join(f"{index}. {step}" for index, step in enumerate(skill.steps, start=1)) or skill.title
    version = f" v{skill.version}" if skill.version else ""
    return f"Applicable Skills: {skill.procedure_id}{version} [{skill.status}, {skill.citation}]: {steps}"


def skills(context: CheckoutContext) -> tuple[dict[str, Any], list[str]]:
    applicable = [p for p in _matching(context) if p.kind == "skill" and p.klass == "applicable"][:MAX_SKILLS]
    block = {
        "count": len(applicable),
        "items": [
            {
                "skill_id": skill.procedure_id,
                "version": skill.version,
                "status": skill.status,
                "procedure": skill.steps,
                "citation": skill.citation,
                "citations": skill.evidence,
                "mean_success_score": skill.mean_score,
            }
            for skill in applicable
        ],
        "authority_status": "non_authoritative",
    }
    return block, ([GUIDANCE, *[_line(skill) for skill in applicable]] if applicable else [])


def skill_analytics(context: CheckoutContext) -> tuple[dict[str, Any], list[str]]:
    block = analytics(_matching(context))
    lines = [
        f"skill_analytics: {item['skill_id']} v{item['version']} is a rollback candidate "
        f"(mean success {item['mean_success_score']}, back to v{item['back_to']})"
        for item in block["rollback_candidates"]
    ]
    return block, lines


def procedural_memory(context: CheckoutContext) -> tuple[dict[str, Any], list[str]]:
    block = classified(_matching(context))
    excluded = block["excluded_count"] + block["diagnostic_count"]
    line = (
        f"procedural_memory: {block['diagnostic_count']} diagnostic and {block['excluded_count']} excluded "
        "procedure(s) match this question; they are not operational instructions."
    )
    return block, [line] if excluded else []
