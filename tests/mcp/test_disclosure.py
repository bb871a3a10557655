"""Progressive disclosure over a real stdio client: search an index, look around a hit, open only what is needed."""

from __future__ import annotations

from pathlib import Path

from tests.mcp._client import StdioClient, serve_params
from zaxy_agents.fabric import MemoryFabric


def seed(path: Path) -> None:
    with MemoryFabric.from_path(path) as fabric:
        drafts = [{"type": "note.added", "payload": {"text": f"routine note {i}"}} for i in range(8)]
        drafts.append({"type": "decision.recorded", "payload": {"decision": "Cap payment retries at five"}})
        drafts += [{"type": "note.added", "payload": {"text": f"later note {i}", "blob": "x" * 400}} for i in range(4)]
        fabric.append_many("proj", drafts)


def test_search_timeline_get_with_token_costs(tmp_path: Path) -> None:
    loom = tmp_path / "loom"
    seed(loom)
    with StdioClient(serve_params(loom, "--session-id", "proj", "--no-share")) as client:
        index = client.ok("memory_search", {"query": "payment retries", "k": 5})
        top = index["hits"][0]
        assert top["type"] == "decision.recorded" and top["title"] == "Cap payment retries at five"
        assert top["id"].startswith("eventloom://proj/events/9#") and top["tokens"] > 0
        assert index["tokens_to_open_all"] == sum(hit["tokens"] for hit in index["hits"])
        assert "payload" not in top  # the index never carries the events themselves

        timeline = client.ok("memory_timeline", {"id": top["id"], "before": 2, "after": 2})
        assert [row["seq"] for row in timeline["events"]] == [7, 8, 9, 10, 11]
        assert [row["anchor"] for row in timeline["events"]] == [False, False, True, False, False]
        assert timeline["has_earlier"] and timeline["has_later"]

        later = [row["id"] for row in timeline["events"][3:]]
        opened = client.ok("memory_get", {"ids": [top["id"], *later]})
        assert [event["type"] for event in opened["events"]] == ["decision.recorded", "note.added", "note.added"]
        assert opened["events"][0]["payload"] == {"decision": "Cap payment retries at five"}
        assert opened["events"][0]["tokens"] == top["tokens"] and opened["tokens"] == sum(
            event["tokens"] for event in opened["events"]
        )
        budget = client.ok("memory_get", {"ids": [top["id"], *later], "max_tokens": top["tokens"] + 5})
        assert [e["id"] for e in budget["events"]] == [top["id"]] and budget["not_returned"] == later

        log = loom / "proj.jsonl"
        log.write_text(log.read_text().replace("Cap payment retries at five", "Cap payment retries at fifty"))
        tampered = client.ok("memory_get", {"ids": [top["id"], "eventloom://proj/events/999#abcdefabcdef"]})
        assert tampered["events"] == []
        assert [error["code"] for error in tampered["errors"]] == ["integrity_error", "not_found"]
        assert "not served" in tampered["errors"][0]["message"]
