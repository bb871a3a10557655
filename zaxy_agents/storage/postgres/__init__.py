"""Shared PostgreSQL plumbing for every server-backed component (Eventloom now; projection and LangGraph later).

* :mod:`.dsn` — recognising, redacting and tuning connection URIs (stdlib only: ``config`` imports it).
* :mod:`.connect` — a psycopg 3 connection pool opened with clear errors when the server is unreachable.
* :mod:`.migrations` — named, checksummed, idempotent migrations recorded per component.

psycopg is imported only by the modules that talk to a server, so the embedded default never loads it.
"""
