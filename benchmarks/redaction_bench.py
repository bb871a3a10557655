"""Secret redaction: how much it catches, what it wrongly touches, and what it costs per event.

Quality, on the corpus of tests/surfaces/secret_corpus.py (secret shapes after gitleaks / detect-secrets /
trufflehog, each inside a realistic context, and ordinary text a coding agent sees all day):

* **recall**: secret contexts whose secret no longer appears after redaction;
* **precision**: redaction markers that replaced a real secret, over all markers placed (a marker in ordinary
  text, or one that ate the secret's surrounding context instead of the secret, is a false positive);
* **context kept**: secret contexts where everything but the secret reads back unchanged (the text before and
  after the secret survives).

Cost, per event, through the real append preparation every backend shares (``prepare_draft``: validation,
redaction, canonical JSON) for the three policies against ``off`` in the same run, on the payloads the Claude
Code hooks deliver (recorded fixtures), a 4 KB test-run output, a checkpoint-like nested value and a payload that
does contain secrets. Then the whole append (``MemoryFabric.append_many`` into a JSONL log, 50 events per
batch) with the default policy against ``off``, so the share of redaction in an append is visible.

Usage: python benchmarks/redaction_bench.py [--rounds 300] [--appends 2000] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.surfaces.secret_corpus import ORDINARY, SECRETS  # noqa: E402
from zaxy_agents.eventloom.drafts import prepare_draft  # noqa: E402
from zaxy_agents.eventloom.redaction import OFF, POLICIES, redact_text, redaction_policy  # noqa: E402
from zaxy_agents.fabric import MemoryFabric  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "hooks" / "claude-code"
MARKER = re.compile(r"\[REDACTED(?::[a-z0-9 _-]+)?\]")
MAX_PAYLOAD = 10 * 1024 * 1024


def quality() -> dict[str, Any]:
    """Recall, precision and context kept on the corpus (``redact_text``: what every detector sees)."""
    caught = kept = true_markers = false_markers = 0
    misses: list[str] = []
    for secret in SECRETS:
        redacted, _kinds = redact_text(secret.text)
        markers = MARKER.findall(redacted)
        before, _, after = secret.text.partition(secret.secret)
        if secret.secret not in redacted:
            caught += 1
        else:
            misses.append(secret.shape)
        if redacted.startswith(before) and redacted.endswith(after):
            kept += 1
        # the marker that removed the secret is a true positive; any other marker replaced something else
        hit = 1 if markers and secret.secret not in redacted else 0
        true_markers += hit
        false_markers += len(markers) - hit
    ordinary_changed = []
    for index, text in enumerate(ORDINARY):
        redacted, _kinds = redact_text(text)
        if redacted != text:
            ordinary_changed.append(index)
            false_markers += max(1, len(MARKER.findall(redacted)))
    placed = true_markers + false_markers
    return {
        "secret_contexts": len(SECRETS),
        "shapes": len({secret.shape for secret in SECRETS}),
        "ordinary_texts": len(ORDINARY),
        "ordinary_chars": sum(len(text) for text in ORDINARY),
        "recall": caught / len(SECRETS),
        "precision": true_markers / placed if placed else 1.0,
        "context_kept": kept / len(SECRETS),
        "missed_shapes": misses,
        "ordinary_changed": ordinary_changed,
    }


def payloads() -> dict[str, dict[str, Any]]:
    """Realistic event payloads: hook inputs as Claude Code sends them, bigger tool output, a nested value."""
    cases: dict[str, dict[str, Any]] = {}
    for name in ("PostToolUse-Bash", "PostToolUse-Edit", "UserPromptSubmit", "Stop"):
        text = (FIXTURES / f"{name}.json").read_text().replace("__CWD__", "/home/dev/shop")
        cases[f"hook {name}"] = json.loads(text.replace("__HOME__", "/home/dev"))
    lines = [f"tests/test_orders.py::test_case_{i} PASSED [{i % 100:3d}%]" for i in range(80)]
    cases["4 KB test output"] = {"command": "pytest -v", "exit_code": 0, "stdout": "\n".join(lines)[:4096]}
    cases["nested value"] = {
        "channel_values": {
            "messages": [{"role": "user", "content": f"step {i}: add the refund path", "id": str(i)} for i in range(20)]
        },
        "metadata": {"token": 42, "source": "loop", "step": 7, "writes": {"agent": {"count": 3}}},
    }
    cases["with secrets"] = {"command": "cat .env", "stdout": "\n".join(secret.text for secret in SECRETS[::6])}
    return cases


def per_event_cost(rounds: int) -> dict[str, dict[str, float]]:
    """Median microseconds of ``prepare_draft`` per payload and policy, interleaved so noise hits all alike."""
    samples: dict[tuple[str, str], list[float]] = {}
    cases = payloads()
    for _ in range(rounds):
        for case, payload in cases.items():
            for policy in POLICIES:
                with redaction_policy(policy):
                    start = time.perf_counter()
                    prepare_draft("tool.completed", payload, "agent", MAX_PAYLOAD)
                    samples.setdefault((case, policy), []).append((time.perf_counter() - start) * 1e6)
    table: dict[str, dict[str, float]] = {}
    for case in cases:
        off = statistics.median(samples[(case, OFF)])
        row = {f"{policy}_us": statistics.median(samples[(case, policy)]) for policy in POLICIES}
        row.update({f"{policy}_vs_off": row[f"{policy}_us"] / off for policy in POLICIES if policy != OFF})
        table[case] = row
    return table


def append_cost(appends: int) -> dict[str, float]:
    """Microseconds per event of a whole append (validation, redaction, hash chain, write, fsync per batch)."""
    cases = list(payloads().values())[:-1]  # no secrets: the common case
    batch = 50
    result: dict[str, float] = {}
    timings: dict[str, list[float]] = {"standard": [], "off": []}
    # the calling thread's CPU time: without the fsync wait and the background projection (mostly noise here)
    cpu: dict[str, list[float]] = {"standard": [], "off": []}
    with (
        tempfile.TemporaryDirectory(prefix="zaxy-redaction-bench-") as scratch,
        MemoryFabric.from_path(Path(scratch) / ".eventloom") as fabric,
    ):
        drafts = [{"type": "tool.completed", "payload": cases[i % len(cases)]} for i in range(batch)]
        for round_index in range(max(1, appends // batch)):
            # interleaved, in alternating order (a batch leaves background projection work to the next one)
            for policy in ("standard", "off") if round_index % 2 else ("off", "standard"):
                with redaction_policy(policy):
                    start, cpu_start = time.perf_counter(), time.thread_time()
                    fabric.append_many(f"bench-{policy}", drafts)
                    timings[policy].append((time.perf_counter() - start) * 1e6 / batch)
                    cpu[policy].append((time.thread_time() - cpu_start) * 1e6 / batch)
    for policy in timings:
        result[f"{policy}_us_per_event"] = statistics.median(timings[policy])
        result[f"{policy}_cpu_us_per_event"] = statistics.median(cpu[policy])
    result["standard_vs_off"] = result["standard_us_per_event"] / result["off_us_per_event"]
    result["standard_vs_off_cpu"] = result["standard_cpu_us_per_event"] / result["off_cpu_us_per_event"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=300, help="timed rounds per payload and policy")
    parser.add_argument("--appends", type=int, default=2000, help="events appended per policy")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = {"quality": quality(), "prepare_draft": per_event_cost(args.rounds), "append": append_cost(args.appends)}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    q = report["quality"]
    print(
        f"corpus: {q['secret_contexts']} secret contexts ({q['shapes']} shapes), {q['ordinary_texts']} ordinary "
        f"texts ({q['ordinary_chars']} chars)"
    )
    print(
        f"recall {q['recall']:.1%}  precision {q['precision']:.1%}  context kept {q['context_kept']:.1%}  "
        f"missed {q['missed_shapes'] or 'none'}  ordinary changed {q['ordinary_changed'] or 'none'}"
    )
    print(f"{'payload':<24}{'off µs':>9}{'values µs':>11}{'standard µs':>13}{'values/off':>12}{'standard/off':>14}")
    for case, row in report["prepare_draft"].items():
        print(
            f"{case:<24}{row['off_us']:>9.1f}{row['values_us']:>11.1f}{row['standard_us']:>13.1f}"
            f"{row['values_vs_off']:>12.2f}{row['standard_vs_off']:>14.2f}"
        )
    a = report["append"]
    print(
        f"append_many (JSONL, 50 per batch): standard {a['standard_us_per_event']:.1f} µs/event, off "
        f"{a['off_us_per_event']:.1f} µs/event, ratio {a['standard_vs_off']:.2f}; calling thread's CPU: standard "
        f"{a['standard_cpu_us_per_event']:.1f}, off {a['off_cpu_us_per_event']:.1f}, "
        f"ratio {a['standard_vs_off_cpu']:.2f}"
    )


if __name__ == "__main__":
    main()
