"""The retrieval engine: run the lanes, fuse them by weighted reciprocal rank, explain every score.

Results are events (every result cites ``eventloom://<session>/events/<seq>#<hash12>``), annotated with the
entity version the event asserted when there is one, and its status at ``as_of``: ``current``,
``superseded`` or ``invalidated`` (or ``event`` for text with no tracked entity). A lane that fails is
skipped with a warning; it never fails the query.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from zaxy_agents.eventloom.citations import format_citation
from zaxy_agents.eventloom.integrity import CallReads
from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.records import EntityVersion
from zaxy_agents.projection.salience import salience

from .attenuation import PIN_TYPE, attenuation
from .cues import cue_overlap, recorded_cues
from .embeddings import expands_queries, retrieval_role
from .entity_index import EntityKeywordIndex
from .event_texts import EventTexts
from .expansion import QueryExpander
from .graph_lanes import exact_matches, personalized_pagerank, traverse
from .profiles import LANES, RRF_K, RetrievalProfile, get_profile
from .ranking import RankingPolicy, get_retrieval_profile
from .rerank import rerank_by_embedding
from .text import Analyzer
from .threads import query_threads
from .vector_index import VectorIndex
from .verbatim import VerbatimIndex

EventKey = tuple[str, int]
NOT_RECALLED = frozenset(
    {
        "inference.edge.generated",
        "memory.reinforced",
        "memory.feedback",
        "memory.surfaced",
        "memory.restored",
        "memory.pinned",
        "memory.unpinned",
    }
)
# Anchor identities (speakers, topics, tools, documents) are created by reference from other events: they seed
# the graph lanes but are not memories themselves, and mapping them to the event that first mentioned them would
# surface stale text.
ANCHOR_TYPES = frozenset({"participant", "topic", "tool", "document", PIN_TYPE})
ANCHORED_GRAPH_BOOST = 3.0

CUE_ANALYZER = Analyzer()  # the question terms a hit's own text holds (cue blending never outranks words)


@dataclass
class RetrievalHit:
    """One fused result: an event, what it says, why it ranked, and the state of what it asserted."""

    session: str
    seq: int
    hash: str
    event_type: str
    text: str
    score: float
    status: str
    lanes: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)
    boosts: dict[str, float] = field(default_factory=dict)
    components: dict[str, float] = field(default_factory=dict)
    entity: EntityVersion | None = None
    salience: dict[str, float] | None = None
    match: str | None = None  # exact-source class on the verbatim surface (retrieval/exact_source.py)
    attenuation: dict[str, Any] | None = None  # under a retrieval profile with an attenuation floor

    @property
    def citation(self) -> str:
        return format_citation(self.session, self.seq, self.hash)

    def score_explanation(self, profile: RetrievalProfile) -> dict[str, Any]:
        return {
            "fusion": f"weighted reciprocal rank, k={RRF_K:g}",
            "lane_scores": {lane: round(score, 6) for lane, score in self.lanes.items()},
            "lane_ranks": self.ranks,
            "weights": {lane: profile.weights.get(lane, 0.0) for lane in self.lanes},
            "boosts": self.boosts,
            **({"verbatim_components": self.components} if self.components else {}),
            **({"exact_match": self.match} if self.match else {}),
            **({"attenuation": self.attenuation} if self.attenuation else {}),
        }

    @property
    def attenuated(self) -> bool:
        return bool(self.attenuation and self.attenuation["attenuated"])


@dataclass
class RetrievalResult:
    query: str
    profile: RetrievalProfile
    hits: list[RetrievalHit]
    lane_counts: dict[str, int]
    warnings: list[str]
    excluded: list[RetrievalHit]
    took_ms: float
    as_of: str | None = None
    ranking: RankingPolicy | None = None  # the retrieval profile applied
    attenuated: list[RetrievalHit] = field(default_factory=list)  # left out of default ranking (hide_attenuated)


class Retriever:
    """Reads the catalog and the indexes that the projector keeps up to date."""

    def __init__(
        self,
        catalog_source: Any,
        verbatim: VerbatimIndex,
        keyword: EntityKeywordIndex,
        vectors: VectorIndex,
        texts: EventTexts,
    ) -> None:
        self._catalog_source = catalog_source  # an object with a ``catalog`` attribute (the projector)
        self.verbatim = verbatim
        self.keyword = keyword
        self.vectors = vectors
        self.texts = texts
        self._expander: QueryExpander | None = None

    @property
    def catalog(self) -> EntityCatalog:
        return self._catalog_source.catalog

    def search(
        self,
        query: str,
        *,
        sessions: list[str] | None = None,
        k: int = 10,
        profile: str | RetrievalProfile = "balanced",
        as_of: str | None = None,
        include_superseded: bool = False,
        lanes: tuple[str, ...] = LANES,
        exclude_types: frozenset[str] = NOT_RECALLED,
        retrieval_profile: str | RankingPolicy | None = None,
        hide_attenuated: bool = False,
        cues: dict[str, str] | None = None,
        read_excluded: bool = True,
        reads: CallReads | None = None,
    ) -> RetrievalResult:
        """``profile``: the lane preset; ``retrieval_profile``: which 2.2 ranking features apply (plain,
        balanced, full; retrieval/ranking.py). ``hide_attenuated``: leave attenuated hits out of the ranking
        (default ranking, as checkout does) instead of returning them labelled (explicit search). ``cues``: the
        caller's context cues, blended by cue overlap when the profile's ``cue_weight`` is above 0 (cues.py).
        ``read_excluded=False``: the superseded / invalidated hits are returned without their text and hash (a
        caller that only counts them, as checkout does, saves reading tens of log lines per question; they are
        never served either way). ``reads``: the calling checkout's or query's reads of the log (``CallReads``): the
        returned hits' lines read here are then verified by that call without being read again."""
        # small BLAS products (vectors, expansion, re-rank): one thread each beats threads fighting for 2 busy
        # cores. Without an embedder a search makes none, and pinning and restoring costs ~0.1 ms a query.
        pinned = query_threads() if self.vectors.embedder is not None else nullcontext()
        with pinned:
            return self._search(
                query,
                sessions,
                k,
                profile,
                as_of,
                include_superseded,
                lanes,
                exclude_types,
                get_retrieval_profile(retrieval_profile),
                hide_attenuated,
                cues,
                read_excluded,
                reads if reads is not None else CallReads(self.texts.log.lines_at),
            )

    def _search(
        self,
        query: str,
        sessions: list[str] | None,
        k: int,
        profile: str | RetrievalProfile,
        as_of: str | None,
        include_superseded: bool,
        lanes: tuple[str, ...],
        exclude_types: frozenset[str],
        ranking: RankingPolicy,
        hide_attenuated: bool,
        cues: dict[str, str] | None,
        read_excluded: bool = True,
        reads: CallReads | None = None,
    ) -> RetrievalResult:
        started = time.perf_counter()
        chosen = ranking.apply(get_profile(profile))
        catalog = self.catalog
        scope = set(sessions) if sessions is not None else None
        depth = chosen.candidates
        warnings: list[str] = []
        ranked: dict[str, list[tuple[EventKey, float]]] = {}
        entity_for: dict[EventKey, EntityVersion] = {}
        components: dict[EventKey, dict[str, float]] = {}
        from_log: dict[EventKey, str] = {}  # events the verbatim lane found -> event type; text read from the log

        def run(lane: str, function: Any) -> None:
            if lane not in lanes or not chosen.weights.get(lane):
                return
            try:
                ranked[lane] = function()
            except Exception as exc:  # a lane degrades to a warning, never an error
                warnings.append(f"{lane} lane failed: {type(exc).__name__}: {exc}")

        reranks = retrieval_role(self.vectors.embedder) == "rerank"

        def verbatim_lane() -> list[tuple[EventKey, float]]:
            expansion = None
            if reranks and chosen.expansion_weight and expands_queries(self.vectors.embedder):
                try:
                    expansion = self._expansion_for(query, chosen.expansion_weight, sessions)
                except Exception as exc:  # like a lane: a failing embedder degrades to a warning
                    warnings.append(f"query expansion failed: {type(exc).__name__}: {exc}")
            hits = self.verbatim.search(
                query, depth, sessions=sessions, as_of=as_of, exclude_types=exclude_types, expansion=expansion
            )
            for hit in hits:
                key = (hit.session, hit.seq)
                components[key] = hit.components
                from_log[key] = hit.event_type
            return [((hit.session, hit.seq), hit.score) for hit in hits]

        def versions_to_events(scored: dict[str, float]) -> list[tuple[EventKey, float]]:
            best: dict[EventKey, float] = {}
            for identity, score in scored.items():
                version = catalog.version_at(identity, as_of) if catalog.has_key(identity) else None
                if version is None or (scope is not None and version.session not in scope):
                    continue
                if version.entity_type in ANCHOR_TYPES:
                    continue
                key = (version.session, version.source_event_seq)
                if score > best.get(key, 0.0):
                    best[key] = score
                    entity_for.setdefault(key, version)
            return sorted(best.items(), key=lambda item: -item[1])[:depth]

        keyword_versions: dict[EventKey, str] = {}  # the keyword lane's best version of each event it found

        def keyword_lane() -> list[tuple[EventKey, float]]:
            best: dict[EventKey, float] = {}
            found = self.keyword.search(query, depth * 3, sessions)
            located = catalog.version_sources([version_id for version_id, _ in found])  # one light read
            for version_id, score in found:
                where = located.get(version_id)
                if where is None or (scope is not None and where[1] not in scope):
                    continue
                if as_of is not None and where[3] > as_of:
                    continue
                key = (where[1], where[2])
                if score > best.get(key, 0.0):
                    best[key] = score
                    keyword_versions[key] = version_id
            return sorted(best.items(), key=lambda item: -item[1])[:depth]

        seeds: dict[str, float] = {}

        def exact_lane() -> list[tuple[EventKey, float]]:
            seeds.update(exact_matches(query, catalog, scope))
            return versions_to_events(seeds)

        run("exact", exact_lane)
        run("keyword", keyword_lane)
        run("verbatim", verbatim_lane)
        if not reranks:
            run("vector", lambda: self.vectors.search(query, depth, allowed=scope))
        if not seeds:
            for (session, seq), _score in ranked.get("keyword", [])[:5]:
                for version in catalog.event_versions(session, seq):
                    seeds.setdefault(version.key, 1.0)
        run("graph", lambda: versions_to_events(traverse(seeds, catalog, chosen.graph_depth)))
        run("ppr", lambda: versions_to_events(personalized_pagerank(seeds, catalog)))

        by_event = catalog.events_versions([key for results in ranked.values() for key, _ in results])  # cached
        for key, version_id in keyword_versions.items():  # the keyword lane's version is its event's entity
            if key in by_event:  # (only events some lane returns become hits: the others are never read whole)
                found = next((v for v in by_event[key] if v.id == version_id), None) or catalog.version(version_id)
                if found is not None:
                    entity_for[key] = found
        fused: dict[EventKey, RetrievalHit] = {}
        anchored = bool(ranked.get("exact"))  # the question names an entity: its neighbourhood is the answer
        for lane, results in ranked.items():
            weight = chosen.weights.get(lane, 0.0)
            if anchored and lane in ("graph", "ppr"):
                weight *= ANCHORED_GRAPH_BOOST
            for rank, (key, score) in enumerate(results, start=1):
                hit = fused.get(key)
                if hit is None:
                    hit = fused[key] = self._hit(key, entity_for, from_log, catalog, as_of)
                    if hit is None:
                        continue
                hit.lanes[lane] = score
                hit.ranks[lane] = rank
                hit.score += weight / (RRF_K + rank)
        hits = [hit for hit in fused.values() if hit is not None and hit.score > 0]
        for hit in hits:
            hit.components = components.get((hit.session, hit.seq), {})
            self._boost(hit, chosen, catalog)
        hits.sort(key=lambda h: (-h.score, h.session, h.seq))
        if cues and chosen.cue_weight:
            hits = self._blend_cues(query, hits, cues, chosen, reads)
        if reranks and "vector" in lanes:
            try:
                hits = rerank_by_embedding(query, hits, self.vectors, chosen)
            except Exception as exc:  # like a lane: a failing embedder degrades to a warning
                warnings.append(f"vector re-rank failed: {type(exc).__name__}: {exc}")
        attenuated = [h for h in hits if h.attenuated] if hide_attenuated else []
        if attenuated:
            hits = [h for h in hits if not h.attenuated]
        excluded = [h for h in hits if h.status in {"superseded", "invalidated"}]
        kept = hits if include_superseded else [h for h in hits if h.status not in {"superseded", "invalidated"}]
        if read_excluded:
            kept, excluded = self._read_texts(kept, excluded, k, from_log, warnings, reads)
        else:  # counted, never shown: their text and hash stay unread
            kept, _ = self._read_texts(kept, [], k, from_log, warnings, reads)
        return RetrievalResult(
            query=query,
            profile=chosen,
            hits=kept,
            excluded=excluded,
            lane_counts={lane: len(results) for lane, results in ranked.items()},
            warnings=warnings,
            took_ms=(time.perf_counter() - started) * 1000,
            as_of=as_of,
            ranking=ranking,
            attenuated=attenuated,
        )

    def _read_texts(
        self,
        kept: list[RetrievalHit],
        excluded: list[RetrievalHit],
        k: int,
        from_log: dict[EventKey, str],
        warnings: list[str],
        reads: CallReads | None = None,
    ) -> tuple[list[RetrievalHit], list[RetrievalHit]]:
        """Give the returned hits their text and hash from the log (the indexes keep no copy). A hit whose event
        the log cannot give back is left out (the next one takes its place): nothing is served that its
        citation cannot back."""
        missing: set[EventKey] = set()

        def fill(hits: list[RetrievalHit]) -> None:
            wanted = [(h.session, h.seq) for h in hits if (h.session, h.seq) in from_log]
            found = self.texts.read(wanted, reads) if wanted else {}
            for hit in hits:
                key = (hit.session, hit.seq)
                if key in found:
                    hit.hash, hit.event_type, hit.text = found[key]
                elif key in from_log:
                    missing.add(key)

        chosen: list[RetrievalHit] = []
        position = 0
        while len(chosen) < k and position < len(kept):
            batch = kept[position : position + k - len(chosen)]
            position += len(batch)
            fill(batch)
            chosen += [hit for hit in batch if (hit.session, hit.seq) not in missing]
        fill(excluded)
        if missing:
            warnings.append(f"{len(missing)} indexed event(s) could not be read back from the log and were left out")
        return chosen, [hit for hit in excluded if (hit.session, hit.seq) not in missing]

    def _blend_cues(
        self,
        query: str,
        hits: list[RetrievalHit],
        cues: dict[str, str],
        profile: RetrievalProfile,
        reads: CallReads | None = None,
    ) -> list[RetrievalHit]:
        """Multiply the top ``candidates`` hits by ``1 + cue_weight x overlap`` (their cues read from the log); a
        boosted hit moves up only past hits whose own text holds no more of the question's terms than its own
        (the cue-overlap lane: a context cue picks among equally good matches, never over the words)."""
        head = hits[: profile.candidates]
        views = self.texts.cue_views([(hit.session, hit.seq) for hit in head], reads)
        wanted = set(CUE_ANALYZER(query))
        matched: dict[int, int] = {}
        for hit in head:
            payload, text = views.get((hit.session, hit.seq), ({}, hit.text))
            matched[id(hit)] = len(wanted & set(CUE_ANALYZER(text or hit.text)))
            overlap = cue_overlap(cues, recorded_cues(payload))
            if overlap:
                factor = 1.0 + profile.cue_weight * overlap
                hit.boosts["cue_overlap"] = round(factor, 4)
                hit.score *= factor
        ordered: list[RetrievalHit] = []
        for hit in head:  # stable insertion from the fused order: only a boosted hit can move up
            position = len(ordered)
            while (
                position
                and ordered[position - 1].score < hit.score
                and matched[id(ordered[position - 1])] <= matched[id(hit)]
            ):
                position -= 1
            ordered.insert(position, hit)
        return ordered + hits[profile.candidates :]

    def _expansion_for(self, query: str, weight: float, sessions: list[str] | None) -> dict[str, float]:
        """Expansion terms from the configured re-rank embedder (one expander per embedder, kept across
        queries: it caches the vectors of the index's vocabulary)."""
        embedder = self.vectors.embedder
        if self._expander is None or self._expander.embedder is not embedder:
            self._expander = QueryExpander(embedder, self.verbatim)  # type: ignore[arg-type]
        return self._expander.expand(query, weight, sessions)

    def _hit(
        self,
        key: EventKey,
        entity_for: dict[EventKey, EntityVersion],
        from_log: dict[EventKey, str],
        catalog: EntityCatalog,
        as_of: str | None,
    ) -> RetrievalHit | None:
        asserted = catalog.event_versions(*key)
        asserted = [v for v in asserted if v.asserted and v.entity_type not in ANCHOR_TYPES]
        matched = entity_for.get(key)
        entity = matched if matched is not None and matched.asserted else (asserted[-1] if asserted else matched)
        # An event is only as current as the least current thing it asserted.
        stale = [v for v in asserted if not v.valid_at(as_of) and not (as_of is not None and v.valid_from > as_of)]
        if stale and entity is not None and entity.valid_at(as_of):
            entity = stale[-1]
        if key in from_log:
            digest, event_type, text = "", from_log[key], ""  # read from the log if the hit is returned
        elif entity is not None:
            digest, event_type, text = entity.source_event_hash, entity.source_event_type, entity.summary
        else:
            return None
        status = "event"
        if entity is not None:
            if entity.valid_at(as_of):
                status = "current"
            elif as_of is not None and entity.valid_from > as_of:
                return None  # asserted after the requested time
            else:
                status = "invalidated" if _invalidated_at(entity, catalog, as_of) else "superseded"
        return RetrievalHit(key[0], key[1], digest, event_type, text, 0.0, status, entity=entity)

    def _boost(self, hit: RetrievalHit, profile: RetrievalProfile, catalog: EntityCatalog) -> None:
        if hit.entity is not None and profile.salience_boost:
            hit.salience = salience(hit.entity, catalog)
            factor = 1.0 + profile.salience_boost * hit.salience["salience"]
            hit.boosts["salience"] = round(factor, 4)
            hit.score *= factor
        if profile.recency_boost and catalog.latest_timestamp:
            reference = hit.entity.valid_from if hit.entity is not None else None
            if reference:
                from zaxy_agents.projection.salience import _days_between

                recency = 0.5 ** (_days_between(reference, catalog.latest_timestamp) / 7.0)
                factor = 1.0 + profile.recency_boost * recency
                hit.boosts["recency"] = round(factor, 4)
                hit.score *= factor
        if profile.attenuation_floor and hit.entity is not None and hit.status == "current":
            hit.attenuation = attenuation(hit.entity, catalog, profile.attenuation_floor)
        if hit.status in {"superseded", "invalidated"}:
            hit.boosts["superseded_penalty"] = profile.superseded_penalty
            hit.score *= profile.superseded_penalty


def _invalidated_at(version: EntityVersion, catalog: EntityCatalog, as_of: str | None) -> bool:
    """True when the version's window was closed by an invalidation rather than by a newer version."""
    if not version.invalidated:
        return False
    state = catalog.key_state(version.key)
    return state is not None and state.current == version.id
