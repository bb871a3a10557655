"""`zaxy serve` start-up: a timeline from process start to the first cited `memory_checkout`, against a baseline.

A raw JSON-RPC client (newline-delimited, as MCP's stdio transport is; no SDK in the measuring process) spawns
`zaxy serve --eventloom-path MEMORY` and, without pausing, sends ``initialize``, ``notifications/initialized``,
``tools/list`` and a ``tools/call`` of ``memory_checkout``, then closes stdin. It records, from the spawn:

* ``initialize_s``: the answer to ``initialize`` (interpreter start, imports, configuration, the transport);
* ``tools_list_s``: the answer to ``tools/list``;
* ``first_checkout_s``: the answer to the first ``memory_checkout`` ("ready for a first checkout");
* ``cpu_at_first_checkout_s``: the server's CPU (user + system, all threads) when that answer arrived;
* ``server_cpu_s``: user + system CPU of the server's whole life (``wait4``), exit included;
* ``cited``: the answer holds an ``eventloom://`` citation (the run counts only if it does).

Each run also times the CLI, ``zaxy memory checkout QUESTION --json`` on the same memory: ``cli_checkout_s``
(spawn to exit) and ``cli_checkout_cpu_s``.

Each tree (``--tree NAME=DIR``, a source tree whose ``zaxy_agents`` is put first on ``PYTHONPATH``; the current
checkout is ``now``) runs ``--runs`` times, alternated with the others, and the medians are compared as ratios in
the same run. Bytecode is compiled once per tree into a private cache (as an installed package has it).

``--importtime`` adds, per tree, one more server run under ``-X importtime``: the self time of the modules it
imported, summed by top-level package (where the import time goes).

Usage: python benchmarks/serve_startup_bench.py [--memory DIR | --events 2000] [--tree base=/path/to/old/tree]
       [--runs 5] [--importtime] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PYTHON = sys.executable
REPO = Path(__file__).resolve().parents[1]


def _compiled_env(tree: Path, cache: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    subprocess.run([PYTHON, "-m", "compileall", "-q", "zaxy_agents"], cwd=tree, env=env, check=True)
    return env


class _Client:
    """Newline-delimited JSON-RPC over the server's pipes, answers read in order of arrival."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self._next_id = 0

    def send(self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        ident = None
        if not notify:
            self._next_id += 1
            ident = message["id"] = self._next_id
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        return ident

    def answer(self, ident: int) -> dict[str, Any]:
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the server closed stdout before answering request {ident}")
            message = json.loads(line)
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"request {ident} failed: {message['error']}")
                return message["result"]


def serve_once(
    env: dict[str, str], tree: Path, memory: Path, question: str, session: str, *, importtime: bool = False
) -> dict[str, Any]:
    args = [PYTHON, *(["-X", "importtime"] if importtime else []), "-m", "zaxy_agents.cli.entry"]
    args += ["serve", "--eventloom-path", str(memory), "--no-capture"]
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed below, after the server exits
    started = time.perf_counter()
    process = subprocess.Popen(args, cwd=tree, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
    client = _Client(process)
    try:
        init = client.send(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "serve-startup-bench", "version": "1"},
            },
        )
        client.answer(init)  # type: ignore[arg-type]
        initialized = time.perf_counter()
        client.send("notifications/initialized", notify=True)
        tools = client.answer(client.send("tools/list", {}))  # type: ignore[arg-type]
        listed = time.perf_counter()
        call = client.send(
            "tools/call", {"name": "memory_checkout", "arguments": {"query": question, "session_id": session}}
        )
        result = client.answer(call)  # type: ignore[arg-type]
        answered = time.perf_counter()
        cpu_at_answer = _process_cpu(process.pid)
    finally:
        assert process.stdin is not None
        process.stdin.close()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr.seek(0)
        log = stderr.read().decode("utf-8", "replace")
        stderr.close()
    if process.returncode != 0:
        raise RuntimeError(f"zaxy serve exited {process.returncode}: {log[-3000:]}")
    text = json.dumps(result)
    timeline = {
        "initialize_s": initialized - started,
        "tools_list_s": listed - started,
        "first_checkout_s": answered - started,
        "cpu_at_first_checkout_s": cpu_at_answer,
        "server_cpu_s": usage.ru_utime + usage.ru_stime,
        "tools_listed": len(tools["tools"]),
        "cited": "eventloom://" in text and not result.get("isError"),
    }
    if importtime:
        timeline["import_self_s_by_package"] = _import_profile(log)
    return timeline


def cli_checkout_once(env: dict[str, str], tree: Path, memory: Path, question: str, session: str) -> dict[str, Any]:
    """`zaxy memory checkout QUESTION --json` end to end: wall and CPU (``wait4``), and whether it cited."""
    args = [PYTHON, "-m", "zaxy_agents.cli.entry", "memory", "checkout", question, "-s", session]
    args += ["--eventloom-path", str(memory), "--json"]
    started = time.perf_counter()
    process = subprocess.Popen(args, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"zaxy memory checkout exited {process.returncode}")
    return {
        "cli_checkout_s": elapsed,
        "cli_checkout_cpu_s": usage.ru_utime + usage.ru_stime,
        "cli_cited": b"eventloom://" in output,
    }


def _process_cpu(pid: int) -> float:
    """User + system CPU a live process has used so far (Linux ``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _import_profile(log: str) -> dict[str, float]:
    """Self time of every imported module (``-X importtime``), summed by top-level package, largest first."""
    totals: dict[str, float] = defaultdict(float)
    for line in log.splitlines():
        if not line.startswith("import time:") or line.count("|") != 2:
            continue
        self_us, _cumulative, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        if not self_us.isdigit():
            continue
        parts = name.split(".")
        key = ".".join(parts[:2]) if parts[0] == "zaxy_agents" and len(parts) > 1 else parts[0]
        totals[key] += int(self_us) / 1e6
    ranked = sorted(totals.items(), key=lambda item: -item[1])
    return {name: round(seconds, 3) for name, seconds in ranked[:25]}


def _memory(args: argparse.Namespace, workdir: Path) -> tuple[Path, str, str]:
    """The memory to serve and a question whose current fact it holds."""
    if args.memory is not None:
        memory = args.memory.resolve()
        facts_file = memory.parent / f"facts-{memory.name.removeprefix('memory-')}.json"
        if facts_file.exists():
            subject, predicate, session, _citation = json.loads(facts_file.read_text())[0]
            return memory, f"what is the {predicate} of {subject}?", session
        return memory, args.question, args.session
    from benchmarks.scale_bench import build

    memory = workdir / f"memory-{args.events}"
    facts = build(memory, args.events, {}, graph=True)
    subject, predicate, session, _citation = facts[0]
    return memory, f"what is the {predicate} of {subject}?", session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memory", type=Path, default=None, help="an existing memory (scale_bench.py --keep)")
    parser.add_argument("--events", type=int, default=2000, help="size of the memory built when --memory is absent")
    parser.add_argument("--question", default="what changed?")
    parser.add_argument("--session", default="default")
    parser.add_argument("--tree", action="append", default=[], help="NAME=DIR: a baseline source tree")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--importtime", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="zaxy-serve-startup-"))
    try:
        memory, question, session = _memory(args, workdir)
        trees = {"now": REPO, **{name: Path(path).resolve() for name, path in (t.split("=", 1) for t in args.tree)}}
        envs = {name: _compiled_env(tree, workdir / f"pycache-{name}") for name, tree in trees.items()}
        for name, tree in trees.items():  # one unmeasured run each: page cache, derived-state migrations
            serve_once(envs[name], tree, memory, question, session)
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        for _ in range(args.runs):
            for name, tree in trees.items():
                run = serve_once(envs[name], tree, memory, question, session)
                run.update(cli_checkout_once(envs[name], tree, memory, question, session))
                runs[name].append(run)
        report: dict[str, Any] = {"memory": str(memory), "question": question, "runs": args.runs}
        keys = ("initialize_s", "tools_list_s", "first_checkout_s", "cpu_at_first_checkout_s", "server_cpu_s")
        keys += ("cli_checkout_s", "cli_checkout_cpu_s")
        for name, samples in runs.items():
            report[name] = {key: round(statistics.median(s[key] for s in samples), 3) for key in keys}
            report[name]["first_checkout_s_range"] = [
                round(min(s["first_checkout_s"] for s in samples), 3),
                round(max(s["first_checkout_s"] for s in samples), 3),
            ]
            report[name]["cited"] = all(s["cited"] and s["cli_cited"] for s in samples)
            report[name]["tools_listed"] = samples[0]["tools_listed"]
            if args.importtime:
                report[name]["import_self_s_by_package"] = serve_once(
                    envs[name], trees[name], memory, question, session, importtime=True
                )["import_self_s_by_package"]
        for name in trees:
            if name != "now":
                report[f"now_over_{name}"] = {key: round(report["now"][key] / report[name][key], 2) for key in keys}
        report["load_average"] = [round(x, 2) for x in os.getloadavg()]
        print(json.dumps(report, indent=None if args.json else 2))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
