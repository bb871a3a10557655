"""Ingest a folder of Markdown notes as ``document.chunk`` events: one chunk per ``##`` section.

Each chunk carries its source path, index, title, line range and a checksum, so answers can cite the exact
section and re-ingesting unchanged notes writes nothing (a changed section gets a new version that
supersedes the old one).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from zaxy_agents.fabric import MemoryFabric


def chunks(path: Path, relative: str) -> list[dict]:
    lines = path.read_text(encoding="utf-8").splitlines()
    title = next((line[2:].strip() for line in lines if line.startswith("# ")), relative)
    found, start = [], None
    for number, line in enumerate([*lines, "## "], start=1):
        if line.startswith("## "):
            if start is not None:
                heading, text = lines[start - 1][3:].strip(), " ".join(lines[start : number - 1]).strip()
                found.append(
                    {
                        "source_path": relative,
                        "chunk_index": len(found),
                        "title": f"{title} / {heading}",
                        "text": text,
                        "line_start": start,
                        "line_end": number - 1,
                        "checksum": hashlib.sha256(text.encode()).hexdigest(),
                    }
                )
            start = number
    return found


def ingest(memory: MemoryFabric, folder: Path, session: str) -> int:
    """Append the chunks not already in ``session``; returns how many were new."""
    known = set()
    if memory.log.has_session(session):
        known = {e.payload.get("checksum") for e in memory.replay(session) if e.type == "document.chunk"}
    new = [
        {"type": "document.chunk", "payload": chunk, "actor": "ingest"}
        for path in sorted(folder.glob("*.md"))
        for chunk in chunks(path, f"{folder.name}/{path.name}")
        if chunk["checksum"] not in known
    ]
    if new:
        memory.append_many(session, new)
    return len(new)
