"""Sharing one Eventloom between several processes: a single graph owner, peers that reach it over a socket.

The embedded graph database has one read-write owner per file. ``election`` decides which process owns it (an
advisory ``flock`` the kernel releases when the owner dies, so an owner can never be stale), ``rpc`` is the small
JSON-RPC 2.0 protocol peers use to reach the owner over a unix socket. Both are stdlib-only so a peer that only
forwards calls never imports the graph, numpy or pydantic for them.
"""
