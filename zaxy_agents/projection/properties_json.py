"""The JSON text of an entity's properties, as the planner stores it (sorted keys, compact, ASCII-escaped).

Why its own function: ``JSONEncoder.encode`` builds a new C encoder on every call (~2/3 of its cost for the
three-string properties of a conversation turn, planned on every realistic event). Properties whose keys and
values are all plain strings (turns, prompts, most tool events) are written here from the encoder's own string
escaping, in its order; anything else goes through the encoder. The text is identical either way
(tests/projection/test_properties_json.py compares them).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

_encode = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode


def properties_json(properties: Any) -> str:
    """``json.dumps(properties, sort_keys=True, separators=(",", ":"), default=str)``."""
    if type(properties) is not dict:
        return _encode(properties)
    for key, value in properties.items():
        if type(key) is not str or type(value) is not str:
            return _encode(properties)
    string = encode_basestring_ascii
    return "{" + ",".join([string(key) + ":" + string(properties[key]) for key in sorted(properties)]) + "}"
