"""The cross-thread checkpoint index: a cold ``list(None, ...)`` reads the index and loads only the threads it
returns, stays exact across deletes, prunes, other writers and a damaged index file."""

from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.langgraph import ZaxyCheckpointer

from .test_checkpointer_sync import chain, config, ids


def everything_newest_first(saver: ZaxyCheckpointer, threads: list[str], step: int | None = None) -> list[str]:
    """What list(None) must return, from each thread's own listing (which never uses the index)."""
    found = []
    for thread in threads:
        for entry in saver.list(config(thread)):
            if step is None or entry.metadata.get("step") == step:
                found.append(entry.config["configurable"]["checkpoint_id"])
    found.sort(reverse=True)
    return found


def loaded_threads(saver: ZaxyCheckpointer) -> int:
    return len(saver._store.views._views)


def test_cold_list_loads_only_the_threads_it_returns(eventloom: Path) -> None:
    threads = [f"t{n}" for n in range(24)]
    with ZaxyCheckpointer.from_path(eventloom) as writer:
        for n, thread in enumerate(threads):
            chain(writer, thread, 2, run_id=f"run-{n % 3}")
        writer.delete_thread("t23")  # the newest thread: a stale index would list it first
        writer.prune(["t22"], strategy="keep_latest")
        writer.delete_for_runs(["run-0"])
        live = [t for t in threads if t != "t23"]
        expected = everything_newest_first(writer, live)
        step_one = everything_newest_first(writer, live, step=1)
    assert len(expected) == 2 * 23 - 1 - 2 * 8  # t22 keeps one; run-0 (t0, t3, ..., t21) is gone

    with ZaxyCheckpointer.from_path(eventloom) as cold:
        assert ids(cold, None, limit=5) == expected[:5]
        assert loaded_threads(cold) <= 5  # the other threads were never replayed
        assert ids(cold, None) == expected
        before = {"configurable": {"checkpoint_id": expected[10]}}
        assert ids(cold, None, before=before, limit=3) == expected[11:14]
        assert ids(cold, None, filter={"step": 1}, limit=4) == step_one[:4]

        # Another writer adds a thread and deletes one: the next cold list sees both at once.
        with ZaxyCheckpointer.from_path(eventloom) as other:
            newest = chain(other, "late", 1)[-1]["configurable"]["checkpoint_id"]
            other.delete_thread("t21")
        assert ids(cold, None, limit=1) == [newest]
        expected = everything_newest_first(cold, [t for t in live if t != "t21"] + ["late"])
        assert ids(cold, None) == expected


def test_list_with_namespace_and_id_through_the_index(saver: ZaxyCheckpointer) -> None:
    root = chain(saver, "a", 2)
    sub = chain(saver, "a", 2, ns="child")
    other = chain(saver, "b", 1, ns="child")
    assert ids(saver, None, limit=0) == []
    only = root[0]["configurable"]["checkpoint_id"]
    listed = list(saver.list(None, limit=10))
    assert [t.config["configurable"]["checkpoint_id"] for t in listed] == sorted(
        [c["configurable"]["checkpoint_id"] for c in root + sub + other], reverse=True
    )
    assert {t.config["configurable"]["thread_id"] for t in listed} == {"a", "b"}
    assert {t.config["configurable"]["checkpoint_ns"] for t in listed} == {"", "child"}
    assert only in [t.config["configurable"]["checkpoint_id"] for t in listed]


def test_a_damaged_index_file_is_rebuilt_from_the_log(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    with ZaxyCheckpointer.from_path(root) as writer:
        for thread in ("a", "b", "c"):
            chain(writer, thread, 2)
        expected = everything_newest_first(writer, ["a", "b", "c"])
        assert ids(writer, None) == expected  # builds the index file
    files = list(root.rglob("checkpoints/*.sqlite3"))
    assert len(files) == 1
    files[0].write_bytes(b"not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{files[0]}{suffix}").unlink(missing_ok=True)
    with ZaxyCheckpointer.from_path(root) as cold:
        assert ids(cold, None) == expected


def test_change_tokens_match_change_token(elog) -> None:
    for session in ("idx.a", "idx.b", "idx.b", "other.c"):
        elog.append(session, "note.added", {"text": session})
    tokens = elog.change_tokens("idx.")
    assert tokens == {session: elog.change_token(session) for session in ("idx.a", "idx.b")}
    elog.append("idx.a", "note.added", {"text": "more"})
    assert elog.change_tokens("idx.")["idx.a"] == elog.change_token("idx.a") != tokens["idx.a"]


@pytest.mark.parametrize("limit", [1, 3])
def test_limit_counts_only_live_checkpoints(saver: ZaxyCheckpointer, limit: int) -> None:
    chain(saver, "keep", 3)
    gone = chain(saver, "gone", 3)
    saver.delete_thread("gone")
    listed = ids(saver, None, limit=limit)
    assert len(listed) == limit and not set(listed) & {c["configurable"]["checkpoint_id"] for c in gone}


def test_replay_sessions_matches_replay_envelopes(elog) -> None:
    for n in range(3):
        for session in ("bulk.a", "bulk.b"):
            elog.append(session, "note.added", {"text": f"{session} {n}"})
    found = elog.replay_sessions(["bulk.b", "bulk.a", "bulk.b", "bulk.none"])
    assert list(found) == ["bulk.b", "bulk.a", "bulk.none"]
    for session in ("bulk.a", "bulk.b"):
        assert found[session] == list(elog.replay_envelopes(session))
    assert found["bulk.none"] == []


def test_change_tokens_treat_the_prefix_literally(elog) -> None:
    """A prefix is a plain string: ``_`` is not a wildcard (PostgreSQL reads it with starts_with, not LIKE)."""
    for session in ("a_b.x", "aXb.y"):
        elog.append(session, "note.added", {"text": session})
    assert set(elog.change_tokens("a_b.")) == {"a_b.x"}


def test_a_cold_list_reads_the_threads_it_returns_together(eventloom: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a log whose change tokens are heads (PostgreSQL), a cold ``list(None, limit=n)`` reads its n threads in
    one bulk read and asks no thread for its head again: two queries, not two per thread."""
    threads = [f"t{n}" for n in range(8)]
    with ZaxyCheckpointer.from_path(eventloom) as writer:
        for thread in threads:
            chain(writer, thread, 2)
        expected = everything_newest_first(writer, threads)
    with ZaxyCheckpointer.from_path(eventloom) as first:
        assert ids(first, None) == expected  # builds the index (reads every thread once)
    with ZaxyCheckpointer.from_path(eventloom) as cold:
        log = cold._store.views.log
        calls: dict[str, list[object]] = {"bulk": [], "replay": [], "token": []}
        for name, key in (("replay_sessions", "bulk"), ("replay_envelopes", "replay"), ("change_token", "token")):
            original = getattr(log, name)

            def counted(*args, _original=original, _key=key, **kwargs):
                calls[_key].append(args[0])
                return _original(*args, **kwargs)

            monkeypatch.setattr(log, name, counted)
        assert ids(cold, None, limit=5) == expected[:5]
        heads = all(isinstance(token, tuple) and isinstance(token[1], str) for token in log.change_tokens("").values())
        if heads:
            # two checkpoints per thread: the newest five are those of the three newest threads
            assert [sorted(c) for c in calls["bulk"]] == [sorted(cold._store.session_of(t) for t in threads[-3:])]
            assert [c for c in calls["replay"] if str(c).startswith("langgraph.")] == []
            assert [c for c in calls["token"] if str(c).startswith("langgraph.")] == []
        # Later reads of those threads still follow the log (another writer's checkpoint is seen).
        with ZaxyCheckpointer.from_path(eventloom) as other:
            newest = chain(other, "t0", 1)[-1]["configurable"]["checkpoint_id"]
        assert ids(cold, config("t0"), limit=1) == [newest]
        assert ids(cold, None, limit=1) == [newest]
