"""Reading LoCoMo-format files: conversations, turns, questions, and gold evidence normalisation.

Format: a JSON list; each item has ``sample_id``, ``conversation`` (``speaker_a``, ``speaker_b``, ``session_N``
lists of turns ``{speaker, dia_id, text, blip_caption?, query?}`` and ``session_N_date_time`` strings like
"1:56 pm on 8 May, 2023") and ``qa`` (``{question, answer | adversarial_answer, evidence: [dia_id...],
category}``). A turn's ``query`` (the image-search string the dataset's authors used to find its photo) is
ignored: a real memory would not hold it. Some evidence ids are malformed (``D8:6; D9:17``, stray spaces) or
point to missing turns: they are normalised where possible, otherwise skipped and counted.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from zaxy_agents.errors import InvalidRequestError

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_ID = re.compile(r"^D\s*:?\s*(\d+)\s*:\s*(\d+)$")
_SESSION_KEY = re.compile(r"^session_(\d+)$")


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None
    segment: str
    occurred_at: str | None


@dataclass
class Question:
    text: str
    gold: list[str]
    category: int


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    stats: Counter = field(default_factory=Counter)


def parse_session_date(text: str | None) -> str | None:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00.000000Z' (None when unparseable)."""
    if not text:
        return None
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            moment = datetime.strptime(text.strip(), pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return None


def load_conversations(path: str | Path) -> list[Conversation]:
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidRequestError(
            f"cannot read LoCoMo file {path}: {exc}",
            field="dataset",
            remediation="Pass a JSON file in the LoCoMo format (a list of conversations with 'qa').",
        ) from exc
    if not isinstance(raw, list):
        raise InvalidRequestError(
            "a LoCoMo file is a JSON list of conversations",
            field="dataset",
            remediation="Check the file format (see docs/benchmarks.md).",
        )
    return [_conversation(item, index) for index, item in enumerate(raw)]


def _conversation(item: dict, index: int) -> Conversation:
    try:
        conversation = item["conversation"]
        sample_id = str(item.get("sample_id", f"conv-{index}"))
        numbers = sorted(
            int(m.group(1))
            for key, value in conversation.items()
            if (m := _SESSION_KEY.match(key)) and isinstance(value, list)
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise InvalidRequestError(
            f"item {index} is not a LoCoMo conversation: {exc}",
            field=f"dataset[{index}]",
            remediation="Each item needs 'conversation' with session_N turn lists.",
        ) from exc
    turns = []
    for number in numbers:
        when = parse_session_date(conversation.get(f"session_{number}_date_time"))
        for turn in conversation[f"session_{number}"]:
            # Only what a real memory would hold: the turn's text and its image caption. The dataset's ``query``
            # field (the image-search string its authors used to find the photo) is left out: it was worth +0.007
            # R@10 on the dev six, and no agent's memory would have it.
            caption = turn.get("blip_caption") or None
            turns.append(
                Turn(
                    str(turn["dia_id"]),
                    str(turn.get("speaker", "")),
                    str(turn.get("text", "")),
                    str(caption) if caption else None,
                    f"session_{number}",
                    when,
                )
            )
    known = {turn.dia_id for turn in turns}
    stats: Counter = Counter()
    questions = []
    for qa in item.get("qa", []):
        gold = _normalise_evidence(qa.get("evidence", []), known, stats)
        category = int(qa.get("category", 0))
        if not gold:
            stats[f"questions_without_valid_evidence_cat{category}"] += 1
            continue
        questions.append(Question(str(qa["question"]), gold, category))
    return Conversation(sample_id, turns, questions, stats)


def _normalise_evidence(evidence: list, known: set[str], stats: Counter) -> list[str]:
    gold: list[str] = []
    for entry in evidence:
        for piece in re.split(r"[;,\s]+(?=D)", str(entry).strip()):
            piece = piece.strip()
            if not piece:
                continue
            match = _ID.match(piece)
            if match is None:
                stats["evidence_malformed_skipped"] += 1
                continue
            normal = f"D{int(match.group(1))}:{int(match.group(2))}"
            if normal != piece:
                stats["evidence_normalised"] += 1
            if normal not in known:
                stats["evidence_missing_turn_skipped"] += 1
                continue
            if normal not in gold:
                gold.append(normal)
    return gold
