"""The vector lane's ANN graph against exact search, on real embeddings: recall@10, latency, build time.

Texts: LoCoMo's real turns and captions, then windows of 1-3 consecutive turns of a conversation with sentences
dropped at random, deduplicated, up to ``--vectors``; queries: LoCoMo's questions. Embedded with WordLlama (the
re-rank embedder, ``pip install 'zaxy-agents[wordllama]'``), stored through the real ``VectorIndex`` (raw float32
rows on disk), then searched exactly (the default up to ``ANN_THRESHOLD``) and through the HNSW graph built by
``build_ann`` (what the background builder runs). Recall@10 is the share of the exact top 10 that the graph's
answer holds (texts are unique, so ties are rare); scores of returned events are exact in both.
``--sweep`` also prints raw usearch settings (M, efConstruction, ef, storage type) on the same vectors.

Usage: python benchmarks/vector_ann_bench.py [--vectors 100000] [--sweep] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.locomo_corpus import DATASET
from zaxy_agents.evaluation.locomo_data import load_conversations
from zaxy_agents.retrieval import ann
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.embeddings import resolve_embedder
from zaxy_agents.retrieval.vector_index import VectorIndex

_SENTENCE = re.compile(r"[^.!?]+[.!?]*")


def texts_and_questions(count: int, seed: int = 3) -> tuple[list[str], list[str]]:
    conversations = load_conversations(DATASET)
    rng = random.Random(seed)
    texts: dict[str, None] = {}
    for conversation in conversations:
        for turn in conversation.turns:
            texts[turn.text] = None
            if turn.caption:
                texts[turn.caption] = None
    while len(texts) < count:
        conversation = rng.choice(conversations)
        start = rng.randrange(len(conversation.turns))
        parts = []
        for turn in conversation.turns[start : start + rng.randint(1, 3)]:
            sentences = [s.strip() for s in _SENTENCE.findall(turn.text) if s.strip()] or [turn.text]
            kept = [s for s in sentences if rng.random() < 0.7] or [rng.choice(sentences)]
            parts.append(" ".join(kept))
        texts[" ".join(parts)] = None
    questions = [q.text for c in conversations for q in c.questions]
    return list(texts)[:count], questions


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50": round(ordered[len(ordered) // 2], 3),
        "p95": round(ordered[int(0.95 * len(ordered))], 3),
        "mean": round(statistics.fmean(ordered), 3),
    }


def run(vectors: int, sweep: bool) -> dict:
    texts, questions = texts_and_questions(vectors)
    keys = [(f"s{i // 1000:04d}", i % 1000 + 1) for i in range(len(texts))]
    by_key = dict(zip(keys, texts, strict=True))
    embedder = resolve_embedder("wordllama")
    report: dict = {"vectors": len(texts), "queries": len(questions), "model": embedder.model_id}  # type: ignore[union-attr]
    with tempfile.TemporaryDirectory(prefix="zaxy-ann-bench-") as scratch:
        index = VectorIndex(embedder, ann_threshold=0)
        listeners = open_standalone(Path(scratch), index)
        index.text_source = lambda wanted: {key: by_key[key] for key in wanted}
        index.key_source = lambda: keys
        started = time.perf_counter()
        index.embed_pending()
        report["embed_and_store_per_s"] = round(len(texts) / (time.perf_counter() - started))
        exact = VectorIndex(embedder, ann_threshold=10**12)  # the same files, searched exactly
        exact.attach(listeners.store)
        exact.text_source, exact.key_source = index.text_source, index.key_source
        started = time.perf_counter()
        covered = index.build_ann()
        report["ann_build_s"] = round(time.perf_counter() - started, 1)
        report["ann_rows"] = covered
        report["ann_settings"] = {
            "connectivity": ann.CONNECTIVITY,
            "expansion_add": ann.EXPANSION_ADD,
            "expansion_search": ann.EXPANSION_SEARCH,
            "oversample": ann.OVERSAMPLE,
            "storage": "f16 (candidates re-ranked on the float32 rows)",
        }
        exact_ms, ann_ms, recalls = [], [], []
        for question in questions:
            started = time.perf_counter()
            truth = exact.search(question, 10)
            exact_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            got = index.search(question, 10)
            ann_ms.append((time.perf_counter() - started) * 1000)
            if truth:
                recalls.append(len({k for k, _ in truth} & {k for k, _ in got}) / len(truth))
        report["recall_at_10"] = round(statistics.fmean(recalls), 4)
        report["recall_at_10_min"] = round(min(recalls), 2)
        report["latency_ms"] = {"exact": _summary(exact_ms), "ann": _summary(ann_ms)}
        if sweep:
            report["sweep"] = _sweep(index, questions, embedder)
        index.close()
        listeners.store.close()
    return report


def _sweep(index: VectorIndex, questions: list[str], embedder: object) -> list[dict]:
    """Raw usearch settings on the same vectors (recall of the graph's own top 10, re-ranked exactly)."""
    from usearch.index import Index

    row = index._model_row(index._reader_db())
    assert row is not None
    matrix, _ = index.files(row[0]).view(row[1])
    matrix = np.asarray(matrix)
    queries = np.asarray(embedder.embed_documents(questions), dtype=np.float32)  # type: ignore[attr-defined]
    queries /= np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    scores = queries @ matrix.T
    truth = np.argsort(-scores, axis=1)[:, :10]
    out = []
    for connectivity, expansion_add, dtype in ((16, 128, "f16"), (32, 128, "f16"), (16, 128, "i8")):
        graph = Index(ndim=matrix.shape[1], metric="ip", dtype=dtype, connectivity=connectivity,
                      expansion_add=expansion_add)  # fmt: skip
        started = time.perf_counter()
        graph.add(np.arange(len(matrix), dtype=np.uint64), matrix, threads=1)
        build = time.perf_counter() - started
        for expansion_search in (64, 128, 256):
            graph.expansion_search = expansion_search
            started = time.perf_counter()
            found = np.asarray(graph.search(queries, 30, threads=1).keys, dtype=np.int64)
            elapsed = (time.perf_counter() - started) / len(queries) * 1000
            recall = statistics.fmean(
                len(set(f[np.argsort(-(matrix[f] @ q))[:10]].tolist()) & set(t.tolist())) / 10
                for f, q, t in zip(
                    (row[(row >= 0) & (row < len(matrix))] for row in found), queries, truth, strict=True
                )
            )
            setting = {"M": connectivity, "ef_construction": expansion_add, "dtype": dtype, "ef": expansion_search}
            measured = {"build_s": round(build, 1), "recall_at_10": round(recall, 4), "ms_per_query": round(elapsed, 3)}
            out.append({**setting, **measured})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args.vectors, args.sweep)
    print(json.dumps(report, indent=None if args.json else 1))


if __name__ == "__main__":
    main()
