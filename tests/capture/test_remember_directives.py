"""docs/hooks.md's "Remember X" table, through the real `zaxy hook-event UserPromptSubmit`: every listed directive
becomes a `fact.asserted` (actor `user`, `origin: "user_prompt"`, key `user.<subject>`), `forget about ...`
invalidates, and questions or sentences that merely contain the words are not directives."""

from __future__ import annotations

from tests.capture.conftest import Env

DIRECTIVES = {
    "remember": "Remember that the billing db is on host db-7.",
    "note": "Note that the cache uses redis.",
    "keep in mind": "Keep in mind the api gateway must stay on v2.",
    "don't forget": "Don't forget that the nightly job runs at 02:00.",
    "for future reference": "For future reference, the staging cluster is in eu-west-1.",
    "from now on": "From now on, the release branch is main.",
    "going forward": "Going forward, the lint step should use ruff.",
    "always": "Always rebase before merging.",
    "never": "Never push to production on Fridays.",
}
NOT_DIRECTIVES = ["Remember what we did yesterday?", "I can't remember the port of the api."]


def test_every_documented_directive_is_a_user_fact_and_forget_invalidates(env: Env) -> None:
    prompt = " ".join([*DIRECTIVES.values(), *NOT_DIRECTIVES])
    assert env.hook("claude-code", "UserPromptSubmit", fields={"prompt": prompt}).returncode == 0
    events = env.events(env.session("claude-code"))
    facts = [e for e in events if e["type"] == "fact.asserted"]
    assert [f["payload"]["directive"].lower().replace("’", "'") for f in facts] == list(DIRECTIVES)
    assert all(f["actor"] == "user" and f["payload"]["origin"] == "user_prompt" for f in facts)
    keys = {f["payload"]["key"] for f in facts}
    assert {"user.billing-db", "user.cache", "user.api-gateway", "user.release-branch"} <= keys, keys
    assert not any("yesterday" in f["payload"]["fact"] or "port of the api" in f["payload"]["fact"] for f in facts)

    env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "Forget about the cache."})
    (invalidated,) = [e for e in env.events(env.session("claude-code")) if e["type"] == "memory.invalidated"]
    assert invalidated["payload"]["entity"] == "user.cache" and invalidated["payload"]["entity_type"] == "fact"
