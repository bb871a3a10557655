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

The index lives on disk (tables ``verbatim_*`` of the derived-state database, :mod:`.derived`): postings per
session (:mod:`.postings`), per-event features in blocks (:mod:`.features`), and small dictionaries. Each
projected batch is indexed in place (O(batch), nothing rebuilt); opening costs nothing; a query reads the
postings of its terms in the searched sessions and scores only candidates (:mod:`.verbatim_search`). Event
texts are not copied here: hits carry ``(session, seq)`` and the engine reads their text from the log.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import random
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zaxy_agents.projection.model import SearchDoc
from zaxy_agents.storage.derived.store import ID_LIST

from . import features as feat
from . import postings, verbatim_df
from .derived import DerivedStore
from .text import Analyzer

SCHEMA_VERSION = 5  # bump when the layout or the analysis changes: the tables are rebuilt from the log (2: segments;
# 3: varint runs per term and segment, sessions as doc ranges; 4: the unsealed segments as one row per write,
# posting_open; 5: known terms' document frequencies as one count row per write, verbatim_df)
PREFIX = "verbatim"
FIELD_TEXT, FIELD_CAPTION = 0, 1
TEXT_LIMIT = 2000  # characters of an event's text shown in a hit (the whole text is indexed)


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
    speaker_boost: float = 0.5  # events by a speaker named in the query: score *= 1 + boost (see docs)
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
    """One event found by the verbatim lane, with its per-component score explanation. The event's text and
    hash are read from the log by whoever shows it (:mod:`.event_texts`)."""

    session: str
    seq: int
    event_type: str
    score: float
    components: dict[str, float]


_STATS = (
    "docs",  # live documents (the N of IDF)
    "next_doc",  # next doc id (ids are never reused)
    "text_total",
    "text_nonempty",
    "cap_total",
    "cap_nonempty",
    "ln_total",  # sum over docs of text length + caption_weight x caption length (= sum of group lengths)
    "first1",  # sums over groups of that length for the first, second, last and second-to-last doc:
    "first2",  # the mean context-window length follows from them (see verbatim_search.context_mean)
    "last1",
    "last2",
    "groups",
    "wseq",  # write sequence: feature blocks written in a transaction carry it (cache invalidation)
    "min_day",
    "max_day",
    "erasures",  # erase calls so far (the vocabulary may have lost words: query expansion re-reads it)
    "created",  # a random stamp of the tables' creation (a rebuild restarts every id)
    "tail_first",  # first doc of the log-structured tail (verbatim_write)
    "tail_docs",  # docs in the tail
)


@dataclass
class Stats:
    values: dict[str, float] = field(default_factory=lambda: dict.fromkeys(_STATS, 0.0))

    def __getattr__(self, name: str) -> float:
        try:
            return self.values[name]
        except KeyError as exc:
            raise AttributeError(name) from exc


def read_stats(db: sqlite3.Connection, prefix: str = PREFIX) -> Stats:
    row = db.execute(f"SELECT {', '.join(_STATS)} FROM {prefix}_stats WHERE id = 1").fetchone()
    return Stats(dict(zip(_STATS, row, strict=True))) if row else Stats()


def _schema() -> list[str]:
    p = PREFIX
    return [
        *postings.schema(p),
        *feat.schema(p),
        *verbatim_df.schema(p),
        f"CREATE TABLE IF NOT EXISTS {p}_stats(id INTEGER PRIMARY KEY, "
        + ", ".join(f"{name} REAL NOT NULL DEFAULT 0" for name in _STATS)
        + ")",
        f"INSERT OR IGNORE INTO {p}_stats(id, min_day, max_day, created) VALUES (1, -1, -1, {random.random()})",
        f"CREATE TABLE IF NOT EXISTS {p}_term(id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE, "
        "df INTEGER NOT NULL, cdf INTEGER NOT NULL)",
        f"CREATE TABLE IF NOT EXISTS {p}_doc(id INTEGER PRIMARY KEY, session INTEGER NOT NULL, "
        "seq INTEGER NOT NULL, grp INTEGER NOT NULL, day INTEGER NOT NULL, type INTEGER NOT NULL)",
        f"CREATE UNIQUE INDEX IF NOT EXISTS {p}_doc_key ON {p}_doc(session, seq)",
        f"CREATE INDEX IF NOT EXISTS {p}_doc_day ON {p}_doc(day, session)",
        f"CREATE INDEX IF NOT EXISTS {p}_doc_group ON {p}_doc(grp)",
        f"CREATE TABLE IF NOT EXISTS {p}_session(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
        "docs INTEGER NOT NULL, last_seq INTEGER NOT NULL)",
        f"CREATE TABLE IF NOT EXISTS {p}_group(id INTEGER PRIMARY KEY, session INTEGER NOT NULL, segment TEXT, "
        "docs INTEGER NOT NULL, len REAL NOT NULL, first INTEGER NOT NULL, second INTEGER NOT NULL, "
        "last INTEGER NOT NULL, last2 INTEGER NOT NULL)",
        f"CREATE INDEX IF NOT EXISTS {p}_group_key ON {p}_group(session, segment)",
        f"CREATE TABLE IF NOT EXISTS {p}_type(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
        f"CREATE TABLE IF NOT EXISTS {p}_speaker(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
        "docs INTEGER NOT NULL)",
        f"CREATE TABLE IF NOT EXISTS {p}_speaker_term(term TEXT PRIMARY KEY, speaker INTEGER NOT NULL)",
        # Surface words of the indexed texts -> their index term, in first-seen order (query expansion).
        f"CREATE TABLE IF NOT EXISTS {p}_word(id INTEGER PRIMARY KEY, word TEXT NOT NULL UNIQUE, term TEXT NOT NULL)",
    ]


class Names:
    """Session and event-type names <-> ids, cached as they are met (an id never changes meaning until the tables
    are rebuilt, which changes their ``created`` stamp)."""

    def __init__(self, created: float) -> None:
        self.created = created
        self._ids: dict[str, dict[str, int]] = {"session": {}, "type": {}}
        self._names: dict[str, dict[int, str]] = {"session": {}, "type": {}}

    def _resolve_ids(self, db: sqlite3.Connection, table: str, names: Sequence[str]) -> dict[str, int]:
        known = self._ids[table]
        missing = [name for name in dict.fromkeys(names) if name not in known]
        for start in range(0, len(missing), postings.CHUNK):
            chunk = missing[start : start + postings.CHUNK]
            sql = f"SELECT name, id FROM {PREFIX}_{table} WHERE name IN ({','.join('?' * len(chunk))})"
            for name, row_id in db.execute(sql, chunk):
                known[name], self._names[table][row_id] = row_id, name
        return {name: known[name] for name in names if name in known}

    def _resolve_names(self, db: sqlite3.Connection, table: str, ids: Sequence[int]) -> dict[int, str]:
        known = self._names[table]
        missing = [i for i in dict.fromkeys(ids) if i not in known]
        for start in range(0, len(missing), postings.CHUNK):
            chunk = json.dumps([int(i) for i in missing[start : start + postings.CHUNK]])
            for row_id, name in db.execute(f"SELECT id, name FROM {PREFIX}_{table} WHERE id IN {ID_LIST}", (chunk,)):
                known[row_id], self._ids[table][name] = name, row_id
        return {i: known[i] for i in ids if i in known}

    def session_ids(self, db: sqlite3.Connection, names: Sequence[str]) -> dict[str, int]:
        return self._resolve_ids(db, "session", names)

    def type_ids(self, db: sqlite3.Connection, names: Sequence[str]) -> dict[str, int]:
        return self._resolve_ids(db, "type", names)

    def session_names(self, db: sqlite3.Connection, ids: Sequence[int]) -> dict[int, str]:
        return self._resolve_names(db, "session", ids)

    def type_names(self, db: sqlite3.Connection, ids: Sequence[int]) -> dict[int, str]:
        return self._resolve_names(db, "type", ids)


_TABLES = (
    "stats", "term", "doc", "session", "group", "type", "speaker", "speaker_term", "word", "tail_post", "tail_doc",
    "tail_link", "term_open",
)  # fmt: skip


class VerbatimIndex:
    """Incremental lexical index of log events, stored in the derived-state database (a ``DerivedIndex``)."""

    name = PREFIX
    schema_version = SCHEMA_VERSION
    rebuild_worker = "zaxy_agents.retrieval.verbatim_worker"  # `zaxy reproject` builds it in a second process

    def __init__(self, config: Config | None = None) -> None:
        self.cfg = config or Config()
        self.an = Analyzer(self.cfg.stem, self.cfg.stopwords, self.cfg.irregular)
        self.store: DerivedStore | None = None
        # (session, seq) -> searchable text, read from the log: used after an erasure to re-learn the surface
        # words of the terms it touched (the index keeps no text of its own).
        self.text_source: Callable[[list[tuple[str, int]]], dict[tuple[str, int], str]] | None = None
        self.cache = feat.FeatureCache(PREFIX)
        self._pending: tuple[dict[int, np.ndarray], int, int] | None = None
        self._pending_created: float | None = None  # the index's creation token, as the writer read it
        from .verbatim_tail import Tail

        self.tail = Tail()
        self._known_words: set[str] = set()
        self._pending_words: set[str] = set()
        self._names = Names(-1.0)
        self._read_cache: object = None  # verbatim_search.ReadCache of the current write sequence
        from .read_deltas import ReadDeltas

        self.read_deltas = ReadDeltas()  # this process's tail writes, so readers keep the lookups they did not touch
        self.write_cache: object = None  # verbatim_write.WriteCache
        self._write_cache_next: float | None = None
        self.counters: Counter[str] = Counter()  # queries, and those whose candidate set was bounded (inexact)

    # ------------------------------------------------------------------ derived-index protocol
    def create_schema(self, db: sqlite3.Connection) -> None:
        from .verbatim_tail import tail_schema

        for statement in [*_schema(), *tail_schema()]:
            db.execute(statement)

    def drop_schema(self, db: sqlite3.Connection) -> None:
        for statement in [*postings.drop(PREFIX), *feat.drop(PREFIX)]:
            db.execute(statement)
        for table in _TABLES:
            db.execute(f'DROP TABLE IF EXISTS "{PREFIX}_{table}"')
        self.cache.clear()
        self.tail.clear()
        self.read_deltas.clear()
        self.write_cache = None
        self._known_words.clear()

    def attach(self, store: DerivedStore) -> None:
        self.store = store

    def committed(self) -> None:
        if self._pending is not None:
            blocks, before, after = self._pending
            self.cache.install(blocks, before, after)
            created = self._pending_created  # read inside the write: no query after each commit
            self.tail.committed(read_stats(self.reader()).created if created is None else created)
        self.read_deltas.committed()
        if self._write_cache_next is not None and self.write_cache is not None:
            self.write_cache.wseq = self._write_cache_next  # type: ignore[attr-defined]
        self._write_cache_next = None
        self._known_words |= self._pending_words
        if len(self._known_words) > 500_000:
            self._known_words.clear()
        self._pending, self._pending_words, self._pending_created = None, set(), None

    def rolled_back(self) -> None:
        self._pending, self._pending_words, self._pending_created = None, set(), None
        self.read_deltas.rolled_back()
        # A rebuild group (several committed() calls in one transaction) may have been undone: the tail view and
        # the feature cache are read again from the tables (rollbacks are rare).
        self.tail.clear()
        self.write_cache, self._write_cache_next = None, None
        self.cache.clear()

    def tables_replaced(self) -> None:
        """Its tables were replaced wholesale (a rebuild worker's copy, ``projection/rebuild_worker.py``): every
        cache of them is dropped."""
        self.rolled_back()
        self._known_words.clear()
        self._names = Names(-1.0)

    def reader(self) -> sqlite3.Connection:
        if self.store is None:
            raise RuntimeError("the verbatim index is not attached to a derived store")
        return self.store.reader()

    # ------------------------------------------------------------------ indexing
    def apply(self, batch: Any, db: sqlite3.Connection, catalog: Any = None) -> None:
        """Index the batch's searchable events. O(batch): nothing already indexed is rebuilt."""
        from .verbatim_write import Writer

        docs: Sequence[SearchDoc] = batch.searchable
        if docs:
            Writer(self, db).run(docs)

    def add(self, doc: SearchDoc) -> None:
        """Index one event in its own transaction (tests, tools; the projector calls :meth:`apply`)."""
        if self.store is None:
            raise RuntimeError("the verbatim index is not attached to a derived store")
        from .verbatim_write import Writer

        with self.store.write() as db:  # type: ignore[attr-defined]
            Writer(self, db).run([doc])
        self.committed()

    # ------------------------------------------------------------------ querying
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
        its score by component. ``expansion``: extra weighted terms (see :mod:`.expansion`)."""
        from .verbatim_search import search

        return search(self, query, k, sessions=sessions, as_of=as_of, exclude_types=exclude_types, expansion=expansion)

    def __len__(self) -> int:
        return int(read_stats(self.reader()).docs)

    def names(self, db: sqlite3.Connection, stats: Stats) -> Names:
        if self._names.created != stats.created:
            self._names = Names(stats.created)
        return self._names

    def session_ids(self, db: sqlite3.Connection, sessions: Sequence[str]) -> list[int]:
        return sorted(self.names(db, read_stats(db)).session_ids(db, sessions).values())

    def term_ids(self, db: sqlite3.Connection, terms: Sequence[str]) -> dict[str, tuple[int, int, int]]:
        """``term -> (id, df, caption df)`` for the terms the index knows: the stored counts plus what the count
        rows not folded yet add (:mod:`.verbatim_df`)."""
        out: dict[str, tuple[int, int, int]] = {}
        for start in range(0, len(terms), postings.CHUNK):
            chunk = list(terms[start : start + postings.CHUNK])
            marks = ",".join("?" * len(chunk))
            for term_id, term, df, cdf in db.execute(
                f"SELECT id, term, df, cdf FROM {PREFIX}_term WHERE term IN ({marks})", chunk
            ):
                out[term] = (term_id, df, cdf)
        more = verbatim_df.pending(db, PREFIX, [found[0] for found in out.values()])
        for term, (term_id, df, cdf) in out.items() if more else ():
            extra = more.get(term_id)
            if extra is not None:
                out[term] = (term_id, df + extra[0], cdf + extra[1])
        return out

    def speaker_terms(self, db: sqlite3.Connection, terms: Sequence[str]) -> dict[str, int]:
        if not terms:
            return {}
        marks = ",".join("?" * len(terms))
        rows = db.execute(f"SELECT term, speaker FROM {PREFIX}_speaker_term WHERE term IN ({marks})", list(terms))
        return dict(rows.fetchall())

    def is_speaker_term(self, term: str) -> bool:
        return bool(self.speaker_terms(self.reader(), [term]))

    def occurs(self, term: str, sessions: list[str] | None = None) -> bool:
        """Whether an index term occurs in any indexed event text (of ``sessions`` when given)."""
        db = self.reader()
        with _snapshot(db):
            known = self.term_ids(db, [term])
            if term not in known:
                return False
            scope = None if sessions is None else self.session_ids(db, sessions)
            if scope is not None and not scope:
                return False
            tail = self.tail.snapshot(db, read_stats(db).values, [known[term][0]])
            if tail.postings(FIELD_TEXT, known[term][0], scope)[0].size:
                return True
            return _POSTINGS.occurs(db, FIELD_TEXT, known[term][0], scope)

    def term_statistics(self, query: str, *, sessions: list[str] | None = None) -> tuple[int, dict[str, int]]:
        """``(documents in scope, {query term: documents in scope containing it})`` (metacognition's cheap
        "have I seen these words?" signal: no scoring, no embedding)."""
        terms = list(dict.fromkeys(self.an(query)))
        db = self.reader()
        with _snapshot(db):
            stats = read_stats(db)
            known = self.term_ids(db, terms)
            tail = self.tail.snapshot(db, stats.values, [known[t][0] for t in terms if t in known])
            scope = None if sessions is None else self.session_ids(db, sessions)
            if scope is not None and not scope:
                return 0, dict.fromkeys(terms, 0)
            counts = {}
            for term in terms:
                if term not in known:
                    counts[term] = 0
                elif scope is None:
                    counts[term] = known[term][1] + tail.df.get((FIELD_TEXT, known[term][0]), 0)
                else:
                    in_tail = tail.postings(FIELD_TEXT, known[term][0], scope)[0].size
                    counts[term] = _POSTINGS.count(db, FIELD_TEXT, known[term][0], scope) + in_tail
            if scope is None:
                return int(stats.docs), counts
            marks = ",".join("?" * len(scope))
            in_scope = db.execute(f"SELECT sum(docs) FROM {PREFIX}_session WHERE id IN ({marks})", scope).fetchone()[0]
            return int(in_scope or 0), counts

    def vocabulary_epoch(self) -> tuple[float, float]:
        """Changes when words may have left the vocabulary (an erasure, or the tables were rebuilt)."""
        row = self.reader().execute(f"SELECT erasures, created FROM {PREFIX}_stats WHERE id = 1").fetchone()
        return (float(row[0]), float(row[1])) if row else (0.0, 0.0)

    def vocabulary_since(self, after_id: int) -> list[tuple[int, str, str]]:
        """``(id, surface word, index term)`` of the words indexed after ``after_id`` (first-seen order)."""
        rows = self.reader().execute(f"SELECT id, word, term FROM {PREFIX}_word WHERE id > ? ORDER BY id", (after_id,))
        return rows.fetchall()

    def documents(self, sessions: list[str] | None = None) -> list[tuple[str, int]]:
        """Every indexed event as ``(session, seq)`` (for re-embedding), in indexing order."""
        db = self.reader()
        names = dict(db.execute(f"SELECT id, name FROM {PREFIX}_session").fetchall())
        rows = db.execute(f"SELECT session, seq FROM {PREFIX}_doc ORDER BY id").fetchall()
        for seq, data in db.execute(f"SELECT seq, data FROM {PREFIX}_tail_doc ORDER BY doc"):
            rows.append((int(np.frombuffer(data, dtype=feat.FEATURE)["session"][0]), seq))
        wanted = None if sessions is None else set(sessions)
        return [(names[s], seq) for s, seq in rows if wanted is None or names[s] in wanted]

    def erase(self, db: sqlite3.Connection, session: str, seqs: Sequence[int], envelopes: Any = None) -> None:
        """Remove the events (``envelopes``, their pre-erasure content, is not needed: the postings of a session
        are scanned)."""
        from .verbatim_erase import erase
        from .verbatim_write import Writer

        writer = Writer(self, db)
        if writer.merge_tail():  # erasure works on the main tables only
            writer.finish_merge()
        erase(self, db, session, seqs)


_POSTINGS = postings.PostingStore(PREFIX)


@contextlib.contextmanager
def _snapshot(db: sqlite3.Connection) -> Iterator[None]:
    """One read transaction (a consistent snapshot) unless the caller already holds one."""
    opened = not db.in_transaction
    if opened:
        db.execute("BEGIN")
    try:
        yield
    finally:
        if opened:
            db.execute("COMMIT")


def parse_moment(stamp: str | None) -> _dt.datetime | None:
    if not stamp:
        return None
    try:
        return _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
