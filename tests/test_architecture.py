"""The layering rules of docs/architecture.md, checked on the source (every import statement counts, including
imports inside functions and under ``TYPE_CHECKING``).

1. No cycle between packages: the top-level packages and modules of ``zaxy_agents`` form a DAG (the conformance
   kit, ``zaxy_agents.storage.conformance``, counts as its own package above all others, used by tests only).
2. Surfaces (cli, mcp, langgraph, capture, ui) import only the fabric, the public types listed below and each
   other; never ``zaxy_agents.storage``.
3. No backend-kind check outside ``zaxy_agents.storage``: nothing else compares backend names or URI schemes,
   tests a storage class with ``isinstance``, or looks at a class name.
4. No module registers itself on import: every extractor, producer and MCP tool module is in its explicit list.
5. The fabric is a facade composed of services (no mixin bases); no domain package receives the fabric (no
   ``fabric`` parameter, attribute or ``services={"fabric": ...}`` callback), so nothing below it calls it back.
"""

from __future__ import annotations

import ast
import pkgutil
import re
from collections import defaultdict
from pathlib import Path

import zaxy_agents

PACKAGE_ROOT = Path(zaxy_agents.__file__).parent
SURFACES = {"cli", "mcp", "langgraph", "capture", "ui"}
# What a surface may import besides the fabric and other surfaces: public types, constants and pure helpers.
PUBLIC = {
    "zaxy_agents.fabric",  # MemoryFabric, BackendStatus, TransferResult
    "zaxy_agents.fabric.light",  # the stdlib-only hook path
    "zaxy_agents.fabric.sharing",  # graph-owner election for server processes
    "zaxy_agents.fabric.hook_state",  # the hook error log
    "zaxy_agents.fabric.location",  # whether the memory is the Eventloom folder (before opening it)
    "zaxy_agents.fabric.health",  # the files backend's self-checks (zaxy doctor)
    "zaxy_agents.fabric.capture_ops",  # edit_key: the capture dedupe key, shared with the transcript readers
    "zaxy_agents.checkout.replay",  # the replay lane's bounds (tool arguments)
    "zaxy_agents.retrieval.embeddings",  # resolve_embedder: what an embedder setting names (zaxy doctor)
    "zaxy_agents.retrieval.cues",  # context cue names and their check (the CLI's --cue, before opening memory)
    "zaxy_agents.instants",  # parsing and checking instants (--as-of)
    "zaxy_agents.eventloom.scope_patterns",
    "zaxy_agents.config",
    "zaxy_agents.errors",
    "zaxy_agents.assets",
    "zaxy_agents.tool_arguments",
    "zaxy_agents.coordinate.arguments",  # Coordinate tools' argument models (shared by MCP and LangGraph)
    "zaxy_agents.labels",  # how decorators label functions for explicit tables
    "zaxy_agents.eventloom.models",
    "zaxy_agents.eventloom.citations",
    "zaxy_agents.eventloom.validation",
    "zaxy_agents.eventloom.redaction",  # redaction policy names (the LangGraph store/checkpointer redaction= argument)
    "zaxy_agents.eventloom.canonical",
    "zaxy_agents.checkpoints",  # thread-session naming constants
    "zaxy_agents.checkpoints.transcript",
    "zaxy_agents.checkout.tokens",
    "zaxy_agents.checkout.purpose",
    "zaxy_agents.conversation.citations",
    "zaxy_agents.workingset",
    "zaxy_agents.projection.rebuild_status",  # a rebuild's counters and its cancelled outcome (zaxy reproject)
    "zaxy_agents.evaluation",  # benchmark harnesses the CLI runs (they drive MemoryFabric themselves)
}
# Units above the fabric (they hold a MemoryFabric): the fabric itself, the surfaces, the framework adapters, the
# benchmark harnesses and the conformance kit. Everything else is domain or storage and never sees the fabric.
ABOVE_DOMAIN = {"fabric", "adapters", "evaluation", "storage.conformance", *SURFACES}
BACKEND_WORDS = {"jsonl", "files", "embedded", "postgresql", "postgres", "memory", "kuzu"}
BACKEND_SCHEMES = ("postgresql://", "postgres://", "memory://")


def _modules() -> tuple[dict[str, ast.Module], set[str]]:
    found, packages = {}, set()
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
            packages.add(".".join(parts))
        found[".".join(parts)] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return found, packages


MODULES, PACKAGES = _modules()


def _imports(name: str, tree: ast.Module) -> list[tuple[str, int]]:
    """Every ``zaxy_agents`` module (or module attribute) ``name`` imports, with the line."""
    base = name.split(".") if name in PACKAGES else name.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - (node.level - 1)]
                module = ".".join(anchor + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((module, node.lineno))
            out += [
                (f"{module}.{alias.name}", node.lineno) for alias in node.names if f"{module}.{alias.name}" in MODULES
            ]
    return [(target, line) for target, line in out if target.startswith("zaxy_agents.")]


def _unit(module: str) -> str:
    """The top-level package (or module) of ``zaxy_agents`` a module belongs to. Two parts of ``storage`` are
    units of their own: the conformance kit drives backends through the fabric and the LangGraph surface, so it
    sits above everything; the derived-state engine (``storage/derived``, ``storage/derived_sqlite``: SQLite
    files any layer may keep rebuildable state in) sits below the domain."""
    parts = module.split(".")
    if parts[1:3] == ["storage", "conformance"]:
        return "storage.conformance"
    if parts[1:3] in (["storage", "derived"], ["storage", "derived_sqlite"]):
        return "storage.derived"
    return parts[1] if len(parts) > 1 else parts[0]


def _package_graph() -> dict[str, dict[str, list[str]]]:
    """unit -> imported unit -> ["module:line", ...] (evidence for the failure message)."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for name, tree in MODULES.items():
        for target, line in _imports(name, tree):
            if _unit(name) != _unit(target):
                graph[_unit(name)][_unit(target)].append(f"{name}:{line}")
    return graph


def _cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """Strongly connected components with more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in list(graph):
        if node not in index:
            visit(node)
    return components


def test_no_import_cycle_between_packages() -> None:
    graph = _package_graph()
    problems = []
    for component in _cycles(graph):
        edges = [
            f"  {a} -> {b}: {', '.join(graph[a][b][:3])}" for a in component for b in component if b in graph.get(a, {})
        ]
        problems.append(f"cycle {' <-> '.join(component)}:\n" + "\n".join(edges))
    assert not problems, "\n".join(problems)


def test_only_tests_use_the_conformance_kit() -> None:
    users = {
        f"{name}:{line}"
        for name, tree in MODULES.items()
        if _unit(name) != "storage.conformance"
        for target, line in _imports(name, tree)
        if _unit(target) == "storage.conformance"
    }
    assert not users, f"the conformance kit is for tests: {sorted(users)}"


def test_surfaces_import_only_the_fabric_and_public_types() -> None:
    problems = []
    for name, tree in MODULES.items():
        if _unit(name) not in SURFACES:
            continue
        for target, line in _imports(name, tree):
            if _unit(target) in SURFACES:
                continue
            if not any(target == public or target.startswith(public + ".") for public in PUBLIC) or (
                target.startswith("zaxy_agents.fabric.") and target not in PUBLIC
            ):
                problems.append(f"{name}:{line} imports {target}")
    assert not problems, "surfaces must go through MemoryFabric:\n" + "\n".join(problems)


def _backend_checks(name: str, tree: ast.Module) -> list[str]:
    storage_classes = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("zaxy_agents.storage")
        for alias in node.names
        if alias.name[:1].isupper()
    }

    def backendish(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.lower() in BACKEND_WORDS or node.value.startswith(BACKEND_SCHEMES)
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(backendish(element) for element in node.elts)
        return False

    found = []
    for node in ast.walk(tree):
        where = f"{name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Attribute) and node.attr in {"backend_kind", "__class__"}:
            found.append(f"{where} uses .{node.attr}")
        elif isinstance(node, ast.Name) and re.fullmatch(r"BACKEND_(?!JSONL$)\w+|\w*POSTGRES\w*_PREFIX\w*", node.id):
            found.append(f"{where} uses {node.id}")
        elif isinstance(node, ast.Compare) and any(backendish(part) for part in [node.left, *node.comparators]):
            found.append(f"{where} compares with a backend name")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in {"startswith", "endswith"} and any(backendish(arg) for arg in node.args):
                found.append(f"{where} tests a backend URI scheme")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"isinstance", "type"}:
            names = {n.id for arg in node.args[1:] for n in ast.walk(arg) if isinstance(n, ast.Name)}
            if names & storage_classes:
                found.append(f"{where} tests for a storage class {sorted(names & storage_classes)}")
    return found


def test_no_backend_kind_check_outside_storage() -> None:
    problems = [
        problem
        for name, tree in MODULES.items()
        if not _unit(name).startswith("storage")
        for problem in _backend_checks(name, tree)
    ]
    assert not problems, "ask the backend object (capabilities, methods), not which backend it is:\n" + "\n".join(
        problems
    )


def test_the_check_catches_a_backend_switch() -> None:
    """The rule above can fail: a typical switch is reported."""
    tree = ast.parse(
        "from zaxy_agents.storage.postgres.log import PostgresEventLog\n"
        "if settings.backend.startswith('postgresql://'): pass\n"
        "if isinstance(log, PostgresEventLog): pass\n"
        "if store.backend == 'kuzu': pass\n"
        "if text.startswith(POSTGRES_URI_PREFIXES): pass\n"
    )
    assert len(_backend_checks("x", tree)) == 4


def test_every_labelled_module_is_listed() -> None:
    """Labels do nothing by themselves: a module of extractors or tools must be in its explicit list."""
    from zaxy_agents.fabric.features import EXTRACTOR_MODULES, PRODUCER_MODULES
    from zaxy_agents.mcp import tools
    from zaxy_agents.projection import extractors

    tool_modules = {f"{tools.__name__}.{info.name}" for info in pkgutil.iter_modules(tools.__path__)}
    assert tool_modules == {module.__name__ for module in tools.TOOL_MODULES}
    extractor_modules = {f"{extractors.__name__}.{info.name}" for info in pkgutil.iter_modules(extractors.__path__)}
    assert extractor_modules - {f"{extractors.__name__}.common"} == {m.__name__ for m in extractors.BUILTIN_MODULES}
    listed = {"register": EXTRACTOR_MODULES, "register_producer": PRODUCER_MODULES, "tool": tools.TOOL_MODULES}
    for name, tree in MODULES.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                called = decorator.func if isinstance(decorator, ast.Call) else decorator
                label = called.id if isinstance(called, ast.Name) else None
                if label in listed:
                    modules = {module.__name__ for module in listed[label]}
                    assert name in modules, f"{name}.{node.name} is labelled @{label} but {name} is not listed"


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b": ["a.x:1"]}, "b": {"c": ["b.y:2"]}, "c": {"a": ["c.z:3"]}, "d": {"a": ["d:1"]}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_fabric_is_composed_of_services_not_mixins() -> None:
    """MemoryFabric inherits nothing, and builds each service (on first use: ``lazy_service``) from the core and
    other services, never from itself (so no service can call the facade back)."""
    from zaxy_agents.fabric.core import MemoryFabric

    assert MemoryFabric.__mro__ == (MemoryFabric, object)
    facade = next(
        node
        for node in ast.walk(MODULES["zaxy_agents.fabric.core"])
        if isinstance(node, ast.ClassDef) and node.name == "MemoryFabric"
    )
    builders = [
        node.value.args[0]
        for node in facade.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) == "lazy_service"
    ]
    assert all(isinstance(builder, ast.Lambda) for builder in builders)
    built = [
        (builder.args.args[0].arg, node)
        for builder in builders
        for node in ast.walk(builder)
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("Service")
    ]
    assert len(built) >= 20
    mixins = [
        f"{name}.{node.name}"
        for name, tree in MODULES.items()
        if _unit(name) == "fabric"
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and (node.name.endswith(("Operations", "Mixin")))
    ]
    assert not mixins, f"fabric mixins are gone; make these services: {mixins}"
    for fabric, call in built:  # the builder's parameter is the fabric: it may reach services through it, not be one
        arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
        assert not any(isinstance(a, ast.Name) and a.id in {fabric, "self"} for a in arguments), ast.unparse(call)


def _fabric_handles(name: str, tree: ast.Module) -> list[str]:
    """Where a module imports the fabric or is handed it: a ``fabric`` parameter, variable or attribute, a
    ``"fabric"`` key, or a ``services=`` argument (the callback bag domain code once used to reach the facade)."""
    found = [f"{name}:{line} imports {target}" for target, line in _imports(name, tree) if _unit(target) == "fabric"]
    for node in ast.walk(tree):
        where = f"{name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.arg) and node.arg in {"fabric", "services"}:
            found.append(f"{where} takes a {node.arg!r} parameter")
        elif isinstance(node, ast.Name) and node.id == "fabric":
            found.append(f"{where} uses a name 'fabric'")
        elif isinstance(node, ast.Attribute) and node.attr == "fabric":
            found.append(f"{where} reads .fabric")
        elif isinstance(node, ast.Constant) and node.value == "fabric":
            found.append(f"{where} uses the key 'fabric'")
        elif isinstance(node, ast.keyword) and node.arg == "services":
            found.append(f"{where} passes services=")
    return found


def test_no_domain_package_receives_the_fabric() -> None:
    problems = [
        problem
        for name, tree in MODULES.items()
        if name != "zaxy_agents" and _unit(name) not in ABOVE_DOMAIN
        for problem in _fabric_handles(name, tree)
    ]
    assert not problems, "domain code gets what it needs as arguments, never the fabric:\n" + "\n".join(problems)


def test_the_check_catches_a_fabric_callback() -> None:
    tree = ast.parse(
        "from zaxy_agents.fabric import MemoryFabric\n"
        "def extension(context, services):\n"
        "    return services['fabric'].query('x')\n"
        "run(extension, services={'fabric': self})\n"
        "def build(fabric): return fabric.log\n"
    )
    assert len(_fabric_handles("zaxy_agents.checkout.x", tree)) == 7


def test_the_architecture_page_lists_every_service_the_fabric_builds() -> None:
    """docs/architecture.md's table of services names each one MemoryFabric declares (``lazy_service``), under its
    attribute."""
    page = (PACKAGE_ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    facade = next(
        node
        for node in ast.walk(MODULES["zaxy_agents.fabric.core"])
        if isinstance(node, ast.ClassDef) and node.name == "MemoryFabric"
    )
    built = {
        node.targets[0].id: ast.unparse(call.func)
        for node in facade.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) == "lazy_service"
        for call in [node.value.args[0].body]  # type: ignore[attr-defined]
        if isinstance(call, ast.Call) and ast.unparse(call.func).endswith("Service")
    }
    assert len(built) >= 20
    missing = [f"`{service}` (`{attribute}`" for attribute, service in built.items()]
    missing = [entry for entry in missing if entry not in page]
    assert not missing, f"docs/architecture.md does not list: {missing}"


# Small modules with one job: past this many lines a module is a smell (docs/architecture.md's standard).
MODULE_LINE_LIMIT = 500
# Exceptions, each held to its count: none today (the last two, projection/projector.py and sqlite_catalog.py, were
# split by job), and none may be added.
OVER_THE_LIMIT: dict[str, int] = {}


def _module_lines() -> dict[str, int]:
    root = PACKAGE_ROOT.parent
    return {
        path.relative_to(root).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(PACKAGE_ROOT.rglob("*.py"))
    }


def test_no_module_grows_past_the_line_limit() -> None:
    """Every module of zaxy_agents is at most MODULE_LINE_LIMIT lines, but the listed exceptions, which may not grow
    past their count."""
    lines = _module_lines()
    over = {module: count for module, count in lines.items() if count > OVER_THE_LIMIT.get(module, MODULE_LINE_LIMIT)}
    assert not over, f"modules past their line limit (split them by job): {over}"
    assert set(OVER_THE_LIMIT) <= set(lines), "an exception names a module that no longer exists: remove it"
