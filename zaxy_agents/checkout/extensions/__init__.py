"""Checkout extensions: extra diagnostics blocks (and guidance lines) from the cognitive features.

Each is a plain function of a :class:`~.context.CheckoutContext`; :data:`BUILTIN_EXTENSIONS` lists them in the
order their blocks appear, and the fabric passes that list (or another) to ``assemble``.
"""

from .causal_context import causal_context
from .consolidation_candidates import consolidation_candidates
from .context import CheckoutContext, Extension

BUILTIN_EXTENSIONS: tuple[tuple[str, Extension], ...] = (
    ("causal_context", causal_context),
    ("consolidation_candidates", consolidation_candidates),
)

__all__ = ["BUILTIN_EXTENSIONS", "CheckoutContext", "Extension"]
