"""The embedded backend: one JSONL file per session plus an embedded Kuzu graph, all under one folder."""
