"""The verbatim lane as it was before the on-disk index: every event scored densely, in memory.

A test oracle, the scorer of main before the on-disk index (6ae695f) with its snapshot code removed: the on-disk
index must rank exactly like this (tests/retrieval/test_verbatim_equivalence.py).
"""

from __future__ import annotations

import bisect
import datetime as _dt
import math
from array import array
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zaxy_agents.projection.model import SearchDoc
from zaxy_agents.retrieval.dates import QueryDate, query_dates
from zaxy_agents.retrieval.text import _PROPN_RE, _TEMPORAL_RE, _WHEN_RE, Analyzer, question_share
from zaxy_agents.retrieval.verbatim import Config


@dataclass(frozen=True, slots=True)
class VerbatimHit:
    """One event found by the verbatim lane, with its per-component score explanation."""

    session: str
    seq: int
    hash: str
    event_type: str
    text: str
    score: float
    components: dict[str, float]


class DenseVerbatim:
    """Incremental lexical index of log events; a projection listener (fed by every projected batch)."""

    name = "verbatim"

    def __init__(self, config: Config | None = None) -> None:
        self.cfg = config or Config()
        self.an = Analyzer(self.cfg.stem, self.cfg.stopwords, self.cfg.irregular)
        self.reset()

    def reset(self) -> None:
        self.keys: list[tuple[str, int]] = []
        self.hashes: list[str] = []
        self.types: list[str] = []
        self.type_code = GrowingArray(np.int32)  # event type as a small integer, for vectorised filters
        self._type_codes: dict[str, int] = {}
        self.epoch = GrowingArray(np.float64)  # occurred_at as seconds, for vectorised as-of filters
        self.texts: list[str] = []
        self.stamps: list[str] = []
        self.text = Postings()
        self.caption = Postings()
        self.speaker = GrowingArray(np.int64, -1)
        self._speaker_ids: dict[str, int] = {}
        self.speaker_terms: dict[str, int] = {}
        self.session = GrowingArray(np.int64)  # segment group id per doc (neighbour structure)
        self._groups: dict[tuple[str, str | None], int] = {}
        self._group_order: list[tuple[list[float], list[int]]] = []
        self.group_len = GrowingArray(np.float64)
        self.log_session = GrowingArray(np.int64)  # Eventloom session id per doc (scope filter)
        self._log_sessions: dict[str, int] = {}
        self.prev = GrowingArray(np.int64, -1)
        self.next = GrowingArray(np.int64, -1)
        self.temporal = GrowingArray(np.float64)
        self.qshare = GrowingArray(np.float64)
        self.asks = GrowingArray(np.float64)
        self.day = GrowingArray(np.int64, -1)
        self.month = GrowingArray(np.int64, -1)
        self._neighbour_cache: tuple[int, tuple[np.ndarray, ...]] | None = None

    def __len__(self) -> int:
        return len(self.keys)

    # ------------------------------------------------------------------ indexing
    def add(self, doc: SearchDoc) -> None:
        """Index one event. O(event length + log(segment length)); nothing is rebuilt."""
        i = len(self.keys)
        self.keys.append((doc.session, doc.seq))
        self.hashes.append(doc.hash)
        self.types.append(doc.event_type)
        self.type_code.append(self._type_codes.setdefault(doc.event_type, len(self._type_codes)))
        self.texts.append(doc.text[:2000])
        self.stamps.append(doc.occurred_at)
        terms = self.an(doc.text)
        self.text.add(i, terms)
        self.caption.add(i, self.an(doc.caption) if doc.caption else [])
        speaker = -1
        if doc.speaker:
            speaker = self._speaker_ids.setdefault(doc.speaker, len(self._speaker_ids))
            for term in self.an(doc.speaker):
                self.speaker_terms[term] = speaker
        self.speaker.append(speaker)
        self.temporal.append(1.0 if _TEMPORAL_RE.search(doc.text.lower()) else 0.0)
        self.qshare.append(question_share(doc.text))
        self.asks.append(1.0 if "?" in doc.text else 0.0)
        moment = _parse_day(doc.occurred_at)
        self.epoch.append(moment.timestamp() if moment else 0.0)
        self.day.append(moment.toordinal() if moment else -1)
        self.month.append(moment.year * 12 + moment.month - 1 if moment else -1)
        self.log_session.append(self._log_sessions.setdefault(doc.session, len(self._log_sessions)))

        group_key = (doc.session, doc.segment)
        group = self._groups.get(group_key)
        if group is None:
            group = self._groups[group_key] = len(self._group_order)
            self._group_order.append(([], []))
            self.group_len.append(0.0)
        self.session.append(group)
        self.group_len.a[group] += len(terms)
        positions, docs = self._group_order[group]
        position = float(doc.seq)
        j = bisect.bisect_right(positions, position)
        positions.insert(j, position)
        docs.insert(j, i)
        self.prev.append(-1)
        self.next.append(-1)
        if j > 0:
            before = docs[j - 1]
            self.prev.a[i], self.next.a[before] = before, i
        if j + 1 < len(docs):
            after = docs[j + 1]
            self.next.a[i], self.prev.a[after] = after, i

    # ------------------------------------------------------------------ querying
    def _query_weights(
        self, query: str, expansion: Mapping[str, float] | None = None
    ) -> tuple[dict[str, float], set[int]]:
        cfg = self.cfg
        proper: set[str] = set()
        if cfg.propn_weight != 1.0:
            for match in _PROPN_RE.finditer(query):
                proper.update(self.an(match.group(1)))
        weights: dict[str, float] = {}
        named: set[int] = set()
        for term in self.an(query):
            weight = cfg.propn_weight if term in proper else 1.0
            if term in self.speaker_terms:
                named.add(self.speaker_terms[term])
                weight = cfg.speaker_term_weight
            weights[term] = max(weights.get(term, 0.0), weight)
        for term, weight in (expansion or {}).items():
            weights.setdefault(term, weight)  # a word the query has keeps the query's weight
        return {t: w for t, w in weights.items() if w > 0}, named

    def score(
        self, query: str, expansion: Mapping[str, float] | None = None, today: _dt.date | None = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Score every event. Returns (total, components); components add up to total. ``expansion`` adds
        terms (index terms -> query weight, below 1) that the query does not contain; ``today`` resolves the
        query's relative dates ("yesterday", "last week"; ignored without it)."""
        cfg = self.cfg
        n = len(self.keys)
        comp: dict[str, np.ndarray] = {}
        if n == 0:
            return np.zeros(0), comp
        qw, named = self._query_weights(query, expansion)
        terms = list(qw)
        sp, sn, sp2, sn2 = self._neighbours()
        base = np.zeros(n)
        if terms:
            idf = np.array([math.log(1.0 + (n - self.text.df(t) + 0.5) / (self.text.df(t) + 0.5)) for t in terms])
            w = idf * np.array([qw[t] for t in terms])
            # Matrices carry one extra all-zero column: a missing neighbour points there (no branching).
            tf = self.text.tf_matrix(terms, n + 1)
            ln = np.append(self.text.lens.view(), 0.0)
            comp["text"] = bm25(tf[:, :n], ln[:n], self.text.total / max(self.text.nonempty, 1), w, cfg.k1, cfg.b)
            if cfg.caption_weight and self.caption.total:
                ctf = self.caption.tf_matrix(terms, n + 1)
                cdf = np.array([self.caption.df(t) for t in terms])
                cw = np.log(1.0 + (n - cdf + 0.5) / (cdf + 0.5)) * np.array([qw[t] for t in terms])
                caption_lens = np.append(self.caption.lens.view(), 0.0)
                comp["caption"] = cfg.caption_weight * bm25(
                    ctf[:, :n],
                    caption_lens[:n],
                    self.caption.total / max(self.caption.nonempty, 1),
                    cw,
                    cfg.k1,
                    cfg.b,
                )
                tf = tf + cfg.caption_weight * ctf
                ln = ln + cfg.caption_weight * caption_lens
            if cfg.ctx_weight:
                tfc = tf[:, :n] + cfg.ctx_decay1 * (tf[:, sp] + tf[:, sn]) + cfg.ctx_decay2 * (tf[:, sp2] + tf[:, sn2])
                lc = ln[:n] + cfg.ctx_decay1 * (ln[sp] + ln[sn]) + cfg.ctx_decay2 * (ln[sp2] + ln[sn2])
                comp["context"] = cfg.ctx_weight * bm25(tfc, lc, float(lc.mean()), w, cfg.k1, cfg.b)
            if cfg.session_weight:
                sid = self.session.view()
                groups = len(self._group_order)
                tfs = np.stack([np.bincount(sid, weights=row[:n], minlength=groups) for row in tf])
                ls = np.bincount(sid, weights=ln[:n], minlength=groups)
                comp["segment"] = cfg.session_weight * bm25(tfs, ls, float(ls.mean()), w, cfg.k1, cfg.b)[sid]
            base = sum(comp.values())
        if cfg.neighbour_weight or cfg.hop2_weight or cfg.qa_weight:
            padded = np.append(base, 0.0)
            borrow = cfg.neighbour_weight * np.maximum(padded[sp], padded[sn])
            if cfg.hop2_weight:
                borrow = np.maximum(borrow, cfg.hop2_weight * np.maximum(padded[sp2], padded[sn2]))
            if cfg.qa_weight:
                asking = np.append(base * self.asks.view(), 0.0)
                borrow = np.maximum(borrow, cfg.qa_weight * asking[sp])
            comp["neighbour"] = borrow
        total = base + comp.get("neighbour", 0.0)

        def scale(name: str, factor: np.ndarray) -> None:
            nonlocal total
            comp[name] = total * (factor - 1.0)
            total = total * factor

        lowered = query.lower()
        if cfg.temporal_boost and _WHEN_RE.search(lowered):
            scale("temporal", 1.0 + cfg.temporal_boost * self.temporal.view())
        dates = query_dates(query, today) if cfg.date_boost or cfg.date_term_weight else []
        affinity = self._date_affinity(dates) if dates else np.zeros(0)
        if cfg.date_boost and affinity.any():
            scale("date", 1.0 + cfg.date_boost * affinity)
        if cfg.question_penalty:
            scale("question", 1.0 - cfg.question_penalty * self.qshare.view())
        if cfg.speaker_boost and named:
            scale("speaker", 1.0 + cfg.speaker_boost * np.isin(self.speaker.view(), list(named)))
        if cfg.date_term_weight and affinity.any():
            # The named date is evidence in itself ("What did Nate do in April 2022?" -> "Dyed my hair last
            # week!"), weighted like a query word by how rare its window is. Added after the boosts: scaling it
            # by the speaker would let a wrongly named person's turns crowd out the event itself.
            in_window = float(np.count_nonzero(affinity))
            idf = math.log(1.0 + (n - in_window + 0.5) / (in_window + 0.5))
            comp["date_match"] = cfg.date_term_weight * idf * affinity
            total = total + comp["date_match"]
        return total, comp

    def _neighbours(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Previous, next, two-back and two-ahead doc of every doc; ``n`` (a zero sentinel) where none.

        Cached until the next ``add`` (which may relink neighbours anywhere in a segment).
        """
        n = len(self.keys)
        if self._neighbour_cache is None or self._neighbour_cache[0] != n:
            prev, nxt = self.prev.view(), self.next.view()
            p2 = np.where(prev >= 0, prev[np.maximum(prev, 0)], -1)
            n2 = np.where(nxt >= 0, nxt[np.maximum(nxt, 0)], -1)
            safe = tuple(np.where(index >= 0, index, n) for index in (prev, nxt, p2, n2))
            self._neighbour_cache = (n, safe)
        return self._neighbour_cache[1]  # type: ignore[return-value]

    def _date_affinity(self, dates: list[QueryDate]) -> np.ndarray:
        """1 for events dated from the named day to 8 days after it (or in the named month or the next one),
        0.5 up to a month after the named day, else 0: events are usually logged shortly after the date a
        question refers to. A relative period ("yesterday", resolved against the reference day) is the time
        its events were logged: 1 inside it, else 0."""
        day, month = self.day.view(), self.month.view()
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

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        sessions: list[str] | None = None,
        as_of: str | None = None,
        exclude_types: frozenset[str] = frozenset(),
        expansion: Mapping[str, float] | None = None,
    ) -> list[VerbatimHit]:
        """Top-k single events, optionally restricted to some sessions and to events dated at or before
        ``as_of`` (also the day the query's relative dates count from; default today, UTC); each hit explains
        its score by component. ``expansion``: extra weighted terms (see :mod:`zaxy_agents.retrieval.expansion`)."""
        reference = _parse_day(as_of)
        today = reference.date() if reference is not None else _dt.datetime.now(_dt.UTC).date()
        total, comp = self.score(query, expansion, today)
        if total.size == 0 or k <= 0:
            return []
        # Only events with local evidence (their own words, captions, context window, an adjacent match or the
        # date the query names) are results; the segment component re-ranks within a thread but never makes an
        # unrelated event a hit.
        local = sum(comp[name] for name in ("text", "caption", "context", "neighbour", "date_match") if name in comp)
        mask = (total > 0) & (np.asarray(local) > 0) if not isinstance(local, int) else np.zeros(total.size, bool)
        if sessions is not None:
            allowed = [self._log_sessions[s] for s in sessions if s in self._log_sessions]
            mask &= np.isin(self.log_session.view(), allowed)
        if reference is not None:
            mask &= self.epoch.view() <= reference.timestamp()
        if exclude_types:
            excluded = [self._type_codes[kind] for kind in exclude_types if kind in self._type_codes]
            if excluded:
                mask &= ~np.isin(self.type_code.view(), excluded)
        candidates = np.flatnonzero(mask)
        if candidates.size == 0:
            return []
        k = min(k, candidates.size)
        scores = total[candidates]
        top = candidates[np.argpartition(-scores, k - 1)[:k]]
        top = top[np.lexsort((top, -total[top]))]
        return [
            VerbatimHit(
                self.keys[d][0],
                self.keys[d][1],
                self.hashes[d],
                self.types[d],
                self.texts[d],
                float(total[d]),
                {name: round(float(values[d]), 6) for name, values in comp.items() if values[d]},
            )
            for d in top
        ]


def _parse_day(stamp: str | None) -> _dt.datetime | None:
    if not stamp:
        return None
    try:
        return _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


class GrowingArray:
    """A numpy array that grows by doubling, so per-event features are updated in place."""

    def __init__(self, dtype: Any, fill: float = 0, width: int = 0) -> None:
        self.fill, self.width = fill, width
        shape = (16, width) if width else (16,)
        self.a = np.full(shape, fill, dtype=dtype)
        self.n = 0

    def ensure(self, n: int) -> None:
        if n > self.a.shape[0]:
            new = np.full((max(n, 2 * self.a.shape[0]), *self.a.shape[1:]), self.fill, dtype=self.a.dtype)
            new[: self.a.shape[0]] = self.a
            self.a = new
        self.n = max(self.n, n)

    def append(self, v: Any) -> None:
        self.ensure(self.n + 1)
        self.a[self.n - 1] = v

    def view(self) -> np.ndarray:
        return self.a[: self.n]


class Postings:
    """Incremental inverted index of one text field: term -> (doc ids, term frequencies)."""

    def __init__(self) -> None:
        # array('i') postings: appended in place, viewed by numpy without a copy at query time
        self.post: dict[str, tuple[array, array]] = {}
        self.lens = GrowingArray(np.float64)
        self.total = 0.0
        self.nonempty = 0

    def add(self, doc: int, terms: list[str]) -> None:
        self.lens.append(len(terms))
        self.total += len(terms)
        self.nonempty += bool(terms)
        for t, f in Counter(terms).items():
            p = self.post.get(t)
            if p is None:
                self.post[t] = p = (array("i"), array("i"))
            p[0].append(doc)
            p[1].append(f)

    def df(self, t: str) -> int:
        p = self.post.get(t)
        return len(p[0]) if p else 0

    def tf_matrix(self, terms: list[str], n: int) -> np.ndarray:
        out = np.zeros((len(terms), n))
        for r, t in enumerate(terms):
            p = self.post.get(t)
            if p:
                out[r, np.frombuffer(p[0], dtype=np.int32)] = np.frombuffer(p[1], dtype=np.int32)
        return out


def bm25(tf: np.ndarray, lens: np.ndarray, avg: float, weights: np.ndarray, k1: float, b: float) -> np.ndarray:
    """Sum over query terms of weight * tf*(k1+1) / (tf + k1*(1-b+b*len/avg)); weights include IDF."""
    if tf.size == 0:
        return np.zeros(tf.shape[1] if tf.ndim == 2 else 0)
    norm = k1 * (1.0 - b + b * lens / max(avg, 1e-9))
    return (weights[:, None] * tf * (k1 + 1.0) / (tf + norm[None, :])).sum(0)
