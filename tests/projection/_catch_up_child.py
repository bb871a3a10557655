"""Child process for the crash tests: projects a memory in small batches and keeps the graph current.

``python -m tests.projection._catch_up_child ROOT`` prints ``go`` once the memory is open, then catches up
(the parent kills it at a random moment). With ``--file-limit N`` every file it writes is limited to N bytes
(RLIMIT_FSIZE, SIGXFSZ ignored): writes past it fail like on a full disk.
"""

from __future__ import annotations

import resource
import signal
import sys

from zaxy_agents.fabric import MemoryFabric

root = sys.argv[1]
if "--file-limit" in sys.argv:
    limit = int(sys.argv[sys.argv.index("--file-limit") + 1])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
fabric = MemoryFabric.from_path(root)
fabric.projector.batch_events = 50
fabric.projector.graph.batch_events = 400
print("go", flush=True)
fabric.projector.follow_graph(create=True)
fabric.project()
fabric.projector.flush(None)
status = fabric.memory_status()
print(f"done degraded={status['degraded']!r}", flush=True)
fabric.close()
