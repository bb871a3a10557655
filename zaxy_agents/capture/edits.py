"""File-edit summaries: which path, which operation, how many lines added/removed — never the content.

Shared by the hook sink (Claude Code ``Edit``/``Write``/``MultiEdit``, Codex ``apply_patch``) and the
transcript/rollout capture. Stdlib only (hook fast path).
"""

from __future__ import annotations

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

_PATCH_HEADERS = (
    ("*** Add File: ", "create"),
    ("*** Update File: ", "update"),
    ("*** Delete File: ", "delete"),
)


def count_lines(text: object) -> int:
    """Lines in a text blob (a trailing newline does not start a new line)."""
    if not isinstance(text, str) or not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def edit_summary(path: str, operation: str, added: int, removed: int, **extra: Any) -> dict[str, Any]:
    summary: dict[str, Any] = {"path": path, "operation": operation, "lines_added": added, "lines_removed": removed}
    summary.update({key: value for key, value in extra.items() if value is not None})
    return summary


def structured_patch_counts(hunks: object) -> tuple[int, int] | None:
    """(added, removed) from Claude Code's ``structuredPatch`` hunks (``lines`` prefixed with +/-/space)."""
    if not isinstance(hunks, list) or not hunks:
        return None
    added = removed = 0
    for hunk in hunks:
        for line in hunk.get("lines", []) if isinstance(hunk, dict) else []:
            if isinstance(line, str) and line.startswith("+"):
                added += 1
            elif isinstance(line, str) and line.startswith("-"):
                removed += 1
    return added, removed


def unified_diff_counts(diff: object) -> tuple[int, int]:
    """(added, removed) lines of a unified diff, ignoring the ``+++``/``---`` file headers."""
    added = removed = 0
    if not isinstance(diff, str):
        return 0, 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def parse_apply_patch(patch: object) -> list[dict[str, Any]]:
    """Per-file summaries of a Codex ``apply_patch`` envelope (``*** Begin Patch`` ... ``*** End Patch``).

    Also accepts the shell form ``apply_patch <<'EOF' ... EOF`` (the body is the same).
    """
    if not isinstance(patch, str):
        return []
    files: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in patch.splitlines():
        header = next(
            ((line[len(prefix) :].strip(), op) for prefix, op in _PATCH_HEADERS if line.startswith(prefix)), None
        )
        if header is not None:
            current = edit_summary(header[0], header[1], 0, 0)
            files.append(current)
            continue
        if current is None:
            continue
        if line.startswith("*** Move to: "):
            current["moved_to"] = line[len("*** Move to: ") :].strip()
            current["operation"] = "move"
        elif line.startswith("*** "):
            continue
        elif line.startswith("+"):
            current["lines_added"] += 1
        elif line.startswith("-"):
            current["lines_removed"] += 1
    return files


def codex_file_changes(changes: object) -> list[dict[str, Any]]:
    """Summaries of a Codex ``FileChange`` / ``patch_apply_*`` ``changes`` map ``{path: {type, ...}}``."""
    if not isinstance(changes, dict):
        return []
    summaries = []
    for path, change in changes.items():
        if not isinstance(change, dict):
            continue
        kind = str(change.get("type") or change.get("kind") or "update")
        if "add" in change or kind == "add":
            body = change.get("content", change.get("add", {}))
            body = body.get("content") if isinstance(body, dict) else body
            summaries.append(edit_summary(str(path), "create", count_lines(body), 0))
        elif "delete" in change or kind == "delete":
            body = change.get("content", change.get("delete", {}))
            body = body.get("content") if isinstance(body, dict) else body
            summaries.append(edit_summary(str(path), "delete", 0, count_lines(body)))
        else:
            update = change.get("update") if isinstance(change.get("update"), dict) else change
            added, removed = unified_diff_counts(update.get("unified_diff"))
            moved = update.get("move_path")
            summaries.append(
                edit_summary(str(path), "move" if moved else "update", added, removed, moved_to=moved or None)
            )
    return summaries


def claude_edit_summaries(tool: str, tool_input: dict[str, Any], response: object) -> list[dict[str, Any]]:
    """Summaries for Claude Code's ``Edit``, ``MultiEdit``, ``Write`` and ``NotebookEdit`` tool calls."""
    result = response if isinstance(response, dict) else {}
    path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or result.get("filePath") or "")
    if not path:
        return []
    counts = structured_patch_counts(result.get("structuredPatch"))
    if tool == "Write":
        created = result.get("type") == "create" or (result.get("originalFile") is None and "type" not in result)
        if counts is None or created:
            counts = (count_lines(tool_input.get("content")), count_lines(result.get("originalFile")))
        return [edit_summary(path, "create" if created else "write", *counts)]
    if tool == "NotebookEdit":
        mode = str(tool_input.get("edit_mode") or "replace")
        return [edit_summary(path, f"notebook_{mode}", count_lines(tool_input.get("new_source")), 0)]
    if counts is None:
        edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
        added = removed = 0
        for edit in edits if isinstance(edits, list) else []:
            if isinstance(edit, dict):
                added += count_lines(edit.get("new_string"))
                removed += count_lines(edit.get("old_string"))
        counts = (added, removed)
    return [edit_summary(path, "edit", *counts)]
