"""Top-k search of the verbatim index that scores candidates, never every event.

The formula is the dense scorer's (:class:`~.verbatim.Config`: own BM25, caption, context window, segment BM25,
neighbour borrow, temporal / date / question / speaker priors, the date term), with the same corpus statistics
(N, document frequencies, average lengths, kept by the index on every write); only the set of events scored is
smaller. An event scores above zero only through:

* its own words or caption, or a context window (+-2 events) holding a query word: events within 2 links of a
  match, found from the query terms' postings in the searched sessions, then by walking neighbour links;
* a neighbour's score to borrow (+-2): events within 4 links of a match;
* the date the query names: events in its windows (an SQL range on the day index);
* its thread's segment score, borrowed from neighbours that have nothing else: every other event of a matching
  thread. Those score at most ``segment x (1 + largest borrow share) x the query's largest prior product``,
  so a thread is read whole only when that bound reaches the k-th best score found among the others.

So the top k equals dense scoring's. Past ``min(SEED_LIMIT, SEEDS_PER_RESULT x k)`` matching events (a very
common word in a very large scope) the seeds are the best of them by their own text, caption and segment score,
past ``DATE_LIMIT`` events in a date window the earliest ones are taken, and a thread longer than
``GROUP_LIMIT`` events is not read whole: the cost of a query then stays bounded whatever the size of the memory,
and the query is counted in ``VerbatimIndex.counters["inexact"]`` (benchmarks report that share and how often the
top 10 still equals the dense scorer's).
"""

from __future__ import annotations

import datetime as _dt
import math
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import features as feat
from .dates import QueryDate, query_dates
from .postings import CHUNK, TermPostings, bm25
from .text import _PROPN_RE, _WHEN_RE
from .verbatim import _POSTINGS, FIELD_CAPTION, FIELD_TEXT, PREFIX, Names, Stats, VerbatimHit, parse_moment, read_stats

if TYPE_CHECKING:
    from .verbatim import VerbatimIndex
    from .verbatim_write import TailSnapshot

SEED_LIMIT = 2000  # matched events re-scored exactly at most; past it, the best by their own score
SEEDS_PER_RESULT = 40  # ... at least this many per requested result
DATE_LIMIT = 2000  # events of a named date window taken per session
GROUP_LIMIT = 2000  # a thread (session, segment) up to this many events is scored whole
HOPS = 4  # links that carry evidence: the context window (2) and the neighbour borrow (2)


def search(
    index: VerbatimIndex,
    query: str,
    k: int,
    *,
    sessions: list[str] | None,
    as_of: str | None,
    exclude_types: frozenset[str],
    expansion: Mapping[str, float] | None,
) -> list[VerbatimHit]:
    reference = parse_moment(as_of)
    today = reference.date() if reference is not None else _dt.datetime.now(_dt.UTC).date()
    if k <= 0:
        return []
    db = index.reader()
    opened = not db.in_transaction
    if opened:
        db.execute("BEGIN")  # one snapshot for every read of this query
    try:
        return _Query(index, db, query, today, expansion).run(k, sessions, reference, exclude_types)
    finally:
        if opened:
            db.execute("COMMIT")


class ReadCache:
    """Lookups a query repeats (terms, speaker names, thread rows), valid for one write sequence of the index:
    a read-mostly memory answers them from memory; any write starts a fresh cache."""

    LIMIT = 200_000

    def __init__(self, wseq: int) -> None:
        self.wseq = wseq
        self.terms: dict[str, tuple[int, int, int] | None] = {}
        self.speakers: dict[str, int | None] = {}
        self.groups: dict[int, tuple[int, float, int, int]] = {}

    def full(self) -> bool:
        return len(self.terms) + len(self.speakers) + len(self.groups) > self.LIMIT


def read_cache(index: VerbatimIndex, wseq: int) -> ReadCache:
    cache = index._read_cache
    if not isinstance(cache, ReadCache) or cache.wseq != wseq or cache.full():
        cache = index._read_cache = ReadCache(wseq)
    return cache


def context_mean(stats: Stats, decay1: float, decay2: float) -> float:
    """Mean context-window length over every event, from the index's running sums.

    An event's window length is its own length plus ``decay1`` x its +-1 neighbours' and ``decay2`` x its +-2
    neighbours'. Summed over all events, each event's length counts once for itself, ``decay1`` x once for
    each neighbour it has (every event but the first / last of its group) and ``decay2`` x for each event two
    away, so only the group totals and the lengths of each group's first two and last two events are needed.
    """
    if stats.docs <= 0:
        return 0.0
    total = stats.ln_total
    hop1 = 2 * total - stats.last1 - stats.first1
    hop2 = 2 * total - stats.last1 - stats.last2 - stats.first1 - stats.first2
    return (total + decay1 * hop1 + decay2 * hop2) / stats.docs


@dataclass
class _Terms:
    names: list[str]
    ids: list[int]
    weight: np.ndarray  # text IDF x query weight
    caption_weight: np.ndarray  # caption IDF x query weight


class _Query:
    def __init__(
        self,
        index: VerbatimIndex,
        db: sqlite3.Connection,
        query: str,
        today: _dt.date,
        expansion: Mapping[str, float] | None,
    ) -> None:
        self.index, self.db, self.query, self.today, self.expansion = index, db, query, today, expansion
        self.cfg = index.cfg
        self.cache = index.cache

    # ------------------------------------------------------------------ the query
    def _weights(self) -> tuple[dict[str, float], set[int]]:
        cfg, analyse = self.cfg, self.index.an
        proper: set[str] = set()
        if cfg.propn_weight != 1.0:
            for match in _PROPN_RE.finditer(self.query):
                proper.update(analyse(match.group(1)))
        terms = analyse(self.query)
        known = self.lookups.speakers
        missing = [term for term in dict.fromkeys(terms) if term not in known]
        if missing:
            found = self.index.speaker_terms(self.db, missing)
            known.update((term, found.get(term)) for term in missing)
        speakers = {term: known[term] for term in terms if known[term] is not None}
        weights: dict[str, float] = {}
        named: set[int] = set()
        for term in terms:
            weight = cfg.propn_weight if term in proper else 1.0
            if term in speakers:
                named.add(speakers[term])
                weight = cfg.speaker_term_weight
            weights[term] = max(weights.get(term, 0.0), weight)
        for term, weight in (self.expansion or {}).items():
            weights.setdefault(term, weight)  # a word the query has keeps the query's weight
        return {t: w for t, w in weights.items() if w > 0}, named

    def _terms(self, weights: dict[str, float], n: float) -> _Terms:
        cached = self.lookups.terms
        missing = [term for term in weights if term not in cached]
        if missing:
            found = self.index.term_ids(self.db, missing)
            cached.update((term, found.get(term)) for term in missing)
        known = {term: cached[term] for term in weights if cached[term] is not None}
        names = [term for term in weights if term in known]
        ids = [known[t][0] for t in names]
        self.tail = self.index.tail.snapshot(self.db, self.stats.values, ids)
        tail_df = self.tail.df
        df = np.array([known[t][1] + tail_df.get((FIELD_TEXT, i), 0) for t, i in zip(names, ids, strict=True)], float)
        cdf = np.array(
            [known[t][2] + tail_df.get((FIELD_CAPTION, i), 0) for t, i in zip(names, ids, strict=True)], float
        )
        query_weight = np.array([weights[t] for t in names], dtype=np.float64)
        return _Terms(
            names,
            ids,
            np.log(1.0 + (n - df + 0.5) / (df + 0.5)) * query_weight,
            np.log(1.0 + (n - cdf + 0.5) / (cdf + 0.5)) * query_weight,
        )

    def run(
        self, k: int, sessions: list[str] | None, reference: _dt.datetime | None, exclude_types: frozenset[str]
    ) -> list[VerbatimHit]:
        db, cfg, index = self.db, self.cfg, self.index
        self.k = k
        stats = self.stats = read_stats(db)
        n = float(stats.docs)
        if n <= 0:
            return []
        self.cache.refresh(db, int(stats.wseq))
        self.lookups = read_cache(index, int(stats.wseq))
        names = index.names(db, stats)
        scope = None if sessions is None else sorted(names.session_ids(db, sessions).values())
        if scope is not None and not scope:
            return []
        weights, named = self._weights()
        terms = self._terms(weights, n)
        captions = bool(cfg.caption_weight and stats.cap_total)
        text_postings = self._postings(FIELD_TEXT, terms.ids, scope)
        caption_postings = self._postings(FIELD_CAPTION, terms.ids, scope) if captions else {}
        matched = _Matched.build(terms, text_postings, caption_postings)
        matched.features = self.gather(matched.docs)
        dates = query_dates(self.query, self.today) if cfg.date_boost or cfg.date_term_weight else []
        windows = _windows(dates, stats)
        in_window = _count_in(db, windows, self.tail) if windows else 0
        if in_window:
            dated, dates_cut = _dated(db, windows, scope, self.tail)
        else:
            dated, dates_cut = np.zeros(0, dtype=np.int64), False
        touched = np.union1d(matched.features["group"], self.gather(dated)["group"]).astype(np.int64)
        groups = _Groups.load(db, touched, self.lookups.groups)
        scorer = _Scorer(self, stats, terms, matched, captions, groups)
        seeds = matched.docs
        limit = min(SEED_LIMIT, max(SEEDS_PER_RESULT * k, 500))
        pruned = seeds.size > limit
        if pruned:
            own = scorer.own_scores()
            seeds = np.sort(seeds[np.argpartition(-own, limit - 1)[:limit]])
        # Every event within HOPS links of a match (or dated in the named window) is a candidate, scored exactly
        # over a universe that holds their neighbours too.
        starts = np.union1d(seeds, dated)
        candidates = self._within(starts, HOPS)
        if candidates.size == 0:
            return []
        universe = self._within(starts, 2 * HOPS)
        ranked = self._rank(scorer, universe, candidates, named, dates, in_window, reference, exclude_types, names)
        # Farther events of a matching thread can only borrow its segment score. A thread is read whole only when
        # that bound could beat the k-th score found so far; threads longer than GROUP_LIMIT are not (inexact).
        threshold = ranked[3] if len(ranked[0]) >= k else 0.0
        due = scorer.threads_to_read(threshold)
        readable = groups.small(GROUP_LIMIT)
        extra = groups.members(db, np.intersect1d(due, readable), self.tail)
        extra = extra[~np.isin(extra, candidates)]
        if extra.size:
            candidates = np.union1d(candidates, extra)
            universe = np.union1d(universe, self._within(extra, HOPS))
            ranked = self._rank(scorer, universe, candidates, named, dates, in_window, reference, exclude_types, names)
        exact = not pruned and not dates_cut and np.isin(due, readable).all()
        index.counters["queries"] += 1
        index.counters["inexact"] += not exact
        chosen, totals, comp = ranked[0][:k], ranked[1], ranked[2]
        if chosen.size == 0:
            return []
        return self._hits(ranked[4][chosen], totals[chosen], comp, chosen, names)

    def _rank(
        self, scorer: _Scorer, universe: np.ndarray, candidates: np.ndarray, named: set[int], dates: list[QueryDate],
        in_window: int, reference: _dt.datetime | None, exclude_types: frozenset[str], names: Names,
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], float, np.ndarray]:  # fmt: skip
        """``(positions in universe of the results, best first; totals; components; k-th... ; universe)``."""
        total, comp, local = scorer.score(universe, named, dates, in_window)
        features = scorer.features
        mask = np.isin(universe, candidates, assume_unique=True) & (total > 0) & (local > 0)
        if reference is not None:
            mask &= features["epoch"] <= reference.timestamp()
        if exclude_types:
            excluded = list(names.type_ids(self.db, list(exclude_types)).values())
            if excluded:
                mask &= ~np.isin(features["type"], excluded)
        chosen = np.flatnonzero(mask)
        order = chosen[np.lexsort((universe[chosen], -total[chosen]))]
        kth = float(total[order[min(self.k, order.size) - 1]]) if order.size else 0.0
        return order, total, comp, kth, universe

    def _within(self, docs: np.ndarray, steps: int) -> np.ndarray:
        """``docs`` and every doc within ``steps`` neighbour links of them (sorted): a walk of ``steps`` links in
        each direction from every doc."""
        found = [docs]
        for link in ("prev", "next"):
            current = docs
            for _ in range(steps):
                current = self.gather(current, link).astype(np.int64)
                current = current[current >= 0]
                if current.size == 0:
                    break
                found.append(current)
        return np.unique(np.concatenate(found))

    def gather(self, docs: np.ndarray, field: str | None = None) -> np.ndarray:
        """Feature records of ``docs`` (or their ``field``): the tail's own, else the cached blocks, with the
        tail's newer ``next`` links."""
        tail = self.tail
        in_tail = (docs >= tail.first) & (docs < tail.end) if len(tail.records) else None
        if in_tail is not None and in_tail.any():
            dtype = feat.FEATURE if field is None else feat.FEATURE[field]
            records = np.zeros(docs.size, dtype=dtype)
            records[~in_tail] = self.cache.gather(self.db, docs[~in_tail], field)
            own = tail.records[docs[in_tail] - tail.first]
            records[in_tail] = own if field is None else own[field]
        else:
            records = self.cache.gather(self.db, docs, field)
        if tail.links and field in (None, "next"):
            for position in np.flatnonzero(np.isin(docs, list(tail.links))).tolist():
                if field is None:
                    records["next"][position] = tail.links[int(docs[position])]
                else:
                    records[position] = tail.links[int(docs[position])]
        return records

    def _postings(self, field_id: int, terms: list[int], scope: Sequence[int] | None) -> dict[int, TermPostings]:
        """Main runs plus the tail's postings of ``terms`` in ``scope``."""
        found = _POSTINGS.read(self.db, field_id, terms, scope)
        for term in terms:
            docs, tfs = self.tail.postings(field_id, term, scope)
            if docs.size:
                main = found.get(term)
                found[term] = (
                    TermPostings(docs, tfs) if main is None
                    else TermPostings(np.concatenate((main.docs, docs)), np.concatenate((main.tfs, tfs)))
                )  # fmt: skip
        return found

    def _hits(
        self, docs: np.ndarray, scores: np.ndarray, comp: dict[str, np.ndarray], rows: np.ndarray, names: Names
    ) -> list[VerbatimHit]:
        tail = self.tail
        marks = ",".join(str(int(d)) for d in docs if tail.record(int(d)) is None)
        sql = f"SELECT id, session, seq, type FROM {PREFIX}_doc WHERE id IN ({marks})"
        found = {r[0]: r[1:] for r in self.db.execute(sql)} if marks else {}
        for doc in docs.tolist():
            record = tail.record(doc)
            if record is not None:
                found[doc] = (int(record["session"]), tail.seqs[doc - tail.first], int(record["type"]))
        sessions = names.session_names(self.db, [found[d][0] for d in docs.tolist()])
        types = names.type_names(self.db, [found[d][2] for d in docs.tolist()])
        labels = list(comp)
        raw = np.stack([comp[label][rows] for label in labels]) if labels else np.zeros((0, len(docs)))
        values, present = np.round(raw, 6).T.tolist(), (raw != 0).T.tolist()
        hits = []
        for doc, score, row, nonzero in zip(docs.tolist(), scores.tolist(), values, present, strict=True):
            session, seq, type_id = found[doc]
            components = {label: value for label, value, keep in zip(labels, row, nonzero, strict=True) if keep}
            hits.append(VerbatimHit(sessions[session], seq, types[type_id], score, components))
        return hits


@dataclass
class _Matched:
    """The events holding a query term (text or caption) in the searched sessions, with their term counts."""

    docs: np.ndarray  # sorted doc ids
    tf: np.ndarray  # terms x docs, text
    ctf: np.ndarray  # terms x docs, caption
    features: np.ndarray

    @classmethod
    def build(cls, terms: _Terms, text: dict[int, object], caption: dict[int, object]) -> _Matched:
        parts = [p.docs for p in text.values()] + [p.docs for p in caption.values()]  # type: ignore[attr-defined]
        docs = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
        tf = np.zeros((len(terms.ids), docs.size))
        ctf = np.zeros((len(terms.ids), docs.size))
        for row, term in enumerate(terms.ids):
            if term in text:
                found = text[term]
                tf[row, np.searchsorted(docs, found.docs)] = found.tfs  # type: ignore[attr-defined]
            if term in caption:
                found = caption[term]
                ctf[row, np.searchsorted(docs, found.docs)] = found.tfs  # type: ignore[attr-defined]
        return cls(docs, tf, ctf, np.zeros(0, dtype=feat.FEATURE))

    def at(self, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Text and caption term counts (terms x docs) of any ``docs``: 0 where a doc holds no query term."""
        if self.docs.size == 0:
            return np.zeros((self.tf.shape[0], docs.size)), np.zeros((self.tf.shape[0], docs.size))
        where = np.minimum(np.searchsorted(self.docs, docs), self.docs.size - 1)
        present = self.docs[where] == docs
        return np.where(present, self.tf[:, where], 0.0), np.where(present, self.ctf[:, where], 0.0)


@dataclass
class _Groups:
    """The (session, segment) threads a query touches: size, total length and end docs."""

    ids: np.ndarray
    docs: np.ndarray
    lengths: np.ndarray
    first: np.ndarray
    last: np.ndarray

    @classmethod
    def load(cls, db: sqlite3.Connection, ids: np.ndarray, rows: dict[int, tuple[int, float, int, int]]) -> _Groups:
        """The rows of groups ``ids`` (sorted), through ``rows`` (a cache filled here)."""
        wanted = ids.tolist()
        missing = [g for g in wanted if g not in rows]
        for start in range(0, len(missing), CHUNK):
            chunk = ",".join(str(g) for g in missing[start : start + CHUNK])
            for group, docs, length, first, last in db.execute(
                f"SELECT id, docs, len, first, last FROM {PREFIX}_group WHERE id IN ({chunk})"
            ):
                rows[group] = (docs, length, first, last)
        known = [g for g in wanted if g in rows]
        table = np.array([rows[g] for g in known], dtype=np.float64).reshape(-1, 4)
        return cls(
            np.array(known, dtype=np.int64),
            table[:, 0].astype(np.int64),
            table[:, 1],
            table[:, 2].astype(np.int64),
            table[:, 3].astype(np.int64),
        )

    def small(self, limit: int) -> np.ndarray:
        return self.ids[self.docs <= limit]

    def lookup(self, groups: np.ndarray, values: np.ndarray, default: float = 0.0) -> np.ndarray:
        if self.ids.size == 0:
            return np.full(groups.size, default)
        where = np.minimum(np.searchsorted(self.ids, groups), self.ids.size - 1)
        return np.where(self.ids[where] == groups, values[where], default)

    def members(self, db: sqlite3.Connection, wanted: np.ndarray, tail: TailSnapshot) -> np.ndarray:
        """Every doc of the ``wanted`` groups: a doc-id range when a thread was indexed without interleaving."""
        if wanted.size == 0:
            return np.zeros(0, dtype=np.int64)
        where = np.searchsorted(self.ids, wanted)
        first, last, docs = self.first[where], self.last[where], self.docs[where]
        contiguous = last - first + 1 == docs
        parts = [np.arange(a, b + 1, dtype=np.int64) for a, b in zip(first[contiguous], last[contiguous], strict=True)]
        scattered = wanted[~contiguous]
        for start in range(0, scattered.size, CHUNK):
            chunk = ",".join(str(int(g)) for g in scattered[start : start + CHUNK])
            rows = db.execute(f"SELECT id FROM {PREFIX}_doc WHERE grp IN ({chunk})").fetchall()
            parts.append(np.array([r[0] for r in rows], dtype=np.int64))
        if scattered.size and len(tail.records):
            in_tail = np.isin(tail.records["group"], scattered)
            parts.append(np.flatnonzero(in_tail).astype(np.int64) + tail.first)
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


class _Scorer:
    """The full verbatim formula over a set of docs whose neighbours (+-4) are in the set."""

    def __init__(
        self, query: _Query, stats: Stats, terms: _Terms, matched: _Matched, captions: bool, groups: _Groups
    ) -> None:
        self.query, self.cfg, self.stats, self.terms, self.matched = query, query.cfg, stats, terms, matched
        self.captions, self.groups = captions, groups
        self.features = np.zeros(0, dtype=feat.FEATURE)
        self.prior_bound = 1.0
        self._segments = self._segment_scores()

    def _segment_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """``(group ids, segment score)`` for the groups holding a matched doc (others score 0)."""
        cfg, matched = self.cfg, self.matched
        if not cfg.session_weight or matched.docs.size == 0 or not self.terms.ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        groups, inverse = np.unique(matched.features["group"].astype(np.int64), return_inverse=True)
        tfx = matched.tf + cfg.caption_weight * matched.ctf if self.captions else matched.tf
        tfs = np.stack([np.bincount(inverse, weights=row, minlength=groups.size) for row in tfx])
        lengths = self.groups.lookup(groups, self.groups.lengths)
        average = self.stats.ln_total / max(self.stats.groups, 1.0)
        return groups, cfg.session_weight * bm25(tfs, lengths, average, self.terms.weight, cfg.k1, cfg.b)

    def _segment(self, groups: np.ndarray) -> np.ndarray:
        ids, scores = self._segments
        if ids.size == 0:
            return np.zeros(groups.size)
        position = np.minimum(np.searchsorted(ids, groups), ids.size - 1)
        return np.where(ids[position] == groups, scores[position], 0.0)

    def threads_to_read(self, threshold: float) -> np.ndarray:
        """Groups holding a match whose farther events could reach ``threshold``: such an event, more than
        HOPS links from any match or named date, has only its thread's segment score plus a borrow of its
        neighbours' (which are segment-only too), times the priors — at most ``segment x (1 + largest borrow
        share) x the largest prior product`` of this query."""
        ids, scores = self._segments
        if ids.size == 0:
            return ids
        cfg = self.cfg
        borrow = max(cfg.neighbour_weight, cfg.hop2_weight, cfg.qa_weight)
        return ids[scores * (1.0 + borrow) * self.prior_bound >= threshold]

    def own_scores(self) -> np.ndarray:
        """Text + caption + segment of each matched doc: how seeds are chosen past ``SEED_LIMIT``."""
        matched, cfg, stats = self.matched, self.cfg, self.stats
        records = matched.features
        score = bm25(matched.tf, records["tl"].astype(np.float64), stats.text_total / max(stats.text_nonempty, 1),
                     self.terms.weight, cfg.k1, cfg.b)  # fmt: skip
        if self.captions:
            score += cfg.caption_weight * bm25(matched.ctf, records["cl"].astype(np.float64),
                                               stats.cap_total / max(stats.cap_nonempty, 1),
                                               self.terms.caption_weight, cfg.k1, cfg.b)  # fmt: skip
        return score + self._segment(records["group"].astype(np.int64))

    def score(
        self, docs: np.ndarray, named: set[int], dates: list[QueryDate], in_window: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """``(total, components, local evidence)`` for ``docs`` (sorted); exact for docs whose +-4 neighbours
        are all in ``docs``."""
        cfg, stats, terms, matched = self.cfg, self.stats, self.terms, self.matched
        records = self.features = self.query.gather(docs)
        size = docs.size
        prev, nxt = _positions(docs, records["prev"]), _positions(docs, records["next"])
        prev2 = np.append(prev, size)[prev]
        next2 = np.append(nxt, size)[nxt]
        comp: dict[str, np.ndarray] = {}
        base = np.zeros(size)
        if terms.ids:
            tf, ctf = matched.at(docs)
            tl = records["tl"].astype(np.float64)
            comp["text"] = bm25(tf, tl, stats.text_total / max(stats.text_nonempty, 1), terms.weight, cfg.k1, cfg.b)
            ln = tl
            if self.captions:
                cl = records["cl"].astype(np.float64)
                comp["caption"] = cfg.caption_weight * bm25(
                    ctf, cl, stats.cap_total / max(stats.cap_nonempty, 1), terms.caption_weight, cfg.k1, cfg.b
                )
                tf = tf + cfg.caption_weight * ctf
                ln = ln + cfg.caption_weight * cl
            if cfg.ctx_weight:
                tfp = np.concatenate((tf, np.zeros((tf.shape[0], 1))), axis=1)
                lnp = np.append(ln, 0.0)
                tfc = (
                    tf
                    + cfg.ctx_decay1 * (tfp[:, prev] + tfp[:, nxt])
                    + cfg.ctx_decay2 * (tfp[:, prev2] + tfp[:, next2])
                )
                lc = ln + cfg.ctx_decay1 * (lnp[prev] + lnp[nxt]) + cfg.ctx_decay2 * (lnp[prev2] + lnp[next2])
                average = context_mean(stats, cfg.ctx_decay1, cfg.ctx_decay2)
                comp["context"] = cfg.ctx_weight * bm25(tfc, lc, average, terms.weight, cfg.k1, cfg.b)
            if cfg.session_weight:
                comp["segment"] = self._segment(records["group"].astype(np.int64))
            base = sum(comp.values())  # type: ignore[assignment]
        flags = records["flags"]
        asks = ((flags & feat.FLAG_ASKS) > 0).astype(np.float64)
        borrow = np.zeros(size)
        if cfg.neighbour_weight or cfg.hop2_weight or cfg.qa_weight:
            borrow = self._borrow(base, asks, prev, nxt, prev2, next2)
            comp["neighbour"] = borrow
        total = base + borrow

        def scale(name: str, factor: np.ndarray) -> None:
            nonlocal total
            comp[name] = total * (factor - 1.0)
            total = total * factor

        self.prior_bound = 1.0
        if cfg.temporal_boost and _WHEN_RE.search(self.query.query.lower()):
            scale("temporal", 1.0 + cfg.temporal_boost * ((flags & feat.FLAG_TEMPORAL) > 0))
            self.prior_bound *= 1.0 + cfg.temporal_boost
        affinity = _affinity(dates, records["day"].astype(np.int64), records["month"].astype(np.int64))
        if cfg.date_boost and in_window:
            scale("date", 1.0 + cfg.date_boost * affinity)
            self.prior_bound *= 1.0 + cfg.date_boost
        if cfg.question_penalty:
            scale("question", 1.0 - cfg.question_penalty * records["qshare"])
        if cfg.speaker_boost and named:
            scale("speaker", 1.0 + cfg.speaker_boost * np.isin(records["speaker"], list(named)))
            self.prior_bound *= 1.0 + cfg.speaker_boost
        date_match = np.zeros(size)
        if cfg.date_term_weight and in_window:
            # The named date is evidence in itself, weighted like a query word by how rare its window is; added
            # after the boosts (scaled by a named speaker, a wrongly named person's turns would crowd it out).
            idf = math.log(1.0 + (stats.docs - in_window + 0.5) / (in_window + 0.5))
            date_match = comp["date_match"] = cfg.date_term_weight * idf * affinity
            total = total + date_match
        # Local evidence: its own words, caption or context window, a neighbour to borrow from, or the date. The
        # segment alone never makes an event a result.
        local = comp.get("text", 0.0) + comp.get("caption", 0.0) + comp.get("context", 0.0) + date_match + borrow
        return total, comp, np.asarray(local) + np.zeros(size)

    def _borrow(
        self, base: np.ndarray, asks: np.ndarray, prev: np.ndarray, nxt: np.ndarray, prev2: np.ndarray,
        next2: np.ndarray,
    ) -> np.ndarray:  # fmt: skip
        cfg = self.cfg
        padded = np.append(base, 0.0)
        borrow = cfg.neighbour_weight * np.maximum(padded[prev], padded[nxt])
        if cfg.hop2_weight:
            borrow = np.maximum(borrow, cfg.hop2_weight * np.maximum(padded[prev2], padded[next2]))
        if cfg.qa_weight:
            asking = np.append(base * asks, 0.0)
            borrow = np.maximum(borrow, cfg.qa_weight * asking[prev])
        return borrow


def _positions(docs: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Position in ``docs`` of each target doc; ``len(docs)`` (a zero sentinel) when absent or -1."""
    targets = targets.astype(np.int64)
    where = np.minimum(np.searchsorted(docs, targets), docs.size - 1)
    return np.where((targets >= 0) & (docs[where] == targets), where, docs.size)


# ---------------------------------------------------------------------- dates
def _affinity(dates: list[QueryDate], day: np.ndarray, month: np.ndarray) -> np.ndarray:
    """1 for events dated from the named day to 8 days after it (or in the named month or the next one),
    0.5 up to a month after the named day, else 0: events are usually logged shortly after the date a
    question refers to. A relative period ("yesterday", resolved against the reference day) is the time
    its events were logged: 1 inside it, else 0."""
    known = day >= 0
    affinity = np.zeros(len(day))
    for kind, year, mo, d in dates:
        if kind == "range":
            value = ((day >= mo) & (day <= d)).astype(float)
        elif kind == "day":
            try:
                start = _dt.date(year, mo, d).toordinal()  # type: ignore[arg-type]
            except (TypeError, ValueError):
                continue
            delta = day - start
            value = np.where((delta >= -1) & (delta <= 8), 1.0, np.where((delta > 8) & (delta <= 31), 0.5, 0.0))
        elif year is None:
            month_of_year = month % 12
            value = ((month_of_year == mo - 1) | (month_of_year == mo % 12)).astype(float)
        else:
            start = year * 12 + mo - 1
            value = ((month == start) | (month == start + 1)).astype(float)
        affinity = np.maximum(affinity, np.where(known, value, 0.0))
    return affinity


def _month_days(month_index: int) -> tuple[int, int]:
    """First and last day (ordinals) of month ``year * 12 + month - 1``."""
    first = _dt.date(month_index // 12, month_index % 12 + 1, 1).toordinal()
    following = month_index + 1
    return first, _dt.date(following // 12, following % 12 + 1, 1).toordinal() - 1


def _windows(dates: list[QueryDate], stats: Stats) -> list[tuple[int, int]]:
    """Disjoint day-ordinal intervals where :func:`_affinity` is positive."""
    spans: list[tuple[int, int]] = []
    for kind, year, mo, d in dates:
        try:
            if kind == "range":
                spans.append((mo, d))
            elif kind == "day":
                start = _dt.date(year, mo, d).toordinal()  # type: ignore[arg-type]
                spans.append((start - 1, start + 31))
            elif year is not None:
                first, _ = _month_days(year * 12 + mo - 1)
                _, last = _month_days(year * 12 + mo)
                spans.append((first, last))
            elif stats.min_day > 0:
                low = _dt.date.fromordinal(int(stats.min_day)).year - 1
                high = _dt.date.fromordinal(int(stats.max_day)).year
                for y in range(low, high + 1):
                    first, _ = _month_days(y * 12 + mo - 1)
                    _, last = _month_days(y * 12 + mo)
                    spans.append((first, last))
        except (TypeError, ValueError, OverflowError):
            continue
    merged: list[tuple[int, int]] = []
    for low, high in sorted(spans):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def _in_windows(days: np.ndarray, windows: Sequence[tuple[int, int]]) -> np.ndarray:
    inside = np.zeros(days.size, dtype=bool)
    for low, high in windows:
        inside |= (days >= low) & (days <= high)
    return inside


def _count_in(db: sqlite3.Connection, windows: Sequence[tuple[int, int]], tail: TailSnapshot) -> int:
    """Events dated inside ``windows`` in the whole index (the N of the date term's IDF)."""
    indexed = sum(
        db.execute(f"SELECT count(*) FROM {PREFIX}_doc WHERE day BETWEEN ? AND ?", window).fetchone()[0]
        for window in windows
    )
    return indexed + int(_in_windows(tail.records["day"].astype(np.int64), windows).sum())


def _dated(
    db: sqlite3.Connection, windows: Sequence[tuple[int, int]], scope: Sequence[int] | None, tail: TailSnapshot
) -> tuple[np.ndarray, bool]:
    """Docs dated inside ``windows`` in the searched sessions (the earliest ``DATE_LIMIT`` per window and
    session), and whether some window held more."""
    found: list[int] = []
    cut = False
    for low, high in windows:
        if scope is None:
            rows = db.execute(
                f"SELECT id FROM {PREFIX}_doc WHERE day BETWEEN ? AND ? ORDER BY id LIMIT ?", (low, high, DATE_LIMIT)
            )
            ids = [row[0] for row in rows]
            cut |= len(ids) == DATE_LIMIT
            found += ids
            continue
        for session in scope:
            rows = db.execute(
                f"SELECT id FROM {PREFIX}_doc WHERE session = ? AND day BETWEEN ? AND ? ORDER BY id LIMIT ?",
                (session, low, high, DATE_LIMIT),
            )
            ids = [row[0] for row in rows]
            cut |= len(ids) == DATE_LIMIT
            found += ids
    inside = _in_windows(tail.records["day"].astype(np.int64), windows)
    if scope is not None:
        inside &= np.isin(tail.records["session"], scope)
    found += (np.flatnonzero(inside) + tail.first).tolist()
    return np.unique(np.array(found, dtype=np.int64)), cut
