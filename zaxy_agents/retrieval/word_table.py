"""The e5 word table: static word vectors distilled once from multilingual-e5-small, no model at run time.

Category-to-instance questions ("which recipes?" -> "I baked a tart") fail lexically: the category word never
occurs in the memory. A sentence model bridges them but costs 30-50 ms per text here. The word table keeps the
part of e5 that matters for this: each vocabulary word was embedded alone, once, offline
(``word_table_build.py``, provenance in ``data/e5_words.json``), and a text's vector is the mean of its content
words' vectors (stop words skipped; an unknown word tries its plural / -ing / -ed base, then counts as nothing).
Like WordLlama it is too weak to find memories alone, so it is a ``"rerank"``-role embedder: it re-orders the
fused candidates and proposes vocabulary neighbours to the query expansion (retrieval/expansion.py).

The table is data: ``np.load(allow_pickle=False)`` of an int8 matrix plus a word list, both checked against the
sha256 recorded at build time before use.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from zaxy_agents.errors import IntegrityError

from .text import STOPWORDS

DATA = Path(__file__).with_name("data")
NAME = "e5_words"
_WORD = re.compile(r"[a-z]+")
_SUFFIXES = (("ies", "y"), ("es", ""), ("s", ""), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"))


class WordTable:
    """The loaded table: ``words[i]`` has the unit vector ``matrix[i]`` (float32)."""

    def __init__(self, words: list[str], matrix: np.ndarray, provenance: dict) -> None:
        self.words = words
        self.matrix = matrix
        self.provenance = provenance
        self.row = {word: index for index, word in enumerate(words)}

    @property
    def dims(self) -> int:
        return int(self.matrix.shape[1])

    @classmethod
    def load(cls, directory: Path = DATA) -> WordTable:
        """Read and verify the table (sha256 of both files against the provenance; int8, one row per word)."""
        paths = {suffix: directory / f"{NAME}.{suffix}" for suffix in ("json", "txt", "npy")}
        missing = [str(path) for path in paths.values() if not path.is_file()]
        if missing:
            raise IntegrityError(
                f"the word table is incomplete: {', '.join(missing)} missing",
                field="embedder",
                remediation="Reinstall zaxy-agents, or rebuild the table: python -m zaxy_agents.retrieval."
                "word_table_build (needs the 'e5' extra).",
            )
        provenance = json.loads(paths["json"].read_text())
        for suffix in ("txt", "npy"):
            digest = hashlib.sha256(paths[suffix].read_bytes()).hexdigest()
            if digest != provenance.get("sha256", {}).get(paths[suffix].name):
                raise IntegrityError(
                    f"{paths[suffix]} does not match the sha256 recorded in {paths['json'].name}",
                    field="embedder",
                    remediation="The table was modified or damaged: reinstall zaxy-agents or rebuild the table.",
                )
        words = paths["txt"].read_text().split("\n")[:-1]
        table = np.load(paths["npy"], allow_pickle=False)
        if table.dtype != np.int8 or table.ndim != 2 or table.shape[0] != len(words):
            raise IntegrityError(
                f"{paths['npy'].name} holds {table.dtype} {table.shape}, expected int8 with {len(words)} rows",
                field="embedder",
                remediation="Rebuild the table: python -m zaxy_agents.retrieval.word_table_build.",
            )
        matrix = table.astype(np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        return cls(words, matrix, provenance)

    def lookup(self, word: str) -> int | None:
        """Row of ``word``, or of its base form for a regular plural / -ing / -ed; ``None`` when unknown."""
        row = self.row.get(word)
        if row is not None:
            return row
        for suffix, replacement in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                row = self.row.get(word[: -len(suffix)] + replacement)
                if row is not None:
                    return row
        return None


_LOADED: WordTable | None = None
_LOCK = threading.Lock()


def shipped_table() -> WordTable:
    """The table shipped in the package, loaded once per process."""
    global _LOADED
    with _LOCK:
        if _LOADED is None:
            _LOADED = WordTable.load()
        return _LOADED


class WordTableEmbedder:
    """A text's vector = the normalised mean of its content words' rows in the e5 word table (``"rerank"`` role).

    ~tens of thousands of texts per CPU-second (a dictionary look-up per word, one numpy reduction per batch).
    """

    retrieval_role = "rerank"
    expands_queries = True  # a word's vector is a table row: the index vocabulary costs a look-up per word

    def __init__(self, table: WordTable | None = None) -> None:
        self.table = table or shipped_table()
        sha = self.table.provenance["sha256"][f"{NAME}.npy"][:12]
        self.model_id = f"zaxy:e5-words-{self.table.dims}@{sha}"
        self._cache: dict[str, int | None] = {}

    @property
    def dims(self) -> int:
        return self.table.dims

    def _rows(self, text: str) -> list[int]:
        rows = []
        cache = self._cache
        for word in _WORD.findall(text.lower()):
            if word in STOPWORDS or len(word) < 3:
                continue
            row = cache.get(word, -1)
            if row == -1:
                row = cache[word] = self.table.lookup(word)
                if len(cache) > 200_000:  # bounded: a long-running process sees unbounded vocabularies
                    cache.clear()
            if row is not None:
                rows.append(row)
        return rows

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        ids: list[int] = []
        owners: list[int] = []
        for position, text in enumerate(texts):
            rows = self._rows(text)
            ids += rows
            owners += [position] * len(rows)
        if ids:
            np.add.at(out, np.asarray(owners), self.table.matrix[np.asarray(ids)])
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


class ConcatenatedEmbedder:
    """Two re-rank embedders side by side: each part's unit vector scaled by ``1/sqrt(parts)``, so the cosine of
    two concatenations is the mean of the parts' cosines (e.g. WordLlama's tokens and the e5 word table)."""

    retrieval_role = "rerank"

    def __init__(self, *parts: object) -> None:
        self.parts = parts
        self.model_id = "+".join(part.model_id for part in parts)  # type: ignore[attr-defined]
        self.expands_queries = all(getattr(part, "expands_queries", False) for part in parts)

    @property
    def dims(self) -> int:
        return sum(part.dims for part in self.parts)  # type: ignore[attr-defined]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        scale = np.float32(1.0 / np.sqrt(len(self.parts)))
        blocks = [np.asarray(part.embed_documents(texts), dtype=np.float32) for part in self.parts]  # type: ignore[attr-defined]
        return np.hstack(blocks) * scale

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]
