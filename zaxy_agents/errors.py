"""Structured errors shared by every layer.

Every error a caller can provoke carries a stable ``code``, the offending ``field`` when there is one, and a
``remediation`` sentence telling the caller how to fix the request. Surfaces (CLI, MCP, LangGraph tools)
render ``to_dict()`` instead of a traceback. This module is stdlib-only so the hook fast path can import it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any


class ZaxyError(Exception):
    """Base class: a failure the caller can understand and act on."""

    code: str = "internal_error"

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        remediation: str | None = None,
        code: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.remediation = remediation or "See the documentation for this operation."
        if code is not None:
            self.code = code
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        """The wire shape every surface uses: ``{"error": {"code", "message", "remediation", ...}}``."""
        body: dict[str, Any] = {"code": self.code, "message": self.message, "remediation": self.remediation}
        if self.field is not None:
            body["field"] = self.field
        if self.details:
            body["details"] = self.details
        return {"error": body}

    def __str__(self) -> str:
        where = f" [{self.field}]" if self.field else ""
        return f"{self.code}{where}: {self.message} ({self.remediation})"


class InvalidRequestError(ZaxyError):
    """The request itself is wrong (bad field value, bad shape); nothing was written."""

    code = "invalid_request"


class NotFoundError(ZaxyError):
    """The named session, event, ref or entity does not exist."""

    code = "not_found"


class IntegrityError(ZaxyError):
    """The log does not verify (tampering, a broken chain, a replaced file)."""

    code = "integrity_error"


class StorageFullError(ZaxyError):
    """The disk (or quota) holding the memory is full; the failed call wrote nothing."""

    code = "storage_full"


class ConflictError(ZaxyError):
    """A precondition on current state failed (for example an expected head that moved)."""

    code = "conflict"


class LockedError(ZaxyError):
    """A resource is held by another process (for example the embedded graph database)."""

    code = "locked"


class ClosedError(ZaxyError):
    """The object was closed (``close()`` or the end of its ``with`` block); open a new one."""

    code = "closed"


class UnauthorizedError(ZaxyError):
    """Missing or bad credentials, or access to another session's memory."""

    code = "unauthorized"


class UnavailableError(ZaxyError):
    """A backend cannot be reached or used right now (for example the PostgreSQL server is down)."""

    code = "unavailable"


class PermissionDeniedError(ZaxyError):
    """The operating system refused access to a file or folder Zaxy needs (the Eventloom folder, a config file)."""

    code = "permission_denied"


class SchemaMismatchError(ZaxyError):
    """The storage schema and this version of the code disagree (migrations pending, unknown or changed)."""

    code = "schema_mismatch"
