"""Secret redaction applied to payloads *before* hashing, so secrets never reach the log.

Two detectors:

* **by shape** (:mod:`.secret_rules`): vendor tokens (``sk-``, ``AKIA``, ``ghp_``, ``AIza``, ``sk_live_``, ...),
  private keys, JWTs, credentials inside URLs, ``Authorization`` headers, ``KEY=value`` assignments naming a
  credential (``.env`` content, shell exports, command output) and ``<private>...</private>`` spans: only the
  secret part of the matching span is replaced, by ``[REDACTED:<kind>]``;
* **by key name** (``password``, ``api_key``, ``github_token``, ...): the value is replaced by ``[REDACTED]`` —
  but only a *string that could be a credential*: an int, a boolean, an empty or placeholder value or a short
  plain word (``{"token": 42}``, ``{"token": "abc"}``, ``{"secret": "none"}``) is never changed.

Which detectors run is the **redaction policy**, per surface:

* ``standard`` (hooks, transcripts, MCP, CLI, the Python API): both detectors;
* ``values`` (the drop-in LangGraph store and checkpointer, whose ``checkpoint.*`` / ``store.*`` events default to
  it): shapes only, so key names never change a value and what was put reads back (filters keep matching);
* ``off``: nothing is redacted (data that must be stored verbatim; use encryption instead).

A surface sets its policy with ``with redaction_policy("values"): ...`` (``ZaxyStore(redaction=...)`` and
``ZaxyCheckpointer(redaction=...)`` do); ``ZAXY_REDACTION`` sets the process default for events of other types.
The JSON paths that were redacted are returned so the event's ``security`` block records them. Stdlib only on the
hook fast path: the rules are compiled on first use; a process that scans more than ``GATE_AFTER`` payloads adds an
Aho-Corasick gate (``ahocorasick_rs``) that skips the rules for a text none of them can fire on.
"""

from __future__ import annotations

import functools
import os
import re
from contextvars import ContextVar

from zaxy_agents.errors import InvalidRequestError

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

REDACTION_VERSION = 2
REDACTED = "[REDACTED]"
STANDARD, VALUES, OFF = "standard", "values", "off"
POLICIES = (STANDARD, VALUES, OFF)
ENV_REDACTION = "ZAXY_REDACTION"
DATA_TYPE_PREFIXES = ("checkpoint.", "store.")  # drop-in storage: values round-trip unless secret-shaped

_SECRET_KEY = re.compile(
    r"(^|_)(password|passwd|passphrase|secret|token|api_?key|access_?key|secret_?key|private_?key|"
    r"auth_?token|authorization|credentials?|cookie|session_?token|refresh_?token|access_?token|"
    r"client_?secret|bearer)$"
)
_WORD_CHAR = re.compile(r"[A-Za-z0-9_]")
_POLICY: ContextVar[str | None] = ContextVar("zaxy_redaction_policy", default=None)


def check_policy(name: object, *, field: str = "redaction") -> str:
    if name not in POLICIES:
        raise InvalidRequestError(
            f"unknown redaction policy {name!r}",
            field=field,
            remediation="Use 'standard' (key names and secret shapes), 'values' (secret shapes only) or 'off'.",
        )
    return str(name)


class redaction_policy:
    """Events appended inside this context (this thread or task, and the threads ``asyncio.to_thread`` starts from
    it) are redacted with the policy ``name``; ``None`` changes nothing. Use a fresh one per ``with``."""

    __slots__ = ("_name", "_token")

    def __init__(self, name: str | None) -> None:
        self._name = None if name is None else check_policy(name)
        self._token: Any = None

    def __enter__(self) -> None:
        if self._name is not None:
            self._token = _POLICY.set(self._name)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _POLICY.reset(self._token)
            self._token = None


def policy_for(event_type: str) -> str:
    """The policy an event of ``event_type`` is redacted with right now."""
    chosen = _POLICY.get()
    if chosen is not None:
        return chosen
    if event_type.startswith(DATA_TYPE_PREFIXES):
        return VALUES
    configured = os.environ.get(ENV_REDACTION, "").strip().lower()
    return check_policy(configured, field=ENV_REDACTION) if configured else STANDARD


@functools.lru_cache(maxsize=1)
def _rules() -> tuple[Any, ...]:
    """The rules, compiled on first use (compiling costs hook start-up; most payloads never need them)."""
    from .secret_rules import compile_rules

    return compile_rules()


GATE_AFTER = 64  # texts a process scans rule by rule before it builds the gate (a hook process scans one or two)
_scanned = [0]


@functools.lru_cache(maxsize=1)
def _gate() -> tuple[Any, Any, tuple[frozenset[str], ...]] | None:
    """Two Aho-Corasick matchers (the text, its lower-cased copy) of every string that a firing rule's markers or
    match must contain (:func:`.secret_rules.gate_needles`), and each rule's own needles: one pass over the text
    each instead of ~60 marker searches and ~40 pattern searches (redaction was two thirds of an append's CPU).
    ``None`` without ``ahocorasick_rs`` (then every text runs the rules; a single ``re`` alternation of the needles
    was slower than the searches it would replace)."""
    try:
        from ahocorasick_rs import AhoCorasick
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    from .secret_rules import gate_needles, rule_needles

    needles = gate_needles(_rules())
    if needles is None:
        return None
    plain, folded = needles
    matchers = AhoCorasick(list(plain)).find_matches_as_strings, AhoCorasick(list(folded)).find_matches_as_strings
    return (*matchers, tuple(rule_needles(rule) for rule in _rules()))


def _firing(text: str, lowered: str) -> tuple[Any, ...] | None:
    """The rules that can fire in ``text`` (``lowered`` is ``text.lower()``) as the gate tells them, or ``None``
    when the gate cannot (not built yet, or a text the matcher cannot take): then ``_fires`` decides rule by rule.
    Every occurrence of every needle is found (overlapping matches), so a marker rule fires exactly when one of its
    markers is among them; a pattern rule is run only when one of its leading literals is. The first
    ``GATE_AFTER`` texts of a process are not gated: building the gate costs more than a short-lived hook saves."""
    if _scanned[0] < GATE_AFTER:
        _scanned[0] += 1
        return None
    gate = _gate()
    if gate is None:
        return None
    plain_matches, folded_matches, needles = gate
    try:
        plain, folded = set(plain_matches(text, overlapping=True)), set(folded_matches(lowered, overlapping=True))
    except UnicodeEncodeError:  # a lone surrogate cannot cross into the matcher: the rules scan the text as before
        return None
    if not plain and not folded:
        return ()
    return tuple(
        rule
        for rule, own in zip(_rules(), needles, strict=True)
        if not own.isdisjoint(folded if rule[5] else plain) and (rule[1] or rule[2].search(text) is not None)
    )


def _fires(rule: tuple[Any, ...], text: str, lowered: str) -> bool:
    """Whether ``rule`` can match in ``text``: one of its markers occurs, or (no markers) its pattern matches."""
    markers = rule[1]
    if not markers:
        return rule[2].search(text) is not None
    haystack = lowered if rule[5] else text
    for marker in markers:  # noqa: SIM110 (a plain loop: a generator per rule costs more than the checks)
        if marker in haystack:
            return True
    return False


def rules_for(text: str) -> tuple[Any, ...]:
    """The rules that can match in ``text``: a string, or a payload's whole JSON text (markers and the self-gating
    patterns are plain ASCII token shapes, unchanged by JSON encoding, so no other rule can match any string
    inside it)."""
    lowered = text.lower()
    firing = _firing(text, lowered)
    if firing is not None:
        return firing
    return tuple(rule for rule in _rules() if _fires(rule, text, lowered))


def text_has_markers(text: str) -> bool:
    """Whether a string (or a payload's whole JSON text, see :func:`rules_for`) may contain a secret."""
    lowered = text.lower()
    firing = _firing(text, lowered)
    if firing is not None:
        return bool(firing)
    return any(_fires(rule, text, lowered) for rule in _rules())


def redact_text(text: str, rules: tuple[Any, ...] | None = None) -> tuple[str, list[str]]:
    """Replace secret-shaped spans inside ``text``; returns the new text and the detector names that fired.
    ``rules`` narrows the detectors to those :func:`rules_for` found in a text that contains this one."""
    kinds: list[str] = []
    lowered = text.lower()
    if rules is None:
        rules = _firing(text, lowered)  # (None: every rule, each checked below)
    for rule in _rules() if rules is None else rules:
        if not _fires(rule, text, lowered):
            continue
        kind, _markers, pattern, pick, word_start, _fold = rule
        new_text = pattern.sub(functools.partial(_replace, kind, pick, word_start), text)
        if new_text != text:
            kinds.append(kind)
            text = new_text
    return text, kinds


def _replace(kind: str, pick: Any, word_start: bool, match: re.Match[str]) -> str:
    """The match with its secret part masked (the value ``pick`` chose, its ``secret`` group, or all of it)."""
    whole = match.group(0)
    offset = match.start()
    if word_start and offset and _WORD_CHAR.match(match.string, offset - 1):
        return whole  # inside a longer word: not this token
    if pick is not None:
        secret = pick(match)
        if secret is None:
            return whole
        start = match.start("value") + match.group("value").find(secret)
        end = start + len(secret)
    elif "secret" in match.re.groupindex:
        start, end = match.span("secret")
    else:
        return f"[REDACTED:{kind}]"
    return whole[: start - offset] + f"[REDACTED:{kind}]" + whole[end - offset :]


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


def _normalise_key(key: str) -> str:
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key)
    return re.sub(r"[^a-z0-9]+", "_", snake.lower()).strip("_")


@functools.lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    """True when a key's name says its value is a credential (``apiKey``, ``db_password``...)."""
    return bool(_SECRET_KEY.search(_normalise_key(key)))


def secret_under_key(value: object) -> bool:
    """Whether a value under a credential-named key is itself credential-like (only strings ever are): never an
    int, a boolean, null, an empty or placeholder string or a short plain word."""
    if not isinstance(value, str) or not value or value.startswith(REDACTED[:9]):
        return False
    from .secret_rules import credential_like, is_placeholder

    if is_placeholder(value):
        return False
    return credential_like(value, minimum=4) or len(value) >= 13 or (len(value) >= 8 and not value.isalpha())


def redact_value(
    value: Any, path: str = "payload", policy: str = STANDARD, *, rules: tuple[Any, ...] | None = None
) -> tuple[Any, list[str]]:
    """Return a redacted copy of a JSON value and the list of redacted JSON paths.

    Untouched containers are returned as-is (no copy), which keeps the common no-secret case cheap. Raises
    ``TypeError`` for a non-string object key (the walk is the only full pass over the payload, so the check
    lives here). ``rules`` narrows the shape detectors to those :func:`rules_for` found in the whole payload's
    JSON (``()``: no string in it can hold a secret shape, only key names can redact), so each string is checked
    against a few rules instead of all of them.
    """
    if policy == OFF:
        return value, []
    return _redact(value, path, policy == STANDARD, False, rules)


def _redact(
    value: Any, path: str, by_key: bool, under_secret_key: bool, rules: tuple[Any, ...] | None
) -> tuple[Any, list[str]]:
    if isinstance(value, str):
        if under_secret_key and secret_under_key(value):
            return REDACTED, [path]
        if rules == ():
            return value, []
        new_text, kinds = redact_text(value, rules)
        return (new_text, [path]) if kinds else (value, [])
    if isinstance(value, dict):
        paths: list[str] = []
        changed: dict[str, Any] | None = None
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"object key {key!r} at {path} is not a string")
            secret_key = by_key and is_secret_key(key)
            new_item, child_paths = _redact(item, f"{path}.{key}", by_key, secret_key, rules)
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
            new_item, child_paths = _redact(item, f"{path}[{index}]", by_key, under_secret_key, rules)
            if child_paths:
                paths.extend(child_paths)
                if changed_list is None:
                    changed_list = list(value)
                changed_list[index] = new_item
        return (changed_list if changed_list is not None else value), paths
    return value, []
