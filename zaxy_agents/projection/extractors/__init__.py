"""Built-in deterministic extractors, one module per area; importing this package registers them all.

Feature areas outside the projection package (causal memory, consolidation) register their extractors,
payload contracts and producers when imported; they are imported here so every replay sees them.
"""

from . import conversation, features, generic, memory, skills, work

__all__ = ["conversation", "features", "generic", "memory", "skills", "work"]
