"""The `zaxy` command line: a thin surface over MemoryFabric."""
