"""Secrets are redacted before hashing and the paths are recorded in the security block."""

from __future__ import annotations

import pytest

from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.eventloom.redaction import is_secret_key, redact_text
from zaxy_agents.storage.conformance.harness import Harness

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize(
    "key",
    [
        "password",
        "api_key",
        "apiKey",
        "GITHUB_TOKEN",
        "client_secret",
        "db-password",
        "Authorization",
        "aws_secret_access_key",
        "refresh_token",
        "privateKey",
    ],
)
def test_secret_key_names(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize("key", ["max_tokens", "token_count", "tokens", "keyboard", "primary", "author", "title"])
def test_ordinary_key_names(key: str) -> None:
    assert not is_secret_key(key)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("use sk-abc1defghijklmnopqrstuvwx now", "openai_key"),
        ("AKIAIOSFODNN7EXAMPLE", "aws_access_key_id"),
        (f"token {JWT}", "jwt"),
        (PEM, "private_key"),
        ("ghp_" + "a" * 36, "github_token"),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345", "bearer"),
    ],
)
def test_secret_values_are_masked(text: str, kind: str) -> None:
    redacted, kinds = redact_text(text)
    assert kind in kinds
    assert f"[REDACTED:{kind}]" in redacted


def test_plain_text_is_untouched() -> None:
    text = "the skeleton key opens the high gate; ask-me later"
    assert redact_text(text) == (text, [])


def test_log_never_stores_the_secret(backend: Harness, elog: EventLog) -> None:
    event = elog.append(
        "s",
        "tool.call.completed",
        {"args": {"password": "hunter2", "query": "ok"}, "output": f"got {JWT}", "items": ["AKIAIOSFODNN7EXAMPLE"]},
    )
    raw = b"".join(backend.stored_lines("s")).decode()
    assert "hunter2" not in raw and JWT not in raw and "AKIAIOSFODNN7EXAMPLE" not in raw
    assert event.payload["args"] == {"password": "[REDACTED]", "query": "ok"}
    assert sorted(event.security.redacted_paths) == ["payload.args.password", "payload.items[0]", "payload.output"]
    assert '"security":{"redacted_paths":' in raw
    assert elog.verify("s").ok


def test_events_without_secrets_have_no_security_block(backend: Harness, elog: EventLog) -> None:
    assert elog.append("s", "note.added", {"text": "hello"}).security is None
    assert b"security" not in backend.stored_lines("s")[0]
