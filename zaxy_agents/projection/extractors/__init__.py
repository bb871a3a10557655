"""Built-in deterministic extractors, one module per area; importing this package registers them all."""

from . import conversation, generic, memory, skills, work

__all__ = ["conversation", "generic", "memory", "skills", "work"]
