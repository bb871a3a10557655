"""Hash spec 2 and atomic batches (#25.4, #25.9).

* Logs written with hash spec 1 (before erasure existed) still verify, replay and take appends, and the
  documented stand-alone verifier accepts the mixed log.
* ``append_many`` on the embedded backend is all or nothing after a real SIGKILL mid-batch: readers never see
  part of a batch, the next writer sets the unacknowledged part aside, and retrying the batch writes it once.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from tests.conftest import REPO_ROOT, run_zaxy_json
from tests.eventloom.test_docs_verifier import _doc_verifier
from zaxy_agents.eventloom.canonical import GENESIS_HASH, encode_line, event_hash
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog
from zaxy_agents.storage.files.torn_tail import TORN_DIR_NAME, TORN_RECOVERY_TYPE


def _spec1_log(path: Path, session: str, count: int) -> list[dict]:
    """A log exactly as the code before hash spec 2 wrote it (no spec, no salt, hash over the envelope)."""
    prev, envelopes = GENESIS_HASH, []
    for seq in range(1, count + 1):
        envelope = {
            "actor": "agent",
            "id": f"evt_{seq:032x}",
            "payload": {"fact": f"legacy fact {seq}", "key": f"k{seq}"},
            "prev_hash": prev,
            "seq": seq,
            "session": session,
            "timestamp": f"2025-01-01T00:00:{seq:02d}.000000Z",
            "type": "fact.asserted",
        }
        envelope["hash"] = prev = event_hash(envelope)
        envelopes.append(envelope)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(encode_line(envelope) for envelope in envelopes))
    return envelopes


def test_a_spec_1_log_verifies_replays_and_continues_with_spec_2(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    legacy = _spec1_log(root / "old.jsonl", "old", 3)
    env = {"ZAXY_EVENTLOOM_PATH": str(root)}
    code, report = run_zaxy_json("verify", "-s", "old", env=env)
    assert code == 0 and report["ok"] and report["event_count"] == 3
    code, body = run_zaxy_json("replay", "-s", "old", env=env)
    assert [e["hash"] for e in body["events"]] == [e["hash"] for e in legacy]
    code, body = run_zaxy_json(
        "append", "-s", "old", "-t", "fact.asserted", "-a", "me", "-p", '{"fact": "new"}', env=env
    )
    assert code == 0 and body["event"]["spec"] == 2 and body["event"]["prev_hash"] == legacy[-1]["hash"]
    code, packet = run_zaxy_json("memory", "checkout", "legacy fact 2", "-s", "old", env=env)
    assert code == 0 and "legacy fact 2" in packet["prompt"]
    with JsonlEventLog(root) as log:
        assert log.verify("old").ok and log.resolve(packet["evidence"][0]["citation"])
    _doc_verifier()(root / "old.jsonl", "old")


def _kill_batch_writers(root: Path, rounds: int, seed: int) -> list[int]:
    """Kill a batch writer mid-write ``rounds`` times (round r numbers its batches from 1000 r + 1); after each
    kill, a reader (no writer has recovered yet) must see whole batches only. Returns the acknowledged batches."""
    rng = random.Random(seed)
    acknowledged: list[int] = []
    for round_ in range(rounds):
        start = str(1000 * round_)
        writer = [sys.executable, "-m", "tests.eventloom._batch_writer", str(root), start]
        child = subprocess.Popen(writer, stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT)
        assert child.stdout is not None
        first = child.stdout.readline()
        time.sleep(rng.uniform(0.02, 0.15))
        child.send_signal(signal.SIGKILL)
        output, _ = child.communicate()
        acknowledged += [int(line.split()[0]) for line in (first + output).splitlines() if line.strip()]
        with JsonlEventLog(root) as reader:
            counts = Counter(e.payload["batch"] for e in reader.replay("batches") if e.type == "note.added")
            assert set(counts.values()) <= {10}, counts
            assert set(acknowledged) <= set(counts), "an acknowledged batch is missing"
    return acknowledged


def test_a_batch_killed_mid_write_is_never_half_visible_and_the_retry_writes_it_once(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    acknowledged = _kill_batch_writers(root, rounds=6, seed=7)
    killed = max(acknowledged) + 1  # the batch the last writer was writing when it was killed
    with JsonlEventLog(root) as log:
        if killed not in {e.payload.get("batch") for e in log.replay("batches")}:
            log.append_many(
                "batches", [{"type": "note.added", "payload": {"batch": killed, "i": i}} for i in range(10)]
            )
        events = list(log.replay("batches"))
        assert log.verify("batches").ok
    counts = Counter(e.payload["batch"] for e in events if e.type == "note.added")
    assert set(counts.values()) == {10} and counts[killed] == 10
    recoveries = [e for e in events if e.type == TORN_RECOVERY_TYPE]
    assert recoveries, "the kills should have cut at least one batch short"
    for record in recoveries:
        assert len((root / record.payload["sidecar"]).read_bytes()) == record.payload["torn_bytes"]
    assert all(path.suffix == ".torn" for path in (root / TORN_DIR_NAME).iterdir())
