"""The verbatim index's log-structured tail: small batches, kept apart until they are merged.

A batch smaller than ``DIRECT_MIN`` events goes to three append-only tables (one packed row of postings per batch,
one feature record per event, the new ``next`` links of older events): their keys only grow, so a commit writes
a couple of pages whatever the number of terms. Queries read the tail through :class:`Tail` (an in-memory view
kept in step with this process's commits, rebuilt from the tables when another process wrote) and take a
:class:`TailSnapshot` copy of what they need. :class:`Prepared` is one analysed batch, as the tail or the main
tables receive it.
"""

from __future__ import annotations

import functools
import sqlite3
import struct
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from . import features as feat
from . import posting_codec
from .verbatim import FIELD_CAPTION, FIELD_TEXT, PREFIX


def tail_schema() -> list[str]:
    p = PREFIX
    return [
        f"CREATE TABLE IF NOT EXISTS {p}_tail_post(id INTEGER PRIMARY KEY, data BLOB NOT NULL)",
        f"CREATE TABLE IF NOT EXISTS {p}_tail_doc(doc INTEGER PRIMARY KEY, seq INTEGER NOT NULL, data BLOB NOT NULL)",
        f"CREATE TABLE IF NOT EXISTS {p}_tail_link(id INTEGER PRIMARY KEY, doc INTEGER NOT NULL, "
        "next INTEGER NOT NULL)",
    ]


TAIL_TABLES = ("tail_post", "tail_doc", "tail_link")
# One row of ``<prefix>_tail_post`` holds a whole batch's postings, as packed records.
TAIL_POSTING = np.dtype([("field", "u1"), ("term", "<u4"), ("session", "<u4"), ("doc", "<u4"), ("tf", "<u2")])


# the same packed records as ``TAIL_POSTING`` (no padding), for :mod:`struct`
_POSTING_FORMAT = "BIIIH"


def pack_postings(batch: Prepared) -> bytes:
    """A small batch's postings as ``TAIL_POSTING`` records. Its columns are lists (one event: ~60 postings):
    interleaved by slice assignment and packed by :mod:`struct` — the same bytes as the NumPy table, at about half
    its CPU for one event (five list-to-array conversions dominated). Arrays take the NumPy path."""
    doc = batch.post_doc
    if isinstance(doc, np.ndarray):
        table = np.zeros(len(doc), dtype=TAIL_POSTING)
        table["field"], table["term"], table["session"] = batch.post_field, batch.post_term, batch.post_session
        table["doc"], table["tf"] = doc, np.minimum(batch.post_tf, posting_codec.MAX_TF)
        return table.tobytes()
    count = len(doc)
    flat: list[int] = [0] * (5 * count)
    flat[0::5], flat[1::5], flat[2::5], flat[3::5] = batch.post_field, batch.post_term, batch.post_session, doc
    limit = posting_codec.MAX_TF
    flat[4::5] = [tf if tf < limit else limit for tf in batch.post_tf]
    return struct.pack("<" + _POSTING_FORMAT * count, *flat)


def unpack_postings(blobs: list[bytes]) -> np.ndarray:
    return np.frombuffer(b"".join(blobs), dtype=TAIL_POSTING) if blobs else np.zeros(0, dtype=TAIL_POSTING)


@dataclass
class Prepared:
    """One batch, analysed: what the main tables or the tail receive."""

    records: np.ndarray  # FEATURE records of docs first .. first + n - 1
    first: int
    seqs: list[int]
    # one entry per posting: lists (the tail, in first-appearance order) or int64 arrays (bulk batches)
    post_field: list[int] | np.ndarray = field(default_factory=list)
    post_term: list[int] | np.ndarray = field(default_factory=list)  # term ids
    post_session: list[int] | np.ndarray = field(default_factory=list)
    post_doc: list[int] | np.ndarray = field(default_factory=list)
    post_tf: list[int] | np.ndarray = field(default_factory=list)
    links: dict[int, int] = field(default_factory=dict)  # older doc -> its new next doc
    new_terms: dict[int, str] = field(default_factory=dict)  # id -> term of the terms a bulk batch creates

    def arrays(self) -> tuple[np.ndarray, ...]:
        """``(field, term, session, doc, tf)`` of every posting, as int64 arrays."""
        return tuple(np.array(values, dtype=np.int64) for values in (
            self.post_field, self.post_term, self.post_session, self.post_doc, self.post_tf))  # fmt: skip

    def frequencies(self) -> list[tuple[int, int, int]]:
        """``(text df, caption df, term id)`` of this batch, per term, by term id: counted with ``bincount`` over
        the term ids (a posting is one doc's field), no sort (``np.unique`` sorted the ~95k postings of a
        1,000-event batch)."""
        term = np.asarray(self.post_term, dtype=np.int64)
        if not term.size:
            return []
        field = np.asarray(self.post_field, dtype=np.int64)
        width = int(term.max()) + 1
        terms = np.flatnonzero(np.bincount(term, minlength=width))
        text = np.bincount(term[field == FIELD_TEXT], minlength=width)[terms]
        caption = np.bincount(term[field == FIELD_CAPTION], minlength=width)[terms]
        return list(zip(text.tolist(), caption.tolist(), terms.tolist(), strict=True))


class TailView:
    """The tail's content in memory: feature records and postings of its events, and the new ``next`` links of
    older events. Kept in step with this process's own commits; rebuilt from the tail tables when another
    process wrote (a different write sequence)."""

    def __init__(self, first: int = 0, wseq: float = -1.0, created: float = -1.0, erasures: float = -1.0) -> None:
        self.first, self.wseq, self.created, self.erasures = first, wseq, created, erasures
        self.origin = first  # the stats' tail_first this view was read at: a merge moves it
        self.post_id = self.link_id = 0  # the last tail_post / tail_link rows this view holds
        self._buffer = np.zeros(0, dtype=feat.FEATURE)
        self.records = self._buffer
        self.seqs: list[int] = []
        self.links: dict[int, int] = {}
        self.post: dict[tuple[int, int], list[tuple[int, int, int]]] = {}  # (field, term) -> [(doc, session, tf)]
        self.df: Counter[tuple[int, int]] = Counter()  # (field, term) -> docs
        self._unsettled: list[tuple[Sequence[int], ...]] = []  # postings added since the last query, in order
        self._tables: dict[tuple[int, int], np.ndarray] = {}  # (field, term) -> post's rows as made for a query

    @functools.cached_property
    def link_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``links`` as two aligned arrays, the older docs sorted: made once per query (a walk looks them up at
        every step)."""
        linked = np.array(sorted(self.links), dtype=np.int64)
        return linked, np.array([self.links[doc] for doc in linked.tolist()], dtype=np.int64)

    def record(self, doc: int) -> np.void | None:
        if self.first <= doc < self.first + len(self.records):
            return self.records[doc - self.first]
        return None

    def add(self, batch: Prepared) -> None:
        if not len(self.records):
            self.first = batch.first
        count = len(self.records)
        if count + len(batch.records) > len(self._buffer):
            grown = np.zeros(max(2 * len(self._buffer), count + len(batch.records), 64), dtype=feat.FEATURE)
            grown[:count] = self.records
            self._buffer = grown
        self._buffer[count : count + len(batch.records)] = batch.records
        self.records = self._buffer[: count + len(batch.records)]
        self.seqs += batch.seqs
        for doc, following in batch.links.items():
            if doc >= self.first:
                self.records["next"][doc - self.first] = following
            else:
                self.links[doc] = following
        self.add_postings(batch.post_field, batch.post_term, batch.post_session, batch.post_doc, batch.post_tf)

    def add_postings(self, *columns: Sequence[int]) -> None:
        """Postings given as parallel ``(field, term, session, doc, tf)`` columns; filed by term only when a query
        needs them (:meth:`settle`): a process that only writes (a hook, an agent's MCP server between its
        queries) never pays for filing the postings other processes wrote."""
        self._unsettled.append(columns)

    def settle(self) -> None:
        """File the postings added since the last call under their ``(field, term)``; the caller holds the lock."""
        post, df = self.post, self.df
        for columns in self._unsettled:
            for f, t, s, d, tf in zip(*columns, strict=True):
                post.setdefault((f, t), []).append((d, s, tf))
                df[(f, t)] += 1
        self._unsettled = []

    def table(self, key: tuple[int, int]) -> np.ndarray | None:
        """``post[key]`` as an ``(n, 3)`` int64 array (``None`` when none is filed). A view's lists only grow, so the
        array made for an earlier query is reused, or extended by the rows filed since: a query no longer converts
        every tail posting of its words again. Arrays handed out are never written to."""
        rows = self.post.get(key)
        if not rows:
            return None
        made = self._tables.get(key)
        if made is None or len(made) > len(rows):
            made = np.array(rows, dtype=np.int64).reshape(-1, 3)
        elif len(made) < len(rows):
            made = np.concatenate((made, np.array(rows[len(made) :], dtype=np.int64).reshape(-1, 3)))
        self._tables[key] = made
        return made

    def add_links(self, rows: Sequence[tuple[int, int]]) -> None:
        """``(doc, next)`` rows of ``tail_link``, in id order: older docs' new neighbours."""
        for doc, following in rows:
            if doc >= self.first and len(self.records):
                self.records["next"][doc - self.first] = following
            else:
                self.links[doc] = following


@dataclass
class TailSnapshot:
    """What one query needs of the tail, copied under the lock: nothing it holds changes afterwards."""

    first: int
    records: np.ndarray
    seqs: list[int]
    links: dict[int, int]
    post: dict[tuple[int, int], np.ndarray]  # (field, term) -> rows (doc, session, tf)
    df: dict[tuple[int, int], int]

    @functools.cached_property
    def link_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``links`` as two aligned arrays, the older docs sorted: made once per query (a walk looks them up at
        every step)."""
        linked = np.array(sorted(self.links), dtype=np.int64)
        return linked, np.array([self.links[doc] for doc in linked.tolist()], dtype=np.int64)

    def record(self, doc: int) -> np.void | None:
        if self.first <= doc < self.first + len(self.records):
            return self.records[doc - self.first]
        return None

    @property
    def end(self) -> int:
        return self.first + len(self.records)

    def postings(self, field_id: int, term: int, scope: Sequence[int] | None) -> tuple[np.ndarray, np.ndarray]:
        table = self.post.get((field_id, term))
        if table is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        if scope is not None:  # one session (an agent's scope): a comparison, not np.isin's ~10 us of set-up
            table = table[table[:, 1] == scope[0] if len(scope) == 1 else np.isin(table[:, 1], scope)]
        return table[:, 0], table[:, 2].astype(np.float64)


class Tail:
    """The current :class:`TailView` of one index; readers take :meth:`snapshot` copies under its lock."""

    def __init__(self) -> None:
        self.view = TailView()
        self.lock = threading.Lock()
        self._staged: tuple[int, int, bool, Prepared | None, int, tuple[int, int]] | None = None

    def current(self, db: sqlite3.Connection, stats: dict[str, float]) -> TailView:
        """The tail as of ``stats`` (read inside the caller's snapshot); the caller holds :attr:`lock`.

        When another process only appended to the tail since this view was read (same tables, no merge, no
        erasure), only the rows it added are read: with several processes writing one event at a time (the
        MCP servers or hooks of several agents), re-reading the whole tail (up to ``TAIL_LIMIT`` events) at
        every write was ~half of each write's time, inside the write lock."""
        view = self.view
        if view.wseq == stats["wseq"] and view.created == stats["created"]:
            return view
        if (
            len(view.records)  # a merge of a tail without docs would not move tail_first: re-read those
            and view.wseq < stats["wseq"]
            and view.created == stats["created"]
            and view.erasures == stats["erasures"]
            and view.origin == stats["tail_first"]
            and stats["tail_docs"] >= len(view.records)
        ):
            self._extend(db, view)
            view.wseq = stats["wseq"]
            return view
        view = TailView(int(stats["tail_first"]), stats["wseq"], stats["created"], stats["erasures"])
        self._extend(db, view)
        self.view = view
        return view

    @staticmethod
    def _extend(db: sqlite3.Connection, view: TailView) -> None:
        """Add the tail rows written after those ``view`` holds (all of them for a new view)."""
        p = PREFIX
        rows = db.execute(
            f"SELECT doc, seq, data FROM {p}_tail_doc WHERE doc >= ? ORDER BY doc", (view.first + len(view.records),)
        ).fetchall()
        if rows:
            if not len(view.records):
                view.first = rows[0][0]
            added = np.frombuffer(b"".join(r[2] for r in rows), dtype=feat.FEATURE)
            view.records = np.concatenate((view.records, added)) if len(view.records) else added.copy()
            view._buffer = view.records
            view.seqs += [r[1] for r in rows]
        links = db.execute(f"SELECT id, doc, next FROM {p}_tail_link WHERE id > ? ORDER BY id", (view.link_id,))
        link_rows = links.fetchall()
        if link_rows:
            view.link_id = link_rows[-1][0]
            view.add_links([(doc, following) for _, doc, following in link_rows])
        posts = db.execute(f"SELECT id, data FROM {p}_tail_post WHERE id > ? ORDER BY id", (view.post_id,)).fetchall()
        if posts:
            view.post_id = posts[-1][0]
            table = unpack_postings([r[1] for r in posts])
            view.add_postings(*(table[name].tolist() for name in ("field", "term", "session", "doc", "tf")))

    def snapshot(self, db: sqlite3.Connection, stats: dict[str, float], terms: Sequence[int]) -> TailSnapshot:
        with self.lock:
            view = self.current(db, stats)
            view.settle()
            post = {}
            df = {}
            for term in terms:
                for field_id in (FIELD_TEXT, FIELD_CAPTION):
                    found = view.table((field_id, term))
                    if found is not None:
                        post[(field_id, term)] = found
                        df[(field_id, term)] = view.df[(field_id, term)]
            return TailSnapshot(view.first, view.records.copy(), list(view.seqs), dict(view.links), post, df)

    def stage(
        self, before: int, after: int, merged: bool, batch: Prepared | None, first: int, rows: tuple[int, int]
    ) -> None:
        """What a write changed, adopted by :meth:`committed`; ``rows``: the last tail_post / tail_link row ids."""
        self._staged = (before, after, merged, batch, first, rows)

    def committed(self, created: float) -> None:
        with self.lock:
            if self._staged is None:
                return
            before, after, merged, batch, first, rows = self._staged
            self._staged = None
            view = self.view
            if view.wseq != before or view.created != created:
                return  # not the state this write started from: the next reader rebuilds it
            if merged or not len(view.records):
                view = TailView(first, after, created, view.erasures)
            if batch is not None:
                view.add(batch)
            view.post_id, view.link_id = rows
            view.wseq = after
            self.view = view

    def rolled_back(self) -> None:
        self._staged = None

    def clear(self) -> None:
        with self.lock:
            self.view = TailView()
            self._staged = None
