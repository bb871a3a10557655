"""Storage backends: one package per engine (embedded files, PostgreSQL), behind the domain's protocols.

Kept free of imports: the hook fast path imports modules under this package and must stay stdlib-only.
"""
