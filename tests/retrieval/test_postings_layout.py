"""The postings layout of issue 24 (varint runs per term and segment, sessions as doc ranges): an index written in
the layout before it (one run per term and *session*, ``session`` in the key) is rebuilt from the log on first
open — the verbatim index (schema 2 -> 3) and the entity keyword index (3 -> 4) — and answers as before; and the
new layout holds a realistic memory's postings in a fraction of the rows."""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Callable
from pathlib import Path

from tests.retrieval.test_entity_tail import QUERIES, SCOPES, SESSIONS, _answers, _keyword
from tests.retrieval.test_ingest_fast_paths import _drafts
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval.verbatim import VerbatimIndex
from zaxy_agents.storage.derived.store import DerivedStateWarning

OLD_POST = (
    "CREATE TABLE {p}_post(field INTEGER NOT NULL, seg INTEGER NOT NULL, term INTEGER NOT NULL, "
    "session INTEGER NOT NULL, first INTEGER NOT NULL, n INTEGER NOT NULL, docs BLOB NOT NULL, tfs BLOB NOT NULL, "
    "PRIMARY KEY(field, seg, term, session, first)) WITHOUT ROWID"
)
OLD_SEG = (
    "CREATE TABLE {p}_post_seg(session INTEGER NOT NULL, seg INTEGER NOT NULL, PRIMARY KEY(session, seg)) WITHOUT ROWID"
)


def _everything(fabric: MemoryFabric) -> list[object]:
    verbatim = next(index for index in fabric.projector.listeners if isinstance(index, VerbatimIndex))
    found = _answers(fabric)
    for query in QUERIES:
        for scope in SCOPES:
            found.append([(h.session, h.seq, round(h.score, 9)) for h in verbatim.search(query, 10, sessions=scope)])
    return found


def _reopened(root: Path, expected: object, rebuilt: Callable[[MemoryFabric], None]) -> list[str]:
    """Open the memory again: the same answers as ``expected``, ``rebuilt`` checks the new tables; the
    DerivedStateWarning messages of the open."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
            fabric.project()
            assert _everything(fabric) == expected
            rebuilt(fabric)
    return [str(w.message) for w in caught if issubclass(w.category, DerivedStateWarning)]


def test_indexes_of_the_previous_layout_are_rebuilt_from_the_log_on_open(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
        for i, draft in enumerate(_drafts(90)):
            fabric.append(SESSIONS[i % 3], draft["type"], draft["payload"])
            if i % 10 == 9:
                fabric.project()
        fabric.project()
        expected = _everything(fabric)
        assert sum(len(found) for found in expected if isinstance(found, list)) > 40
    db = sqlite3.connect(root / ".zaxy" / "derived.sqlite")
    with db:  # what the layout before left: session in the postings key, post_seg without ranges
        for prefix, version in (("verbatim", "2"), ("entity_keyword", "3")):
            db.execute(f"DROP TABLE {prefix}_post")
            db.execute(f"DROP TABLE {prefix}_post_seg")
            db.execute(OLD_POST.format(p=prefix))
            db.execute(OLD_SEG.format(p=prefix))
            db.execute(f"INSERT INTO {prefix}_post VALUES (0, 0, 1, 1, 0, 1, x'0000', x'01')")
            db.execute(f"UPDATE meta SET value = ? WHERE key = 'schema:index:{prefix}'", (version,))
    db.close()

    def rebuilt(fabric: MemoryFabric) -> None:
        reader = fabric.projector.derived.reader()
        for prefix in ("verbatim", "entity_keyword"):
            columns = [row[1] for row in reader.execute(f"PRAGMA table_info({prefix}_post)")]
            assert "session" not in columns  # the small rebuild may sit in the tails: no row is required
        assert len(_keyword(fabric)) > 0

    messages = _reopened(root, expected, rebuilt)
    assert any("verbatim tables had version 2" in m for m in messages)
    assert any("entity_keyword tables had version 3" in m for m in messages)


def test_indexes_without_open_rows_are_rebuilt_from_the_log_on_open(tmp_path: Path) -> None:
    """The layout before the open-segment rows (verbatim 3, entity keyword 4: no ``<prefix>_post_open``, the newest
    segment's runs as rows of ``<prefix>_post``) is rebuilt from the log on first open, with the same answers."""
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
        fabric.append_many(SESSIONS[0], _drafts(400))
        fabric.project()
        expected = _everything(fabric)
        assert sum(len(found) for found in expected if isinstance(found, list)) > 40
    db = sqlite3.connect(root / ".zaxy" / "derived.sqlite")
    with db:  # what the layout before left: the open segment's postings in <prefix>_post, no open table
        for prefix, version in (("verbatim", "3"), ("entity_keyword", "4")):
            assert db.execute(f"SELECT count(*) FROM {prefix}_post_open").fetchone()[0] > 0
            db.execute(f"DROP TABLE {prefix}_post_open")
            db.execute(f"UPDATE meta SET value = ? WHERE key = 'schema:index:{prefix}'", (version,))
    db.close()

    def rebuilt(fabric: MemoryFabric) -> None:
        reader = fabric.projector.derived.reader()
        for prefix in ("verbatim", "entity_keyword"):
            assert reader.execute(f"SELECT count(*) FROM {prefix}_post_open").fetchone()[0] > 0

    messages = _reopened(root, expected, rebuilt)
    assert any("verbatim tables had version 3" in m for m in messages)
    assert any("entity_keyword tables had version 4" in m for m in messages)
