"""Agent conversations as memory: what a session already holds (``ledger``), event drafts from LangChain
messages (``messages``), citations found in an answer (``citations``).

Used by the fabric's conversation operations (``MemoryFabric.capture_messages``, ``record_compaction``,
``feedback_from_citations``), which the LangGraph nodes, middleware and tools call. Modules are imported
directly (``messages`` needs langchain-core, which CLI start-up must not pay for).
"""
