"""``zaxy ui``: the Memory Inspector, a local web page over the fabric (see docs/ui.md).

It reads and writes only through :class:`~zaxy_agents.fabric.MemoryFabric`, like every other surface; the page
is plain HTML, CSS and JavaScript shipped in this package (no external assets: it works offline).
"""
