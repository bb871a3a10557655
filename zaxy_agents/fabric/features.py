"""The built-in features, listed once: which modules extract, validate and produce events, and which blocks a
checkout adds.

Nothing registers itself on import. Extractors and producers carry a label (``@register``,
``@register_producer``); this module names the modules to collect them from, and the payload-contract maps and
checkout extensions to use, and builds the tables the fabric hands to the projector, the log operations and
checkout. A new feature area adds one line here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from zaxy_agents.beliefs import context as beliefs_context
from zaxy_agents.beliefs import contracts as beliefs_contracts
from zaxy_agents.beliefs import extractor as beliefs_extractor
from zaxy_agents.causal import contracts as causal_contracts
from zaxy_agents.causal import extractor as causal_extractor
from zaxy_agents.causal import producer as causal_producer
from zaxy_agents.checkout.extensions import BUILTIN_EXTENSIONS, Extension
from zaxy_agents.consolidation import contracts as consolidation_contracts
from zaxy_agents.consolidation import extractor as consolidation_extractor
from zaxy_agents.coordinate import contracts as coordinate_contracts
from zaxy_agents.coordinate import extractor as coordinate_extractor
from zaxy_agents.metacognition import context as metacognition_context
from zaxy_agents.metacognition import contracts as metacognition_contracts
from zaxy_agents.metacognition import extractor as metacognition_extractor
from zaxy_agents.projection.contracts import BUILTIN_CONTRACTS, ContractTable
from zaxy_agents.projection.extractors import BUILTIN_MODULES, generic
from zaxy_agents.projection.producers import ProducerTable
from zaxy_agents.projection.registry import ExtractorTable
from zaxy_agents.reasoning import context as reasoning_context
from zaxy_agents.reasoning import contracts as reasoning_contracts
from zaxy_agents.reasoning import extractor as reasoning_extractor
from zaxy_agents.salience import contracts as salience_contracts
from zaxy_agents.salience import extractor as salience_extractor
from zaxy_agents.skillmemory import context as procedures_context
from zaxy_agents.synthesis import context as synthesis_context
from zaxy_agents.synthesis import contracts as synthesis_contracts
from zaxy_agents.synthesis import extractor as synthesis_extractor

EXTRACTOR_MODULES = (
    *BUILTIN_MODULES,
    beliefs_extractor,
    causal_extractor,
    consolidation_extractor,
    coordinate_extractor,
    metacognition_extractor,
    reasoning_extractor,
    salience_extractor,
    synthesis_extractor,
)
PRODUCER_MODULES = (causal_producer,)
CONTRACT_MAPS = (
    BUILTIN_CONTRACTS,
    beliefs_contracts.CONTRACTS,
    causal_contracts.CONTRACTS,
    consolidation_contracts.CONTRACTS,
    coordinate_contracts.CONTRACTS,
    metacognition_contracts.CONTRACTS,
    reasoning_contracts.CONTRACTS,
    salience_contracts.CONTRACTS,
    synthesis_contracts.CONTRACTS,
)
CHECKOUT_EXTENSIONS = (
    *BUILTIN_EXTENSIONS,
    ("metacognition", metacognition_context.metacognition),
    ("reasoning_primitives", reasoning_context.reasoning_primitives),
    ("belief_update_proposals", beliefs_context.belief_update_proposals),
    ("synthesis", synthesis_context.synthesis),
    ("skills", procedures_context.skills),
    ("skill_analytics", procedures_context.skill_analytics),
    ("procedural_memory", procedures_context.procedural_memory),
)


@dataclass(frozen=True)
class Features:
    """The tables one fabric uses (swap one with :func:`dataclasses.replace`, e.g. to measure without it)."""

    extractors: ExtractorTable
    contracts: ContractTable
    producers: ProducerTable
    checkout_extensions: tuple[tuple[str, Extension], ...]

    def without_checkout_extensions(self) -> Features:
        return replace(self, checkout_extensions=())


@cache
def builtin_features() -> Features:
    """Built once per process (the tables are immutable)."""
    extractors = ExtractorTable.from_modules(EXTRACTOR_MODULES, generic.generic_event)
    return Features(
        extractors=extractors,
        contracts=ContractTable(*CONTRACT_MAPS),
        producers=ProducerTable.from_modules(PRODUCER_MODULES, extractors),
        checkout_extensions=CHECKOUT_EXTENSIONS,
    )
