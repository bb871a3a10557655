"""Keyword lane over projected entities: BM25 over each version's name and summary, on disk, incremental.

Versions stay in the index after they are superseded; the engine filters by validity (current, or as of a
time) using the catalog, and counts what it excluded so checkout can report it. The index lives in tables
``entity_keyword_*`` of the derived-state database (postings per session, :mod:`.postings`; each version's
field length in blocks, :mod:`.features`); a query reads the postings of its terms in the searched sessions
and scores exactly the versions holding one of them (BM25 of a version without a query term is 0), less those
holding only the most common term when its bound cannot reach the k-th score (:mod:`.keyword_scoring`).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from zaxy_agents.storage.derived.store import ID_LIST

from . import entity_tail as tail
from . import features as feat
from . import keyword_scoring, postings, verbatim_df
from .derived import DerivedStore
from .posting_cache import PostingCache
from .text import Analyzer

# 2: postings keyed by segment (postings.py); 3: the log-structured tail (entity_tail.py); 4: varint runs per
# term and segment, sessions as doc ranges (postings.py); 5: the unsealed segments as one row per write
# (posting_open.py); 6: known terms' document frequencies as one count row per write (verbatim_df,
# ``entity_keyword_term_open``). An index of version 5 is upgraded in place (:meth:`EntityKeywordIndex.migrate`: the
# new table, empty); one of another version is rebuilt from the log on first open.
SCHEMA_VERSION = 6
PREFIX = "entity_keyword"
FIELD = 0
NAME_WEIGHT = 2.0  # a name match is worth more than a summary match
# Entities whose whole content is raw text (turns, prompts, lifecycle markers) are the verbatim lane's
# territory: indexing them here again would only duplicate that lane with a weaker scorer. Speakers are
# retrieval cues, not memories.
VERBATIM_TERRITORY = frozenset({"turn", "prompt", "hook_event", "participant", "event", "topic"})
# Generated summaries awaiting (or refused) review are not memories: they are never recalled (docs/cognitive.md).
# Metacognitive records and belief-update proposals are diagnostics and review material, never recalled; pins
# (memory.pinned) are markers on a memory, not memories.
UNREVIEWED = frozenset(
    {
        "pin",
        "consolidation_candidate",
        "consolidation_review",
        "known_unknown",
        "confidence_assessment",
        "reverification_request",
        "belief_update_proposal",
        # synthesis artifacts and their ledgers: composed answers and feedback, not memories
        "synthesis_artifact",
        "answer_candidate",
        "ledger_row",
        "source_group",
        "reasoning_primitive_call",  # trace evidence of which memory operations ran
    }
)
RECORD = np.dtype([("len", "<f4"), ("erased", "u1"), ("pad", "u1", (3,))])

_POSTINGS = postings.PostingStore(PREFIX)


def _schema() -> list[str]:
    p = PREFIX
    return [
        *postings.schema(p),
        *feat.schema(p),
        *tail.schema(p),
        *verbatim_df.schema(p),
        # tail: postings in the tail; merges: times the tail was merged; created: a random token of this index
        f"CREATE TABLE IF NOT EXISTS {p}_stats(id INTEGER PRIMARY KEY, docs REAL NOT NULL, next_doc REAL NOT NULL, "
        "total REAL NOT NULL, nonempty REAL NOT NULL, wseq REAL NOT NULL, tail INTEGER NOT NULL, "
        "merges INTEGER NOT NULL, created INTEGER NOT NULL)",
        f"INSERT OR IGNORE INTO {p}_stats VALUES (1, 0, 0, 0, 0, 0, 0, 0, abs(random()))",
        f"CREATE TABLE IF NOT EXISTS {p}_term(id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE, df INTEGER NOT NULL)",
        f"CREATE TABLE IF NOT EXISTS {p}_doc(id INTEGER PRIMARY KEY, version TEXT NOT NULL UNIQUE, "
        "session INTEGER NOT NULL, seq INTEGER NOT NULL)",
        f"CREATE INDEX IF NOT EXISTS {p}_doc_event ON {p}_doc(session, seq)",
        f"CREATE TABLE IF NOT EXISTS {p}_session(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
    ]


class KeywordReads:
    """What queries read again from one state of the index's main tables (``created``, and the write sequence of
    the last write that reached them, :func:`main_stamp`): the main tables' decoded postings of the terms asked,
    and the version of each doc returned. Questions share most of their words ("which", "service", "owner"), and
    a small write (one event's decision, task or fact) goes to the tail, which never changes the main postings:
    re-reading them after each such write was ~30 % of the lane at 1M events. A doc's version never changes
    (doc ids are not reused in one ``created``)."""

    LIMIT = 1_000_000  # postings kept (16 bytes each); past it, further terms are read each time
    VERSIONS = 100_000  # doc -> version entries kept (~150 bytes each); past it, read each time

    def __init__(self, state: tuple[int, int]) -> None:
        self.state = state
        self.postings = PostingCache(self.LIMIT)
        self.versions: dict[int, str] = {}

    def doc_versions(self, db: sqlite3.Connection, docs: list[int]) -> dict[int, str]:
        """The version id of each doc (absent: not in the doc table), those not known read in one statement."""
        known = self.versions
        missing = [doc for doc in docs if doc not in known]
        if missing:
            sql = f"SELECT id, version FROM {PREFIX}_doc WHERE id IN {ID_LIST}"  # one cached statement
            read = dict(db.execute(sql, (json.dumps(missing),)).fetchall())
            if len(known) + len(read) <= self.VERSIONS:
                known.update(read)
            else:
                return {doc: known[doc] if doc in known else read[doc] for doc in docs if doc in known or doc in read}
        return {doc: known[doc] for doc in docs if doc in known}


class EntityKeywordIndex:
    """Keyword index of entity versions (``Entity`` rows of each projected batch); a ``DerivedIndex``."""

    name = PREFIX
    schema_version = SCHEMA_VERSION

    def __init__(self) -> None:
        self.an = Analyzer()
        self.store: DerivedStore | None = None
        self.cache = feat.FeatureCache(PREFIX, RECORD)
        self._pending: tuple[dict[int, np.ndarray], int, int] | None = None
        self.term_cache = TermCache()
        self.tail = tail.TailView(PREFIX)
        self._reads = KeywordReads((-1, -1))
        self.prune = True  # keyword_scoring.top_k's bound on the most common term (False: score every match)

    # ------------------------------------------------------------------ derived-index protocol
    def create_schema(self, db: sqlite3.Connection) -> None:
        for statement in _schema():
            db.execute(statement)

    def drop_schema(self, db: sqlite3.Connection) -> None:
        for statement in [*postings.drop(PREFIX), *feat.drop(PREFIX), *tail.drop(PREFIX), *verbatim_df.drop(PREFIX)]:
            db.execute(statement)
        for table in ("stats", "term", "doc", "session"):
            db.execute(f"DROP TABLE IF EXISTS {PREFIX}_{table}")
        self.cache.clear()
        self.tail.clear()

    def migrate(self, db: sqlite3.Connection, recorded: str) -> bool:
        """Upgrade the tables of version ``recorded`` in place when that is exact; False: rebuild them from the log.
        Version 5 differs by the count rows' table alone, and its term table holds every document frequency, so an
        empty table of count rows is exact. It is dropped first: a version-5 build that rebuilt a version-6 index
        (it drops only the tables it knows) may have left one with rows counted into a term table since rebuilt."""
        if recorded != "5":
            return False
        for statement in [*verbatim_df.drop(PREFIX), *verbatim_df.schema(PREFIX)]:
            db.execute(statement)
        return True

    def attach(self, store: DerivedStore) -> None:
        self.store = store

    def committed(self) -> None:
        if self._pending is not None:
            self.cache.install(*self._pending)
            if self._pending[1] >= 0:  # an erase (before -2) left the cache dropped
                self.term_cache.committed(self._pending[2])
        self._pending = None

    def rolled_back(self) -> None:
        self._pending = None
        self.term_cache.drop()
        self.cache.clear()  # a rebuild group (several committed() calls in one transaction) may have been undone

    def reader(self) -> sqlite3.Connection:
        if self.store is None:
            raise RuntimeError("the entity keyword index is not attached to a derived store")
        return self.store.reader()

    def __len__(self) -> int:
        return int(self.reader().execute(f"SELECT docs FROM {PREFIX}_stats WHERE id = 1").fetchone()[0])

    # ------------------------------------------------------------------ indexing
    def apply(self, batch: Any, db: sqlite3.Connection, catalog: Any = None) -> None:
        rows = [
            row
            for row in batch.entities
            if row["entity_type"] not in VERBATIM_TERRITORY
            and row["entity_type"] not in UNREVIEWED
            and row.get("asserted") is not False  # reference placeholders carry no content
        ]
        if not rows:
            return
        p = PREFIX
        docs, next_doc, total, nonempty, wseq, in_tail, merges = db.execute(
            f"SELECT docs, next_doc, total, nonempty, wseq, tail, merges FROM {p}_stats WHERE id = 1"
        ).fetchone()
        before = int(wseq)
        sessions = self._sessions(db, {row["session_id"] for row in rows})
        known = {r[0] for r in _in(db, f"SELECT version FROM {p}_doc WHERE version IN", [row["id"] for row in rows])}
        writer = feat.FeatureWriter(p, db, RECORD)
        # one posting per (version, term): parallel lists, turned into arrays once (no per-posting tuples)
        post_term: list[str] = []
        post_session: list[int] = []
        post_doc: list[int] = []
        post_tf: list[int] = []
        doc_rows = []
        analyse = self.an
        for row in rows:
            if row["id"] in known:
                continue  # already indexed (idempotent)
            known.add(row["id"])
            i = int(next_doc)
            next_doc += 1
            docs += 1
            terms = analyse(row["name"]) * int(NAME_WEIGHT) + analyse(row["summary"] or "")
            session = sessions[row["session_id"]]
            counts = Counter(terms)
            post_term.extend(counts)
            post_tf.extend(counts.values())
            post_session.extend([session] * len(counts))
            post_doc.extend([i] * len(counts))
            writer.set(i, "len", len(terms))
            total += len(terms)
            nonempty += bool(terms)
            doc_rows.append((i, row["id"], session, int(row["source_event_seq"])))
        if not doc_rows:
            return
        wseq = before + 1
        small = len(post_term) < tail.DIRECT_MIN and in_tail + len(post_term) <= tail.TAIL_LIMIT
        row_of_tail = tail.pack(post_term, post_session, post_doc, post_tf) if small else None
        if row_of_tail is not None:  # one row at the end of the tail: no term or run written at random places
            db.execute(f"INSERT INTO {p}_tail VALUES (?, ?, ?)", (wseq, *row_of_tail))
            in_tail += len(post_term)
        else:
            merged = self._merge_tail(db, in_tail, (post_term, post_session, post_doc, post_tf), before)
            in_tail, merges = 0, merges + merged
        db.executemany(f"INSERT INTO {p}_doc VALUES (?, ?, ?, ?)", doc_rows)
        blocks = writer.flush(wseq)
        db.execute(
            f"UPDATE {p}_stats SET docs = ?, next_doc = ?, total = ?, nonempty = ?, wseq = ?, tail = ?, merges = ? "
            "WHERE id = 1",
            (docs, next_doc, total, nonempty, wseq, in_tail, merges),
        )
        self._pending = (blocks, before, wseq)

    def _merge_tail(
        self, db: sqlite3.Connection, in_tail: int,
        write: tuple[list[str], list[int], list[int], list[int]], before: int,
    ) -> bool:  # fmt: skip
        """Write the tail's postings (when ``in_tail``), then ``write``'s, to the main tables, and empty the tail;
        returns whether there was a tail to merge. The tail's docs are older than the write's: runs keep doc
        order, and new terms get ids in order of first appearance, as one batch of those writes would."""
        post_term, post_session, post_doc, post_tf = write
        if in_tail:
            older = tail.read_all(db, PREFIX)
            db.execute(f"DELETE FROM {PREFIX}_tail")
            post_term, post_session = older[0] + post_term, older[1] + post_session
            post_doc, post_tf = older[2] + post_doc, older[3] + post_tf
        if post_term:
            df = Counter(post_term)  # versions holding each term, in order of first appearance (new terms' ids)
            ids = self._count_terms(db, df, before)
            _POSTINGS.append_arrays(
                db,
                np.full(len(post_term), FIELD, dtype=np.int64),
                np.fromiter(map(ids.__getitem__, post_term), dtype=np.int64, count=len(post_term)),
                np.array(post_session, dtype=np.int64),
                np.array(post_doc, dtype=np.int64),
                np.array(post_tf, dtype=np.int64),
            )
        return bool(in_tail)

    def erase(self, db: sqlite3.Connection, session: str, seqs: Sequence[int], envelopes: Any = None) -> None:
        """Remove the events (``envelopes``, their pre-erasure content, is not needed: the postings of a session
        are scanned)."""
        p = PREFIX
        row = db.execute(f"SELECT id FROM {p}_session WHERE name = ?", (session,)).fetchone()
        if row is None or not seqs:
            return
        session_id = row[0]
        gone = sorted(
            r[0]
            for r in _in(db, f"SELECT id FROM {p}_doc WHERE session = {int(session_id)} AND seq IN", list(set(seqs)))
        )
        if not gone:
            return
        doomed = np.array(gone, dtype=np.int64)
        in_tail, before = db.execute(f"SELECT tail, wseq FROM {p}_stats WHERE id = 1").fetchone()
        if in_tail:  # erased docs may be in the tail: merge it, then remove from the main tables alone
            self._merge_tail(db, in_tail, ([], [], [], []), int(before))
            db.execute(f"UPDATE {p}_stats SET tail = 0, merges = merges + 1 WHERE id = 1")
        self.term_cache.drop()  # terms whose df falls to 0 are deleted below
        verbatim_df.fold(db, p, captions=False)  # the stored counts exact before they are lowered
        for term_id, lost in _POSTINGS.remove_docs(db, session_id, doomed).items():
            db.execute(f"UPDATE {p}_term SET df = df - ? WHERE id = ?", (lost[FIELD], term_id))
        db.execute(f"DELETE FROM {p}_term WHERE df <= 0")
        writer = feat.FeatureWriter(p, db, RECORD)
        lengths = 0.0
        nonempty = 0
        for doc in gone:
            length = float(writer.record(doc)["len"])
            lengths += length
            nonempty += length > 0
            writer.set(doc, "len", 0.0)
            writer.set(doc, "erased", 1)
        marks = ",".join(str(d) for d in gone)
        db.execute(f"DELETE FROM {p}_doc WHERE id IN ({marks})")
        before = int(db.execute(f"SELECT wseq FROM {p}_stats WHERE id = 1").fetchone()[0])
        blocks = writer.flush(before + 1)
        db.execute(
            f"UPDATE {p}_stats SET docs = docs - ?, total = total - ?, nonempty = nonempty - ?, wseq = ? WHERE id = 1",
            (len(gone), lengths, nonempty, before + 1),
        )
        self._pending = (blocks, -2, before + 1)

    # ------------------------------------------------------------------ querying
    def search(self, query: str, k: int = 50, sessions: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """Top-k version ids by BM25 (all versions of ``sessions``, or of every session; the caller filters by
        validity)."""
        terms = list(dict.fromkeys(self.an(query)))
        db = self.reader()
        opened = not db.in_transaction
        if opened:
            db.execute("BEGIN")
        try:
            return self._search(db, terms, k, sessions)
        finally:
            if opened:
                db.execute("COMMIT")

    def _search(
        self, db: sqlite3.Connection, terms: list[str], k: int, sessions: Sequence[str] | None
    ) -> list[tuple[str, float]]:
        p = PREFIX
        docs, total, nonempty, wseq, in_tail, merges, created, first_tail = db.execute(
            f"SELECT docs, total, nonempty, wseq, tail, merges, created, {_FIRST_TAIL_ROW} FROM {p}_stats WHERE id = 1"
        ).fetchone()
        if not docs or not terms or k <= 0:
            return []
        self.cache.refresh(db, int(wseq))
        state = (int(created), main_stamp(int(wseq), int(in_tail), first_tail))
        reads = self._reads
        if reads.state != state:
            reads = self._reads = KeywordReads(state)
        scope = None
        if sessions is not None:
            scope = sorted(r[0] for r in _in(db, f"SELECT id FROM {p}_session WHERE name IN", list(sessions)))
            if not scope:
                return []
        known = self._term_ids(db, terms)
        recent = self.tail.postings(db, (int(created), int(merges)), int(wseq), int(in_tail), terms, scope)
        names = [term for term in terms if term in known or term in recent]
        found = reads.postings.read(_POSTINGS, db, FIELD, [known[t][0] for t in names if t in known], scope)
        # each term's postings: the main runs', then the tail's
        held = {}
        for term in names:
            parts = [found[known[term][0]]] if term in known and known[term][0] in found else []
            if term in recent and recent[term][0].size:
                parts.append(postings.TermPostings(recent[term][0], recent[term][1]))
            if len(parts) == 1:
                held[term] = parts[0]
            elif parts:
                held[term] = postings.TermPostings(
                    np.concatenate([part.docs for part in parts]), np.concatenate([part.tfs for part in parts])
                )
        if not held:
            return []
        df = np.array(
            [(known[t][1] if t in known else 0) + (recent[t][2] if t in recent else 0) for t in names],
            dtype=np.float64,
        )
        idf = np.log(1.0 + (docs - df + 0.5) / (df + 0.5))
        found_docs, found_scores = keyword_scoring.top_k(
            names, held, idf, total / max(nonempty, 1), lambda some: self.cache.gather(db, some)["len"], k, self.prune
        )
        top_docs, top_scores = found_docs.tolist(), found_scores.tolist()
        versions = reads.doc_versions(db, top_docs) if top_docs else {}
        return [(versions[doc], score) for doc, score in zip(top_docs, top_scores, strict=True) if doc in versions]

    # ------------------------------------------------------------------ helpers
    def _count_terms(self, db: sqlite3.Connection, df: Counter[str], wseq: int) -> dict[str, int]:
        """Add ``df`` to the terms' document frequencies, creating unknown terms in ``df``'s order (so they get
        the ids one upsert per term gave them); returns term -> id. Known terms' increments are one count row
        (:mod:`.verbatim_df`: ~14 UPDATEs per realistic event were ~30 us of its CPU); new terms are inserted with
        their counts. Ids are cached between writes
        (:class:`TermCache`): looking every term up again was ~4 % of bulk projection and ~6 % of projecting one
        event.

        New terms get their ids here: ``max(id) + 1`` onwards in ``df``'s order, which is exactly what SQLite gives
        a row inserted without one (an ``INTEGER PRIMARY KEY`` takes the largest rowid plus one), so they are not
        read back after the insert (tests/retrieval/test_ingest_fast_paths.py compares the tables with those of
        inserts without ids). The updates go in id order (neighbouring rows share pages)."""
        p = PREFIX
        generation = self.store.foreign_generation() if self.store is not None else -1
        known = self.term_cache.valid(generation, wseq)
        unknown = [term for term in df if term not in known]
        if unknown:
            known.update(_in(db, f"SELECT term, id FROM {p}_term WHERE term IN", unknown))  # type: ignore[arg-type]
        updates = sorted(((known[t], n) for t, n in df.items() if t in known), key=itemgetter(0))
        if updates:  # one count row, folded into the term table later (verbatim_df): not one UPDATE per term
            ids, counts = np.array(updates, dtype=np.int64).T
            verbatim_df.add(db, p, ids, counts, None)
        fresh = [term for term in unknown if term not in known]
        if fresh:
            first = int(db.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {p}_term").fetchone()[0])
            rows = [(term_id, term, df[term]) for term_id, term in enumerate(fresh, first)]
            db.executemany(f"INSERT INTO {p}_term(id, term, df) VALUES (?, ?, ?)", rows)
            known.update((term, term_id) for term_id, term, _ in rows)
        return known

    def _term_ids(self, db: sqlite3.Connection, terms: list[str]) -> dict[str, tuple[int, int]]:
        """``term -> (id, df)``: the stored count plus what the count rows not folded yet add (verbatim_df)."""
        found = {
            term: (term_id, df)
            for term_id, term, df in _in(db, f"SELECT id, term, df FROM {PREFIX}_term WHERE term IN", terms)
        }
        more = verbatim_df.pending(db, PREFIX, [term_id for term_id, _ in found.values()])
        for term, (term_id, df) in found.items() if more else ():
            if term_id in more:
                found[term] = (term_id, df + more[term_id][0])
        return found

    def _sessions(self, db: sqlite3.Connection, names: set[str]) -> dict[str, int]:
        out = {
            name: session
            for session, name in _in(db, f"SELECT id, name FROM {PREFIX}_session WHERE name IN", sorted(names))
        }
        for name in sorted(names - out.keys()):
            cursor = db.execute(f"INSERT INTO {PREFIX}_session(name) VALUES (?)", (name,))
            assert cursor.lastrowid is not None
            out[name] = cursor.lastrowid
        return out


# The first tail row (every row holds postings: a write without any is not packed, ``tail.pack``, and goes the main
# tables' way, where it writes nothing).
_FIRST_TAIL_ROW = f"(SELECT min(wseq) FROM {PREFIX}_tail)"


def main_stamp(wseq: int, in_tail: int, first_tail: int | None) -> int:
    """The write sequence of the last write that changed the main postings, from one snapshot's stats: a write goes
    either to the tail (one row keyed by its write sequence) or to the main tables, taking the tail's postings
    with it (a merge deletes every tail row); an erasure merges first. So with an empty tail the last write was a
    main one (or none), at ``wseq``; otherwise every main write came before the tail's first row. Two snapshots of
    one ``created`` with the same stamp have the same main postings."""
    if not in_tail or first_tail is None:
        return wseq
    return int(first_tail) - 1


class TermCache:
    """Term -> id of the keyword index as this process last committed it. Valid while no other connection
    committed (the store's ``foreign_generation``) and the index is at the write sequence this process left it
    at (an erase or a reset moves it); dropped on a rollback."""

    LIMIT = 500_000

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.generation = self.wseq = -1

    def valid(self, generation: int, wseq: int) -> dict[str, int]:
        """The cached ids (updated in place by the writer), or a new empty dict when they may be stale;
        ``generation`` is read inside the write transaction, so this process's commit leaves it as it is."""
        if generation != self.generation or wseq != self.wseq or len(self.ids) > self.LIMIT:
            self.drop()
        self.generation, self.wseq = generation, -1  # being written: valid again only once committed
        return self.ids

    def committed(self, wseq: int) -> None:
        self.wseq = wseq

    def drop(self) -> None:
        self.ids = {}
        self.generation = self.wseq = -1


def _in(db: sqlite3.Connection, sql: str, values: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Run ``sql (?, ?, ...)`` over ``values`` in chunks (SQLite bounds the number of variables)."""
    out: list[tuple[Any, ...]] = []
    for start in range(0, len(values), postings.CHUNK):
        chunk = list(values[start : start + postings.CHUNK])
        out += db.execute(f"{sql} ({','.join('?' * len(chunk))})", chunk).fetchall()
    return out
