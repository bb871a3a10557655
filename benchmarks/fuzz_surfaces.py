"""Fuzz every surface with malformed input: the MCP tools over stdio and HTTP, the CLI and the Python API.

A seeded generator (same seed, same inputs) builds malformed values — wrong types, deep nesting, 5 MB strings,
NaN / Infinity / 1e400, 5,000-digit numbers, lone surrogates, path tricks, control characters, unknown and missing
fields — and drives them through three surfaces, each against its own scratch memory:

* **MCP**: a real ``zaxy serve --profile full`` over stdio and over streamable HTTP (bearer token), spoken to by
  a raw JSON-RPC client (the SDK client would sanitise NaN and big numbers away: this one sends the bytes as
  written, plus broken JSON; over HTTP a 5xx counts as a traceback). The tools are enumerated from the server
  (``tools/list`` and the unlisted tools ``memory_capabilities`` names), so tools added later are fuzzed too; each
  tool gets ``--per-tool`` inputs built from its published input schema, on each transport.
* **CLI**: real ``zaxy`` subprocesses; the commands and their options are enumerated from the Typer app, huge
  inputs go through stdin (``hook-event``) and files (``eventloom import``), undecodable bytes through argv.
* **Python API**: ``MemoryFabric``'s public methods (enumerated), called with malformed arguments in-process.

Per surface it counts: inputs, accepted, rejected (with a structured error), tracebacks (an ``internal_error``, a
traceback on stderr, exit code 70 or an exception that is not a ``ZaxyError``), crashes (the server or a CLI
process dying, a hang), and writes on rejection (a session log or torn-tail file changed by a call that failed).
A surface is clean when the last three are 0.

Usage: python benchmarks/fuzz_surfaces.py [--per-tool 2000] [--cli 2000] [--python 2000] [--seed 25] [--json]
       [--only cli] [--cli-subprocess] [--subprocess-every 20] [--workers 2]
The CLI runs in-process by default (worker processes of 50 inputs each, through the real entry point with
Click's isolation) plus every 20th input as a real ``zaxy`` subprocess; ``--cli-subprocess`` runs them all as
subprocesses (about a second each on a loaded machine).
The test suite runs a small seeded sample (tests/surfaces/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import random
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MB5 = 5 * 1024 * 1024
FOREVER_OPTIONS = {"watch"}  # `zaxy capture --watch` follows in the foreground until stopped, by design
STRUCTURED_EXIT_CODES = {0, 1, 2, 3, 4, 5, 77}  # docs/cli.md; 70 (internal error) counts as a traceback
PATH_TRICKS = [
    "../../../../etc/passwd", "/etc/passwd", "..", ".", "a/b", "a\\b", "~", "~root", "$HOME", "%2e%2e%2f",
    "con", "nul", "a" * 300, "\x00", "s\x00s", "s\nx", " s ", "..\\..\\windows", "file:///etc/passwd",
    "eventloom://../../x/events/1#abcdef012345", "refs/../../x", "*", "?", "-s", "--help",
]  # fmt: skip
TEXT_TRICKS = [
    "", " ", "\t\n", "\ud800", "a\udfffb", "\ufeff", "🤖" * 50, "%s%n{0}{}", "'; DROP TABLE events;--",
    '{"a":', "NaN", "Infinity", "1e400", "-0", "0x10", "true", "null", "\u202e\u0645", "\x1b[31mred", "\r\n" * 20,
]  # fmt: skip


class Raw(str):
    """A JSON fragment sent exactly as written (``NaN``, ``1e400``, a 5,000-digit number, deep nesting)."""


@dataclass
class Tally:
    """What one surface did with its inputs."""

    surface: str
    inputs: int = 0
    accepted: int = 0
    rejected: int = 0
    tracebacks: int = 0
    crashes: int = 0
    writes_on_rejection: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)  # the first few failures, to reproduce them
    targets: set[str] = field(default_factory=set)
    subprocess_sample: Tally | None = None  # the CLI's in-process run: the inputs also run as real processes
    exit_codes: list[int | None] = field(default_factory=list)  # CLI: per input, in order (None: no outcome)
    disagreements: int = 0  # CLI in-process run: sampled inputs whose real process exited with another code

    def fail(self, kind: str, detail: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.examples) < 8:
            self.examples.append(f"{kind}: {detail[:600]}")

    @property
    def clean(self) -> bool:
        return self.tracebacks == self.crashes == self.writes_on_rejection == 0

    def summary(self) -> dict[str, Any]:
        return {
            "surface": self.surface,
            "inputs": self.inputs,
            "targets": len(self.targets),
            "accepted": self.accepted,
            "rejected": self.rejected,
            "tracebacks": self.tracebacks,
            "crashes": self.crashes,
            "writes_on_rejection": self.writes_on_rejection,
            **({"disagreements_with_subprocess": self.disagreements} if self.subprocess_sample else {}),
            "codes": dict(sorted(self.codes.items())),
            "examples": self.examples,
        }


# ---------------------------------------------------------------------- malformed values
class Malformed:
    """Seeded malformed values. ``wire=True``: JSON-able (with :class:`Raw` fragments); else any Python object."""

    def __init__(self, seed: int, *, huge_every: int = 100) -> None:
        self.rng = random.Random(seed)
        self.huge_every = huge_every
        self._count = 0

    def value(self, *, wire: bool = True) -> Any:
        self._count += 1
        if self.huge_every and self._count % self.huge_every == 0:
            return "x" * MB5 if self.rng.random() < 0.7 else "\ud800" * (MB5 // 4)
        kind = self.rng.randrange(11 if wire else 13)
        rng = self.rng
        if kind == 0:
            return rng.choice([0, -1, 1, 2**63, -(2**63) - 1, 10**30, 1.5, -0.0, True, False, None])
        if kind == 1:
            return (
                rng.choice([float("nan"), float("inf"), float("-inf")])
                if not wire
                else Raw(rng.choice(["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1" + "0" * 5000, "1e-400"]))
            )
        if kind == 2:
            return rng.choice(PATH_TRICKS)
        if kind == 3:
            return rng.choice(TEXT_TRICKS)
        if kind == 4:
            return "".join(chr(rng.randrange(0, 0x2FFFF)) for _ in range(rng.randrange(1, 64)))
        if kind == 5:
            return "y" * rng.choice([129, 1001, 4001, 70_000, 300_000])
        if kind == 6:
            return self.deep(rng.choice([9, 30, 200, 1000, 5000]), wire=wire)
        if kind == 7:
            return rng.choice(
                [[], {}, [None], {"": None}, [[]], {"a": {}}, ["x"] * 500, {"k" + str(i): i for i in range(300)}]
            )
        if kind == 8:
            return {rng.choice(TEXT_TRICKS + PATH_TRICKS): self.value(wire=wire) for _ in range(rng.randrange(1, 4))}
        if kind == 9:
            return [self.value(wire=wire) for _ in range(rng.randrange(1, 4))]
        if kind == 10:
            return Raw("9" * rng.choice([20, 400, 5000])) if wire else 10 ** rng.choice([20, 400, 5000])
        if kind == 11:  # Python-only objects
            return rng.choice([object(), b"bytes", {1, 2}, (1, 2), Path("/etc"), lambda: None, bytearray(b"x")])
        cyclic: dict[str, Any] = {"a": 1}
        cyclic["self"] = cyclic
        return rng.choice([cyclic, [cyclic], {1: "int key"}, {("t",): 1}])

    def deep(self, depth: int, *, wire: bool) -> Any:
        if wire:
            opener, closer = self.rng.choice([("[", "]"), ('{"a":', "}")])
            return Raw(opener * depth + "1" + closer * depth)
        value: Any = 1
        for _ in range(depth):
            value = {"a": value} if self.rng.random() < 0.5 else [value]
        return value


def encode(value: Any) -> str:
    """JSON text for ``value`` with :class:`Raw` fragments inserted verbatim (NaN as ``NaN``, lone surrogates
    escaped)."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{encode(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(encode(item) for item in value) + "]"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return json.dumps(value)


# ---------------------------------------------------------------------- arguments from a JSON schema
def plausible(schema: dict[str, Any], rng: random.Random) -> Any:
    """A value that fits ``schema`` (roughly): the starting point that mutations break."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1)) if "pattern" not in schema else "a.b"
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 0.5))
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [plausible(schema.get("items", {}), rng) for _ in range(schema.get("minItems", 0))]
    if kind == "object":
        return {
            name: plausible(sub, rng)
            for name, sub in schema.get("properties", {}).items()
            if name in schema.get("required", [])
        }
    return "x"


def malformed_arguments(schema: dict[str, Any], values: Malformed) -> Any:
    """Arguments for a tool: a plausible call with 1-3 properties broken, a required one dropped, an unknown key
    added — or no object at all."""
    rng = values.rng
    roll = rng.random()
    if roll < 0.04:
        return values.value()  # not even an object
    properties = schema.get("properties", {})
    arguments = {name: plausible(sub, rng) for name, sub in properties.items() if name in schema.get("required", [])}
    names = list(properties) or ["anything"]
    for _ in range(rng.randrange(1, 4)):
        action = rng.random()
        if action < 0.7:
            arguments[rng.choice(names)] = values.value()
        elif action < 0.85 and arguments:
            arguments.pop(rng.choice(list(arguments)))
        else:
            arguments[rng.choice(PATH_TRICKS + TEXT_TRICKS) or "extra"] = values.value()
    return arguments


# ---------------------------------------------------------------------- what a rejected call must not touch
def log_state(root: Path) -> dict[str, tuple[int, int]]:
    """Session logs and torn-tail sidecars (not derived state): what a rejected call must leave alone."""
    if not root.is_dir():
        return {}
    found = {}
    for path in list(root.glob("*.jsonl")) + list(root.glob(".torn/**/*")):
        try:
            stat = path.stat()
        except OSError:
            continue
        found[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return found


# ---------------------------------------------------------------------- MCP over stdio
class RawStdioClient:
    """``zaxy serve`` as a subprocess, spoken to with newline-delimited JSON-RPC exactly as written."""

    def __init__(self, root: Path, stderr_path: Path) -> None:
        self.root = root
        self.stderr_path = stderr_path
        self._next_id = 0
        self.process = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        command = [sys.executable, "-m", "zaxy_agents.cli.entry", "serve", "--eventloom-path", str(self.root)]
        command += ["--profile", "full", "--session-id", "fuzz", "--no-capture"]
        with open(self.stderr_path, "ab") as errors:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors)
        self.process = process
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "zaxy-fuzz", "version": "1"}})  # fmt: skip
        self.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        return process

    def restart(self) -> None:
        self.close()
        self.process = self._start()

    def alive(self) -> bool:
        return self.process.poll() is None

    def send_line(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text.encode("utf-8", "surrogatepass") + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params_json: Any, timeout: float = 120) -> dict[str, Any] | None:
        """Send one request (``params_json``: a value to encode, or a :class:`Raw` JSON text); its response, or
        ``None`` when the server died or did not answer within ``timeout``."""
        self._next_id += 1
        ident = self._next_id
        params = params_json if isinstance(params_json, Raw) else encode(params_json)
        self.send_line(f'{{"jsonrpc":"2.0","id":{ident},"method":{json.dumps(method)},"params":{params}}}')
        return self.response(ident, timeout)

    def response(self, ident: int | None, timeout: float = 120) -> dict[str, Any] | None:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                return None
            line = self.process.stdout.readline()
            if not line:
                return None  # the server exited
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if ident is None or message.get("id") == ident:
                return message
        return None

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()
                self.process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()


class RawHttpClient(RawStdioClient):
    """``zaxy serve --transport http`` as a subprocess (bearer token, no rate limit in the way), spoken to with raw
    POST bodies exactly as written; the same interface as :class:`RawStdioClient`. A reply with HTTP status 5xx
    carries ``_http_status`` so the judge counts it as a traceback."""

    TOKEN = "fuzz-token-0123456789abcdef"

    def __init__(self, root: Path, stderr_path: Path) -> None:
        self._replies: dict[Any, dict[str, Any] | None] = {}
        super().__init__(root, stderr_path)

    def _start(self) -> subprocess.Popen[bytes]:
        import socket

        import httpx

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        command = [sys.executable, "-m", "zaxy_agents.cli.entry", "serve", "--transport", "http", "--port", str(port)]
        command += ["--eventloom-path", str(self.root), "--profile", "full", "--session-id", "fuzz", "--no-capture"]
        command += ["--rate-limit", "1000000"]
        with open(self.stderr_path, "ab") as errors:
            process = subprocess.Popen(
                command, env={**os.environ, "ZAXY_AUTH_TOKEN": self.TOKEN}, stdout=errors, stderr=errors
            )
        self.process = process
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.http = httpx.Client(timeout=120)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if self.http.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        return process

    def send_line(self, text: str) -> None:
        import httpx

        headers = {"authorization": f"Bearer {self.TOKEN}", "x-zaxy-session-id": "fuzz",
                   "content-type": "application/json", "accept": "application/json, text/event-stream"}  # fmt: skip
        body = text.encode("utf-8", "surrogatepass")
        ident = _line_id(text)
        try:
            response = self.http.post(self.url, content=body, headers=headers)
        except httpx.HTTPError:
            self._replies[ident] = None
            return
        try:
            reply = response.json()
        except ValueError:
            reply = {"error": {"code": f"http {response.status_code} (not JSON)"}}
        if not isinstance(reply, dict):
            reply = {"error": {"code": f"http {response.status_code} (not an object)"}}
        if response.status_code >= 500:
            reply["_http_status"] = response.status_code
        self._replies[ident] = reply

    def response(self, ident: int | None, timeout: float = 120) -> dict[str, Any] | None:
        return self._replies.pop(ident, None)

    def close(self) -> None:
        self.http.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _line_id(text: str) -> Any:
    head = text[:64]
    start = head.find('"id":')
    if start < 0:
        return None
    digits = "".join(c for c in head[start + 5 :].split(",")[0] if c.isdigit())
    return int(digits) if digits else None


def mcp_tools(client: RawStdioClient) -> dict[str, dict[str, Any]]:
    """Every tool the server has: listed ones with their schemas, plus the unlisted ones capabilities names."""
    listing = client.request("tools/list", {}) or {}
    tools = {tool["name"]: tool.get("inputSchema", {}) for tool in listing.get("result", {}).get("tools", [])}
    capabilities = client.request("tools/call", {"name": "memory_capabilities", "arguments": {}}) or {}
    server = capabilities.get("result", {}).get("structuredContent", {}).get("server", {})
    for name in server.get("unlisted_tools", []):
        tools.setdefault(name, {"type": "object", "properties": {}})
    return tools


def fuzz_mcp(workdir: Path, per_tool: int, seed: int, *, huge_every: int = 100, transport: str = "stdio") -> Tally:
    """Every tool over a real server: ``stdio`` (newline-delimited JSON-RPC) or ``http`` (streamable HTTP POSTs)."""
    tally = Tally("mcp" if transport == "stdio" else f"mcp-{transport}")
    root = workdir / f"mcp-{transport}-loom"
    stderr_path = workdir / f"mcp-{transport}-server.stderr"
    values = Malformed(seed, huge_every=huge_every)
    client = RawStdioClient(root, stderr_path) if transport == "stdio" else RawHttpClient(root, stderr_path)
    try:
        tools = mcp_tools(client)
        names = [*sorted(tools), "no_such_tool"]
        for index in range(per_tool * len(names)):
            name = names[index % len(names)]
            tally.targets.add(name)
            arguments = malformed_arguments(tools.get(name, {}), values)
            before = log_state(root)
            tally.inputs += 1
            if values.rng.random() < 0.01:  # a broken line: the server answers a parse error and carries on
                client.send_line('{"jsonrpc":"2.0","id":' + str(10**9 + index) + ',"method":"tools/call","params":{"na')
                reply = client.response(10**9 + index, timeout=60)
            else:
                reply = client.request("tools/call", {"name": name, "arguments": arguments})
            _judge_mcp(tally, client, name, arguments, reply, before, log_state(root))
        if "Traceback" in stderr_path.read_text(errors="replace"):
            tally.fail("tracebacks", "server stderr: " + stderr_path.read_text(errors="replace")[-1500:])
    finally:
        client.close()
    return tally


def _judge_mcp(
    tally: Tally,
    client: RawStdioClient,
    name: str,
    arguments: Any,
    reply: dict | None,
    before: dict,
    after: dict,
) -> None:
    shown = f"{name} {encode(arguments)[:300]}"
    if reply is None or not client.alive():
        tally.fail("crashes", f"no answer (server alive: {client.alive()}) to {shown}")
        client.restart()
        return
    if reply.get("_http_status"):
        tally.rejected += 1
        tally.fail("tracebacks", f"HTTP {reply['_http_status']} for {shown}: {str(reply.get('error'))[:200]}")
        return
    if "error" in reply:  # a JSON-RPC level error (parse error, invalid params): structured, nothing ran
        tally.rejected += 1
        tally.codes[f"jsonrpc {reply['error'].get('code')}"] += 1
        rejected = True
    else:
        result = reply.get("result", {})
        rejected = bool(result.get("isError"))
        if rejected:
            error = (result.get("structuredContent") or {}).get("error", {})
            code = error.get("code", "unstructured")
            tally.codes[code] += 1
            tally.rejected += 1
            if code in ("internal_error", "unstructured"):
                tally.fail("tracebacks", f"{code} from {shown}: {error.get('message')}")
        else:
            tally.accepted += 1
            tally.codes["ok"] += 1
    if rejected and before != after:
        tally.fail("writes_on_rejection", f"{shown} changed {sorted(set(before.items()) ^ set(after.items()))[:4]}")


# ---------------------------------------------------------------------- the CLI
def cli_commands() -> list[tuple[list[str], list[Any]]]:
    """Every leaf command of the Typer app: (its words, its click parameters)."""
    import typer.main

    from zaxy_agents.cli.app import app

    found: list[tuple[list[str], list[Any]]] = []

    def walk(command: Any, words: list[str]) -> None:
        children = getattr(command, "commands", None)
        if children:
            for name, child in sorted(children.items()):
                walk(child, [*words, name])
        else:
            found.append((words, list(command.params)))

    walk(typer.main.get_command(app), [])
    # Servers run until stopped, by design (`serve`, `ui`); `benchmark` and `demo` are long runs of their own.
    return [(w, params) for w, params in found if w[:1] not in (["serve"], ["ui"], ["benchmark"], ["demo"])]


def cli_case(commands: list[tuple[list[str], list[Any]]], values: Malformed, workdir: Path, index: int) -> dict:
    """One CLI invocation: argv (str or undecodable bytes), stdin, and the folder it runs in."""
    rng = values.rng
    words, params = commands[index % len(commands)]
    argv: list[Any] = list(words)
    for param in params:
        if param.name in FOREVER_OPTIONS:
            continue
        if getattr(param, "is_flag", False) or rng.random() < 0.5:
            if getattr(param, "is_flag", False) and rng.random() < 0.3:
                argv.append(param.opts[0])
            continue
        value = _cli_value(values)
        if param.param_type_name == "argument":
            argv.append(value)
        elif param.name != "json_output":
            argv.extend([param.opts[0], value])
    if rng.random() < 0.3:
        argv.append("--json")
    stdin = b""
    if words == ["hook-event"]:
        stdin = rng.choice([b"", b"{", b"x" * MB5, encode(values.value()).encode("utf-8", "surrogatepass")])
    if words[:2] == ["eventloom", "import"] and rng.random() < 0.5:
        garbage = workdir / f"garbage-{index}.jsonl"
        garbage.write_bytes(rng.choice([b"x" * MB5, b'{"seq": 1}\n' * 1000, b"\xff\xfe" * 1000]))
        argv.append(str(garbage))
    return {"argv": argv, "stdin": stdin}


def _cli_value(values: Malformed) -> Any:
    value = values.value()
    if isinstance(value, str) and len(value) > 32_000:
        value = value[:32_000]  # argv is capped by the kernel (MAX_ARG_STRLEN, ARG_MAX): huge input uses stdin
    if values.rng.random() < 0.1:
        tail = bytes(values.rng.randrange(1, 256) for _ in range(4))  # seeded, and never NUL (argv cannot hold it)
        return b"\xed\xa0\x80\xff" + tail  # undecodable bytes: lone surrogates in sys.argv
    text = (value if isinstance(value, str) else encode(value)).replace("\x00", "")[:32_000] or "-"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates reach argv as the bytes that encode them
        return text.encode("utf-8", "surrogatepass")
    return text


def _cli_workspace(cwd: Path) -> Path:
    """A workspace root with some memory to read (so not every read is "no memory"); returns its log folder."""
    (cwd / ".git").mkdir(parents=True, exist_ok=True)  # a workspace root: nothing escapes the scratch folder
    root = cwd / ".eventloom"
    from zaxy_agents.fabric import MemoryFabric

    with MemoryFabric.from_path(root) as fabric:
        fabric.append("s", "fact.asserted", {"key": "db", "fact": "the database is PostgreSQL"})
    return root


def _cli_env_overrides(workdir: Path) -> dict[str, str]:
    env = {"NO_COLOR": "1", "COLUMNS": "200", "HOME": str(workdir / "home")}
    env.update({"ZAXY_EVENTLOOM_PATH": "", "CLAUDE_CONFIG_DIR": str(workdir / "home" / ".claude")})
    env.update({"CODEX_HOME": str(workdir / "home" / ".codex"), "ZAXY_HOOKS_SESSION": ""})
    return env


def fuzz_cli(
    workdir: Path,
    count: int,
    seed: int,
    *,
    workers: int = 2,
    huge_every: int = 100,
    in_process: bool = False,
    chunk: int = 50,
    subprocess_every: int = 20,
) -> Tally:
    """``count`` CLI invocations. By default each is a real ``zaxy`` subprocess. ``in_process`` runs the bulk
    inside worker processes (``chunk`` invocations each, ``workers`` at a time, each worker on its own copy of the
    workspace so the write check stays exact) through ``zaxy_agents.cli.entry.main`` with Click's isolation
    (stdin, stdout, stderr, environment), and every ``subprocess_every``-th input also as a real subprocess: the
    interpreter start (~1 s per call on a loaded machine) is what made 2,000 subprocesses infeasible."""
    if in_process:
        return _fuzz_cli_in_process(workdir, count, seed, workers, huge_every, chunk, subprocess_every)
    values = Malformed(seed, huge_every=huge_every)
    commands = cli_commands()
    return fuzz_cli_cases(workdir, [cli_case(commands, values, workdir, index) for index in range(count)], workers)


def fuzz_cli_cases(workdir: Path, cases: list[dict], workers: int, label: str = "cli") -> Tally:
    """Run CLI inputs as real ``zaxy`` subprocesses (``workers`` at a time) and tally them."""
    tally = Tally(label)
    cwd = workdir / f"{label.replace(' ', '-')}-workspace"
    root = _cli_workspace(cwd)
    env = {**os.environ, **_cli_env_overrides(workdir)}

    def run(case: dict) -> tuple[dict, subprocess.CompletedProcess[bytes] | None, dict, dict]:
        before = log_state(root)
        try:
            result = subprocess.run(
                [sys.executable, "-m", "zaxy_agents.cli.entry", *case["argv"]],
                input=case["stdin"], capture_output=True, cwd=cwd, env=env, timeout=120, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            result = None
        return case, result, before, log_state(root)

    # Reads run concurrently; the before/after comparison is only exact for the one running, so a write seen
    # during a rejected call is re-checked by running that case again alone.
    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(run, cases))
    for case, result, before, after in outcomes:
        words = [w for w in case["argv"] if isinstance(w, str) and not w.startswith("-")][:2]
        tally.targets.add(" ".join(words))
        tally.inputs += 1
        shown = " ".join(repr(a)[:80] for a in case["argv"])
        if result is None:
            tally.fail("crashes", f"timeout: {shown}")
            tally.exit_codes.append(None)
            continue
        output = result.stderr.decode("utf-8", "replace")  # stdout may show recorded errors (hooks status)
        tally.codes[f"exit {result.returncode}"] += 1
        tally.exit_codes.append(result.returncode)
        if "Traceback (most recent call last)" in output or result.returncode not in STRUCTURED_EXIT_CODES:
            kind = "crashes" if result.returncode < 0 else "tracebacks"
            tally.fail(kind, f"exit {result.returncode}: {shown}\n{output[-800:]}")
            continue
        if result.returncode == 0:
            tally.accepted += 1
            continue
        tally.rejected += 1
        if before != after:
            _case, again, before, after = run(case)
            if again is not None and again.returncode != 0 and before != after:
                tally.fail("writes_on_rejection", f"{shown} (exit {again.returncode})")
    return tally


def _fuzz_cli_in_process(
    workdir: Path, count: int, seed: int, workers: int, huge_every: int, chunk: int, subprocess_every: int
) -> Tally:
    import base64
    import shutil

    tally = Tally("cli (in-process)")
    values = Malformed(seed, huge_every=huge_every)
    commands = cli_commands()
    template = workdir / "cli-template"
    _cli_workspace(template)
    cases = [cli_case(commands, values, workdir, index) for index in range(count)]
    overrides = _cli_env_overrides(workdir)
    chunks = [list(range(start, min(start + chunk, count))) for start in range(0, count, chunk)]

    def encode_case(case: dict) -> dict:
        argv = [{"b": base64.b64encode(a).decode()} if isinstance(a, bytes) else {"s": a} for a in case["argv"]]
        return {"argv": argv, "stdin": base64.b64encode(case["stdin"]).decode()}

    def run_chunk(number: int) -> list[dict] | None:
        cwd = workdir / f"cli-ws-{number}"
        shutil.copytree(template, cwd, dirs_exist_ok=True)
        spec = workdir / f"cli-chunk-{number}.json"
        spec.write_text(json.dumps({"cwd": str(cwd), "env": overrides,
                                    "cases": [encode_case(cases[i]) for i in chunks[number]]}))  # fmt: skip
        out = workdir / f"cli-chunk-{number}.out.json"
        try:
            subprocess.run([sys.executable, __file__, "--cli-chunk", str(spec), str(out)], cwd=cwd,
                           capture_output=True, timeout=120 + 150 * len(chunks[number]), check=False)  # fmt: skip
            return json.loads(out.read_text())
        except (subprocess.TimeoutExpired, OSError, ValueError):
            return None  # a hang or a dead worker: its inputs are re-run one by one as subprocesses below

    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(run_chunk, range(len(chunks))))
    unfinished: list[int] = []
    for number, results in enumerate(outcomes):
        if results is None:
            unfinished += chunks[number]
            tally.fail("crashes", f"worker for inputs {chunks[number][0]}..{chunks[number][-1]} hung or died")
            tally.exit_codes += [None] * len(chunks[number])
            continue
        for index, result in zip(chunks[number], results, strict=True):
            _count_cli(tally, cases[index], result)
    # The subprocess sample (plus the inputs of any worker that did not finish) through real `zaxy` processes.
    sample = sorted(set(unfinished) | set(range(0, count, subprocess_every)))
    real = fuzz_cli_cases(workdir, [cases[i] for i in sample], workers, "cli subprocess sample")
    tally.subprocess_sample = real
    for index, code in zip(sample, real.exit_codes, strict=True):
        if tally.exit_codes[index] is not None and code != tally.exit_codes[index]:
            tally.disagreements += 1
            tally.examples.append(f"in-process exit {tally.exit_codes[index]}, subprocess exit {code}: input {index}")
    return tally


class _Hang(BaseException):
    """Raised by the in-process worker's alarm in a call that did not return in time."""


def _count_cli(tally: Tally, case: dict, result: dict) -> None:
    words = [w for w in case["argv"] if isinstance(w, str) and not w.startswith("-")][:2]
    tally.targets.add(" ".join(words))
    tally.inputs += 1
    shown = " ".join(repr(a)[:80] for a in case["argv"])
    code = result["code"]
    if code is None:
        tally.fail("crashes", f"hang: {shown}")
        tally.exit_codes.append(None)
        return
    tally.codes[f"exit {code}"] += 1
    tally.exit_codes.append(code)
    if result["traceback"] or code not in STRUCTURED_EXIT_CODES:
        tally.fail("tracebacks", f"exit {code}: {shown}\n{result['stderr'][-800:]}")
    elif code == 0:
        tally.accepted += 1
    else:
        tally.rejected += 1
        if result["wrote"]:
            tally.fail("writes_on_rejection", f"{shown} (exit {code})")


def run_cli_chunk(spec_path: str, out_path: str) -> None:
    """Worker: run a chunk of CLI inputs in this process, one after another, and write their outcomes."""
    import base64
    import traceback

    from click.testing import CliRunner

    from zaxy_agents.cli.entry import main as zaxy_main

    spec = json.loads(Path(spec_path).read_text())
    os.chdir(spec["cwd"])
    root = Path(spec["cwd"]) / ".eventloom"
    runner = CliRunner()
    # A `zaxy` process with piped streams encodes with these error handlers (surrogateescape under a UTF-8
    # locale); Click's isolation is strict, which would fail on undecodable argv echoed back.
    handlers = {name: getattr(sys, name).errors for name in ("stdin", "stdout", "stderr")}

    def hang(_signum: int, _frame: Any) -> None:
        raise _Hang

    signal.signal(signal.SIGALRM, hang)
    results = []
    for case in spec["cases"]:
        argv = [os.fsdecode(base64.b64decode(a["b"])) if "b" in a else a["s"] for a in case["argv"]]
        before = log_state(root)
        code: Any = 0
        escaped = ""
        with runner.isolation(input=base64.b64decode(case["stdin"]), env=spec["env"]) as (_out, err, _both):
            for name, errors in handlers.items():
                getattr(sys, name).reconfigure(errors=errors)
            signal.alarm(120)  # as a subprocess's timeout: a call that does not return in 2 minutes hangs
            try:
                zaxy_main(argv)
            except SystemExit as exc:
                code = exc.code
            except _Hang:
                escaped, code = "hang: no answer in 120 s", "hang"
            except BaseException:  # what a subprocess would print as a traceback
                escaped = traceback.format_exc()
                code = 1
            finally:
                signal.alarm(0)
            stderr = err.getvalue().decode("utf-8", "replace")
        if code == "hang":
            results.append({"code": None, "traceback": False, "stderr": stderr[-2000:], "wrote": False})
            continue
        if code is None:
            code = 0
        elif not isinstance(code, int):
            stderr += f"\n{code}"
            code = 1
        results.append({
            "code": code,
            "traceback": bool(escaped) or "Traceback (most recent call last)" in stderr,
            "stderr": (stderr + escaped)[-2000:],
            "wrote": code != 0 and log_state(root) != before,
        })  # fmt: skip
        os.chdir(spec["cwd"])  # a command that changed the working folder does not move the next one
    Path(out_path).write_text(json.dumps(results))


# ---------------------------------------------------------------------- the Python API
SKIPPED_METHODS = {"close", "reproject", "re_embed", "export_jsonl", "import_jsonl", "for_maintenance", "from_path"}


def api_methods(fabric: Any) -> list[tuple[str, inspect.Signature]]:
    found = []
    for name in sorted(dir(type(fabric))):
        if name.startswith("_") or name in SKIPPED_METHODS:
            continue
        member = getattr(type(fabric), name)
        if callable(member) and not isinstance(member, property):
            try:
                found.append((name, inspect.signature(getattr(fabric, name))))
            except (TypeError, ValueError):
                continue
    return found


def fuzz_python(workdir: Path, count: int, seed: int, *, huge_every: int = 100) -> Tally:
    from zaxy_agents.errors import ZaxyError
    from zaxy_agents.fabric import MemoryFabric

    tally = Tally("python")
    values = Malformed(seed, huge_every=huge_every)
    root = workdir / "api-loom"
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    with MemoryFabric.from_path(root) as fabric:
        fabric.append("s", "fact.asserted", {"key": "db", "fact": "the database is PostgreSQL"})
        methods = api_methods(fabric)
        for index in range(count):
            name, signature = methods[index % len(methods)]
            tally.targets.add(name)
            args, kwargs = _api_arguments(signature, values)
            before = log_state(root)
            tally.inputs += 1
            try:
                result = getattr(fabric, name)(*args, **kwargs)
                if inspect.isgenerator(result) or type(result).__name__ == "generator":
                    result = list(result)
            except ZaxyError as exc:
                tally.rejected += 1
                tally.codes[exc.code] += 1
                if exc.code == "internal_error":
                    tally.fail("tracebacks", f"{name}: internal_error {exc.message}")
                elif log_state(root) != before:
                    tally.fail("writes_on_rejection", f"{name}({_shown(args, kwargs)})")
            except RecursionError:
                tally.fail("tracebacks", f"{name}({_shown(args, kwargs)}): RecursionError")
            except Exception as exc:  # any other exception is what the fuzzer looks for
                tally.codes[type(exc).__name__] += 1
                tally.fail("tracebacks", f"{name}({_shown(args, kwargs)}): {type(exc).__name__}: {exc}"[:600])
            else:
                tally.accepted += 1
                tally.codes["ok"] += 1
    return tally


def _api_arguments(signature: inspect.Signature, values: Malformed) -> tuple[list[Any], dict[str, Any]]:
    rng = values.rng
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        required = parameter.default is inspect.Parameter.empty
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if not required and rng.random() < 0.6:
            continue
        value = values.value(wire=False) if rng.random() < 0.8 else "s"
        if parameter.kind == parameter.KEYWORD_ONLY or (not required and not args and rng.random() < 0.5):
            kwargs[parameter.name] = value
        elif parameter.kind != parameter.KEYWORD_ONLY and not kwargs:
            args.append(value)
        else:
            kwargs[parameter.name] = value
    return args, kwargs


def _shown(args: list[Any], kwargs: dict[str, Any]) -> str:
    def short(value: Any) -> str:
        try:
            text = repr(value)
        except (RecursionError, ValueError):
            text = f"<{type(value).__name__}>"
        return text if len(text) <= 80 else text[:77] + "..."

    return ", ".join([short(a) for a in args] + [f"{k}={short(v)}" for k, v in kwargs.items()])


# ---------------------------------------------------------------------- main
def main() -> int:
    if sys.argv[1:2] == ["--cli-chunk"]:  # a worker of the in-process CLI run (see fuzz_cli)
        run_cli_chunk(sys.argv[2], sys.argv[3])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-tool", type=int, default=2000, help="malformed inputs per MCP tool")
    parser.add_argument("--cli", type=int, default=2000, help="CLI invocations")
    parser.add_argument("--python", type=int, default=2000, help="Python API calls")
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--workers", type=int, default=2, help="CLI processes at a time")
    parser.add_argument(
        "--cli-subprocess",
        action="store_true",
        help="every CLI input in its own `zaxy` process (default: in-process workers + a sample)",
    )
    parser.add_argument(
        "--subprocess-every",
        type=int,
        default=20,
        help="in-process mode: every N-th CLI input also runs as a real subprocess",
    )
    parser.add_argument("--only", default="python,mcp,mcp-http,cli", help="surfaces to run (comma-separated)")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="zaxy-fuzz-") as scratch:
        workdir = Path(scratch)
        for label, run in (
            ("python", lambda: fuzz_python(workdir, options.python, options.seed)),
            ("mcp", lambda: fuzz_mcp(workdir, options.per_tool, options.seed)),
            ("mcp-http", lambda: fuzz_mcp(workdir, options.per_tool, options.seed, transport="http")),
            ("cli", lambda: fuzz_cli(workdir, options.cli, options.seed, workers=options.workers,
                                     in_process=not options.cli_subprocess,
                                     subprocess_every=options.subprocess_every)),
        ):  # fmt: skip
            if label not in options.only.split(","):
                continue
            started = time.perf_counter()
            tally = run()
            tallies = [tally, *([tally.subprocess_sample] if tally.subprocess_sample else [])]
            for one in tallies:
                summary = {**one.summary(), "seconds": round(time.perf_counter() - started, 1)}
                results.append(summary)
                if not options.json:
                    print(f"{label}: {json.dumps({k: v for k, v in summary.items() if k != 'examples'})}", flush=True)
                    for example in summary["examples"]:
                        print("   ", example.replace("\n", "\n    "), flush=True)
    if options.json:
        print(json.dumps(results, indent=2))
    return 0 if all(r["tracebacks"] == r["crashes"] == r["writes_on_rejection"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
