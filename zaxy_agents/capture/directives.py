"""What a user asks an agent to remember is memory: "remember that X", "from now on, Y", "forget Z".

A prompt is recorded verbatim (``hook.user_prompt_submitted``); a sentence in it that is an explicit memory
directive also becomes a first-class fact, so it reaches the next session's packet and Memory Checkout like
any fact, cited, and is superseded like any fact:

* ``remember (that) …``, ``note (that) …``, ``keep in mind (that) …``, ``don't forget (that) …``,
  ``for future reference, …``, ``from now on, …``, ``going forward, …``, ``always …``, ``never …`` ->
  ``fact.asserted`` with ``origin: "user_prompt"``, ``directive`` (the trigger), the sentence as ``fact``
  and a ``key`` ``user.<subject>``: the words before the first ``is/are/uses/should/must/...``, or the whole
  statement. Saying it again about the same subject ("remember that staging is on port 5433" after "... on
  port 5432") supersedes the earlier one.
* ``forget (that|about) …`` / ``stop remembering …`` -> ``memory.invalidated`` of that key.

Deterministic and local (no model call); only sentences that start with a directive count, so ordinary
prompts never become facts. Stdlib only (hook fast path).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

ORIGIN = "user_prompt"
MAX_STATEMENT_CHARS = 1_000
MAX_KEY_WORDS = 8
_POLITE = r"(?:(?:please|pls|and|also|but|ok|okay|so)[,\s]+)*"
_REMEMBER = re.compile(
    rf"^{_POLITE}(?P<directive>remember|note|keep in mind|don'?t forget|do not forget|for future reference|"
    r"for the record|from now on|going forward|henceforth)\b[\s,:;-]*(?:that\s+)?(?P<body>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_RULE = re.compile(rf"^{_POLITE}(?P<directive>always|never)\b\s+(?P<body>.+)$", re.IGNORECASE | re.DOTALL)
_FORGET = re.compile(
    rf"^{_POLITE}(?P<directive>forget|stop remembering|no longer remember)\b[\s,:;-]*(?:that|about)?\s*(?P<body>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_COPULA = re.compile(
    r"\s(?:is|are|was|were|uses|use|lives|runs|means|should|must|needs|need|goes|has|have|=|:)\s", re.IGNORECASE
)
_UNSAFE = re.compile(r"[^a-z0-9]+")


def _key(subject: str) -> str:
    words = _UNSAFE.sub(" ", subject.lower()).split()
    words = [word for word in words if word not in ("the", "a", "an", "our", "my", "your", "that")] or words
    return "user." + "-".join(words[:MAX_KEY_WORDS])


def _subject(body: str) -> str:
    match = _COPULA.search(body)
    return body[: match.start()] if match and match.start() > 0 else body


def directives(prompt: object) -> list[tuple[str, dict[str, Any]]]:
    """``(event_type, payload)`` for every memory directive sentence in ``prompt`` (usually none)."""
    if not isinstance(prompt, str) or not prompt.strip():
        return []
    found: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    for raw in _SENTENCES.split(prompt.strip()):
        sentence = raw.strip().strip("\"'`*-• ").rstrip()
        if len(sentence) < 4:
            continue
        forget = _FORGET.match(sentence)
        if forget is not None:
            body = forget.group("body").strip().rstrip(".!")
            key = _key(_subject(body))
            if key != "user." and key not in seen:
                seen.add(key)
                found.append(
                    (
                        "memory.invalidated",
                        {"entity": key, "entity_type": "fact", "reason": f"the user said: {sentence[:300]}"},
                    )
                )
            continue
        match = _REMEMBER.match(sentence) or _RULE.match(sentence)
        if match is None:
            continue
        directive = match.group("directive").lower()
        body = match.group("body").strip()
        if not body or body.endswith("?"):
            continue  # "remember what we did?" is a question, not a directive
        statement = sentence if directive in ("always", "never") else body
        subject = statement if directive in ("always", "never") else _subject(body)
        key = _key(subject)
        if key == "user." or key in seen:
            continue
        seen.add(key)
        found.append(
            (
                "fact.asserted",
                {
                    "fact": statement[:MAX_STATEMENT_CHARS],
                    "key": key,
                    "origin": ORIGIN,
                    "directive": directive,
                },
            )
        )
    return found
