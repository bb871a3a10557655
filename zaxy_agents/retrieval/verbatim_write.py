"""Writing the verbatim index: a batch's analysis, the log-structured tail, and merges into the main tables.

One event at a time (the MCP / hook path) must stay cheap, and a B-tree insert per term touches one page per
term. So a small batch goes to three append-only *tail* tables (postings, feature records, neighbour-link
changes; their keys only grow, so a commit writes a couple of pages), which queries read through an
in-memory overlay (:class:`Tail`). When the tail holds ``TAIL_LIMIT`` events, or a batch of ``DIRECT_MIN``
events arrives (bulk ingest, a rebuild), the tail is merged into the main tables in one pass: postings runs per
term and session, document frequencies, feature blocks, doc rows. Dictionaries (sessions, event types,
speakers, terms, words) and the per-thread (group) rows are written directly: they change rarely or touch one
row per batch.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from zaxy_agents.projection.model import SearchDoc

from . import features as feat
from . import postings, verbatim_df
from .read_deltas import Delta, GroupRow
from .text import has_time_cue, question_share
from .verbatim import _POSTINGS, _STATS, PREFIX, parse_moment, read_stats
from .verbatim_counts import count_postings, tail_postings
from .verbatim_tail import TAIL_TABLES, Prepared, pack_postings, unpack_postings
from .verbatim_write_cache import Group, WriteCache

if TYPE_CHECKING:
    from .verbatim import VerbatimIndex

TAIL_LIMIT = 1024  # events in the tail before it is merged into the main tables
DIRECT_MIN = 256  # a batch at least this large is written to the main tables directly
FRESH_ONE_BY_ONE = 64  # new terms up to which one INSERT ... RETURNING tells their ids (no lookup query)
WORDS_AS_JSON = 400  # new words up to which one INSERT ... SELECT over a JSON list inserts them (a small write)
LINKS_PER_INSERT = 100  # tail links per INSERT statement


class Writer:
    """Indexes one batch inside the caller's transaction."""

    def __init__(self, index: VerbatimIndex, db: sqlite3.Connection) -> None:
        self.index, self.db, self.cfg, self.an = index, db, index.cfg, index.an
        self.stats = read_stats(db).values
        self.before = int(self.stats["wseq"])
        self._touched: tuple[frozenset[str], frozenset[str], tuple[GroupRow, ...]] | None = None  # see read_deltas
        self.blocks = feat.FeatureWriter(PREFIX, db)
        with index.tail.lock:
            self.tail = index.tail.current(db, self.stats)
        # the last tail_post / tail_link row ids: the view's (it holds every row, see Tail.current) until a merge
        # empties the tables (0) or this write adds rows (_write_tail)
        self._tail_rows = (self.tail.post_id, self.tail.link_id)
        cache = index.write_cache
        if isinstance(cache, WriteCache):
            cache = index.write_cache = cache.after(self.stats)
        else:
            cache = index.write_cache = WriteCache(self.stats["wseq"], self.stats["created"], self.stats["erasures"])
        self.cache = cache

    # ------------------------------------------------------------------ one batch
    def run(self, docs: Sequence[SearchDoc]) -> None:
        prepared = self._prepare(docs)
        if prepared is None:
            return
        merged = False
        size = len(prepared.seqs)
        if size >= DIRECT_MIN or self.stats["tail_docs"] + size > TAIL_LIMIT:
            merged = self.merge_tail()
        if size >= DIRECT_MIN:
            self._write_main(prepared)
        else:
            self._write_tail(prepared)
        self._finish(prepared if size < DIRECT_MIN else None, merged)

    def merge_tail(self) -> bool:
        """Move the tail into the main tables; True when there was one."""
        if not self.stats["tail_docs"] and not self.tail.links:
            return False
        p, db = PREFIX, self.db
        rows = db.execute(f"SELECT doc, seq, data FROM {p}_tail_doc ORDER BY doc").fetchall()
        if rows:
            records = np.frombuffer(b"".join(r[2] for r in rows), dtype=feat.FEATURE).copy()
            merged = Prepared(records, rows[0][0], [r[1] for r in rows])
        else:
            merged = Prepared(np.zeros(0, dtype=feat.FEATURE), int(self.stats["next_doc"]), [])
        table = unpack_postings([r[0] for r in db.execute(f"SELECT data FROM {p}_tail_post ORDER BY id")])
        # int64 arrays as a bulk batch has them (lists and back cost ~10 % of a merge over many sessions)
        merged.post_field, merged.post_term, merged.post_session, merged.post_doc, merged.post_tf = (
            table[column].astype(np.int64) for column in ("field", "term", "session", "doc", "tf"))  # fmt: skip
        for doc, following in db.execute(f"SELECT doc, next FROM {p}_tail_link ORDER BY id"):
            if rows and doc >= merged.first:
                merged.records["next"][doc - merged.first] = following  # a tail doc gained a neighbour later
            else:
                merged.links[doc] = following
        self._write_main(merged)
        for table in TAIL_TABLES:
            db.execute(f"DELETE FROM {p}_{table}")
        self._tail_rows = (0, 0)  # (no AUTOINCREMENT: the next rows are numbered from 1 again)
        self.stats["tail_docs"] = 0
        self.stats["tail_first"] = self.stats["next_doc"]
        return True

    def finish_merge(self) -> None:
        """Commit-ready state after a :meth:`merge_tail` on its own (before an erasure)."""
        self._finish(None, True)

    # ------------------------------------------------------------------ analysis
    def _prepare(self, docs: Sequence[SearchDoc]) -> Prepared | None:
        stats, cfg, analyse = self.stats, self.cfg, self.an.analyse
        sessions = self._sessions({doc.session for doc in docs})
        kept = []
        for doc in docs:
            session_id, last_seq = sessions[doc.session]
            if doc.seq > last_seq:  # events arrive in seq order per session; a replayed one is ignored
                sessions[doc.session] = (session_id, doc.seq)
                kept.append(doc)
        if not kept:
            return None
        types = self._named("type", {doc.event_type for doc in kept})
        speakers = self._named("speaker", {doc.speaker for doc in kept if doc.speaker})
        first = int(stats["next_doc"])
        lengths: list[float] = []  # text + weighted caption length of this batch's docs
        following: list[int] = []  # next doc of this batch's docs (-1: none yet)
        rows: list[tuple[Any, ...]] = []
        terms_by_doc: list[tuple[int, list[str], list[str]]] = []
        words: set[str] = set()
        speaker_terms: dict[str, int] = {}
        session_docs: Counter[int] = Counter()
        groups: dict[tuple[int, str | None], Group] = {}  # the groups this batch touches
        links: dict[int, int] = {}
        named: dict[str, list[str]] = {}  # speaker name -> its terms
        for offset, doc in enumerate(kept):
            i = first + offset
            session_id = sessions[doc.session][0]
            session_docs[session_id] += 1
            text = doc.text
            terms, surface = analyse(text)
            words.update(surface)
            temporal = has_time_cue(text, surface)
            caption: list[str] = []
            if doc.caption:
                caption, surface = analyse(doc.caption)
                words.update(surface)
            speaker = -1
            if doc.speaker:
                speaker = speakers[doc.speaker]
                name_terms = named.get(doc.speaker)
                if name_terms is None:  # a batch's turns come from a few speakers: each name analysed once
                    name_terms, surface = analyse(doc.speaker)
                    named[doc.speaker] = name_terms
                    words.update(surface)
                for term in name_terms:
                    speaker_terms[term] = speaker
            moment = parse_moment(doc.occurred_at)
            day = moment.toordinal() if moment else -1
            if day >= 0:
                stats["min_day"] = day if stats["min_day"] < 0 else min(stats["min_day"], day)
                stats["max_day"] = max(stats["max_day"], day)
            flags = feat.FLAG_ASKS if "?" in text else 0
            if temporal:
                flags |= feat.FLAG_TEMPORAL
            length = len(terms) + cfg.caption_weight * len(caption)
            group, previous = self._link(i, groups, session_id, doc.segment, length, lengths, following, links)
            rows.append((
                session_id, group, previous, -1, speaker, types[doc.event_type], flags, 0, len(terms), len(caption),
                question_share(text) if "?" in text else 0.0, day,
                moment.year * 12 + moment.month - 1 if moment else -1, moment.timestamp() if moment else 0.0,
            ))  # fmt: skip
            terms_by_doc.append((session_id, terms, caption))
            stats["text_total"] += len(terms)
            stats["text_nonempty"] += bool(terms)
            stats["cap_total"] += len(caption)
            stats["cap_nonempty"] += bool(caption)
            stats["ln_total"] += length
        built = np.array(rows, dtype=feat.FEATURE)
        built["next"] = following  # set by _link as later docs of the batch joined their group
        prepared = Prepared(built, first, [doc.seq for doc in kept], links=links)
        tokens = list(chain.from_iterable(chain.from_iterable((t, c) for _, t, c in terms_by_doc)))
        written = set(tokens)
        new_terms: dict[int, str] = {}
        ids = self._term_ids(written, new_terms if len(kept) >= DIRECT_MIN else None)
        if len(kept) < DIRECT_MIN:
            # what readers' lookups forget (terms, speaker terms) or take (thread rows, as written) once this
            # commits (read_deltas; used when the batch stays in the tail: a bulk batch makes readers read again)
            touched = tuple((g.id, g.docs, g.len, g.first, g.last) for g in groups.values())
            self._touched = (frozenset(written), frozenset(speaker_terms), touched)
        prepared.new_terms = new_terms
        if len(kept) >= DIRECT_MIN:  # the main tables sort postings by key: count them all at once
            count_postings(prepared, terms_by_doc, tokens, ids)
        else:
            tail_postings(prepared, terms_by_doc, ids)
        stats["next_doc"] += len(kept)
        stats["docs"] += len(kept)
        self._write_dictionaries(sessions, session_docs, groups, speaker_terms, words, kept, speakers)
        return prepared

    def _link(
        self, i: int, groups: dict[tuple[int, str | None], Group], session: int, segment: str | None,
        length: float, lengths: list[float], following: list[int], links: dict[int, int],
    ) -> tuple[int, int]:  # fmt: skip
        """Append doc ``i`` to its (session, segment) group: ``(group id, previous doc)``; keeps the group's
        first / second / last / second-to-last docs and the index's length sums (see context_mean)."""
        stats = self.stats
        key = (session, segment)
        group = groups.get(key) or self.cache.groups.get(key)
        if group is None:
            row = self.db.execute(
                f"SELECT id, docs, len, first, second, last, last2 FROM {PREFIX}_group "
                "WHERE session = ? AND segment IS ?",
                key,
            ).fetchone()
            if row is None:
                cursor = self.db.execute(f"INSERT INTO {PREFIX}_group VALUES (NULL, ?, ?, 0, 0, -1, -1, -1, -1)", key)
                assert cursor.lastrowid is not None
                group = Group(cursor.lastrowid, 0, 0.0, -1, -1, -1, -1)
                stats["groups"] += 1
            else:
                group = Group(*row)
            self.cache.groups[key] = group
        groups[key] = group
        first = i - len(lengths)
        previous = group.last
        if previous >= first:
            following[previous - first] = i
        elif previous >= 0:
            links[previous] = i
        previous_length = self._length(previous, lengths, first)
        stats["last1"] += length - previous_length
        stats["last2"] += previous_length - self._length(group.last2, lengths, first)
        if group.docs == 0:
            stats["first1"] += length
            group.first = i
        elif group.docs == 1:
            stats["first2"] += length
            group.second = i
        group.last2, group.last = group.last, i
        group.docs += 1
        group.len += length
        lengths.append(length)
        following.append(-1)
        return group.id, previous

    def _length(self, doc: int, lengths: list[float], first: int) -> float:
        """Text + weighted caption length of any doc (this batch's, the tail's or an older one)."""
        if doc < 0:
            return 0.0
        if doc >= first:
            return lengths[doc - first]
        record = self.tail.record(doc)
        if record is None:
            record = self.blocks.record(doc)
        return float(record["tl"]) + self.cfg.caption_weight * float(record["cl"])

    # ------------------------------------------------------------------ writing
    def _write_tail(self, prepared: Prepared) -> None:
        """One packed postings row, a feature row per doc and the new links; the last tail_post / tail_link ids
        (what the tail view holds after this write) come from the inserts themselves, not from a query."""
        p, db = PREFIX, self.db
        db.executemany(
            f"INSERT INTO {p}_tail_doc VALUES (?, ?, ?)",
            [(prepared.first + k, seq, prepared.records[k].tobytes()) for k, seq in enumerate(prepared.seqs)],
        )
        post = db.execute(f"INSERT INTO {p}_tail_post(data) VALUES (?)", (pack_postings(prepared),)).lastrowid
        assert post is not None
        self._tail_rows = (post, self._tail_rows[1])
        links = list(prepared.links.items())
        for start in range(0, len(links), LINKS_PER_INSERT):  # rows get their ids in VALUES order
            chunk = links[start : start + LINKS_PER_INSERT]
            values = ", ".join(["(?, ?)"] * len(chunk))
            cursor = db.execute(f"INSERT INTO {p}_tail_link(doc, next) VALUES {values}", list(chain(*chunk)))
            assert cursor.lastrowid is not None  # the last row's id
            self._tail_rows = (post, cursor.lastrowid)
        if not self.stats["tail_docs"]:
            self.stats["tail_first"] = prepared.first
        self.stats["tail_docs"] += len(prepared.seqs)

    def _write_main(self, prepared: Prepared) -> None:
        p, db = PREFIX, self.db
        count = len(prepared.seqs)
        self.blocks.put_many(prepared.first, prepared.records)
        for doc, following in prepared.links.items():
            self.blocks.set(doc, "next", following)
        frequencies = prepared.frequencies()  # by term id: the new terms (the largest ids) last
        new = prepared.new_terms
        kept = len(frequencies)
        while kept and frequencies[kept - 1][2] in new:
            kept -= 1
        if kept:  # known terms: one count row, folded into the term table later (verbatim_df)
            text, caption, ids = (np.array(column, dtype=np.int64) for column in zip(*frequencies[:kept], strict=True))
            verbatim_df.add(db, p, ids, text, caption)
        if new:
            counted = {term: (text, caption) for text, caption, term in frequencies[kept:]}
            ordered = sorted(new)
            counts = [counted.get(term, (0, 0)) for term in ordered]
            postings.insert_columns(
                db,
                f"INSERT INTO {p}_term(id, term, df, cdf) VALUES",
                (ordered, [new[term] for term in ordered], [c[0] for c in counts], [c[1] for c in counts]),
            )
        _POSTINGS.append_arrays(db, *prepared.arrays())
        records = prepared.records
        db.executemany(
            f"INSERT INTO {p}_doc VALUES (?, ?, ?, ?, ?, ?)",
            zip(range(prepared.first, prepared.first + count), records["session"].tolist(), prepared.seqs,
                records["group"].tolist(), records["day"].tolist(), records["type"].tolist(), strict=True),
        )  # fmt: skip
        speakers = Counter(records["speaker"][records["speaker"] >= 0].tolist())
        db.executemany(f"UPDATE {p}_speaker SET docs = docs + ? WHERE id = ?", [(n, s) for s, n in speakers.items()])

    def _write_dictionaries(
        self,
        sessions: dict[str, tuple[int, int]],
        session_docs: Counter[int],
        groups: dict[tuple[int, str | None], Group],
        speaker_terms: dict[str, int],
        words: set[str],
        kept: list[SearchDoc],
        speakers: dict[str, int],
    ) -> None:
        p, db = PREFIX, self.db
        db.executemany(
            f"UPDATE {p}_session SET docs = docs + ?, last_seq = ? WHERE id = ?",
            [(session_docs[i], seq, i) for i, seq in sessions.values() if session_docs[i]],
        )
        self.cache.sessions.update(sessions)
        db.executemany(
            f"UPDATE {p}_group SET docs = ?, len = ?, first = ?, second = ?, last = ?, last2 = ? WHERE id = ?",
            [(g.docs, g.len, g.first, g.second, g.last, g.last2, g.id) for g in groups.values()],
        )
        if speaker_terms:
            known = self.cache.speaker_terms
            unknown = [t for t in speaker_terms if t not in known]
            if unknown:
                known.update(_in(db, f"SELECT term, speaker FROM {p}_speaker_term WHERE term IN", unknown))
            changed = [(t, s) for t, s in speaker_terms.items() if known.get(t) != s]
            db.executemany(f"INSERT OR REPLACE INTO {p}_speaker_term VALUES (?, ?)", changed)
            known.update(changed)
        fresh = sorted(words - self.index._known_words)
        if len(fresh) > WORDS_AS_JSON:
            term = self.an.term
            postings.insert_columns(
                db, f"INSERT OR IGNORE INTO {p}_word(word, term) VALUES", (fresh, list(map(term, fresh)))
            )
        elif fresh:  # one event's ~25 words: one statement (one executemany row each cost a statement each)
            term = self.an.term
            db.execute(
                f"INSERT OR IGNORE INTO {p}_word(word, term) "
                "SELECT value ->> 0, value ->> 1 FROM json_each(?) ORDER BY key",  # in list order: the same ids
                (json.dumps([(word, term(word)) for word in fresh], ensure_ascii=False),),
            )
        self.index._pending_words |= words

    def _finish(self, tail_batch: Prepared | None, merged: bool) -> None:
        stats = self.stats
        stats["wseq"] += 1
        blocks = self.blocks.flush(int(stats["wseq"])) if self.blocks.blocks else {}
        self.db.execute(
            f"UPDATE {PREFIX}_stats SET {', '.join(f'{n} = ?' for n in _STATS)} WHERE id = 1",
            [stats[n] for n in _STATS],
        )
        self.index._pending = (blocks, self.before, int(stats["wseq"]))
        self.index._pending_created = stats["created"]
        self.cache.wseq = -1.0  # valid again only once committed (VerbatimIndex.committed sets it)
        self.index._write_cache_next = stats["wseq"]
        self.index.tail.stage(
            self.before, int(stats["wseq"]), merged, tail_batch, int(stats["tail_first"]), self._tail_rows
        )
        touched = self._touched
        self.index.read_deltas.stage(
            Delta(self.before, int(stats["wseq"]), stats["created"], *touched)
            if tail_batch is not None and not merged and touched is not None
            else None  # the main tables' frequencies moved (a merge, a bulk batch): readers read them again
        )

    # ------------------------------------------------------------------ dictionaries
    def _sessions(self, names: set[str]) -> dict[str, tuple[int, int]]:
        """name -> (id, last indexed seq), creating unknown sessions."""
        cached = self.cache.sessions
        unknown = sorted(name for name in names if name not in cached)
        sql = f"SELECT name, id, last_seq FROM {PREFIX}_session WHERE name IN"
        cached.update((r[0], (r[1], r[2])) for r in _in(self.db, sql, unknown))
        for name in unknown:
            if name not in cached:
                cursor = self.db.execute(
                    f"INSERT INTO {PREFIX}_session(name, docs, last_seq) VALUES (?, 0, 0)", (name,)
                )
                assert cursor.lastrowid is not None
                cached[name] = (cursor.lastrowid, 0)
        return {name: cached[name] for name in names}

    def _named(self, table: str, names: set[str]) -> dict[str, int]:
        """Event type / speaker name -> id, creating unknown names. Ids this writer already saw are cached like the
        session ids (:class:`WriteCache`: valid while no other write happened; an erasure that drops a speaker
        moves the write sequence): one event met its type and speaker again at every write."""
        known = self.cache.names[table]
        unknown = sorted(names - known.keys())
        if unknown:
            known.update(
                (r[0], r[1]) for r in _in(self.db, f"SELECT name, id FROM {PREFIX}_{table} WHERE name IN", unknown)
            )
            extra = ", docs" if table == "speaker" else ""
            for name in unknown:
                if name not in known:
                    cursor = self.db.execute(
                        f"INSERT INTO {PREFIX}_{table}(name{extra}) VALUES (?{', 0' if extra else ''})", (name,)
                    )
                    assert cursor.lastrowid is not None
                    known[name] = cursor.lastrowid
        return {name: known[name] for name in names}

    def _term_ids(self, terms: set[str], new_terms: dict[int, str] | None = None) -> dict[str, int]:
        """Term -> id, creating unknown terms (in sorted order, as before the cache: the same ids). Ids the writer
        already looked up are cached (:class:`WriteCache`, valid while no other write happened); a bulk batch
        meets mostly known terms, and looking each up again was 3 % of projection time.

        With ``new_terms`` (a bulk batch), unknown terms are only given their ids, the ones SQLite would give them
        (``max(id) + 1`` on, in sorted order: no other write reaches the table inside this transaction), and left
        in ``new_terms`` for :meth:`_write_main` to insert with their document frequencies: an insert with
        ``df = 0`` and an update of it afterwards cost two row writes per new term (~4 per event at 10k)."""
        known = self.cache.terms
        ordered = sorted(terms.difference(known))  # at C speed: a bulk batch holds ~20k distinct terms
        if ordered:
            known.update(
                (r[0], r[1]) for r in _in(self.db, f"SELECT term, id FROM {PREFIX}_term WHERE term IN", ordered)
            )
            fresh = [(term,) for term in ordered if term not in known]
            if fresh and new_terms is not None:
                top = int(self.db.execute(f"SELECT ifnull(max(id), 0) FROM {PREFIX}_term").fetchone()[0])
                ids = range(top + 1, top + 1 + len(fresh))
                new_terms.update(zip(ids, (term for (term,) in fresh), strict=True))
                known.update(zip((term for (term,) in fresh), ids, strict=True))
                return known
            insert = f"INSERT INTO {PREFIX}_term(term, df, cdf) VALUES (?, 0, 0)"
            if len(fresh) == 1:
                known[fresh[0][0]] = self.db.execute(insert, fresh[0]).lastrowid  # type: ignore[assignment]
            elif 1 < len(fresh) <= FRESH_ONE_BY_ONE:  # a few new terms (one event): one statement tells their ids
                # rows get their ids in VALUES order (max(id) + 1 each), the same ids as one insert per term
                values = ", ".join(["(?, 0, 0)"] * len(fresh))
                known.update(
                    self.db.execute(
                        f"INSERT INTO {PREFIX}_term(term, df, cdf) VALUES {values} RETURNING term, id",
                        [term for (term,) in fresh],
                    ).fetchall()
                )
            elif fresh:
                self.db.executemany(insert, fresh)
                known.update(
                    (r[0], r[1])
                    for r in _in(self.db, f"SELECT term, id FROM {PREFIX}_term WHERE term IN", [t for (t,) in fresh])
                )
        return known


def _in(db: sqlite3.Connection, sql: str, values: Sequence[Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for start in range(0, len(values), postings.CHUNK):
        chunk = list(values[start : start + postings.CHUNK])
        out += db.execute(f"{sql} ({','.join('?' * len(chunk))})", chunk).fetchall()
    return out
