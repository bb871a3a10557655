"""The in-memory reference backend (``memory://``): the storage contract in the fewest lines.

Everything lives in the backend object and dies with it. It is what the conformance kit compares the other
backends with, and the fastest backend for tests; it is also the backend docs/add-a-backend.md walks through.
"""
