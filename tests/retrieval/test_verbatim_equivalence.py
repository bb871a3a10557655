"""The on-disk verbatim index ranks exactly like the dense in-memory scorer it replaced (tests/retrieval/
dense_reference.py), whatever path the events took: one per transaction (the log-structured tail), in batches
written straight to the main tables, through merges, read by another connection, after an erasure. Postings
segments are shrunk to 16 doc ids here (``posting_codec.SEGMENT_BITS``; 16,384 in use) and runs to 6 bytes
(``posting_codec.RUN_BYTES``; 768), so runs, their regrowth, erasures and session-scoped reads cross many segments and
runs."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from zaxy_agents.projection.model import SearchDoc
from zaxy_agents.retrieval import posting_codec, verbatim_write
from zaxy_agents.retrieval.derived import StandaloneIndexes, open_standalone
from zaxy_agents.retrieval.verbatim import VerbatimIndex

from .dense_reference import DenseVerbatim

WORDS = [
    "cat",
    "dog",
    "guitar",
    "violin",
    "hiking",
    "alps",
    "puppy",
    "work",
    "out",
    "week",
    "brother",
    "yoga",
    "dance",
    "paint",
    "book",
    "movie",
    "trip",
    "beach",
]
WORDS += ["park", "garden", "coffee", "tea", "running", "swim", "zebra"]
NAMES = ["Ann", "Bob", "Caroline", "Melanie"]


class _Batch:
    def __init__(self, docs: list[SearchDoc]) -> None:
        self.searchable, self.entities, self.cursors = docs, [], {}


def corpus(rng: random.Random, size: int) -> list[SearchDoc]:
    docs, seqs = [], {}
    for i in range(size):
        session = rng.choice(["s1", "s2", "s3"])
        seqs[session] = seq = seqs.get(session, 0) + 1
        text = " ".join(rng.choice(WORDS[:-1]) for _ in range(rng.randint(0, 12)))
        text += "?" if rng.random() < 0.3 else ""
        text += " yesterday" if rng.random() < 0.2 else ""
        text += " zebra" if rng.random() < 0.02 else ""  # a rare word: its thread's other events borrow from it
        caption = " ".join(rng.choice(WORDS) for _ in range(3)) if rng.random() < 0.2 else None
        when = f"2023-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:00:00Z"
        speaker = rng.choice([*NAMES, None])
        segment = rng.choice(["a", "b", None])
        docs.append(SearchDoc(session, seq, f"{i:064x}", rng.choice(["turn", "note"]), text, speaker, caption, segment,
                              when))  # fmt: skip
    return docs


def queries(rng: random.Random, count: int) -> Iterator[tuple[str, list[str] | None, str | None]]:
    for _ in range(count):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        if rng.random() < 0.3:
            query = f"What did {rng.choice(NAMES)} {query}?"
        if rng.random() < 0.3:
            query = f"When did they {query} in {rng.choice(['March 2023', 'July', '5 June, 2023'])}?"
        yield query, rng.choice([None, ["s1"], ["s2", "s3"]]), rng.choice([None, "2023-06-15T00:00:00Z"])


def ranking(index: VerbatimIndex | DenseVerbatim, query: str, sessions: list[str] | None, as_of: str | None) -> list:
    return [(h.session, h.seq, round(h.score, 9), h.components) for h in index.search(query, 10, sessions=sessions,
                                                                                    as_of=as_of)]  # fmt: skip


@pytest.fixture(autouse=True)
def small_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(posting_codec, "SEGMENT_BITS", 4)
    monkeypatch.setattr(posting_codec, "RUN_BYTES", 6)  # runs of a few postings: keys cut into many, last runs regrown


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[list[StandaloneIndexes]]:
    listeners: list[StandaloneIndexes] = []
    yield listeners
    for item in listeners:
        item.store.close()


@pytest.mark.parametrize(
    ("batch", "tail", "direct"),
    [(1, 16, 8), (3, 40, 10), (9, 1000, 5), (50, 8, 1000)],
    ids=["one-by-one+merges", "small-batches", "direct-batches", "tail-only"],
)
def test_same_ranking_as_dense_scoring(
    tmp_path: Path, opened: list[StandaloneIndexes], monkeypatch: pytest.MonkeyPatch, batch: int, tail: int, direct: int
) -> None:
    monkeypatch.setattr(verbatim_write, "TAIL_LIMIT", tail)
    monkeypatch.setattr(verbatim_write, "DIRECT_MIN", direct)
    rng = random.Random(batch)
    docs = corpus(rng, 240)
    dense = DenseVerbatim()
    for item in docs:
        dense.add(item)
    index = VerbatimIndex()
    opened.append(listeners := open_standalone(tmp_path / "index", index))
    for start in range(0, len(docs), batch):
        listeners.on_batch(_Batch(docs[start : start + batch]), None)
    other = VerbatimIndex()  # another connection / process: reads the tail from its tables
    opened.append(open_standalone(tmp_path / "index", other))
    compared = 0
    for query, sessions, as_of in queries(rng, 40):
        expected = ranking(dense, query, sessions, as_of)
        assert ranking(index, query, sessions, as_of) == expected, query
        assert ranking(other, query, sessions, as_of) == expected, query
        compared += bool(expected)
    assert compared >= 30  # most queries have results to compare
    assert index.counters["inexact"] == 0


def test_erasing_events_ranks_like_never_having_indexed_them(tmp_path: Path, opened: list[StandaloneIndexes]) -> None:
    rng = random.Random(7)
    docs = corpus(rng, 200)
    gone = {(d.session, d.seq) for d in rng.sample(docs, 40)}
    index = VerbatimIndex()
    opened.append(listeners := open_standalone(tmp_path / "index", index))
    for start in range(0, len(docs), 7):
        listeners.on_batch(_Batch(docs[start : start + 7]), None)
    for session in ("s1", "s2", "s3"):
        listeners.erase(session, sorted(seq for s, seq in gone if s == session))
    kept = DenseVerbatim()
    for item in docs:
        if (item.session, item.seq) not in gone:
            kept.add(item)
    for query, sessions, as_of in queries(rng, 40):
        assert ranking(index, query, sessions, as_of) == ranking(kept, query, sessions, as_of), query
    more = [SearchDoc("s1", 10_000 + i, f"x{i}", "turn", "violin beach", "Ann", None, "a", "2023-05-01T00:00:00Z")
            for i in range(3)]  # fmt: skip
    listeners.on_batch(_Batch(more), None)  # indexing goes on after an erasure
    for item in more:
        kept.add(item)
    assert ranking(index, "violin beach", None, None) == ranking(kept, "violin beach", None, None)


def test_erased_words_leave_no_bytes_in_the_index_file(tmp_path: Path, opened: list[StandaloneIndexes]) -> None:
    index = VerbatimIndex()
    opened.append(listeners := open_standalone(tmp_path / "index", index))
    events = [
        SearchDoc("s", 1, "h1", "turn", "the quarterly zorblaxification of widgets", "Quentinovich", "glimmerquux", "a",
                  "2023-01-01T00:00:00Z"),
        SearchDoc("s", 2, "h2", "turn", "widgets ship on friday", "Bob", None, "a", "2023-01-02T00:00:00Z"),
    ]  # fmt: skip
    listeners.on_batch(_Batch(events), None)
    listeners.on_batch(_Batch([SearchDoc("s", 3, "h3", "turn", "more widgets", "Bob", None, "a",
                                         "2023-01-03T00:00:00Z")]), None)  # fmt: skip
    assert index.search("zorblaxification", 5)[0].seq == 1
    listeners.erase("s", [1])
    assert index.search("zorblaxification glimmerquux", 5) == []
    assert sorted(h.seq for h in index.search("widgets", 5)) == [2, 3]
    data = b"".join(path.read_bytes() for path in tmp_path.iterdir() if path.is_file())
    for secret in (b"zorblax", b"glimmerquux", b"quentinovich", b"Quentinovich"):
        assert secret not in data


def test_bounded_seed_selection_uses_the_reference_own_scores(
    tmp_path: Path, opened: list[StandaloneIndexes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the seed limit (a whole-memory query at scale) seeds are the best matched events by their own score:
    the shortcuts in that path (the matched events' union from one argsort, their segment scores by position)
    must pick exactly what the plain formula picks — text + caption BM25 plus a searched segment score."""
    from zaxy_agents.retrieval import verbatim_search
    from zaxy_agents.retrieval.postings import bm25
    from zaxy_agents.retrieval.verbatim_scoring import Scorer

    monkeypatch.setattr(verbatim_search, "SEED_LIMIT", 12)  # a 300-event corpus takes the bounded path
    rng = random.Random(11)
    docs = corpus(rng, 300)
    index = VerbatimIndex()
    opened.append(listeners := open_standalone(tmp_path / "index", index))
    for start in range(0, len(docs), 50):
        listeners.on_batch(_Batch(docs[start : start + 50]), None)
    asked = list(queries(rng, 30))
    shortcut = [ranking(index, *question) for question in asked]
    assert index.counters["inexact"] > 0

    def reference(self: Scorer):  # the formula, spelled out
        matched, cfg, stats = self.matched, self.cfg, self.stats
        records = matched.features
        score = bm25(matched.tf, records["tl"].astype(float), stats.text_total / max(stats.text_nonempty, 1),
                     self.terms.weight, cfg.k1, cfg.b)  # fmt: skip
        if self.captions:
            score += cfg.caption_weight * bm25(matched.ctf, records["cl"].astype(float),
                                               stats.cap_total / max(stats.cap_nonempty, 1),
                                               self.terms.caption_weight, cfg.k1, cfg.b)  # fmt: skip
        return score + self._segment(records["group"].astype("int64"))

    monkeypatch.setattr(Scorer, "own_scores", reference)
    assert [ranking(index, *question) for question in asked] == shortcut


@pytest.mark.parametrize(("batch", "tail"), [(1, 16), (2, 1000)], ids=["one-by-one+merges", "tail-only"])
def test_two_writers_taking_turns_rank_like_one(
    tmp_path: Path, opened: list[StandaloneIndexes], monkeypatch: pytest.MonkeyPatch, batch: int, tail: int
) -> None:
    """Two connections (two processes: the MCP servers of two agents) write the same index in turn; each reads
    only the tail rows the other added since its last write (Tail.current) and keeps its term ids until an
    erasure (WriteCache), through merges and an erasure, and both rank like the dense reference — also a third
    connection that reads the whole tail afresh."""
    monkeypatch.setattr(verbatim_write, "TAIL_LIMIT", tail)
    monkeypatch.setattr(verbatim_write, "DIRECT_MIN", 1000)
    rng = random.Random(20 + batch)
    docs = corpus(rng, 160)
    dense = DenseVerbatim()
    writers = [VerbatimIndex(), VerbatimIndex()]
    for writer in writers:
        opened.append(open_standalone(tmp_path / "index", writer))
    for turn, start in enumerate(range(0, len(docs), batch)):
        opened[turn % 2].on_batch(_Batch(docs[start : start + batch]), None)
        for item in docs[start : start + batch]:
            dense.add(item)
        if turn % 37 == 36:  # now and then both read mid-stream (the view each writer keeps is also a reader's)
            question = next(queries(rng, 1))
            expected = ranking(dense, *question)
            assert [ranking(writer, *question) for writer in writers] == [expected, expected], question
    # one writer erases every event holding the rare word (its term is deleted), the other writes it again: term
    # ids a writer kept from before the erasure must not be used
    gone = {(d.session, d.seq) for d in docs if "zebra" in f"{d.text} {d.caption}".split()}
    gone |= {(d.session, d.seq) for d in docs[:9]}
    assert len(gone) > 9
    for session in ("s1", "s2", "s3"):
        opened[0].erase(session, sorted(seq for s, seq in gone if s == session))
    dense = DenseVerbatim()
    for item in docs:
        if (item.session, item.seq) not in gone:
            dense.add(item)
    more = [SearchDoc("s1", 10_000 + i, f"z{i}", "turn", "zebra violin beach", "Ann", None, "a", "2023-05-01T00:00:00Z")
            for i in range(3)]  # fmt: skip
    opened[1].on_batch(_Batch(more), None)
    for item in more:
        dense.add(item)
    fresh = VerbatimIndex()
    opened.append(open_standalone(tmp_path / "index", fresh))
    for query, sessions, as_of in queries(rng, 30):
        expected = ranking(dense, query, sessions, as_of)
        for index in (*writers, fresh):
            assert ranking(index, query, sessions, as_of) == expected, query
    for index in (*writers, fresh):  # the new events lead (their neighbours tie further down)
        assert sorted(h[:2] for h in ranking(index, "zebra", None, None)[:3]) == [("s1", m.seq) for m in more]
