"""The Eventloom contract: what every backend's log must do, byte for byte like the reference."""

from __future__ import annotations

import json
import threading

from zaxy_agents.errors import ConflictError, InvalidRequestError, NotFoundError, ZaxyError
from zaxy_agents.eventloom.canonical import GENESIS_HASH
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.protocol import EventLog, LogCapability

from .core import Check, Subject, expect, opened, overridden
from .sample import SESSIONS, copy_log, write_sample


def append_and_replay(subject: Subject) -> None:
    with subject.fresh() as harness, opened(harness) as log:
        expect(log.head("s") is None and not log.has_session("s"), "a new location must hold no session")
        first = log.append("s", "note.added", {"text": "hello"})
        more = log.append_many("s", [{"type": "note.added", "payload": {"n": n}} for n in range(4)])
        expect([first.seq, *[e.seq for e in more]] == [1, 2, 3, 4, 5], "seqs must be 1..n in append order")
        expect(more[0].prev_hash == first.hash and first.prev_hash == GENESIS_HASH, "events must chain by hash")
        replayed = list(log.replay("s"))
        expect([e.hash for e in replayed] == [first.hash, *[e.hash for e in more]], "replay returns what was appended")
        expect([e["seq"] for e in log.replay_envelopes("s", 2, 3)] == [2, 3], "replay ranges are inclusive")
        lines = list(log.replay_lines("s"))
        expect(all(line.endswith(b"\n") for line in lines), "stored lines end with a newline")
        expect([json.loads(line)["hash"] for line in lines] == [e.hash for e in replayed], "lines hold the events")
        expect(log.get("s", 3).hash == more[1].hash, "get returns the event at a seq")
        head = log.head("s")
        expect(head is not None and (head.seq, head.hash) == (5, more[-1].hash), "head is the last event")
        expect(log.has_session("s") and [s.session for s in log.sessions()] == ["s"], "sessions lists the session")
        expect(log.sessions()[0].event_count == 5, "sessions counts events")


def atomic_validation(subject: Subject) -> None:
    with subject.fresh() as harness, opened(harness) as log:
        log.append("s", "note.added", {"n": 0})
        for bad in ({"type": "Bad Type", "payload": {}}, {"type": "note.added", "payload": "not an object"}):
            try:
                log.append_many("s", [{"type": "note.added", "payload": {"n": 1}}, bad])
            except InvalidRequestError as error:
                expect(bool(error.field), "a refused draft names its field")
            else:
                raise AssertionError(f"append_many accepted an invalid draft {bad!r}")
        expect(len(list(log.replay("s"))) == 1, "a batch with one bad draft writes nothing")
        for session in ("", "a/b", "x" * 200):
            try:
                log.append(session, "note.added", {})
            except InvalidRequestError:
                continue
            raise AssertionError(f"session id {session!r} was accepted")


def citations(subject: Subject) -> None:
    with subject.fresh() as harness, opened(harness) as log:
        event = log.append("s", "note.added", {"text": "cite me"})
        expect(event.citation.startswith("eventloom://s/events/1#"), "citations name session and seq")
        expect(log.resolve(event.citation).hash == event.hash, "a citation resolves to its event")
        wrong = parse_citation(event.citation)
        forged = f"eventloom://s/events/1#{'0' * len(wrong.hash_prefix)}"
        for citation in (
            forged,
            "eventloom://s/events/9#" + event.hash[:12],
            "eventloom://nobody/events/1#abc123abc123",
        ):
            try:
                log.resolve(citation)
            except NotFoundError:
                continue
            raise AssertionError(f"{citation} resolved although it names no matching event")


def verify_and_tamper(subject: Subject) -> None:
    with subject.fresh() as harness, opened(harness) as log:
        log.append_many("s", [{"type": "note.added", "payload": {"n": n}} for n in range(3)])
        report = log.verify("s")
        expect(report.ok and report.event_count == 3, f"an intact log verifies: {report}")
        try:
            log.verify("missing")
        except NotFoundError:
            pass
        else:
            raise AssertionError("verify of a missing session must raise NotFoundError")
        lines = harness.stored_lines("s")  # NotSupported (a skip) when the harness cannot tamper
        envelope = json.loads(lines[1])
        envelope["payload"] = {"n": 99}
        harness.replace_line("s", 2, json.dumps(envelope, separators=(",", ":"), sort_keys=True).encode())
        with opened(harness) as reopened:
            broken = reopened.verify("s")
        expect(not broken.ok and broken.first_broken_seq == 2, f"a changed payload is detected at its seq: {broken}")


def import_export(subject: Subject) -> None:
    with subject.reference() as reference, subject.fresh() as harness, opened(harness) as target:
        source = reference.backend().open_log()
        write_sample(source)
        copy_log(source, target)
        for session in SESSIONS:
            expect(list(target.replay_lines(session)) == list(source.replay_lines(session)), "imports are byte-exact")
            expect(target.verify(session).ok, "an imported session verifies")
        extra = source.append(SESSIONS[0], "note.added", {"after": "import"})
        head = target.head(SESSIONS[0])
        assert head is not None
        tail = [(json.loads(line), line) for line in source.replay_lines(SESSIONS[0], head.seq + 1)]
        if LogCapability.CONTINUE_IMPORT in target.capabilities:
            expect(target.import_lines(SESSIONS[0], tail, (head.seq, head.hash)) == 1, "continuing imports the tail")
            expect(target.get(SESSIONS[0], extra.seq).hash == extra.hash, "the continued event is stored")
        else:
            try:
                target.import_lines(SESSIONS[0], tail, (head.seq, head.hash))
            except ConflictError:
                pass
            else:
                raise AssertionError("without continue_import, importing into an existing session must conflict")


def optional_defaults(subject: Subject) -> None:
    """The optional methods answer correctly whether or not the backend overrides them."""
    with subject.fresh() as harness, opened(harness) as log:
        expect(log.change_token("s") is None, "a missing session has no change token")
        first = log.append("s", "note.added", {"n": 1})
        token = log.change_token("s")
        log.append("s", "note.added", {"n": 2})
        expect(log.change_token("s") not in (None, token), "the change token changes with every append")
        keys = [("s", 1), ("s", 2), ("s", 3), ("nobody", 1)]
        found = log.hashes_and_types(keys)
        expect(found.get(("s", 1)) == (first.hash, "note.added"), "hashes_and_types returns (hash, type)")
        expect(set(found) == {("s", 1), ("s", 2)}, "hashes_and_types leaves out what does not exist")
        written = log.last_written("s")
        expect(written is None or written[1] == 2, "last_written names the last seq this process wrote")
        expect(log.max_payload_bytes >= 1024, "max_payload_bytes is declared")


def concurrent_appends(subject: Subject) -> None:
    with subject.fresh() as harness, opened(harness) as log:
        errors: list[BaseException] = []

        def writer(name: str) -> None:
            try:
                for n in range(25):
                    log.append("s", "note.added", {"writer": name, "n": n})
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(name,)) for name in "ab"]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        expect(not errors, f"concurrent appends failed: {errors!r}")
        report = log.verify("s")
        expect(report.ok and report.event_count == 50, f"two threads' appends form one intact chain: {report}")


def declared_log_capabilities(subject: Subject) -> None:
    with subject.fresh() as harness, opened(harness) as log:
        methods = {LogCapability.CHANGE_TOKEN: "change_token", LogCapability.BULK_HASHES: "hashes_and_types"}
        for capability, method in methods.items():
            if capability in log.capabilities:
                expect(overridden(log, EventLog, method), f"{capability} is declared but {method} is not overridden")
        try:
            log.append("s", "note.added", {"x": "y" * (log.max_payload_bytes + 1)})
        except ZaxyError:
            pass
        else:
            raise AssertionError("a payload over max_payload_bytes must be refused")


CHECKS = (
    Check("log.append_and_replay", append_and_replay),
    Check("log.atomic_validation", atomic_validation),
    Check("log.citations", citations),
    Check("log.verify_and_tamper", verify_and_tamper),
    Check("log.import_export", import_export),
    Check("log.optional_defaults", optional_defaults),
    Check("log.concurrent_appends", concurrent_appends),
    Check("log.declared_capabilities", declared_log_capabilities),
)
