"""`zaxy doctor`: each check broken on purpose, its one-line fix printed, --json, exit codes, --fix."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.capture.conftest import Env
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.fabric.light import light_append_many


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def doctor(env: Env, *args: str, **extra: str) -> tuple[int, dict, str]:
    """(exit code, JSON report, human output) of two runs of the real CLI."""
    code, report = env.zaxy_json("doctor", *args, **extra)
    human = env.zaxy("doctor", *[a for a in args if a != "--fix"], **extra)
    assert human.returncode == code or "--fix" in args
    return code, report, human.stdout


def by_name(report: dict) -> dict[str, dict]:
    return {check["check"]: check for check in report["checks"]}


def seed(env: Env) -> None:
    env.zaxy("hooks", "claude-code")
    env.hook("claude-code", "SessionStart-startup")
    env.hook("claude-code", "UserPromptSubmit")
    with MemoryFabric.from_path(env.eventloom) as fabric:
        fabric.append("notes", "fact.asserted", {"fact": "the api listens on 8080"})
        fabric.append("other", "fact.asserted", {"fact": "an intact session"})
        fabric.checkout("api", session="notes")


def test_a_healthy_workspace_passes(env: Env) -> None:
    seed(env)
    code, report, human = doctor(env)
    assert code == 0 and report["ok"] is True, report
    checks = by_name(report)
    assert checks["log integrity"]["status"] == "ok" and checks["hooks: claude-code"]["status"] == "ok"
    assert {check["status"] for check in report["checks"]} <= {"ok", "skip", "warn"}
    assert "no failures" in human


def test_every_broken_thing_is_reported_with_its_fix(env: Env) -> None:
    seed(env)
    session = env.session("claude-code")
    log = env.eventloom / "notes.jsonl"
    log.write_text(log.read_text().replace("8080", "9090"))  # tampering
    (env.eventloom / "garbage.jsonl").write_bytes(b"\x00\xffnot an event\n")  # a damaged log
    cache = env.eventloom / ".zaxy" / "workingset" / f"{session}.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("{not json")  # damaged derived state
    settings = env.workspace / ".claude" / "settings.local.json"
    command = json.loads(settings.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"].split()[0]
    settings.write_text(settings.read_text().replace(command, "/gone/venv/bin/zaxy"))  # a deleted venv
    (env.eventloom / ".zaxy" / "owner.json").write_text(json.dumps({"pid": 2**22 + 12345, "socket": "/nowhere"}))
    spool = env.eventloom / ".spool" / session
    spool.mkdir(parents=True)
    (spool / "00000000000000000001-1.jsonl").write_text(
        json.dumps(
            {
                "type": "hook.user_prompt_submitted",
                "actor": "user",
                "payload_json": '{"prompt":"spooled"}',
                "security": None,
                "event_id": "evt_" + "1" * 32,
                "timestamp": "2026-11-25T00:00:00.000000Z",
            }
        )
        + "\n"
    )
    broken_env = {"ZAXY_EMBEDDER": "nosuchprovider:model", "MCP_TOOL_PROFILE": "everything"}
    code, report, human = doctor(env, "--min-free-mb", str(10**12), **broken_env)
    assert code == 1 and report["ok"] is False
    checks = by_name(report)
    expected = {
        "log integrity": ("fail", "zaxy verify -s notes"),
        "damaged logs": ("fail", "garbage.jsonl"),
        "derived state": ("fail", "rebuilt on next use"),
        "embedder": ("fail", "Or unset ZAXY_EMBEDDER"),
        "MCP profile": ("fail", "MCP_TOOL_PROFILE to core"),
        "hooks: claude-code": ("fail", "Reinstall: zaxy hooks claude-code --force"),
        "graph owner": ("warn", "doctor --fix"),
        "hook spool": ("warn", "doctor --fix"),
        "disk headroom": ("fail", "Free disk space"),
    }
    for name, (status, fix) in expected.items():
        assert checks[name]["status"] == status, (name, checks[name])
        assert fix in checks[name]["fix"], (name, checks[name]["fix"])
    assert checks["log integrity"]["details"]["broken"][0]["session"] == "notes"  # "other" still verifies
    fix_lines = [line for line in human.splitlines() if line.strip().startswith("fix:")]
    assert len(fix_lines) == sum(1 for check in report["checks"] if check["status"] in ("warn", "fail"))
    assert "problems found" in human


def test_fix_applies_only_safe_repairs_and_rechecks(env: Env) -> None:
    seed(env)
    session = env.session("claude-code")
    cache = env.eventloom / ".zaxy" / "workingset" / f"{session}.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("[1, 2]")
    (env.eventloom / ".zaxy" / "owner.json").write_text(json.dumps({"pid": 2**22 + 12345, "socket": "/nowhere"}))
    light_append_many(
        "notes", [{"type": "fact.asserted", "payload": {"fact": "not projected yet"}}], eventloom_path=env.eventloom
    )
    before = (env.eventloom / "notes.jsonl").read_bytes()
    with MemoryFabric.from_path(env.eventloom) as fabric:
        fabric.append("torn", "fact.asserted", {"fact": "written before the damage"})
    torn = env.eventloom / "torn.jsonl"
    intact = torn.read_bytes()
    with torn.open("ab") as handle:
        handle.write(b"\x00\xffnot an event\n")  # a damaged log
    assert by_name(doctor(env)[1])["damaged logs"]["status"] == "fail"
    code, report, _human = doctor(env, "--fix")
    checks = by_name(report)
    assert code == 0, report
    assert checks["damaged logs"]["status"] == "ok" and "(torn)" in checks["damaged logs"]["repaired"], checks
    assert torn.read_bytes().startswith(intact)  # the readable event kept its bytes; a repair record follows
    assert [path.read_bytes() for path in (env.eventloom / ".repair").glob("torn.*.bad")] == [b"\x00\xffnot an event\n"]
    assert (
        "removed 1 derived files" in checks["derived state"]["repaired"] and checks["derived state"]["status"] == "ok"
    )
    assert "stale owner record" in checks["graph owner"]["repaired"] and checks["graph owner"]["status"] == "ok"
    assert checks["projection freshness"]["status"] == "ok" and checks["projection freshness"]["repaired"]
    assert not (env.eventloom / ".zaxy" / "owner.json").exists()
    assert (env.eventloom / "notes.jsonl").read_bytes() == before  # the log itself is never rewritten


def test_hook_errors_are_a_warning_naming_the_last_one(env: Env) -> None:
    env.zaxy("hooks", "claude-code")
    env.zaxy("hook-event", "PostToolUse", stdin="{not json")
    code, report, human = doctor(env)
    hooks = by_name(report)["hooks: claude-code"]
    assert code == 0 and hooks["status"] == "warn" and "JSONDecodeError" in hooks["summary"]
    assert "zaxy hooks status" in hooks["fix"] and "fix: `zaxy hooks status`" in human


def test_no_memory_yet_is_not_a_failure(tmp_path: Path) -> None:
    env = Env(tmp_path)
    code, report, _human = doctor(env)
    assert code == 0 and by_name(report)["log integrity"]["status"] == "skip"
    assert not env.eventloom.exists() and os.listdir(env.workspace) == [".git"]  # the doctor creates nothing


def test_doctor_page_try_it_runs(env: Env) -> None:
    from tests.capture.test_docs_examples import _block, _run_bash

    result = _run_bash(_block("doctor.md", "bash", "## Try it"), env)
    assert result.returncode == 0, result.stderr
    assert "False [" in result.stdout and "zaxy verify -s notes" in result.stdout
    assert "exit 1: the log is the one thing --fix never touches" in result.stdout


def test_vectors_of_another_model_are_a_warning_naming_the_re_embed(env: Env) -> None:
    """#18 doctor item "dims and model@version mix": vectors stored by one embedder, another configured."""
    with MemoryFabric.from_path(env.eventloom, embedder="hashing:64") as fabric:
        fabric.append("notes", "fact.asserted", {"fact": "the api listens on 8080"})
        fabric.checkout("api", session="notes")  # projected: the event's vector is stored, stamped hashing:64
    code, report, human = doctor(env, ZAXY_EMBEDDER="hashing:32")
    embedder = by_name(report)["embedder"]
    assert code == 0 and embedder["status"] == "warn", embedder
    assert "hashing" in embedder["details"]["stored_model"] and embedder["details"]["dims"] == 32
    assert "zaxy memory re-embed" in embedder["fix"] and "fix: Run `zaxy memory re-embed`" in human
    code, report, _human = doctor(env, ZAXY_EMBEDDER="hashing:64")
    assert by_name(report)["embedder"]["status"] == "ok"  # the same model: no mix


def test_the_vector_cache_check_measures_the_mapped_vector_files(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """#18 doctor item "vector cache headroom": the bytes exact search maps (rows x dims x 4), against the memory
    available; past a quarter of it the check warns and names the ann extra."""
    with MemoryFabric.from_path(env.eventloom, embedder="hashing:64") as fabric:
        for n in range(5):
            fabric.append("notes", "fact.asserted", {"fact": f"service {n} listens on port 80{n}"})
        fabric.query("which port", sessions=["notes"])  # embeds what is pending before it searches
        rows = fabric.retriever.vectors.count
    assert rows == 5
    _code, report, _human = doctor(env, ZAXY_EMBEDDER="hashing:64")
    cache = by_name(report)["vector cache"]
    assert cache["status"] == "ok" and cache["details"]["vector_bytes"] == rows * 64 * 4, cache

    from zaxy_agents.cli import doctor_base, doctor_setup_checks

    monkeypatch.setenv("ZAXY_EMBEDDER", "hashing:64")
    # a quarter of the available memory is just less than the vectors held
    monkeypatch.setattr(doctor_setup_checks, "_available_memory", lambda: 4 * rows * 64 * 4 - 1)
    warned = doctor_setup_checks.check_vector_cache(doctor_base.DoctorContext(None, env.eventloom, min_free_mb=1))
    assert warned.status == "warn" and "ann extra" in warned.fix, warned


def test_an_embedder_whose_vectors_differ_from_its_declared_dims_fails_naming_the_re_embed(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#18 doctor item "dims": an embedder that declares 32 dims but returns 64 (no CLI setting can configure one,
    so the configured embedder is swapped in-process; what the doctor does with it is the real check)."""
    from zaxy_agents.cli import doctor_base, doctor_setup_checks
    from zaxy_agents.retrieval import embeddings

    env.eventloom.mkdir(parents=True)
    lying = embeddings.CallableEmbedder(lambda texts: [[0.5] * 64 for _ in texts], model_id="liar@1", dims=32)
    monkeypatch.setenv("ZAXY_EMBEDDER", "hashing:32")
    monkeypatch.setattr(embeddings, "resolve_embedder", lambda spec, **_: lying)
    check = doctor_setup_checks.check_embedder(doctor_base.DoctorContext(None, env.eventloom, min_free_mb=1))
    assert check.status == "fail" and "declares 32 dims but returns 64" in check.summary, check
    assert "zaxy memory re-embed" in check.fix
