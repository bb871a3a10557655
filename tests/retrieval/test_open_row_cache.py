"""The decoded open rows (``posting_open.RowCache``) are decoded once per process, not once per question.

At 10k events every posting of both indexes sits in open rows; a cache that thrashed, or a key that changed from
question to question, would decode them again at every checkout (issue 24: a 10k checkout p95 flag that this cache
was suspected of). These count the decodes: each open row once across many questions, whole-memory and scoped;
after a write, only the new row; after an erasure, only the rewritten rows (never the old ones served); and with a
bound smaller than the rows, evicted rows are decoded again and the answers stay the same."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from tests.retrieval.test_ingest_fast_paths import _drafts
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval import posting_open

QUESTIONS = ["what port does service 3 use?", "bada retry", "deploy kolo yesterday", "zaba fisu port", "T-12"]
SESSIONS = ["s0", "s1", "s2"]


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[int, bytes]]:
    """A fresh process-wide cache, and each decode counted by (segment, row bytes)."""
    monkeypatch.setattr(posting_open, "CACHE", posting_open.RowCache())
    counted: Counter[tuple[int, bytes]] = Counter()
    decode = posting_open.decode_row

    def counting(seg: int, terms: bytes, docs: bytes, tfs: bytes) -> posting_open.OpenRow:
        counted[(seg, terms + docs + tfs)] += 1
        return decode(seg, terms, docs, tfs)

    monkeypatch.setattr(posting_open, "decode_row", counting)
    return counted


def _open_rows(root: Path) -> set[tuple[int, bytes]]:
    db = sqlite3.connect(root / ".zaxy" / "derived.sqlite")
    try:
        return {
            (seg, terms + docs + tfs)
            for prefix in ("verbatim", "entity_keyword")
            for seg, terms, docs, tfs in db.execute(f"SELECT seg, terms, docs, tfs FROM {prefix}_post_open")
        }
    finally:
        db.close()


def _answers(fabric: MemoryFabric) -> list[list[tuple[str, float]]]:
    found = []
    for question in QUESTIONS:
        for scope in (None, *([session] for session in SESSIONS)):
            hits = fabric.query(question, sessions=scope, k=10).hits
            found.append([(hit.citation, round(hit.score, 9)) for hit in hits])
    return found


def _memory(root: Path, count: int = 1200) -> MemoryFabric:
    fabric = MemoryFabric.from_path(root, durability="batch", use_graph=False)
    drafts = _drafts(count)
    for start in range(0, count, 300):  # bulk writes (not the tails): each leaves open rows in both indexes
        for offset, draft in enumerate(drafts[start : start + 300]):
            fabric.append(SESSIONS[(start + offset) % 3], draft["type"], draft["payload"])
        fabric.project()
    return fabric


def test_each_open_row_is_decoded_once_across_questions(tmp_path: Path, decodes: Counter) -> None:
    with _memory(tmp_path / "loom") as fabric:
        rows = _open_rows(tmp_path / "loom")
        assert len(rows) >= 4  # rows of both indexes (the keyword index: one per write)
        for _ in range(3):
            for question in QUESTIONS:
                fabric.checkout(question, max_tokens=2000)
                for session in SESSIONS:
                    fabric.checkout(question, session=session, max_tokens=1000)
        assert set(decodes) <= rows and len(decodes) >= len(rows) // 2
        assert max(decodes.values()) == 1  # no row decoded twice in 60 checkouts


def test_a_write_decodes_only_its_rows_and_an_erasure_only_the_rewritten_ones(tmp_path: Path, decodes: Counter) -> None:
    root = tmp_path / "loom"
    with _memory(root) as fabric:
        _answers(fabric)
        before = _open_rows(root)
        assert max(decodes.values()) == 1
        seen = set(decodes)
        for draft in _drafts(1500)[1200:]:
            fabric.append("s1", draft["type"], draft["payload"])
        fabric.project()
        _answers(fabric)
        after_write = _open_rows(root)
        new = set(decodes) - seen
        assert new and new <= after_write - before  # only rows the write added (or a seal cut) were decoded
        assert max(decodes.values()) == 1
        fabric.erase_events("s1", list(range(1, 30)))  # rewrites the open rows that held them
        expected = _answers(fabric)
        rewritten = _open_rows(root) - after_write
        assert rewritten  # the erasure rewrote rows under new contents
        assert set(decodes) - seen - new <= rewritten
        assert max(decodes.values()) == 1
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fresh:
        assert _answers(fresh) == expected  # what a fresh reader of the same tables answers


def test_a_bound_smaller_than_the_rows_evicts_and_answers_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decodes: Counter
) -> None:
    root = tmp_path / "loom"
    with _memory(root) as fabric:
        expected = _answers(fabric)
        largest = max(int(row.docs.size) for row in posting_open.CACHE.rows.values())
    monkeypatch.setattr(posting_open, "CACHE_POSTINGS", largest)  # room for about one row
    monkeypatch.setattr(posting_open, "CACHE", posting_open.RowCache())
    decodes.clear()
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fresh:
        assert _answers(fresh) == expected
    assert max(decodes.values()) > 1  # evicted rows were decoded again
    assert posting_open.CACHE.size <= largest or len(posting_open.CACHE.rows) == 1
