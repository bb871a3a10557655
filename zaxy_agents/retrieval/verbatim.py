"""The verbatim lane: lexical retrieval of single events straight from the log, with no graph at all.

Each indexed event (a turn, a prompt, a command, a decision...) is one document. The scoring was designed and
validated in the LoCoMo retrieval study (docs/retrieval.md: R@10 0.804 vs 0.495 for plain BM25 on categories
1-4, no LLM, nothing dataset-specific). Why it looks the way it does:

* Events are short and conversational, so a question's words are often split between the event that holds
  the answer and its neighbours ("How often do you work out?" / "Three times a week."). Scores combine the
  event's own BM25 with BM25 over a small context window, BM25 over the whole segment, and a "borrow" from
  neighbours (an answer right after a matching question borrows most).
* Questions name people. A query word that names a known speaker (learned from event metadata, never from a
  list) is removed from term matching and instead boosts events produced by that speaker.
* "When ..." questions prefer events containing a temporal expression; a question naming an absolute date
  prefers events dated just after it, and those events match it even when they share no word with it ("What
  did Nate do in April 2022?" -> "Dyed my hair last week!"); sentences that are questions carry few facts and
  are slightly penalised.
* Everything a query needs is maintained in place on ``add`` (postings, document frequencies, field lengths,
  neighbour links, per-segment lengths): appending one event never rebuilds the index.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import math
import weakref
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zaxy_agents.projection.model import SearchDoc

from .dates import QueryDate, query_dates
from .postings import GrowingArray, Postings, bm25
from .text import _PROPN_RE, _TEMPORAL_RE, _WHEN_RE, Analyzer, question_share

STATE_VERSION = 3  # bump when the snapshot layout changes (old snapshots are rebuilt from the log)


@dataclass(frozen=True)
class Config:
    """Scoring knobs. Every component can be switched off by setting its weight to 0.

    Defaults were chosen on the LoCoMo tuning half (conv-26/30/41) only; see docs/retrieval.md.
    """

    k1: float = 1.2  # BM25 term-frequency saturation
    b: float = 0.75  # BM25 length normalisation
    stem: bool = True  # Snowball stemming
    stopwords: bool = True  # drop English stop words
    irregular: bool = True  # irregular inflections -> base form ("bought" -> "buy")
    caption_weight: float = 0.5  # weight of the attachment-caption field (separate BM25)
    speaker_term_weight: float = 0.0  # weight of query words naming a known speaker in term matching
    speaker_boost: float = 1.0  # events by a speaker named in the query: score *= 1 + boost
    ctx_weight: float = 0.5  # BM25 over the event + its neighbours' term counts (window +-2)
    ctx_decay1: float = 0.5  # weight of the +-1 neighbours' term counts in that window
    ctx_decay2: float = 0.25  # weight of the +-2 neighbours' term counts
    session_weight: float = 0.2  # BM25 of the whole session, added to each of its events
    neighbour_weight: float = 0.5  # borrow this share of the best adjacent event's score
    hop2_weight: float = 0.5  # ... or this share of the best event two positions away
    qa_weight: float = 1.1  # ... or this share of the previous event if it asks a question
    temporal_boost: float = 0.6  # time questions: events with a temporal expression *= 1 + boost
    date_boost: float = 2.0  # query names a date: events stamped just after it *= 1 + boost
    date_term_weight: float = 6.0  # ... and they gain this x the window's IDF, like a matched word (added last)
    question_penalty: float = 0.4  # score *= 1 - penalty * (share of the event's words in questions)
    propn_weight: float = 1.5  # query weight of capitalised non-initial query words (names, places)


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


class VerbatimIndex:
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

    # ------------------------------------------------------------------ listener protocol
    def on_batch(self, batch: Any, catalog: Any) -> None:
        for doc in batch.searchable:
            self.add(doc)

    def snapshot_state(self) -> dict[str, Any]:
        skip = {"cfg", "an", "_neighbour_cache"}
        return {
            "version": STATE_VERSION,
            "config": self.cfg,
            "state": {k: v for k, v in vars(self).items() if k not in skip},
            "vocabulary": dict(self.an.vocabulary),  # a copy: queries add words to the live memo
        }

    def restore_state(self, state: Any) -> bool:
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION or state.get("config") != self.cfg:
            return False
        vars(self).update(state["state"])
        self.an.restore_vocabulary(dict(state.get("vocabulary", {})))
        self._neighbour_cache = None
        return True

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

    def occurs(self, term: str, sessions: list[str] | None = None) -> bool:
        """Whether an index term occurs in any indexed event (of ``sessions`` when given)."""
        posting = self.text.post.get(term)
        if not posting:
            return False
        if sessions is None:
            return True
        allowed = [self._log_sessions[s] for s in sessions if s in self._log_sessions]
        owners = self.log_session.view()[np.frombuffer(posting[0], dtype=np.intc)]
        return bool(np.isin(owners, allowed).any())

    def term_statistics(
        self, query: str, *, sessions: list[str] | None = None, scan_limit: int = 4096
    ) -> tuple[int, dict[str, int]]:
        """``(documents in scope, {query term: documents in scope containing it})`` from the in-memory postings.

        A cheap "have I seen these words?" signal (metacognition): no scoring, no embedding. A term with more than
        ``scan_limit`` postings is counted on a prefix of its postings and scaled, to keep the cost bounded.
        """
        terms = list(dict.fromkeys(self.an(query)))
        if sessions is None:
            return len(self.keys), {term: self.text.df(term) for term in terms}
        allowed = [self._log_sessions[s] for s in sessions if s in self._log_sessions]
        if not allowed:
            return 0, dict.fromkeys(terms, 0)
        in_scope_mask = np.zeros(len(self._log_sessions), dtype=bool)
        in_scope_mask[allowed] = True
        owners = self.log_session.view()
        in_scope = int(_session_sizes(self)[allowed].sum())
        counts: dict[str, int] = {}
        for term in terms:
            posting = self.text.post.get(term)
            if not posting:
                counts[term] = 0
                continue
            docs = posting[0]
            sample = np.frombuffer(docs, dtype=np.intc)[:scan_limit] if isinstance(docs, array) else docs[:scan_limit]
            hits = int(np.count_nonzero(in_scope_mask[owners[sample]]))
            counts[term] = hits if len(docs) <= scan_limit else round(hits * len(docs) / scan_limit)
        return in_scope, counts


_SIZES: weakref.WeakKeyDictionary[VerbatimIndex, tuple[Any, int, np.ndarray]] = weakref.WeakKeyDictionary()


def _session_sizes(index: VerbatimIndex) -> np.ndarray:
    """Documents per Eventloom session id, maintained incrementally across calls (kept outside the index so it
    never enters a snapshot; rebuilt when the index was reset)."""
    owners = index.log_session.view()
    cached = _SIZES.get(index)
    if cached is not None and cached[0] is index.log_session and cached[1] <= len(owners):
        _, done, sizes = cached
    else:
        done, sizes = 0, np.zeros(0, dtype=np.int64)
    if done < len(owners) or len(sizes) < len(index._log_sessions):
        fresh = np.bincount(owners[done:], minlength=len(index._log_sessions))
        grown = np.zeros(max(len(fresh), len(sizes)), dtype=np.int64)
        grown[: len(sizes)] += sizes
        grown[: len(fresh)] += fresh
        sizes = grown
        _SIZES[index] = (index.log_session, len(owners), sizes)
    return sizes


def _parse_day(stamp: str | None) -> _dt.datetime | None:
    if not stamp:
        return None
    try:
        return _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
