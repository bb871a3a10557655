"""`zaxy memory checkout | bootstrap | append | feedback | invalidate | capabilities | fok` and the demo's checkout."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_zaxy, run_zaxy_json


def test_append_checkout_feedback_invalidate_round_trip(tmp_path: Path) -> None:
    root = ["--eventloom-path", str(tmp_path / "loom"), "-s", "proj"]
    code, first = run_zaxy_json("memory", "append", "the API runs on port 8080", "--key", "api.port", *root)
    assert code == 0 and first["citation"].startswith("eventloom://proj/events/1#")
    code, second = run_zaxy_json("memory", "append", "the API runs on port 9090", "--key", "api.port", *root)
    code, decision = run_zaxy_json("memory", "append", "use gRPC", "--kind", "decision", "--rationale", "speed", *root)
    assert code == 0 and decision["event"]["type"] == "decision.recorded"

    code, packet = run_zaxy_json("memory", "checkout", "which port does the API use?", "--max-tokens", "300", *root)
    assert code == 0
    assert [fact["citation"] for fact in packet["current_facts"] if fact["name"] == "api.port"] == [second["citation"]]
    assert first["citation"] not in packet["prompt"] and packet["diagnostics"]["budget_used"] <= 300

    human = run_zaxy("memory", "checkout", "which port does the API use?", *root)
    assert human.returncode == 0
    assert human.stdout.startswith("# Memory Checkout") and "quality and diagnostics" in human.stdout
    assert "answerability" in human.stdout and second["citation"] in human.stdout

    code, feedback = run_zaxy_json("memory", "feedback", "api.port", "--signal", "confirmed", *root)
    assert code == 0 and feedback["event"]["type"] == "memory.reinforced"
    code, bad = run_zaxy_json("memory", "feedback", "api.port", "--signal", "meh", *root)
    assert code == 2 and bad["error"]["code"] == "invalid_request" and bad["error"]["field"] == "signal"

    code, _ = run_zaxy_json("memory", "invalidate", "api.port", "--reason", "moved behind the gateway", *root)
    assert code == 0
    code, packet = run_zaxy_json("memory", "bootstrap", *root)
    assert code == 0 and "api.port" not in [fact["name"] for fact in packet["current_facts"]]
    code, missing = run_zaxy_json("memory", "invalidate", "api.port", "--reason", "again", *root)
    assert code == 3 and missing["error"]["code"] == "not_found"


def test_fok_and_capabilities(tmp_path: Path) -> None:
    loom = ["--eventloom-path", str(tmp_path / "loom")]
    run_zaxy("memory", "append", "billing-worker retries failed invoices nightly", "--subject", "billing-worker",
             "-s", "proj", *loom)  # fmt: skip
    code, likely = run_zaxy_json("memory", "fok", "what does billing-worker do?", "-s", "proj", *loom)
    assert code == 0 and likely["verdict"] == "likely" and likely["marker"].startswith("eventloom://proj/")
    code, unlikely = run_zaxy_json("memory", "fok", "the mascot's favourite colour", "-s", "proj", "--no-record", *loom)
    assert code == 0 and unlikely["verdict"] == "unlikely" and "marker" not in unlikely
    human = run_zaxy("memory", "fok", "billing-worker", "-s", "proj", "--no-record", *loom)
    assert human.returncode == 0 and human.stdout.startswith("likely")
    code, capabilities = run_zaxy_json("memory", "capabilities", *loom)
    assert code == 0 and capabilities["backend"]["graph"] == "kuzu" and capabilities["degraded"] is None


def test_demo_checks_out_the_current_fact_and_excludes_the_superseded_one(tmp_path: Path) -> None:
    code, body = run_zaxy_json("demo", "--eventloom-path", str(tmp_path / "demo"))
    assert code == 0
    checkout = body["checkout"]
    assert checkout["current_fact"]["summary"].endswith("capped at 5 attempts")
    assert checkout["current_fact"]["citation"] in checkout["prompt"]
    assert [item["summary"] for item in checkout["superseded_excluded"]] == [
        "payments-service retries are capped at 3 attempts"
    ]
    assert checkout["superseded_excluded"][0]["citation"] not in checkout["prompt"]
    assert checkout["answerability"] == "answer_from_memory"
    assert checkout["budget"]["used"] <= checkout["budget"]["requested"]


def test_serve_refuses_an_unknown_profile(tmp_path: Path) -> None:
    result = run_zaxy("serve", "--profile", "huge", "--eventloom-path", str(tmp_path / "loom"))
    assert result.returncode == 2 and "profile" in result.stderr


def test_append_with_subject_and_predicate_supersedes_from_the_cli(tmp_path: Path) -> None:
    """Issue 17: `--subject` alone cannot state which property changed; `--predicate` makes subject + predicate
    the fact's identity, so the newer host supersedes the older one."""
    root = ["--eventloom-path", str(tmp_path / "loom"), "-s", "proj"]
    fact = ["--subject", "billing db", "--predicate", "host"]
    code, old = run_zaxy_json("memory", "append", "db-old.internal", *fact, *root)
    assert code == 0, old
    code, new = run_zaxy_json("memory", "append", "db-new.internal", *fact, *root)
    assert code == 0 and new["event"]["payload"]["predicate"] == "host"
    code, packet = run_zaxy_json("memory", "checkout", "which host is the billing db on?", *root)
    assert code == 0
    hosts = [fact["citation"] for fact in packet["current_facts"] if fact["name"] == "billing db host"]
    assert hosts == [new["citation"]] and old["citation"] not in packet["prompt"]
    assert packet["retention"]["superseded_excluded"] >= 1
    code, bad = run_zaxy_json("memory", "append", "x", "--predicate", "host", *root)
    assert code == 2 and bad["error"]["field"] == "--predicate"
