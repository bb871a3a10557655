"""Starting a `zaxy` process without CPython's cyclic garbage collector, then freezing what start-up built.

Start-up (imports, pydantic models, the token encoder's tables, opening a memory) allocates hundreds of thousands
of objects that live as long as the process; the collector walks them again and again and frees nothing: ~12 %
of the CPU of a fresh `zaxy memory checkout` on a 100k-event memory (0.07 of 0.59 s, read with ``gc.callbacks``).
So the commands on an agent's start-up path (cli/entry.py ``SINGLE_COMMANDS``) run with the collector off until
:func:`resume` — for `zaxy memory checkout` at the end of the command, for `zaxy serve` once its first tool call is
answered (or after :data:`SERVE_GRACE_SECONDS`, or at once for ``--transport http``). :func:`resume` first moves
every object alive then into the permanent generation (``gc.freeze``), so later collections skip start-up's
objects, then enables the collector. Reference counting frees acyclic garbage throughout.

Only a collector this module turned off is turned back on; a projection batch's own pause
(``projection/collector.py``) composes with it (each restores only what it changed).
"""

from __future__ import annotations

import gc
import threading

SERVE_GRACE_SECONDS = 5.0
_lock = threading.Lock()
_paused = False


def pause() -> None:
    """Turn the collector off for start-up (no-op when it is already off)."""
    global _paused
    with _lock:
        if gc.isenabled():
            gc.disable()
            _paused = True


def resume() -> None:
    """Freeze start-up's objects and turn the collector back on, once (no-op when :func:`pause` did nothing)."""
    global _paused
    with _lock:
        if _paused:
            _paused = False
            gc.freeze()
            gc.enable()


def resume_later(seconds: float = SERVE_GRACE_SECONDS) -> threading.Timer:
    """:func:`resume` after ``seconds`` unless something resumes earlier (a server idle after its start)."""
    timer = threading.Timer(seconds, resume)
    timer.daemon = True
    timer.start()
    return timer
