"""Reads that list entity versions of several sessions answer in one total order (``protocol.version_order``).

Seqs restart in every session, so the versions of different sessions tie on ``source_event_seq``, and so do the
versions one event projects. A store that orders by the seq alone returns such ties in whatever order its engine
scans them, and a ``limit`` that cuts inside a tie keeps an arbitrary subset: the same log then answers differently
on two backends, or after a rebuild. These checks write sessions that tie on every seq (out of name order, each
projected as it is written), then compare every listing with the contract's order, with the reference store, and
with the same store's answers after a rebuild.
"""

from __future__ import annotations

from zaxy_agents.projection.protocol import ProjectionStore, version_order
from zaxy_agents.projection.records import EntityVersion

from .backend_checks import fabric_on
from .core import Check, Subject, expect
from .sample import copy_log, sample_drafts

TIED_SESSIONS = ("zeta", "alpha", "mu")  # written and projected in this order, not in name order
FOREVER = "9999-12-31T23:59:59Z"  # every version still open is valid at this time


def _listed(versions: list[EntityVersion]) -> list[tuple[int, str, str]]:
    return [version_order(version) for version in versions]


def _tie_cuts(versions: list[EntityVersion]) -> list[int]:
    """Limits that cut between two versions of the same seq (in the contract's order)."""
    return [n for n in range(1, len(versions)) if versions[n - 1].source_event_seq == versions[n].source_event_seq]


Listing = list[tuple[int, str, str]]


def _answers(store: ProjectionStore) -> dict[str, tuple[Listing, Listing]]:
    """Every listing the check asks for, keyed by what was asked: (what the store answered, what the contract says:
    the first ``limit`` of all the versions asked about, in ``version_order``)."""
    everything = sorted(store.entities_as_of(FOREVER, limit=1_000_000), key=version_order)
    answers = {"entities_as_of()": (_listed(store.entities_as_of(FOREVER, limit=1_000_000)), _listed(everything))}
    for limit in _tie_cuts(everything):
        answers[f"entities_as_of(limit={limit})"] = (
            _listed(store.entities_as_of(FOREVER, limit=limit)),
            _listed(everything[:limit]),
        )
    for session in TIED_SESSIONS:
        mine = [version for version in everything if version.session == session]
        for limit in _tie_cuts(mine)[:2]:  # cuts between the versions one event projects
            answers[f"entities_as_of(session={session!r}, limit={limit})"] = (
                _listed(store.entities_as_of(FOREVER, session=session, limit=limit)),
                _listed(mine[:limit]),
            )
    for name, entity_type in (("user city", "fact"), ("user", None), ("T-1", "task")):
        history = _listed(store.entity_history(name, entity_type))
        answers[f"entity_history({name!r}, {entity_type!r})"] = (history, sorted(history))
    return answers


def listings_are_totally_ordered(subject: Subject) -> None:
    with (
        subject.reference() as reference,
        subject.fresh() as harness,
        fabric_on(reference) as expected,
        fabric_on(harness) as actual,
    ):
        for session in TIED_SESSIONS:
            expected.log.append_many(session, sample_drafts(session))
            expected.project()
            expected.projector.flush()
        copy_log(expected.log, actual.log)
        actual.project()
        actual.projector.flush()
        store, theirs = actual.projector.store, expected.projector.store
        expect(store is not None, f"the graph store did not open: {actual.projector.degraded}")
        assert store is not None and theirs is not None
        everything = sorted(store.entities_as_of(FOREVER, limit=1_000_000), key=version_order)
        cuts = _tie_cuts(everything)
        across = [n for n in cuts if everything[n - 1].session != everything[n].session]
        expect(len(across) >= 3 and len(cuts) > len(across), f"the sample ties across and within sessions: {cuts}")
        answers = _answers(store)
        for asked, (listed, contract) in answers.items():
            expect(listed == contract, f"{asked} is not the contract's answer (version_order): {listed} vs {contract}")
        reference = {asked: listed for asked, (listed, _contract) in _answers(theirs).items()}
        for asked, (listed, _contract) in answers.items():
            expect(listed == reference.get(asked), f"{asked} differs from the reference store's answer")
        actual.reproject()
        rebuilt = actual.projector.store
        assert rebuilt is not None
        expect(_answers(rebuilt) == answers, "the same log answers differently after a rebuild")


CHECKS = (Check("graph.listings_are_totally_ordered", listings_are_totally_ordered),)
