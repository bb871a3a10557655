"""Built-in deterministic extractors, one module per area; each labels its functions with ``@register``.

:data:`BUILTIN_MODULES` lists them; feature areas outside the projection (causal memory, consolidation) keep their
extractors with their domain, and :mod:`zaxy_agents.fabric.features` builds the one table from both lists.
"""

from . import conversation, generic, memory, skills, work

BUILTIN_MODULES = (generic, conversation, memory, skills, work)

__all__ = ["BUILTIN_MODULES", "conversation", "generic", "memory", "skills", "work"]
