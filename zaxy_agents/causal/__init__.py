"""Causal memory: cited, non-authoritative explanations of why things happened.

``causal.edge.generated`` events (validated by a payload contract before the append) project as inferred
``causal_<relation>`` edges; ``outcome.explained`` events with a cause, an effect, a taxonomy relation, a
confidence and resolvable evidence produce them. Reads walk the in-memory catalog forwards (successors) or
backwards (predecessors). See docs/cognitive.md.
"""
