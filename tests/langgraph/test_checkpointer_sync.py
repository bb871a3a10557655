"""Every sync path of ZaxyCheckpointer (the conformance suite drives only the async ones), plus its log format."""

from __future__ import annotations

import datetime as dt
import itertools
from uuid import uuid4

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer


def checkpoint(values: dict | None = None, versions: dict | None = None) -> dict:
    cp = empty_checkpoint()
    cp["id"] = str(uuid6(clock_seq=-1))
    cp["channel_values"] = dict(values or {})
    cp["channel_versions"] = dict(versions or {k: 1 for k in values or {}})
    return cp


def config(thread: str, ns: str = "", checkpoint_id: str | None = None) -> dict:
    configurable = {"thread_id": thread, "checkpoint_ns": ns}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def chain(saver: ZaxyCheckpointer, thread: str, n: int, *, ns: str = "", run_id: str | None = None) -> list[dict]:
    stored, parent = [], None
    for step in range(n):
        cp = checkpoint({"step": step}, {"step": saver.get_next_version(None, None)})
        metadata = {"source": "loop", "step": step, "parents": {}, **({"run_id": run_id} if run_id else {})}
        parent = saver.put(
            config(thread, ns, parent["configurable"]["checkpoint_id"] if parent else None),
            cp,
            metadata,
            cp["channel_versions"],
        )
        stored.append(parent)
    return stored


def ids(saver: ZaxyCheckpointer, cfg: dict | None, **kwargs) -> list[str]:
    return [t.config["configurable"]["checkpoint_id"] for t in saver.list(cfg, **kwargs)]


def test_put_and_get_tuple_round_trip(saver: ZaxyCheckpointer) -> None:
    cp = checkpoint({"msg": "hello", "n": 42, "data": {"nested": [1, 2]}, "raw": b"\x00\x01"})
    stored = saver.put(config("t"), cp, {"source": "input", "step": -1, "custom": "x"}, cp["channel_versions"])
    assert stored == config("t", "", cp["id"])
    tup = saver.get_tuple(stored)
    assert tup.checkpoint["channel_values"] == {"msg": "hello", "n": 42, "data": {"nested": [1, 2]}, "raw": b"\x00\x01"}
    assert tup.checkpoint["id"] == cp["id"] and tup.checkpoint["channel_versions"] == cp["channel_versions"]
    assert tup.metadata == {"source": "input", "step": -1, "custom": "x"}
    assert tup.parent_config is None and tup.pending_writes == []
    assert saver.get_tuple(config("t")).checkpoint["id"] == cp["id"]  # latest without an id
    assert saver.get_tuple(config("t", "", str(uuid4()))) is None
    assert saver.get_tuple(config("other")) is None
    assert saver.get(stored)["id"] == cp["id"]


def test_unchanged_channels_come_from_earlier_versions(saver: ZaxyCheckpointer) -> None:
    first = checkpoint({"a": "v1", "b": "v2"})
    s1 = saver.put(config("t"), first, {}, {"a": 1, "b": 1})
    second = checkpoint({"a": "v1b", "b": "v2"}, {"a": 2, "b": 1})
    s2 = saver.put(config("t", "", first["id"]), second, {}, {"a": 2})
    third = checkpoint({"a": "v1b"}, {"a": 2})  # b dropped from the versions
    s3 = saver.put(config("t", "", second["id"]), third, {}, {})
    assert saver.get_tuple(s2).checkpoint["channel_values"] == {"a": "v1b", "b": "v2"}
    assert saver.get_tuple(s1).checkpoint["channel_values"] == {"a": "v1", "b": "v2"}
    assert saver.get_tuple(s3).checkpoint["channel_values"] == {"a": "v1b"}
    assert saver.get_tuple(s3).parent_config["configurable"]["checkpoint_id"] == second["id"]


def test_list_filters_before_limit_and_namespaces(saver: ZaxyCheckpointer) -> None:
    stored = chain(saver, "t", 4)
    all_ids = [s["configurable"]["checkpoint_id"] for s in stored]
    assert ids(saver, config("t")) == all_ids[::-1]
    assert ids(saver, config("t"), limit=2) == all_ids[::-1][:2]
    assert ids(saver, config("t"), before=stored[2]) == all_ids[:2][::-1]
    assert ids(saver, config("t"), filter={"step": 1}) == [all_ids[1]]
    assert ids(saver, config("t"), filter={"source": "loop", "step": 9}) == []
    assert ids(saver, config("t", "", all_ids[3])) == [all_ids[3]]
    child = chain(saver, "t", 1, ns="child:1")
    assert ids(saver, config("t", "child:1")) == [child[0]["configurable"]["checkpoint_id"]]
    assert len(ids(saver, {"configurable": {"thread_id": "t"}})) == 5  # no namespace given: all of them
    chain(saver, "t2", 2)
    assert len(ids(saver, None)) == 7  # every thread
    assert len(ids(saver, None, limit=3)) == 3


def test_put_writes_idempotent_special_channels_and_order(saver: ZaxyCheckpointer) -> None:
    stored = chain(saver, "t", 1)[0]
    saver.put_writes(stored, [("b", 2), ("a", 1)], "task-2", "path:2")
    saver.put_writes(stored, [("b", 2), ("a", 1)], "task-2", "path:2")  # a retried task
    saver.put_writes(stored, [("c", {"x": 1})], "task-1", "path:1")
    saver.put_writes(stored, [(ERROR, "boom"), (INTERRUPT, {"why": "human"})], "task-3")
    saver.put_writes(stored, [(ERROR, "boom again")], "task-3")  # special channels overwrite
    writes = saver.get_tuple(stored).pending_writes
    assert writes == [
        ("task-3", INTERRUPT, {"why": "human"}),
        ("task-3", ERROR, "boom again"),
        ("task-1", "c", {"x": 1}),
        ("task-2", "b", 2),
        ("task-2", "a", 1),
    ]
    nxt = checkpoint({"step": 1}, {"step": 2})
    saver.put(stored, nxt, {}, {"step": 2})
    assert saver.get_tuple(config("t")).pending_writes == []


def test_delete_thread_erases_the_thread_and_records_it(saver: ZaxyCheckpointer) -> None:
    stored = chain(saver, "t", 3)
    saver.put_writes(stored[-1], [("ch", 1)], "task")
    chain(saver, "keep", 1)
    session = saver.session_of("t")
    before = saver.fabric.head(session).seq
    saver.delete_thread("t")
    assert saver.get_tuple(config("t")) is None and ids(saver, config("t")) == []
    assert saver.get_tuple(config("keep")) is not None
    events = list(saver.fabric.replay(session))
    assert [e.type for e in events[-2:]] == ["checkpoint.thread_deleted", "eventloom.erased"]
    assert len(events) == before + 2 and all(e.erased and e.payload == {} for e in events[:-1])  # content gone
    assert saver.fabric.verify(session).ok
    saver.delete_thread("t")  # nothing left: no new event
    saver.delete_thread("never-existed")
    assert saver.fabric.head(session).seq == before + 2
    again = chain(saver, "t", 1)  # a deleted thread can start over
    assert ids(saver, config("t")) == [again[0]["configurable"]["checkpoint_id"]]


def test_delete_for_runs_across_threads_and_namespaces(saver: ZaxyCheckpointer) -> None:
    chain(saver, "t1", 2, run_id="run-a")
    kept = chain(saver, "t1", 1, run_id="run-b")
    chain(saver, "t2", 1, run_id="run-a")
    chain(saver, "t2", 1, ns="child:1", run_id="run-a")
    saver.delete_for_runs(["run-a", "run-missing"])
    assert ids(saver, config("t1")) == [kept[0]["configurable"]["checkpoint_id"]]
    assert ids(saver, {"configurable": {"thread_id": "t2"}}) == []
    saver.delete_for_runs([])
    last = list(saver.fabric.replay(saver.session_of("t2")))[-1]
    assert last.type == "checkpoint.runs_deleted" and last.payload["run_ids"] == ["run-a"]


def test_copy_thread_copies_chain_writes_and_namespaces(saver: ZaxyCheckpointer) -> None:
    stored = chain(saver, "src", 3)
    chain(saver, "src", 1, ns="child:1")
    saver.put_writes(stored[-1], [("ch", "w")], "task")
    saver.copy_thread("src", "dst")
    assert ids(saver, config("dst")) == ids(saver, config("src"))
    assert ids(saver, config("dst", "child:1")) == ids(saver, config("src", "child:1"))
    copy = saver.get_tuple(config("dst"))
    assert copy.checkpoint["channel_values"] == {"step": 2} and copy.pending_writes == [("task", "ch", "w")]
    assert copy.config["configurable"]["thread_id"] == "dst"
    assert copy.parent_config["configurable"]["checkpoint_id"] == stored[1]["configurable"]["checkpoint_id"]
    saver.copy_thread("nothing-here", "dst2")
    assert ids(saver, config("dst2")) == []
    saver.delete_thread("src")
    assert saver.get_tuple(config("dst")).checkpoint["channel_values"] == {"step": 2}  # independent copy


def test_copy_after_prune_still_resolves_every_channel(saver: ZaxyCheckpointer) -> None:
    first = checkpoint({"a": "v1", "b": "kept from the first checkpoint"}, {"a": 1, "b": 1})
    s1 = saver.put(config("src"), first, {}, {"a": 1, "b": 1})
    second = checkpoint({"a": "v2", "b": "kept from the first checkpoint"}, {"a": 2, "b": 1})
    saver.put(s1, second, {}, {"a": 2})
    saver.prune(["src"])
    saver.copy_thread("src", "dst")
    assert saver.get_tuple(config("dst")).checkpoint["channel_values"] == {
        "a": "v2",
        "b": "kept from the first checkpoint",
    }


def test_prune_strategies(saver: ZaxyCheckpointer) -> None:
    stored = chain(saver, "t", 4)
    saver.put_writes(stored[-1], [("ch", 1)], "task")
    chain(saver, "t", 2, ns="child:1")
    other = chain(saver, "other", 2)
    saver.prune(["t", "missing"], strategy="keep_latest")
    assert ids(saver, config("t")) == [stored[-1]["configurable"]["checkpoint_id"]]
    assert len(ids(saver, config("t", "child:1"))) == 1
    assert saver.get_tuple(config("t")).pending_writes == [("task", "ch", 1)]
    assert len(ids(saver, config("other"))) == len(other)
    saver.prune(["t"], strategy="delete")
    assert ids(saver, {"configurable": {"thread_id": "t"}}) == []
    saver.prune([])
    with pytest.raises(InvalidRequestError):
        saver.prune(["other"], strategy="newest")
    with pytest.raises(ValueError):
        saver.prune(["other"], strategy="newest")


def test_get_next_version_is_monotonic_and_fork_distinct(saver: ZaxyCheckpointer) -> None:
    first = saver.get_next_version(None, None)
    second = saver.get_next_version(first, None)
    assert first < second and second.startswith("0" * 31 + "2.")
    assert saver.get_next_version(first, None) != second  # forks of one version get distinct versions
    assert saver.get_next_version(7, None).startswith("0" * 31 + "8.")


def test_thread_ids_with_any_characters(saver: ZaxyCheckpointer) -> None:
    weird = ["user/42:chat #1", "ünïcödé ✓", "a" * 300, "..", "with.dot"]
    for thread in weird:
        chain(saver, thread, 1)
    for thread in weird:
        tup = saver.get_tuple(config(thread))
        assert tup.config["configurable"]["thread_id"] == thread
        session = saver.session_of(thread)
        assert saver.fabric.replay(session).__next__().payload["thread_id"] == thread
    assert len({saver.session_of(t) for t in weird}) == len(weird)
    assert saver.session_of("9f1c2d3e-uuid-like") == "langgraph.9f1c2d3e-uuid-like"
    listed = {t.config["configurable"]["checkpoint_id"] for t in saver.list(None)}
    assert len(listed) == len(weird)


def test_large_values_are_split_and_content_addressed(eventloom) -> None:
    with ZaxyCheckpointer.from_path(eventloom, max_payload_bytes=64 * 1024) as saver:
        big = "x" * 300_000
        cp = checkpoint({"big": big, "same": "v"})
        s1 = saver.put(config("t"), cp, {}, cp["channel_versions"])
        assert saver.get_tuple(s1).checkpoint["channel_values"]["big"] == big
        blobs = [e for e in saver.fabric.replay(saver.session_of("t")) if e.type == "checkpoint.blob"]
        assert len(blobs) > 3 and {e.payload["parts"] for e in blobs} == {len(blobs)}  # "same" is inline
        saver.put_writes(s1, [("huge", big)], "task")  # a write too large for one event becomes a blob
        assert saver.get_tuple(s1).pending_writes == [("task", "huge", big)]
        again = checkpoint({"same": "v"}, {"same": 2})
        before = saver.fabric.head(saver.session_of("t")).seq
        saver.put(s1, again, {}, {"same": 2})
        assert saver.fabric.head(saver.session_of("t")).seq == before + 1  # identical value: no new blob


def test_message_lists_are_stored_as_deltas(saver: ZaxyCheckpointer) -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    messages: list = []
    parent = None
    for i in range(20):
        messages = [*messages, HumanMessage(f"question {i}", id=f"h{i}"), AIMessage(f"answer {i}", id=f"a{i}")]
        cp = checkpoint({"messages": messages}, {"messages": i + 1})
        parent = saver.put(parent or config("t"), cp, {}, {"messages": i + 1})
    blobs = stored_blobs(saver, "t")
    assert [b["encoding"] for b in blobs] == ["full"] + ["append"] * 19
    assert all(b["base"] == prev["ref"] for prev, b in itertools.pairwise(blobs))
    assert all(len(b["data"]) < 800 for b in blobs[1:])  # each step stores only its two new messages
    fresh = ZaxyCheckpointer(MemoryFabric.from_path(saver.fabric.settings.eventloom_path))
    assert fresh.get_tuple(config("t")).checkpoint["channel_values"]["messages"] == messages
    history = [len(t.checkpoint["channel_values"]["messages"]) for t in fresh.list(config("t"))]
    assert history == list(range(40, 0, -2))
    fresh.fabric.close()


def stored_blobs(saver: ZaxyCheckpointer, thread: str) -> list[dict]:
    """Every blob written for ``thread`` in log order: blob events and values inlined in checkpoint events."""
    found = []
    for event in saver.fabric.replay(saver.session_of(thread)):
        if event.type == "checkpoint.blob":
            found.append(event.payload)
        elif event.type == "checkpoint.saved":
            found.extend({**c["inline"], "ref": c["blob"]} for c in event.payload["channels"] if "inline" in c)
    return found


def test_non_json_metadata_and_bodies_round_trip(saver: ZaxyCheckpointer) -> None:
    cp = checkpoint({"v": 1})
    cp["pending_sends"] = [dt.datetime(2026, 1, 1, tzinfo=dt.UTC)]  # not JSON: the body goes through the serde
    metadata = {"source": "loop", "step": 0, "when": dt.date(2026, 1, 2), "pair": (1, 2)}
    stored = saver.put(config("t"), cp, metadata, cp["channel_versions"])
    tup = saver.get_tuple(stored)
    assert tup.metadata["when"] == dt.date(2026, 1, 2)
    assert tup.checkpoint["pending_sends"] == cp["pending_sends"]
    assert ids(saver, config("t"), filter={"step": 0}) == [cp["id"]]


def test_other_process_checkpoints_are_seen(eventloom) -> None:
    with ZaxyCheckpointer.from_path(eventloom) as reader, ZaxyCheckpointer.from_path(eventloom) as writer:
        assert reader.get_tuple(config("t")) is None
        stored = chain(writer, "t", 2)
        assert reader.get_tuple(config("t")).config == stored[-1]
        chain(reader, "t", 1)
        assert len(ids(writer, config("t"))) == 3
        writer.delete_thread("t")
        assert reader.get_tuple(config("t")) is None


def test_with_allowlist_clone_shares_state(saver: ZaxyCheckpointer) -> None:
    clone = saver.with_allowlist([("my_module", "MyType")])
    stored = chain(saver, "t", 1)[0]
    assert clone.get_tuple(stored).checkpoint["channel_values"] == {"step": 0}


def test_encrypted_serde(eventloom) -> None:
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    class XorCipher:  # a stand-in for AES (pycryptodome is not installed): exercises the serde path only
        def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
            return "xor", bytes(b ^ 0x5A for b in plaintext)

        def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
            assert ciphername == "xor"
            return bytes(b ^ 0x5A for b in ciphertext)

    serde = EncryptedSerializer(XorCipher())
    with ZaxyCheckpointer.from_path(eventloom, serde=serde) as saver:
        cp = checkpoint({"secret": "the launch code is 1234"})
        stored = saver.put(config("t"), cp, {}, cp["channel_versions"])
        assert saver.get_tuple(stored).checkpoint["channel_values"] == {"secret": "the launch code is 1234"}
        raw = b"".join(saver.fabric.log.replay_lines(saver.session_of("t"))).decode()  # the stored bytes
    assert "launch code" not in raw and "bGF1bmNo" not in raw and "checkpoint.saved" in raw


def test_evicted_thread_views_are_replayed_on_demand(saver: ZaxyCheckpointer) -> None:
    saver._store.views.max_views = 2
    stored = {thread: chain(saver, thread, 2) for thread in ("a", "b", "c", "d")}
    assert len(saver._store.views._views) == 2
    for thread, configs in stored.items():
        assert saver.get_tuple(config(thread)).config == configs[-1]
    assert len(ids(saver, None)) == 8
