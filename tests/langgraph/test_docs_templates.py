"""docs/langgraph.md "Template agents": the table lists every template `zaxy init --list` offers, and "the test
suite runs all" of them — each template below is run by the test named for it (checked to mention it)."""

from __future__ import annotations

from tests.conftest import REPO_ROOT, run_zaxy_json

RUN_BY = {
    "coding-assistant": "tests/langgraph/test_examples.py",
    "research-notes": "tests/langgraph/test_examples.py",
    "minimal-graph": "tests/langgraph/test_examples.py",
    "incident-review": "tests/cognitive/test_example_agent.py",
    "incident-mission": "tests/coordinate/test_example_mission.py",
    "research-agent": "tests/cognitive/test_research_agent.py",
    "langgraph-server": "tests/langgraph/test_agent_server.py",
    "openai-agents": "tests/langgraph/test_openai_agents.py",
    "pydantic-ai": "tests/langgraph/test_pydantic_ai.py",
}


def test_every_template_is_documented_and_run_by_a_test() -> None:
    code, listing = run_zaxy_json("init", "--list")
    assert code == 0
    templates = {template["name"] for template in listing["templates"]}
    assert templates == set(RUN_BY), "a template was added or removed: update RUN_BY and docs/langgraph.md"
    page = (REPO_ROOT / "docs" / "langgraph.md").read_text().split("### Template agents", 1)[1].split("\n## ", 1)[0]
    cli = (REPO_ROOT / "docs" / "cli.md").read_text()
    for name, test in RUN_BY.items():
        assert f"| `{name}` |" in page, f"docs/langgraph.md's template table lacks {name}"
        assert f"`{name}`" in cli, f"docs/cli.md's init row lacks {name}"
        assert f'"{name}"' in (REPO_ROOT / test).read_text(), f"{test} does not run {name}"
    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    assert f"runs all {words[len(RUN_BY)]}" in page and f"holds {words[len(RUN_BY)]} runnable agents" in page
