"""The tool contract is deliberate: snapshot-tested names, descriptions and strict, bounded schemas."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import REPO_ROOT
from zaxy_agents.checkout.purpose import PRESETS
from zaxy_agents.mcp import registry
from zaxy_agents.mcp.contract import CONTRACT_PATH, REGENERATE, build_contract, render
from zaxy_agents.retrieval.profiles import PROFILES

FREE_FORM_OBJECTS = {
    ("memory_append", "payload"),
    # a checkout response handed back, and a candidate or row of it (each matched against the checkout's copy)
    ("memory_synthesis_artifact", "checkout"),
    ("memory_synthesis_artifact", "candidate"),
    ("memory_synthesis_evidence", "checkout"),
    ("memory_synthesis_evidence", "candidate"),
    ("memory_synthesis_evidence", "row"),
    ("coordination_record_synthesis_artifact", "checkout"),
    ("coordination_record_synthesis_artifact", "candidate"),
}


def test_contract_snapshot_is_current() -> None:
    snapshot = REPO_ROOT / CONTRACT_PATH
    live = render(build_contract())
    assert snapshot.exists(), f"missing {CONTRACT_PATH}: run `{REGENERATE}`"
    if snapshot.read_text() != live:
        old = {tool["name"]: tool for tool in json.loads(snapshot.read_text())["tools"]}
        new = {tool["name"]: tool for tool in json.loads(live)["tools"]}
        changed = sorted(name for name in old.keys() | new.keys() if old.get(name) != new.get(name))
        raise AssertionError(
            f"The MCP tool contract changed (tools: {', '.join(changed) or 'profiles/order'}). If this is deliberate, "
            f"regenerate the snapshot from the repository root with `{REGENERATE}` and review the diff."
        )


def test_core_profile_is_small_and_checkout_comes_first() -> None:
    core = registry.listed("core")
    full = registry.listed("full")
    assert len(core) <= registry.MAX_CORE_TOOLS
    assert core[0].name == "memory_checkout" and full[0].name == "memory_checkout"
    assert "front door" in core[0].description
    assert {spec.name for spec in core} == {
        "memory_checkout",
        "memory_append",
        "memory_query",
        "context_assemble",
        "memory_feedback",
        "memory_invalidate",
        "memory_capabilities",
        "memory_feeling_of_knowing",
    }
    assert {
        "memory_bootstrap",
        "memory_verbatim",
        "memory_replay",
        "context_after_turn",
        "subagent_cleanup",
        "memory_skill",
    } <= {spec.name for spec in full}


def test_every_input_schema_is_strict_and_bounded() -> None:
    for spec in registry.all_tools():
        problems = list(_unbounded(spec.name, spec.input_schema(), ""))
        assert not problems, f"{spec.name}: {problems}"


def test_enumerations_match_the_engine() -> None:
    checkout = registry.get("memory_checkout").input_schema()["properties"]
    query = registry.get("memory_query").input_schema()["properties"]
    preset, structured = checkout["purpose"]["anyOf"]
    assert set(preset["enum"]) == set(PRESETS) and structured["type"] == "object"
    assert set(query["profile"]["enum"]) == set(PROFILES)
    from zaxy_agents.fabric.checkout_ops import FEEDBACK_SIGNALS

    feedback = registry.get("memory_feedback").input_schema()["properties"]["feedback"]
    assert set(feedback["enum"]) == set(FEEDBACK_SIGNALS)


def _unbounded(tool: str, schema: dict[str, Any], path: str):
    if "anyOf" in schema:  # a seed argument with two forms (a preset or an object, a string or a list)
        for branch in schema["anyOf"]:
            yield from _unbounded(tool, branch, path)
        return
    kind = schema.get("type")
    if kind == "object":
        name = path.rsplit(".", 1)[-1]
        if (tool, name) in FREE_FORM_OBJECTS:
            if "maxProperties" not in schema:
                yield f"{path}: free-form object without maxProperties"
            return
        if schema.get("additionalProperties") is not False:
            yield f"{path or '<root>'}: additionalProperties is not false"
        for key, child in schema.get("properties", {}).items():
            yield from _unbounded(tool, child, f"{path}.{key}" if path else key)
    elif kind == "string" and "enum" not in schema and "maxLength" not in schema:
        yield f"{path}: string without maxLength"
    elif kind == "array":
        if "maxItems" not in schema:
            yield f"{path}: array without maxItems"
        yield from _unbounded(tool, schema.get("items", {}), f"{path}[]")
    elif kind in ("integer", "number") and "minimum" not in schema and "exclusiveMinimum" not in schema:
        yield f"{path}: number without a lower bound"
    elif kind is None and "enum" not in schema:
        yield f"{path}: no type"
