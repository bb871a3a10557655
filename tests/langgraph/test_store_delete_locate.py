"""A store delete finds the events to erase through the item store's versions index (zaxy_agents/itemstore/
versions.py), not by replaying the session, and still erases every version when the index lags the log or is
wrong, and never an event that does not name the key. Both backends (the ``eventloom`` fixture)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.erasure_helpers import files_containing
from zaxy_agents.langgraph import ZaxyStore

SECRET = "cobalt-heron-7731"


def _scans(store: ZaxyStore, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Record the (first, last) seqs of every replay the eraser makes to find a key's events."""
    erasure = store.fabric.erasure
    seen: list[tuple[int, int]] = []
    original = erasure._scan_store_items

    def recording(session: str, wanted: Any, first: int, last: int) -> list[int]:
        seen.append((first, last))
        return original(session, wanted, first, last)

    monkeypatch.setattr(erasure, "_scan_store_items", recording)
    return seen


def _erased_seqs(store: ZaxyStore) -> set[int]:
    return {event.seq for event in store.fabric.log.replay(store.session) if event.erased}


def test_delete_reads_the_indexed_versions_not_the_whole_session(
    eventloom: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ZaxyStore.from_path(eventloom) as store:
        store.put(("users",), "dana", {"text": f"v1 {SECRET}"})
        for i in range(30):
            store.put(("users",), f"other{i}", {"text": f"unrelated {i}"})
        store.put(("users",), "dana", {"text": f"v2 {SECRET}"})
        scans = _scans(store, monkeypatch)

        store.delete(("users",), "dana")

        assert scans == []  # the index was current: only the three indexed lines were read
        assert _erased_seqs(store) == {1, 32, 33}  # both puts and the delete
        assert store.get(("users",), "dana") is None
        assert store.get(("users",), "other7").value == {"text": "unrelated 7"}
        assert store.fabric.verify(store.session).ok


def test_events_the_index_has_not_seen_are_erased_too(eventloom: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Versions appended behind the item store's back (another process) lie past its position: the eraser replays
    that tail, so they are erased with the indexed ones, and a put of the key after ``through_seq`` survives."""
    with ZaxyStore.from_path(eventloom) as store:
        store.put(("users",), "dana", {"text": f"v1 {SECRET}"})
        log = store.fabric.log
        raw = {"namespace": ["users"], "key": "dana", "value": {"text": f"v2 {SECRET}"}, "index": None}
        foreign = log.append(store.session, "store.item.put", {**raw, "ttl_minutes": None, "expires_at": None})
        later = log.append(store.session, "store.item.put", {**raw, "value": {"text": "kept"}})
        seqs, through = store.fabric.erasure.core.erase_locators[0](store.session, [(("users",), "dana")])
        assert seqs == [1] and through == 1  # the index lags the log
        scans = _scans(store, monkeypatch)

        report = store.fabric.erase_store_items(store.session, [(("users",), "dana")], through_seq=foreign.seq)

        assert scans == [(2, foreign.seq)]  # only the tail the index has not seen

        assert report is not None and report["erased"] == 2
        assert _erased_seqs(store) == {1, foreign.seq}
        assert store.get(("users",), "dana").value == {"text": "kept"}  # the later put survives
        assert later.seq not in _erased_seqs(store)
        assert store.fabric.verify(store.session).ok


def test_a_wrong_locator_erases_nothing_it_should_not_and_misses_nothing(
    eventloom: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The locator is only a hint: listed seqs that do not name the key are re-read and skipped; seqs it failed to
    list at or before its position would be missed, which is why the index is derived in the same transaction as
    the items (the test below rebuilds it); here a locator that claims nothing yet lists junk erases only the key."""
    with ZaxyStore.from_path(eventloom) as store:
        store.put(("users",), "ann", {"text": "Ann stays"})
        store.put(("users",), "dana", {"text": f"v1 {SECRET}"})
        erasure = store.fabric.erasure
        monkeypatch.setattr(erasure.core, "erase_locators", [lambda session, keys: ([1, 999], 0)])

        store.delete(("users",), "dana")

        assert _erased_seqs(store) == {2, 3}
        assert store.get(("users",), "ann").value == {"text": "Ann stays"}
        assert files_containing(eventloom, SECRET) == []


def test_a_key_put_again_after_its_delete_is_indexed_afresh(eventloom: Path) -> None:
    with ZaxyStore.from_path(eventloom) as store:
        store.put(("users",), "dana", {"text": f"v1 {SECRET}"})
        store.delete(("users",), "dana")
        store.put(("users",), "dana", {"text": "second life"})
        seqs, _through = store.fabric.erasure.core.erase_locators[0](store.session, [(("users",), "dana")])
        assert seqs == [4]  # the erased events' rows went with the erasure record
        store.delete(("users",), "dana")
        assert _erased_seqs(store) == {1, 2, 4, 5}
        store.put(("users",), "dana", {"text": "third life"})
        assert store.get(("users",), "dana").value == {"text": "third life"}


def test_a_file_of_the_previous_format_is_rebuilt_with_its_index(tmp_path: Path) -> None:
    """Format 2 added the versions table: a format-1 file (no table) is rebuilt from the log at open, and the next
    delete finds every version through the rebuilt index."""
    root = tmp_path / "loom"
    with ZaxyStore.from_path(root) as store:
        store.put(("users",), "dana", {"text": f"v1 {SECRET}"})
        store.put(("users",), "ann", {"text": "Ann stays"})
        store.put(("users",), "dana", {"text": f"v2 {SECRET}"})
    (path,) = (root / ".zaxy" / "itemstore").glob("*.sqlite3")
    with sqlite3.connect(path) as conn:  # what a format-1 file looks like
        conn.execute("DROP TABLE versions")
        conn.execute("UPDATE derived_meta SET value = '1' WHERE key = 'format'")
    conn.close()
    with ZaxyStore.from_path(root) as store:
        seqs, through = store.fabric.erasure.core.erase_locators[0](store.session, [(("users",), "dana")])
        assert (seqs, through) == ([1, 3], 3)
        store.delete(("users",), "dana")
        assert _erased_seqs(store) == {1, 3, 4}
        assert store.get(("users",), "ann").value == {"text": "Ann stays"}
    assert files_containing(root, SECRET) == []


def test_an_edited_version_is_erased_and_an_unreadable_one_is_reported(tmp_path: Path) -> None:
    """A listed line whose bytes were edited behind the log's back but still name the key loses its content with
    the others (never left behind silently); a listed line that is not an event at all stops the delete with the
    structured integrity error the whole-session replay raised (`zaxy repair` first)."""
    from zaxy_agents.errors import IntegrityError

    root = tmp_path / "loom"
    with ZaxyStore.from_path(root) as store:
        store.put(("users",), "dana", {"text": f"v1 {SECRET}"})
        store.put(("users",), "ann", {"text": "Ann stays"})
        store.put(("users",), "dana", {"text": f"v2 {SECRET}"})
        path = root / f"{store.session}.jsonl"
        path.write_bytes(path.read_bytes().replace(b'"text":"v1 ', b'"text":"v7 ', 1))  # same size: no catch-up
        store.delete(("users",), "dana")
        assert files_containing(root, SECRET) == []
        assert {1, 3, 4} <= _erased_seqs_unchecked(path)

        store.put(("users",), "eve", {"text": f"eve {SECRET}"})
        data = path.read_bytes().splitlines(keepends=True)
        data[-1] = b"x" * (len(data[-1]) - 1) + b"\n"  # the line of eve's put, unreadable (same size)
        path.write_bytes(b"".join(data))
        with pytest.raises(IntegrityError) as raised:
            store.delete(("users",), "eve")
        assert raised.value.details["seq"] == len(data) and "repair" in (raised.value.remediation or "")


def _erased_seqs_unchecked(path: Path) -> set[int]:
    """Seqs of erased lines, read from the file without the read-side check (an edited line stays excluded)."""
    import json

    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    return {line["seq"] for line in lines if "erased" in line or "tombstone" in line}
