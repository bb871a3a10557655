"""Child process that owns the graph database until told to stop (stdin closes)."""

from __future__ import annotations

import sys

from zaxy_agents.fabric import MemoryFabric

with MemoryFabric.from_path(sys.argv[1]) as fabric:
    fabric.project()
    assert fabric.projector.store is not None  # opens the graph and holds it
    print("ready", flush=True)
    sys.stdin.read()
