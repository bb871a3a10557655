"""The tool registry: every MCP tool is one :func:`tool`-decorated handler in a module under ``mcp/tools/``.

Adding a tool is a self-contained change in one module::

    # zaxy_agents/mcp/tools/causal.py
    from zaxy_agents.mcp.registry import tool
    from zaxy_agents.mcp.schema import ToolArgs

    class CausalTraceArgs(ToolArgs):
        entity: str = Field(max_length=200, description="...")

    @tool("memory_causal_trace", profile="full", order=200, read_only=True,
          description="Why did this happen? Causes of an entity, cited.")
    def causal_trace(call: ToolCall[CausalTraceArgs]) -> dict:
        return call.fabric.causal_trace(call.session, call.args.entity)

``@tool`` only labels the handler; list the module in ``TOOL_MODULES`` (``zaxy_agents/mcp/tools/__init__.py``,
one line) and the default :class:`ToolTable` collects it. Then regenerate the tested contract:
``python -m zaxy_agents.mcp.contract --write``.

Profiles change what ``tools/list`` shows, never what can be called: the core profile lists the core tools, the
full profile lists every tool, and every registered tool is callable by name under either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any, Generic, Literal, TypeVar

from zaxy_agents.labels import label_of, labelled, put_label

from .schema import ToolArgs

Profile = Literal["core", "full"]
PROFILES: tuple[Profile, ...] = ("core", "full")
MAX_CORE_TOOLS = 8

ArgsT = TypeVar("ArgsT", bound=ToolArgs)


@dataclass
class ToolCall(Generic[ArgsT]):
    """What a handler receives: the fabric of the executing process, validated args and the caller's scope."""

    fabric: Any
    args: ArgsT
    caller: Any  # zaxy_agents.mcp.caller.Caller

    @property
    def session(self) -> str:
        return self.caller.session


Handler = Callable[[ToolCall[Any]], dict[str, Any]]


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its contract (name, description, schema, hints) and its handler."""

    name: str
    description: str
    args: type[ToolArgs]
    handler: Handler
    profile: Profile
    order: int
    read_only: bool
    admin: bool = False
    summarize: Callable[[dict[str, Any]], str] | None = None
    render: Callable[[dict[str, Any]], str] | None = None
    module: str = field(default="", compare=False)

    def input_schema(self) -> dict[str, Any]:
        return self.args.input_schema()

    def contract(self) -> dict[str, Any]:
        """The part of a tool clients depend on (snapshotted in docs/examples/mcp-tool-contract.json)."""
        return {
            "name": self.name,
            "profile": self.profile,
            "read_only": self.read_only,
            "admin_over_http": self.admin,
            "description": self.description,
            "inputSchema": self.input_schema(),
            **({"aliases": dict(self.args.ARGUMENT_ALIASES)} if self.args.ARGUMENT_ALIASES else {}),
        }


TOOL_SPEC = "zaxy_mcp_tool"  # the label @tool puts on a handler


def tool(
    name: str,
    *,
    description: str,
    profile: Profile = "full",
    order: int = 1000,
    read_only: bool = False,
    admin: bool = False,
    summarize: Callable[[dict[str, Any]], str] | None = None,
    render: Callable[[dict[str, Any]], str] | None = None,
) -> Callable[[Handler], Handler]:
    """Label ``handler`` as the tool ``name``; its argument model is read from the ``ToolCall[Args]`` hint."""

    def label(handler: Handler) -> Handler:
        spec = ToolSpec(
            name=name,
            description=" ".join(description.split()),
            args=_args_model(handler),
            handler=handler,
            profile=profile,
            order=order,
            read_only=read_only,
            admin=admin,
            summarize=summarize,
            render=render,
            module=handler.__module__,
        )
        put_label(handler, TOOL_SPEC, spec)
        return handler

    return label


def _args_model(handler: Handler) -> type[ToolArgs]:
    import typing

    hints = typing.get_type_hints(handler)
    parameter = hints[handler.__code__.co_varnames[0]]
    (model,) = typing.get_args(parameter)
    if not (isinstance(model, type) and issubclass(model, ToolArgs)):
        raise TypeError(f"{handler.__qualname__}: annotate its parameter as ToolCall[<ToolArgs subclass>]")
    return model


class ToolTable:
    """The tools of some modules: unique names, at most ``MAX_CORE_TOOLS`` in the core profile."""

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self._tools: dict[str, ToolSpec] = {}
        for spec in specs:
            if spec.name in self._tools:
                raise ValueError(
                    f"MCP tool {spec.name!r} is defined twice ({self._tools[spec.name].module}, {spec.module})"
                )
            self._tools[spec.name] = spec
        core = [spec.name for spec in self._tools.values() if spec.profile == "core"]
        if len(core) > MAX_CORE_TOOLS:
            raise RuntimeError(f"the core profile lists {len(core)} tools (at most {MAX_CORE_TOOLS}): {core}")

    @classmethod
    def from_modules(cls, modules: Iterable[ModuleType]) -> ToolTable:
        return cls(label_of(handler, TOOL_SPEC) for handler in labelled(modules, TOOL_SPEC))

    def all_tools(self) -> list[ToolSpec]:
        """Every tool, core first, then by ``order`` and name."""
        return sorted(self._tools.values(), key=lambda s: (s.profile != "core", s.order, s.name))

    def listed(self, profile: Profile) -> list[ToolSpec]:
        """The tools ``tools/list`` shows under ``profile``."""
        return [spec for spec in self.all_tools() if profile == "full" or spec.profile == "core"]

    def get(self, name: str) -> ToolSpec | None:
        return self._tools.get(name)


@cache
def default_table() -> ToolTable:
    """Zaxy's tools: the modules listed in ``zaxy_agents.mcp.tools.TOOL_MODULES`` (built once per process)."""
    from .tools import TOOL_MODULES

    return ToolTable.from_modules(TOOL_MODULES)


def all_tools() -> list[ToolSpec]:
    return default_table().all_tools()


def listed(profile: Profile) -> list[ToolSpec]:
    return default_table().listed(profile)


def get(name: str) -> ToolSpec | None:
    return default_table().get(name)
