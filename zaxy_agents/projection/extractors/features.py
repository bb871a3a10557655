"""Feature extractors that live with their domain modules (causal memory, consolidation, Coordinate).

Importing them registers their extractors (``@register``), payload contracts (``register_contract``) and
producers (``register_producer``), so a rebuild in any process projects their events the same way.
"""

from zaxy_agents.causal import extractor as causal
from zaxy_agents.causal import producer as causal_producer
from zaxy_agents.consolidation import extractor as consolidation
from zaxy_agents.coordinate import contracts as coordinate_contracts
from zaxy_agents.coordinate import extractor as coordinate
from zaxy_agents.metacognition import extractor as metacognition

__all__ = ["causal", "causal_producer", "consolidation", "coordinate", "coordinate_contracts", "metacognition"]
