"""The attenuation floor (seed 004 "projection-level forgetting"): a ranking policy, never a deletion.

An entity whose salience (recency decay x reinforcement x importance, rebuilt from the log) is below the retrieval
profile's floor leaves *default* ranking: checkout leaves it out and counts it (``retention.attenuated_excluded``),
while an explicit search (``memory_query``) still returns it, labelled ``attenuated``. Exempt, whatever their
salience: pinned memories (``memory.pinned``, until ``memory.unpinned``) and authority-bearing ones (decisions,
constraints, policies, and anything whose ``authority_status`` is ``authoritative``). ``memory.restored`` is a
strong reinforcement: it resets the memory's recency, so it is above the floor again.
"""

from __future__ import annotations

import json
from typing import Any

from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.model import entity_key
from zaxy_agents.projection.records import EntityVersion
from zaxy_agents.projection.salience import salience

PIN_TYPE = "pin"  # a pin is an entity of its own (``<type>:<name>`` of the memory), so replay rebuilds it
AUTHORITY_TYPES = frozenset({"decision", "constraint", "policy"})


def pin_name(entity_type: str, name: str) -> str:
    return f"{entity_type}:{name}"


def is_pinned(version: EntityVersion, catalog: EntityCatalog) -> bool:
    key = entity_key(version.session, PIN_TYPE, pin_name(version.entity_type, version.name))
    return catalog.current(key) is not None


def authority_bearing(version: EntityVersion) -> bool:
    if version.entity_type in AUTHORITY_TYPES:
        return True
    if '"authority_status"' not in version.properties_json:
        return False
    try:
        properties = json.loads(version.properties_json)
    except ValueError:
        return False
    return isinstance(properties, dict) and properties.get("authority_status") == "authoritative"


def attenuation(version: EntityVersion, catalog: EntityCatalog, floor: float) -> dict[str, Any]:
    """``{attenuated, salience, floor, exempt?}`` for one entity under ``floor``."""
    value = salience(version, catalog)["salience"]
    exempt = "pinned" if is_pinned(version, catalog) else "authority" if authority_bearing(version) else None
    return {
        "attenuated": exempt is None and value < floor,
        "salience": value,
        "floor": floor,
        **({"exempt": exempt} if exempt else {}),
    }
