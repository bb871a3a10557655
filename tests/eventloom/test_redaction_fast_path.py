"""The append path skips the redaction walk only when the walk could not change anything."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.surfaces.secret_corpus import ORDINARY, SECRETS
from zaxy_agents.eventloom.canonical import canonical_json
from zaxy_agents.eventloom.drafts import prepare_draft
from zaxy_agents.eventloom.redaction import redact_value

SECRETISH = [
    "sk-proj-abcdefghijklmnopqrstuvwx",
    "Bearer abcdefghijklmnopqrstuvwxyz",
    "AKIAABCDEFGHIJKLMNOP",
    "eyJhbGciOi.eyJzdWIiOi.signature123",
    "ghp_" + "a" * 36,
    "xoxb-1234567890-abc",
    "-----BEGIN PRIVATE KEY-----abc-----END PRIVATE KEY-----",
    "plain words",
    "DB_PASSWORD=hunter2-prod",
    "postgres://app:s3cret@db/shop",
    "hunter2",
    "<private>mine</private>",
    "",
] + [secret.text for secret in SECRETS[::7]]
keys = st.one_of(st.sampled_from(["password", "apiKey", "token_count", "max_tokens", "note", "auth_token"]), st.text())
leaves = st.one_of(st.sampled_from(SECRETISH), st.text(), st.integers(), st.none(), st.booleans())
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3))


@settings(max_examples=300)
@given(
    st.dictionaries(keys, values, max_size=4),
    st.sampled_from([("note.added", "standard"), ("store.item.put", "values")]),
)
def test_prepared_payload_equals_the_full_redaction_walk(payload: dict, typed: tuple[str, str]) -> None:
    event_type, policy = typed  # store.* (and checkpoint.*) events default to the values policy
    expected, paths = redact_value(payload, policy=policy)
    draft = prepare_draft(event_type, payload, "agent", 1 << 20)
    assert draft.payload == expected
    assert draft.payload_json == canonical_json(expected)
    assert (draft.security or {}).get("redacted_paths", []) == paths


def test_every_corpus_shape_nested_in_a_payload_equals_the_full_walk() -> None:
    """The append path checks each string only against the rules whose markers occur in the payload's JSON: that
    narrowing must never lose a redaction (every shape of the corpus, next to ordinary text and secret keys)."""
    for index, secret in enumerate(SECRETS):
        payload = {
            "tool_response": {"stdout": secret.text, "stderr": ORDINARY[index % len(ORDINARY)]},
            "messages": [{"content": ORDINARY[(index + 1) % len(ORDINARY)]}, {"content": secret.text}],
            "metadata": {"token": 42, "password": secret.secret},
        }
        for event_type, policy in (("note.added", "standard"), ("store.item.put", "values")):
            expected, paths = redact_value(payload, policy=policy)
            draft = prepare_draft(event_type, payload, "agent", 1 << 20)
            assert draft.payload == expected, secret.shape
            assert policy != "standard" or secret.secret not in draft.payload_json, secret.shape
            assert (draft.security or {}).get("redacted_paths", []) == paths
