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
import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from zaxy_agents.storage.derived.store import ID_LIST

from . import features as feat
from . import sorted_sets as sets
from . import verbatim_dates as date_windows
from .dates import QueryDate, query_dates
from .posting_cache import PostingCache
from .postings import TermPostings
from .read_deltas import Delta
from .text import _PROPN_RE
from .verbatim import _POSTINGS, FIELD_CAPTION, FIELD_TEXT, PREFIX, Names, VerbatimHit, parse_moment, read_stats
from .verbatim_scoring import GroupRows, Groups, Matched, Scorer, Terms

if TYPE_CHECKING:
    from .verbatim import VerbatimIndex

SEED_LIMIT = 2000  # matched events re-scored exactly at most; past it, the best by their own score
SEEDS_PER_RESULT = 40  # ... at least this many per requested result
GROUP_LIMIT = 2000  # a thread (session, segment) up to this many events is scored whole
MATCHED_FIELDS = np.dtype([("group", feat.FEATURE["group"]), ("tl", feat.FEATURE["tl"]), ("cl", feat.FEATURE["cl"])])
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
    """Lookups a query repeats (terms, speaker names, thread rows, the main tables' decoded postings of its
    terms), valid for one write sequence of the index (of the tables ``created``): a read-mostly memory answers
    them from memory. After a write, the entries it did not touch are carried over when this process recorded
    what it touched (:mod:`.read_deltas`: an agent's turn, appended to the tail); any other write starts a fresh
    cache. The main postings are carried whole: a recorded write is a tail write, which never changes them (a
    merge, a bulk batch, an erasure or a rebuild leaves no record, so the cache starts empty after it)."""

    LIMIT = 200_000
    GROUP_LIMIT = 2_000_000  # thread rows kept (33 bytes each)
    CARRY_LIMIT = 50_000  # past this many entries (or thread slots) a fresh cache costs less than a copy

    def __init__(self, wseq: int, created: float = 0.0) -> None:
        self.wseq, self.created = wseq, created
        self.terms: dict[str, tuple[int, int, int] | None] = {}
        self.speakers: dict[str, int | None] = {}
        self.groups = GroupRows()
        self.postings = PostingCache()  # the main tables' decoded postings of the terms read

    def full(self) -> bool:
        return len(self.terms) + len(self.speakers) > self.LIMIT or self.groups.count > self.GROUP_LIMIT

    def carried(self, delta: Delta) -> ReadCache | None:
        """A new cache at ``delta.after`` with this one's entries less those ``delta`` touched (copies: a query
        of another thread may be reading this one), or ``None`` when this one is too big to copy."""
        if len(self.terms) + len(self.speakers) > self.CARRY_LIMIT or self.groups.loaded.size > self.CARRY_LIMIT:
            return None
        fresh = ReadCache(delta.after, delta.created)
        # dict() first: one atomic copy, while a query of another thread may still be adding to this cache
        fresh.terms = {term: found for term, found in dict(self.terms).items() if term not in delta.terms}
        fresh.speakers = {term: found for term, found in dict(self.speakers).items() if term not in delta.speakers}
        fresh.groups = self.groups.updated(delta.groups)
        fresh.postings = self.postings.copy()  # a tail write never changes the main tables
        return fresh


def read_cache(index: VerbatimIndex, wseq: int, created: float) -> ReadCache:
    cache = index._read_cache
    if isinstance(cache, ReadCache) and cache.created == created and cache.wseq == wseq and not cache.full():
        return cache
    carried = None
    if isinstance(cache, ReadCache) and cache.created == created and cache.wseq < wseq and not cache.full():
        delta = index.read_deltas.since(cache.wseq, created, wseq)
        carried = cache.carried(delta) if delta is not None else None
    cache = index._read_cache = carried if carried is not None else ReadCache(wseq, created)
    return cache


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

    def _terms(self, weights: dict[str, float], n: float) -> Terms:
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
        return Terms(
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
        self.lookups = read_cache(index, int(stats.wseq), stats.created)
        names = index.names(db, stats)
        scope = None if sessions is None else sorted(names.session_ids(db, sessions).values())
        if scope is not None and not scope:
            return []
        if scope is None:  # a whole memory touches nearly every feature block: all of them in ordered scans, once
            self.cache.load_all(db)
        weights, named = self._weights()
        terms = self._terms(weights, n)
        captions = bool(cfg.caption_weight and stats.cap_total)
        text_postings = self._postings(FIELD_TEXT, terms.ids, scope)
        caption_postings = self._postings(FIELD_CAPTION, terms.ids, scope) if captions else {}
        matched = Matched.build(terms, text_postings, caption_postings)
        matched.features = self._matched_fields(matched.docs)
        dates = query_dates(self.query, self.today) if cfg.date_boost or cfg.date_term_weight else []
        windows = date_windows.windows(dates, stats)
        in_window = date_windows.count_in(db, windows, self.tail) if windows else 0
        if in_window:
            dated, dates_cut = date_windows.dated(db, windows, scope, self.tail)
        else:
            dated, dates_cut = np.zeros(0, dtype=np.int64), False
        touched = sets.union(matched.features["group"], self.gather(dated, "group")).astype(np.int64)
        groups = Groups.load(db, touched, self.lookups.groups)
        scorer = Scorer(self, stats, terms, matched, captions, groups)
        seeds = matched.docs
        limit = min(SEED_LIMIT, max(SEEDS_PER_RESULT * k, 500))
        pruned = seeds.size > limit
        if pruned:
            own = scorer.own_scores()
            seeds = np.sort(seeds[np.argpartition(-own, limit - 1)[:limit]])
        # Every event within HOPS links of a match (or dated in the named window) is a candidate, scored exactly
        # over a universe that holds their neighbours too.
        starts = sets.union(seeds, dated)
        candidates, universe = self._within(starts, HOPS, 2 * HOPS)
        if candidates.size == 0:
            return []
        ranked = self._rank(scorer, universe, candidates, named, dates, in_window, reference, exclude_types, names)
        # Farther events of a matching thread can only borrow its segment score. A thread is read whole only when
        # that bound could beat the k-th score found so far; threads longer than GROUP_LIMIT are not (inexact).
        threshold = ranked[3] if len(ranked[0]) >= k else 0.0
        due = scorer.threads_to_read(threshold)
        readable = groups.small(GROUP_LIMIT)
        extra = groups.members(db, sets.intersect(due, readable), self.tail)
        extra = extra[~sets.isin(extra, candidates, members_sorted=True)]
        if extra.size:
            candidates = sets.union(candidates, extra)
            universe = sets.union(universe, *self._within(extra, HOPS))
            ranked = self._rank(scorer, universe, candidates, named, dates, in_window, reference, exclude_types, names)
        exact = not pruned and not dates_cut and sets.isin(due, readable).all()
        index.counters["queries"] += 1
        index.counters["inexact"] += not exact
        chosen, totals, comp = ranked[0][:k], ranked[1], ranked[2]
        if chosen.size == 0:
            return []
        return self._hits(ranked[4][chosen], totals[chosen], comp, chosen, names)

    def _rank(
        self, scorer: Scorer, universe: np.ndarray, candidates: np.ndarray, named: set[int], dates: list[QueryDate],
        in_window: int, reference: _dt.datetime | None, exclude_types: frozenset[str], names: Names,
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], float, np.ndarray]:  # fmt: skip
        """``(positions in universe of the first k results, best first; totals; components; the k-th score (0 when
        fewer); universe)``. Ties are broken by doc id, so the first k are those of a sort of every result."""
        total, comp, local = scorer.score(universe, named, dates, in_window)
        features = scorer.features
        mask = sets.isin(universe, candidates, members_sorted=True) & (total > 0) & (local > 0)
        if reference is not None:
            mask &= features["epoch"] <= reference.timestamp()
        if exclude_types:
            excluded = list(names.type_ids(self.db, list(exclude_types)).values())
            if excluded:
                mask &= ~sets.isin(features["type"], np.array(excluded))
        chosen = np.flatnonzero(mask)  # total > 0 there: no NaN
        order = chosen[sets.best_first(total[chosen], universe[chosen], self.k)]
        kth = float(total[order[min(self.k, order.size) - 1]]) if order.size else 0.0
        return order, total, comp, kth, universe

    def _within(self, docs: np.ndarray, *depths: int) -> tuple[np.ndarray, ...]:
        """For each of ``depths``: ``docs`` and every doc within that many neighbour links of them (sorted). One
        walk of the deepest in each direction from every doc serves them all. A doc already reached in that
        direction (fewer links away, or one of ``docs``) is not walked again: links are functions, so everything
        beyond it was reached as early — 2,000 seeds of one thread then cost a walk of the thread, not 2,000 walks
        of 8 links."""
        found: list[list[np.ndarray]] = [[docs] for _ in depths]
        for link in ("prev", "next"):
            current = docs
            reached = _Reached(docs)
            for step in range(1, max(depths) + 1):
                current = self.gather(current, link).astype(np.int64)
                current = reached.first_time(current[current >= 0])
                if current.size == 0:
                    break
                for parts, depth in zip(found, depths, strict=True):
                    if step <= depth:
                        parts.append(current)
        return tuple(sets.unique_ids(np.concatenate(parts)) for parts in found)

    def _matched_fields(self, docs: np.ndarray) -> np.ndarray:
        """The three feature fields seed selection reads of every matched event (thread, text and caption
        lengths), gathered field by field: a whole-memory query matches 10^5-10^6 events, and copying their whole
        56-byte records cost more than the scoring that reads 12 bytes of each."""
        fields = np.zeros(docs.size, dtype=MATCHED_FIELDS)
        for name in MATCHED_FIELDS.names:
            fields[name] = self.gather(docs, name)
        return fields

    def gather(self, docs: np.ndarray, field: str | None = None) -> np.ndarray:
        """Feature records of ``docs`` (or their ``field``): the tail's own, else the cached blocks, with the
        tail's newer ``next`` links."""
        tail = self.tail
        reaches_tail = len(tail.records) and docs.size and int(docs.max()) >= tail.first
        in_tail = (docs >= tail.first) & (docs < tail.end) if reaches_tail else None
        if in_tail is not None and in_tail.any():
            dtype = feat.FEATURE if field is None else feat.FEATURE[field]
            records = np.zeros(docs.size, dtype=dtype)
            main = self.cache.gather(self.db, docs[~in_tail], field)
            own = tail.records[docs[in_tail] - tail.first]
            if field is None:  # whole records: copied as raw items (feat.raw), not field by field
                feat.raw(records)[~in_tail] = feat.raw(main)
                feat.raw(records)[in_tail] = feat.raw(own)
            else:
                records[~in_tail] = main
                records[in_tail] = own[field]
        else:
            records = self.cache.gather(self.db, docs, field)
        if tail.links and field in (None, "next"):
            linked, following = tail.link_arrays
            positions = np.flatnonzero(sets.isin(docs, linked, members_sorted=True))
            if positions.size:
                newer = following[np.searchsorted(linked, docs[positions])]
                if field is None:
                    records["next"][positions] = newer
                else:
                    records[positions] = newer
        return records

    def _postings(self, field_id: int, terms: list[int], scope: Sequence[int] | None) -> dict[int, TermPostings]:
        """Main runs plus the tail's postings of ``terms`` in ``scope``."""
        found = self.lookups.postings.read(_POSTINGS, self.db, field_id, terms, scope)
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
        main = [doc for doc in docs.tolist() if tail.record(doc) is None]
        sql = f"SELECT id, session, seq, type FROM {PREFIX}_doc WHERE id IN {ID_LIST}"  # one cached statement
        found = {r[0]: r[1:] for r in self.db.execute(sql, (json.dumps(main),))} if main else {}
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


class _Reached:
    """The doc ids a walk has reached, as a boolean table over ``0..max id`` (grown on demand)."""

    def __init__(self, docs: np.ndarray) -> None:
        self.table = np.zeros(int(docs.max()) + 1 if docs.size else 0, dtype=bool)
        self.table[docs] = True

    def first_time(self, docs: np.ndarray) -> np.ndarray:
        """The distinct ``docs`` not reached before (now reached), in ascending order."""
        if docs.size == 0:
            return docs
        top = int(docs.max()) + 1
        if top > self.table.size:
            grown = np.zeros(max(top, 2 * self.table.size), dtype=bool)
            grown[: self.table.size] = self.table
            self.table = grown
        fresh = sets.unique(docs[~self.table[docs]])
        self.table[fresh] = True
        return fresh
