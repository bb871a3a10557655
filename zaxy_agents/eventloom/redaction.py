"""Secret redaction applied to payloads *before* hashing, so secrets never reach the log.

Two detectors: by key name (``password``, ``api_key``, ``github_token``, ...: the whole value is replaced)
and by value shape (OpenAI-style ``sk-`` keys, AWS access key ids, JWTs, PEM private keys, GitHub and Slack
tokens, ``Bearer`` credentials: only the matching span is replaced). The JSON paths that were redacted are
returned so the event's ``security`` block can record them. Stdlib only (hook fast path).
"""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

REDACTION_VERSION = 1
REDACTED = "[REDACTED]"

_SECRET_KEY = re.compile(
    r"(^|_)(password|passwd|passphrase|secret|token|api_?key|access_?key|secret_?key|private_?key|"
    r"auth_?token|authorization|credentials?|cookie|session_?token|refresh_?token|access_?token|"
    r"client_?secret|bearer)$"
)

_VALUE_PATTERN_SOURCES: tuple[tuple[str, str, int], ...] = (
    (
        "private_key",
        r"-----BEGIN (?:[A-Z0-9 ]+ )?PRIVATE KEY-----.*?(?:-----END (?:[A-Z0-9 ]+ )?PRIVATE KEY-----|$)",
        re.DOTALL,
    ),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}", 0),
    ("openai_key", r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}", 0),
    ("aws_access_key_id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", 0),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})", 0),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", 0),
    ("bearer", r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}", 0),
)


@functools.lru_cache(maxsize=1)
def _value_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Compiled on first use: most payloads never contain a marker, and compiling costs hook start-up."""
    return tuple((kind, re.compile(source, flags)) for kind, source, flags in _VALUE_PATTERN_SOURCES)


# Cheap pre-filter (one C-level scan): only strings containing a marker run the full regex set.
_MARKER = re.compile(r"-----BEGIN|eyJ|sk-|AKIA|ASIA|gh[pousr]_|github_pat_|xox|[Bb]earer|BEARER")


# Substrings that every _MARKER match contains (C-speed ``in`` checks on a payload's whole JSON text).
_MARKER_SUBSTRINGS = ("-----BEGIN", "eyJ", "sk-", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_")
_MARKER_SUBSTRINGS += ("github_pat_", "xox", "earer", "EARER")


def has_secret_keys(value: Any) -> bool:
    """Whether any object key in a JSON value names a credential; raises ``TypeError`` for a non-string key.

    With :func:`text_has_markers` this decides, without the path-building walk of :func:`redact_value`, that a
    payload needs no redaction at all (the common case): :func:`redact_value` can only change a payload that
    has a credential-like key or a string containing a marker.
    """
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for key, item in current.items():
                if not isinstance(key, str):
                    raise TypeError(f"object key {key!r} is not a string")
                if is_secret_key(key):
                    return True
                if isinstance(item, (dict, list)):
                    stack.append(item)
        else:
            stack.extend(item for item in current if isinstance(item, (dict, list)))
    return False


def text_has_markers(text: str) -> bool:
    """Whether a string (or a payload's whole JSON text) may contain a secret-shaped value."""
    return any(marker in text for marker in _MARKER_SUBSTRINGS)


def _normalise_key(key: str) -> str:
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key)
    return re.sub(r"[^a-z0-9]+", "_", snake.lower()).strip("_")


@functools.lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    """True when a key's name says its value is a credential (``apiKey``, ``db_password``...)."""
    return bool(_SECRET_KEY.search(_normalise_key(key)))


def redact_text(text: str) -> tuple[str, list[str]]:
    """Replace secret-shaped spans inside ``text``; returns the new text and the detector names that fired."""
    if _MARKER.search(text) is None:
        return text, []
    kinds: list[str] = []
    for kind, pattern in _value_patterns():
        text, count = pattern.subn(f"[REDACTED:{kind}]", text)
        if count:
            kinds.append(kind)
    return text, kinds


def redact_value(value: Any, path: str = "payload") -> tuple[Any, list[str]]:
    """Return a redacted copy of a JSON value and the list of redacted JSON paths.

    Untouched containers are returned as-is (no copy), which keeps the common no-secret case cheap. Raises
    ``TypeError`` for a non-string object key (the walk is the only full pass over the payload, so the check
    lives here).
    """
    if isinstance(value, str):
        new_text, kinds = redact_text(value)
        return (new_text, [path]) if kinds else (value, [])
    if isinstance(value, dict):
        paths: list[str] = []
        changed: dict[str, Any] | None = None
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"object key {key!r} at {path} is not a string")
            child_path = f"{path}.{key}"
            if isinstance(key, str) and is_secret_key(key) and item not in (None, "", REDACTED):
                new_item, child_paths = REDACTED, [child_path]
            else:
                new_item, child_paths = redact_value(item, child_path)
            if child_paths:
                paths.extend(child_paths)
                if changed is None:
                    changed = dict(value)
                changed[key] = new_item
        return (changed if changed is not None else value), paths
    if isinstance(value, list):
        paths = []
        changed_list: list[Any] | None = None
        for index, item in enumerate(value):
            new_item, child_paths = redact_value(item, f"{path}[{index}]")
            if child_paths:
                paths.extend(child_paths)
                if changed_list is None:
                    changed_list = list(value)
                changed_list[index] = new_item
        return (changed_list if changed_list is not None else value), paths
    return value, []
