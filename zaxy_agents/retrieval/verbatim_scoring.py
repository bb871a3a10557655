"""The verbatim formula over a candidate set: what :mod:`.verbatim_search` scores exactly.

:class:`Matched` holds the events whose text or caption holds a query term (with their term counts),
:class:`Groups` the threads they belong to, and :class:`Scorer` computes, for any set of events whose
neighbours (+-4) are in the set, every component of :class:`~.verbatim.Config` with the index-wide statistics
(:func:`context_mean` derives the mean context-window length from running sums).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from zaxy_agents.storage.derived.store import ID_LIST

from . import features as feat
from . import sorted_sets as sets
from .dates import QueryDate
from .postings import CHUNK, bm25
from .text import _WHEN_RE
from .verbatim import PREFIX, Stats
from .verbatim_dates import affinity as date_affinity

if TYPE_CHECKING:
    from .verbatim_search import _Query
    from .verbatim_tail import TailSnapshot


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
class Terms:
    """The query terms the index knows, with their text and caption weights (IDF x query weight)."""

    names: list[str]
    ids: list[int]
    weight: np.ndarray  # text IDF x query weight
    caption_weight: np.ndarray  # caption IDF x query weight


@dataclass
class Matched:
    """The events holding a query term (text or caption) in the searched sessions, with their term counts."""

    docs: np.ndarray  # sorted doc ids
    tf: np.ndarray  # terms x docs, text
    ctf: np.ndarray  # terms x docs, caption
    features: np.ndarray

    @classmethod
    def build(cls, terms: Terms, text: dict[int, object], caption: dict[int, object]) -> Matched:
        """The union of the terms' postings and each posting's column in it, from one stable argsort of their
        concatenation (runs of ascending doc ids: merged in near-linear time) — a search of every posting in the
        union cost more, at 10^5 postings a term, than the sort."""
        found = [(0, row, text[t]) for row, t in enumerate(terms.ids) if t in text]
        found += [(1, row, caption[t]) for row, t in enumerate(terms.ids) if t in caption]
        tf = np.zeros((2, len(terms.ids), 0))
        if not found:
            return cls(np.zeros(0, dtype=np.int64), tf[0], tf[1], np.zeros(0, dtype=feat.FEATURE))
        docs, column = sets.unique_positions([entry.docs for _, _, entry in found])  # type: ignore[attr-defined]
        tf = np.zeros((2, len(terms.ids), docs.size))
        start = 0
        for field, row, entry in found:
            end = start + entry.docs.size  # type: ignore[attr-defined]
            tf[field, row, column[start:end]] = entry.tfs  # type: ignore[attr-defined]
            start = end
        return cls(docs, tf[0], tf[1], np.zeros(0, dtype=feat.FEATURE))

    def at(self, docs: np.ndarray, captions: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Text and caption term counts (terms x docs) of any ``docs``: 0 where a doc holds no query term (the
        caption counts are all 0 without ``captions``). Gathered by :func:`_take_columns` (~10x faster than
        ``tf[:, where]`` on a query's 10^4 docs, same values and memory layout)."""
        if self.docs.size == 0:
            return np.zeros((self.tf.shape[0], docs.size)), np.zeros((self.tf.shape[0], docs.size))
        where = sets.positions(self.docs, docs, self.docs.size)  # absent: the appended zero column
        tf = _take_columns(_with_zero_column(self.tf), where)
        ctf = _take_columns(_with_zero_column(self.ctf), where) if captions else np.zeros(tf.shape)
        return tf, ctf


class GroupRows:
    """Rows of ``<prefix>_group`` (docs, total length, first and last doc), in arrays indexed by group id: a
    whole-memory query touches tens of thousands of threads, and building them from per-row tuples cost more
    than the scoring that reads them. Valid for one write sequence of the index (:class:`ReadCache`)."""

    FULL_SCAN = 2000  # past this many missing rows, one scan of the table beats IN lists

    def __init__(self) -> None:
        self.loaded = np.zeros(0, dtype=bool)
        self.docs = np.zeros(0, dtype=np.int64)
        self.lengths = np.zeros(0)
        self.first = np.zeros(0, dtype=np.int64)
        self.last = np.zeros(0, dtype=np.int64)
        self.count = 0
        self.scanned = False

    def known(self, ids: np.ndarray) -> np.ndarray:
        inside = ids < self.loaded.size
        found = np.zeros(ids.size, dtype=bool)
        found[inside] = self.loaded[ids[inside]]
        return found

    def fill(self, db: sqlite3.Connection, ids: np.ndarray) -> None:
        """Load the rows of ``ids`` not loaded yet (a group missing from the table stays unknown)."""
        if ids.size == 0 or self.scanned:
            return
        missing = ids[~self.known(ids)]
        if missing.size == 0:
            return
        if missing.size > self.FULL_SCAN:
            table = db.execute(f"SELECT id, docs, len, first, last FROM {PREFIX}_group").fetchall()
            self.scanned = True
        else:
            table = []
            sql = f"SELECT id, docs, len, first, last FROM {PREFIX}_group WHERE id IN {ID_LIST}"
            for start in range(0, missing.size, CHUNK):
                table += db.execute(sql, (json.dumps(missing[start : start + CHUNK].tolist()),)).fetchall()
        self._store(table)

    def updated(self, rows: Iterable[tuple[int, int, float, int, int]]) -> GroupRows:
        """A copy holding ``rows`` (``(id, docs, total length, first, last)``, as a write committed them) instead
        of what it held of those threads."""
        fresh = GroupRows()
        # ``loaded`` first: a row another thread stores meanwhile is written before it is marked loaded (_store)
        arrays = [getattr(self, name).copy() for name in ("loaded", "docs", "lengths", "first", "last")]
        size = min(array.size for array in arrays)  # equal unless another thread was growing them meanwhile
        fresh.loaded, fresh.docs, fresh.lengths, fresh.first, fresh.last = (array[:size] for array in arrays)
        fresh.count, fresh.scanned = int(fresh.loaded.sum()), self.scanned and size == self.loaded.size
        fresh._store(list(rows))
        return fresh

    def _store(self, table: list[Any]) -> None:
        """Hold the rows ``(id, docs, len, first, last)`` of ``table``."""
        if not table:
            return
        values = np.array(table, dtype=np.float64)
        where = values[:, 0].astype(np.int64)
        self._grow(int(where.max()) + 1)
        self.count += int((~self.loaded[where]).sum())
        self.docs[where] = values[:, 1].astype(np.int64)
        self.lengths[where] = values[:, 2]
        self.first[where] = values[:, 3].astype(np.int64)
        self.last[where] = values[:, 4].astype(np.int64)
        self.loaded[where] = True  # last: a row marked loaded is whole (a copy taken meanwhile reads it whole)

    def _grow(self, size: int) -> None:
        if size <= self.loaded.size:
            return
        size = max(size, 2 * self.loaded.size)
        for name in ("loaded", "docs", "lengths", "first", "last"):
            old = getattr(self, name)
            grown = np.zeros(size, dtype=old.dtype)
            grown[: old.size] = old
            setattr(self, name, grown)


@dataclass
class Groups:
    """The (session, segment) threads a query touches: size, total length and end docs."""

    ids: np.ndarray
    docs: np.ndarray
    lengths: np.ndarray
    first: np.ndarray
    last: np.ndarray

    @classmethod
    def load(cls, db: sqlite3.Connection, ids: np.ndarray, rows: GroupRows) -> Groups:
        """The rows of groups ``ids`` (sorted), through ``rows`` (a cache filled here)."""
        rows.fill(db, ids)
        known = ids[rows.known(ids)].astype(np.int64)
        return cls(known, rows.docs[known], rows.lengths[known], rows.first[known], rows.last[known])

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
            chunk = json.dumps(scattered[start : start + CHUNK].tolist())
            rows = db.execute(f"SELECT id FROM {PREFIX}_doc WHERE grp IN {ID_LIST}", (chunk,)).fetchall()
            parts.append(np.array([r[0] for r in rows], dtype=np.int64))
        if scattered.size and len(tail.records):
            in_tail = sets.isin(tail.records["group"], scattered)
            parts.append(np.flatnonzero(in_tail).astype(np.int64) + tail.first)
        return sets.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


class Scorer:
    """The full verbatim formula over a set of docs whose neighbours (+-4) are in the set."""

    def __init__(
        self, query: _Query, stats: Stats, terms: Terms, matched: Matched, captions: bool, groups: Groups
    ) -> None:
        self.query, self.cfg, self.stats, self.terms, self.matched = query, query.cfg, stats, terms, matched
        self.captions, self.groups = captions, groups
        self.features = np.zeros(0, dtype=feat.FEATURE)
        self.prior_bound = 1.0
        self._matched_slot: np.ndarray | None = None  # each matched doc's position in the segment ids
        self._segments = self._segment_scores()

    def _segment_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """``(group ids, segment score)`` for the groups holding a matched doc (others score 0)."""
        cfg, matched = self.cfg, self.matched
        if not cfg.session_weight or matched.docs.size == 0 or not self.terms.ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        groups, inverse = sets.unique_inverse(matched.features["group"].astype(np.int64))
        self._matched_slot = inverse
        tfx = matched.tf + cfg.caption_weight * matched.ctf if self.captions else matched.tf
        # every term's counts per thread in ONE bincount over (term, thread) bins: each bin adds the same values in
        # the same (doc) order as a bincount per term row did, so the sums are the same to the last bit
        terms, size = tfx.shape[0], groups.size
        bins = (np.arange(terms, dtype=np.int64)[:, None] * size + inverse).ravel()
        tfs = np.bincount(bins, weights=np.ascontiguousarray(tfx).ravel(), minlength=terms * size).reshape(terms, size)
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
        if self._matched_slot is not None:  # every matched doc's thread is among the segment ids: no search
            return score + self._segments[1][self._matched_slot]
        return score + self._segment(records["group"].astype(np.int64))

    def score(
        self, docs: np.ndarray, named: set[int], dates: list[QueryDate], in_window: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """``(total, components, local evidence)`` for ``docs`` (sorted); exact for docs whose +-4 neighbours
        are all in ``docs``."""
        cfg, stats, terms, matched = self.cfg, self.stats, self.terms, self.matched
        records = self.features = self.query.gather(docs)
        size = docs.size
        prev, nxt = positions(docs, records["prev"]), positions(docs, records["next"])
        prev2 = np.append(prev, size)[prev]
        next2 = np.append(nxt, size)[nxt]
        comp: dict[str, np.ndarray] = {}
        base = np.zeros(size)
        if terms.ids:
            tf, ctf = matched.at(docs, self.captions)
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
                tfp = _with_zero_column(tf)
                lnp = np.append(ln, 0.0)
                tfc = (
                    tf
                    + cfg.ctx_decay1 * (_take_columns(tfp, prev) + _take_columns(tfp, nxt))
                    + cfg.ctx_decay2 * (_take_columns(tfp, prev2) + _take_columns(tfp, next2))
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
        affinity = date_affinity(dates, records["day"].astype(np.int64), records["month"].astype(np.int64))
        if cfg.date_boost and in_window:
            scale("date", 1.0 + cfg.date_boost * affinity)
            self.prior_bound *= 1.0 + cfg.date_boost
        if cfg.question_penalty:
            scale("question", 1.0 - cfg.question_penalty * records["qshare"])
        if cfg.speaker_boost and named:
            scale("speaker", 1.0 + cfg.speaker_boost * sets.isin(records["speaker"], np.array(sorted(named))))
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


def _with_zero_column(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` (terms x docs) with a column of zeros appended (where a gather's "absent" index points), stored
    doc-major: ``(docs + 1) x terms``, C-contiguous, the operand of :func:`_take_columns`."""
    return np.concatenate((matrix.T, np.zeros((1, matrix.shape[0]))), axis=0)


def _take_columns(padded: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``matrix[:, where]`` of the matrix ``padded`` came from (terms x len(where)), by one ``np.take`` of whole
    doc rows. The result has the Fortran layout NumPy's ``matrix[:, where]`` gives, so the sums over terms that
    follow add in the same order: the scores stay identical to the last bit."""
    return np.take(padded, where, axis=0).T


def positions(docs: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Position in ``docs`` of each target doc; ``len(docs)`` (a zero sentinel) when absent or -1."""
    return sets.positions(docs, targets.astype(np.int64), docs.size)  # doc ids are >= 0: -1 is never found
