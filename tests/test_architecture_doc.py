"""docs/architecture.md against the code: what the page names and counts is what the tree holds.

tests/test_architecture.py checks the import rules and that every service the fabric builds is in the page's table;
tests/test_docs_paths.py that every ``zaxy_agents/...`` path exists. This module checks the rest of what the page
claims, each a way it drifted before: the layer diagram names every package (and no package that is gone), the
surfaces and the units above the fabric are the ones the rules use, every code name in backticks (class, method,
constant, module file) exists, the capability lists are the enums, each service's "uses" column is what
``MemoryFabric`` builds it from, and "four new files and two one-line edits" is what add-a-backend.md lists.
"""

from __future__ import annotations

import ast
import re

from tests.conftest import REPO_ROOT
from tests.test_architecture import ABOVE_DOMAIN, MODULES, PACKAGE_ROOT, SURFACES

PAGE = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
GUIDE = (REPO_ROOT / "docs" / "add-a-backend.md").read_text(encoding="utf-8")
DIAGRAM = PAGE.split("```\n", 2)[1]
CODE = sorted(set(re.findall(r"`([^`\n]+)`", PAGE)))
# Names the page borrows from LangGraph (what the fabric's design follows or is tested against).
EXTERNAL = {"BaseCheckpointSaver", "InMemoryStore", "Send"}


def _classes() -> dict[str, list[ast.ClassDef]]:
    found: dict[str, list[ast.ClassDef]] = {}
    for tree in MODULES.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(node)
    return found


def _assigned_names() -> set[str]:
    names = set()
    for tree in MODULES.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return names


def _members(node: ast.ClassDef) -> set[str]:
    names = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(item.name)
        elif isinstance(item, ast.Assign):
            names |= {target.id for target in item.targets if isinstance(target, ast.Name)}
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
    return names


def _diagram_words(line_start: str) -> set[str]:
    line = next(line for line in DIAGRAM.splitlines() if line.startswith(line_start))
    return {word.strip("[]") for word in line.split() if word.strip("[]").endswith("/")}


def test_the_layer_diagram_names_every_package_and_only_packages_that_exist() -> None:
    paths = set(re.findall(r"(?<![\w/.])([a-z_]+(?:/[a-z_]+)*/)(?![\w])", DIAGRAM))
    words = paths | {"/".join(path.split("/")[:depth]) + "/" for path in paths for depth in (1, 2)}
    packages = {f"{path.name}/" for path in PACKAGE_ROOT.iterdir() if (path / "__init__.py").exists()}
    storage = {
        f"storage/{path.name}/" for path in (PACKAGE_ROOT / "storage").iterdir() if (path / "__init__.py").exists()
    }
    assert packages - words == set(), "packages the diagram does not show"
    assert storage - words == set(), "storage packages the diagram does not show"
    assert {path for path in paths if not (PACKAGE_ROOT / path).is_dir()} == set(), "the diagram names no package"
    modules = {path.stem for path in PACKAGE_ROOT.glob("*.py")} - {"__init__"}
    assert {module for module in modules if not re.search(rf"(?<![\w/.]){module}(?![\w/])", DIAGRAM)} == set()
    for path in re.findall(r"(?<![\w/.])([a-z_]+(?:/[a-z_]+)*\.py)", DIAGRAM):
        assert list(PACKAGE_ROOT.rglob(path)), f"the diagram names {path}, which does not exist"


def test_the_diagram_shows_the_surfaces_and_the_units_above_the_fabric_the_rules_use() -> None:
    assert {word.rstrip("/") for word in _diagram_words("surfaces")} == SURFACES
    above = {word.rstrip("/") for word in _diagram_words("above")}
    assert above == ABOVE_DOMAIN - SURFACES - {"fabric", "storage.conformance"}


def test_every_code_name_on_the_page_exists() -> None:
    classes, assigned = _classes(), _assigned_names()
    missing = []
    for code in CODE:
        if re.fullmatch(r"[A-Z][A-Z_]+", code):
            if code not in assigned:
                missing.append(code)
        elif re.fullmatch(r"[A-Z][A-Za-z]+", code) and code not in EXTERNAL:
            if code not in classes:
                missing.append(code)
        elif match := re.fullmatch(r"([A-Z][A-Za-z]+)\.(\w+)", code):
            owner, member = match.groups()
            if not any(member in _members(node) for node in classes.get(owner, [])):
                missing.append(code)
        elif (  # a path from the repository or inside the package
            re.fullmatch(r"[\w/*]+\.py", code)
            and not (REPO_ROOT / code).exists()
            and not list(PACKAGE_ROOT.rglob(code))
        ):
            missing.append(code)
    assert not missing, f"docs/architecture.md names code that does not exist: {missing}"


def test_the_capability_lists_are_the_enums() -> None:
    from zaxy_agents.eventloom.protocol import LogCapability
    from zaxy_agents.storage.protocols import Capability

    phrases = ((Capability, "`StorageBackend.capabilities` ("), (LogCapability, "`EventLog.capabilities`\n("))
    for enum, phrase in phrases:
        listed = PAGE.split(phrase, 1)[1].split(")", 1)[0]
        named = {name.split(".")[-1] for name in re.findall(r"`([\w.]+)`", listed)}
        assert named == {member.name for member in enum}, f"{enum.__name__}: the page lists {sorted(named)}"


def _service_rows() -> dict[str, str]:
    """attribute -> the "uses" cell of its row in the page's table of services."""
    rows = {}
    for line in PAGE.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2:
            for attribute in re.findall(r"`\w+Service` \(`(\w+)`", cells[0]):
                rows[attribute] = cells[1]
    return rows


def _documented_uses(cell: str, attributes: set[str]) -> set[str]:
    """The services a cell names, outside its asides: text in parentheses and after a ':' or ';' explains."""
    cell = re.sub(r"\([^()]*\)", "", re.sub(r"`[^`]*\(core\)`", "", cell))
    cell = re.split(r"[:;]", cell, maxsplit=1)[0]
    return {word for word in re.findall(r"[a-z_]+", cell) if word in attributes}


def _built_with() -> dict[str, set[str]]:
    """attribute -> the services (by attribute) the builder ``MemoryFabric`` declares for it (``x =
    lazy_service(lambda f: XService(f.core, f.events, ...))``) passes it: the ``f.<attribute>`` it reads, the core
    and the migrations aside."""
    facade = next(
        node
        for node in ast.walk(MODULES["zaxy_agents.fabric.core"])
        if isinstance(node, ast.ClassDef) and node.name == "MemoryFabric"
    )
    built = {}
    for statement in facade.body:
        if not (
            isinstance(statement, ast.Assign)
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Call)
            and ast.unparse(statement.value.func) == "lazy_service"
        ):
            continue
        builder = statement.value.args[0]
        assert isinstance(builder, ast.Lambda), ast.unparse(statement)
        fabric = builder.args.args[0].arg
        built[statement.targets[0].id] = {
            sub.attr
            for sub in ast.walk(builder.body)
            if isinstance(sub, ast.Attribute)
            and isinstance(sub.value, ast.Name)
            and sub.value.id == fabric
            and sub.attr not in {"core", "_applied_migrations"}
        }
    assert len(built) >= 20
    return built


def test_each_service_uses_what_the_table_says() -> None:
    built, rows = _built_with(), _service_rows()
    assert set(built) <= set(rows)
    attributes = set(built)
    wrong = {
        attribute: {"table": sorted(_documented_uses(rows[attribute], attributes)), "code": sorted(uses)}
        for attribute, uses in built.items()
        if _documented_uses(rows[attribute], attributes) != uses
    }
    assert not wrong, f"the services table's 'uses' column differs from what MemoryFabric builds each from: {wrong}"


def test_the_uses_check_reads_asides_as_asides() -> None:
    attributes = {"projection", "working_sets", "stores", "erasure", "events", "synthesis"}
    cell = "projection, working_sets (their memo); `on_erase` hooks of open derived stores"
    assert _documented_uses(cell, attributes) == {"projection", "working_sets"}
    assert _documented_uses("`retrieval_listeners(core)`: the indexes kept in step with it", attributes) == set()
    assert _documented_uses("the log, `events.append_many`, a port of the synthesis service", attributes) == {
        "events",
        "synthesis",
    }


NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def test_adding_a_backend_takes_the_files_and_edits_the_guide_lists() -> None:
    table = [line for line in GUIDE.split("## The files", 1)[1].split("\n\n")[1].splitlines() if line.startswith("| `")]
    new_files = [line for line in table if line.startswith("| `storage/<name>/")]
    edits = [line for line in table if "**one" in line]
    assert len(new_files) + len(edits) == len(table)
    for page in (PAGE, GUIDE):
        files, one_line_edits = re.search(r"(\w+) new files and (\w+) one-line edits", page).groups()
        assert (NUMBERS[files], NUMBERS[one_line_edits]) == (len(new_files), len(edits))
