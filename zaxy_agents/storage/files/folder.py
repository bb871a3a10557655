"""Creating the Eventloom folder: once, with its own ``.gitignore``, and with structured errors.

Session logs and derived state can hold private data (prompts, command output, anything an agent remembered), so
a folder Zaxy creates says so to git at once: its ``.gitignore`` ignores everything in it, itself included.
Delete that file if a team deliberately commits its memory. An existing folder is never modified here.

A path that cannot hold the folder (a file, a parent that is a file, no permission) raises a
:class:`~zaxy_agents.errors.ZaxyError` naming ``eventloom_path`` instead of an ``OSError`` traceback.
Stdlib only, no pathlib (the hook fast path creates folders through this).
"""

from __future__ import annotations

import errno
import os

from zaxy_agents.config import not_a_folder, permission_denied
from zaxy_agents.errors import InvalidRequestError

GITIGNORE_NAME = ".gitignore"
GITIGNORE_TEXT = (
    "# Created by Zaxy: memory logs and derived state may hold private data (prompts, command output, secrets that\n"
    "# escaped redaction). Everything here stays out of version control; delete this file to commit memory.\n"
    "*\n"
)


def ensure_eventloom_dir(root: str | os.PathLike[str], *, field: str = "eventloom_path") -> bool:
    """Make sure the Eventloom folder ``root`` exists (parents included); ``True`` when it was created now."""
    path = os.fspath(root)
    if os.path.isdir(path):
        return False
    try:
        os.makedirs(path)
    except FileExistsError:
        if os.path.isdir(path):  # another process created it first
            return False
        raise not_a_folder(path, field) from None
    except NotADirectoryError:
        raise InvalidRequestError(
            f"cannot create the Eventloom folder {path}: a parent of it is a file",
            field=field,
            remediation="Point the Eventloom path at a folder (or a new folder inside an existing one).",
        ) from None
    except PermissionError:
        raise permission_denied(path, "create", field) from None
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise permission_denied(path, "create", field) from None
        raise
    _write_gitignore(path)
    return True


def _write_gitignore(path: str) -> None:
    try:
        descriptor = os.open(os.path.join(path, GITIGNORE_NAME), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:  # already there (a racing creator) or unwritable: the logs matter more than this file
        return
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(GITIGNORE_TEXT)
