"""`zaxy doctor`'s checks of what surrounds the memory: the embedder and vector cache, the MCP profile, installed
hooks, the graph owner record and disk headroom."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .doctor_base import FAIL, OK, SKIP, VECTOR_CACHE_SHARE, WARN, Check, DoctorContext, _failed_check


# ---------------------------------------------------------------------------------------------- retrieval
def check_embedder(ctx: DoctorContext) -> Check:
    """The configured embedder loads, embeds, has stable dims, and stored vectors carry its model@version."""
    from zaxy_agents.config import ZaxySettings
    from zaxy_agents.errors import ZaxyError
    from zaxy_agents.retrieval.embeddings import resolve_embedder

    spec = ZaxySettings.resolve(ctx.eventloom).embedder
    if not spec or spec == "none":
        return Check("embedder", OK, "none configured: the lexical, graph and verbatim lanes answer (ZAXY_EMBEDDER)")
    try:
        embedder = resolve_embedder(spec)
        vector = embedder.embed_query("zaxy doctor probe")
    except (ZaxyError, Exception) as exc:  # a missing package, a provider without credentials, a bad name
        message = exc.remediation if isinstance(exc, ZaxyError) else str(exc)[:200]
        return Check(
            "embedder",
            FAIL,
            f"ZAXY_EMBEDDER={spec!r} is unavailable ({type(exc).__name__})",
            fix=f"{message} Or unset ZAXY_EMBEDDER (retrieval works without vectors).",
        )
    dims = int(getattr(vector, "shape", (len(vector),))[-1])
    declared = embedder.dims
    details = {"model_id": embedder.model_id, "dims": dims}
    if declared is not None and declared != dims:
        return Check(
            "embedder",
            FAIL,
            f"{embedder.model_id} declares {declared} dims but returns {dims}",
            fix="Fix the embedder's dims (or its version stamp), then `zaxy memory re-embed`.",
            details=details,
        )
    stamped = _stamped_model(ctx)
    if stamped is not None and stamped != embedder.model_id:
        return Check(
            "embedder",
            WARN,
            f"stored vectors are {stamped}, the configured embedder is {embedder.model_id}: they are never compared "
            "(the next use drops them and re-embeds every event)",
            fix="Run `zaxy memory re-embed` to embed everything with the configured model now.",
            details={**details, "stored_model": stamped},
        )
    return Check("embedder", OK, f"{embedder.model_id} embeds ({dims} dims)", details=details)


def _stamped_model(ctx: DoctorContext) -> str | None:
    """A model other than the configured one that stored vectors are of (``None``: no mix)."""
    try:
        vectors = ctx.fabric().retriever.vectors
        stored = vectors.stored_models()
    except Exception:
        return None
    others = sorted(model for model, rows in stored.items() if rows and model != vectors.model_id)
    return ", ".join(others) or None


def check_vector_cache(ctx: DoctorContext) -> Check:
    """The vector files exact search maps into memory, against the memory available (headroom for the cache)."""
    try:
        held = ctx.fabric().retriever.vectors.mapped_bytes() if ctx.exists else 0
    except Exception as exc:
        return _failed_check("vector cache", exc, "`zaxy reproject` rebuilds derived state from the log.")
    available = _available_memory()
    if available is None:
        return Check("vector cache", SKIP, f"{held / 1e6:.1f} MB of vectors in memory (available memory unknown)")
    details = {"vector_bytes": held, "available_bytes": available}
    if held > VECTOR_CACHE_SHARE * available:
        return Check(
            "vector cache",
            WARN,
            f"{held / 1e6:.0f} MB of vectors against {available / 1e6:.0f} MB available",
            fix="Install the ann extra (`pip install zaxy-agents[ann]`) for the HNSW index, or embed fewer events.",
            details=details,
        )
    return Check(
        "vector cache", OK, f"{held / 1e6:.1f} MB of vectors, {available / 1e6:.0f} MB available", details=details
    )


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


# ---------------------------------------------------------------------------------------------- surfaces
def check_mcp_profile(ctx: DoctorContext) -> Check:
    from zaxy_agents.mcp.config import ENV_PROFILE

    profile = (os.environ.get(ENV_PROFILE) or "core").strip().lower()
    if profile not in ("core", "full"):
        return Check(
            "MCP profile",
            FAIL,
            f"{ENV_PROFILE}={os.environ.get(ENV_PROFILE)!r}: `zaxy serve` refuses to start",
            fix=f"Set {ENV_PROFILE} to core (the default) or full, or unset it.",
        )
    return Check("MCP profile", OK, f"{profile} ({'8 tools listed' if profile == 'core' else 'every tool listed'})")


def check_hooks(ctx: DoctorContext) -> list[Check]:
    """Per client: where hooks are installed, executables that are gone, the last hook event and error."""
    from zaxy_agents.capture import hook_install
    from zaxy_agents.fabric.hook_state import read_hook_errors

    checks = []
    errors = read_hook_errors(str(ctx.eventloom), ctx.workspace.root)
    for client in hook_install.SCOPES:
        rows = hook_install.installed(client, ctx.workspace.root)
        scopes = [row["scope"] for row in rows if row["events"]]
        stale = sorted({exe for row in rows for exe in row.get("stale", [])})
        unreadable = [row["path"] for row in rows if row.get("error")]
        name = f"hooks: {client}"
        client_errors = [record for record in errors["recent"] if record.get("client", "claude-code") == client]
        if unreadable:
            checks.append(
                Check(name, FAIL, f"settings file does not parse: {unreadable[0]}", fix="Fix the JSON of that file.")
            )
        elif stale:
            checks.append(
                Check(
                    name,
                    FAIL,
                    f"installed ({', '.join(scopes)}) but runs a zaxy that is gone: {stale[0]}",
                    fix=f"Reinstall: zaxy hooks {client} --force"
                    + (f" --scope {scopes[0]}" if scopes and scopes[0] != hook_install.DEFAULT_SCOPE[client] else ""),
                    details={"missing_executables": stale},
                )
            )
        elif not scopes:
            checks.append(
                Check(name, SKIP, "not installed", fix=f"Optional: `zaxy hooks {client}` captures its sessions.")
            )
        elif client_errors:
            last = client_errors[-1]
            checks.append(
                Check(
                    name,
                    WARN,
                    f"installed ({', '.join(scopes)}); last hook error {last.get('at')}: "
                    f"{last.get('error_type')} {str(last.get('error', ''))[:160]}",
                    fix="`zaxy hooks status` lists recent hook errors (the hooks never block the client).",
                    details={"errors": errors["count"], "last_error": last},
                )
            )
        else:
            checks.append(Check(name, OK, f"installed ({', '.join(scopes)}), no hook errors"))
    return checks


def check_owner(ctx: DoctorContext) -> Check:
    """The graph owner record (``.zaxy/owner.json``): a live `zaxy serve`, or a stale record of a dead one."""
    from zaxy_agents.config import DERIVED_DIR_NAME
    from zaxy_agents.fabric.sharing import INFO_FILE, LOCK_FILE, pid_alive, read_owner, try_claim

    derived = ctx.eventloom / DERIVED_DIR_NAME
    record = read_owner(derived) if derived.is_dir() else None
    if record is None:
        return Check("graph owner", OK, "no MCP server owns the graph now")
    pid = record["pid"]
    lock_held = _lock_held(derived / LOCK_FILE)
    if pid_alive(pid) and lock_held:
        return Check("graph owner", OK, f"`zaxy serve` pid {pid} owns the graph; other servers proxy to it")

    def repair() -> str:
        lease = try_claim(derived)
        if lease is None:
            return "the lock is held by a live process: nothing removed"
        lease.release()  # claiming clears the stale record and socket; releasing hands over cleanly
        return f"removed the stale owner record of pid {pid}"

    if lock_held:
        return Check(
            "graph owner",
            FAIL,
            f"owner.json names pid {pid}, which is gone, but another process holds {LOCK_FILE}",
            fix="Fully exit stale `zaxy serve` processes (ps -ef | grep '[z]axy serve'), then retry.",
        )
    return Check(
        "graph owner",
        WARN,
        f"stale {INFO_FILE}: pid {pid} is gone and nobody holds the lock",
        fix="Harmless (the next server clears it); `zaxy doctor --fix` removes it now.",
        details={"record": record},
        repair=repair,
    )


def _lock_held(path: Path) -> bool:
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def check_disk(ctx: DoctorContext) -> Check:
    target = ctx.eventloom if ctx.exists else Path(ctx.workspace.root)
    usage = shutil.disk_usage(target)
    free_mb = usage.free / 1e6
    details = {"free_bytes": usage.free, "total_bytes": usage.total, "path": str(target)}
    if free_mb < ctx.min_free_mb:
        return Check(
            "disk headroom",
            FAIL,
            f"{free_mb:.0f} MB free on {target} (minimum {ctx.min_free_mb} MB)",
            fix="Free disk space: appends are refused when the disk fills, and derived state needs room to rebuild.",
            details=details,
        )
    if usage.free < 0.05 * usage.total:
        return Check(
            "disk headroom",
            WARN,
            f"{free_mb:.0f} MB free ({100 * usage.free / usage.total:.1f}% of the disk)",
            fix="Free disk space before the log or the graph runs out of room.",
            details=details,
        )
    return Check("disk headroom", OK, f"{free_mb / 1000:.1f} GB free", details=details)
