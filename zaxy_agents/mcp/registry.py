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

Modules in ``zaxy_agents/mcp/tools/`` are discovered automatically. Then regenerate the tested contract:
``python -m zaxy_agents.mcp.contract --write``.

Profiles change what ``tools/list`` shows, never what can be called: the core profile lists the core tools, the
full profile lists every tool, and every registered tool is callable by name under either.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

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


_TOOLS: dict[str, ToolSpec] = {}
_discovered = False


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
    """Register ``handler`` as the tool ``name``; its argument model is read from the ``ToolCall[Args]`` hint."""

    def decorate(handler: Handler) -> Handler:
        if name in _TOOLS and _TOOLS[name].handler is not handler:
            raise ValueError(f"MCP tool {name!r} is registered twice ({_TOOLS[name].module}, {handler.__module__})")
        _TOOLS[name] = ToolSpec(
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
        return handler

    return decorate


def _args_model(handler: Handler) -> type[ToolArgs]:
    import typing

    hints = typing.get_type_hints(handler)
    parameter = hints[handler.__code__.co_varnames[0]]
    (model,) = typing.get_args(parameter)
    if not (isinstance(model, type) and issubclass(model, ToolArgs)):
        raise TypeError(f"{handler.__qualname__}: annotate its parameter as ToolCall[<ToolArgs subclass>]")
    return model


def discover() -> None:
    """Import every module in ``zaxy_agents.mcp.tools`` (each registers its tools on import)."""
    global _discovered
    if _discovered:
        return
    from . import tools

    for module in sorted(pkgutil.iter_modules(tools.__path__), key=lambda m: m.name):
        importlib.import_module(f"{tools.__name__}.{module.name}")
    _discovered = True
    core = [spec.name for spec in _TOOLS.values() if spec.profile == "core"]
    if len(core) > MAX_CORE_TOOLS:
        raise RuntimeError(f"the core profile lists {len(core)} tools (at most {MAX_CORE_TOOLS}): {core}")


def all_tools() -> list[ToolSpec]:
    """Every registered tool, core first, then by ``order`` and name."""
    discover()
    return sorted(_TOOLS.values(), key=lambda s: (s.profile != "core", s.order, s.name))


def listed(profile: Profile) -> list[ToolSpec]:
    """The tools ``tools/list`` shows under ``profile``."""
    return [spec for spec in all_tools() if profile == "full" or spec.profile == "core"]


def get(name: str) -> ToolSpec | None:
    discover()
    return _TOOLS.get(name)
