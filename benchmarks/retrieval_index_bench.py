"""The verbatim index at 10k-1M events: query latency against SQLite FTS5 BM25 and the old dense scorer, in one run.

Corpus: real LoCoMo turns replayed into sessions of one conversation each (benchmarks/locomo_corpus.py);
questions: LoCoMo's, asked of one session (as checkout does) and of the whole memory. Per size it reports:

* ingest: batched (2,000 events per transaction, as the projector does) and one event per transaction at the
  end of the memory (the MCP / hook path), ours and FTS5's;
* opening the index and answering a first question in a fresh index object;
* query latency p50 / p95 of our lane (k=10 and k=50, the engine's depth), FTS5 ``bm25()`` top-10 over the same
  texts (porter stemming), and the dense scorer it replaced (every event scored; in-memory, up to
  ``--dense-up-to`` events) — plus how many of our top-10 lists equal the dense scorer's;
* bytes on disk.

Usage: python benchmarks/retrieval_index_bench.py [--sizes 10000,100000,1000000] [--queries 300] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.locomo_corpus import Corpus
from zaxy_agents.projection.model import SearchDoc
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.text import STOPWORDS
from zaxy_agents.retrieval.verbatim import VerbatimIndex

BATCH = 2000
SINGLE = 300
_WORD = re.compile(r"[A-Za-z0-9]+")


class _Batch:
    def __init__(self, docs: list[SearchDoc]) -> None:
        self.searchable, self.entities, self.cursors = docs, [], {}


def _chunks(docs: Iterable[SearchDoc], size: int) -> Iterable[list[SearchDoc]]:
    chunk: list[SearchDoc] = []
    for doc in docs:
        chunk.append(doc)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    pick = lambda q: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)  # noqa: E731
    return {"p50": pick(0.5), "p95": pick(0.95), "mean": round(statistics.fmean(ordered), 3)}


def _timed(function: Callable[[str, str], object], questions: list[tuple[str, str]]) -> list[float]:
    samples = []
    for question, session in questions:
        started = time.perf_counter()
        function(question, session)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.iterdir() if path.is_file())


class Fts5:
    """The baseline: SQLite FTS5 with porter stemming over the same texts; session as an indexed column."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(text, session, tokenize='porter unicode61')"
        )

    def add(self, docs: list[SearchDoc]) -> None:
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO docs(text, session) VALUES (?, ?)", [(d.text, d.session) for d in docs])
        self.db.execute("COMMIT")

    def search(self, question: str, session: str | None, k: int = 10) -> list[int]:
        words = [w.lower() for w in _WORD.findall(question) if w.lower() not in STOPWORDS]
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in dict.fromkeys(words))
        if session is not None:
            match = f'session:"{session}" AND ({match})'
        rows = self.db.execute("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?", (match, k))
        return [row[0] for row in rows]


def run_size(corpus: Corpus, events: int, queries: int, dense_up_to: int) -> dict:
    questions = corpus.questions(events, queries)
    report: dict = {"events": events, "questions": len(questions)}
    with tempfile.TemporaryDirectory(prefix="zaxy-index-bench-") as scratch:
        folder = Path(scratch)
        docs = corpus.documents(events + SINGLE)
        bulk = [doc for _, doc in zip(range(events), docs, strict=False)]
        single = list(docs)
        # ---------------------------------------------------------------- ingest
        index = VerbatimIndex()
        listeners = open_standalone(folder / "ours", index)
        started = time.perf_counter()
        for chunk in _chunks(bulk, BATCH):
            listeners.on_batch(_Batch(chunk), None)
        ours_bulk = time.perf_counter() - started
        started = time.perf_counter()
        for doc in single:
            listeners.on_batch(_Batch([doc]), None)
        ours_single = time.perf_counter() - started
        fts = Fts5(folder / "fts.sqlite")
        started = time.perf_counter()
        for chunk in _chunks(bulk, BATCH):
            fts.add(chunk)
        fts_bulk = time.perf_counter() - started
        started = time.perf_counter()
        for doc in single:
            fts.add([doc])
        fts_single = time.perf_counter() - started
        report["ingest"] = {
            "ours_batched_events_per_s": round(events / ours_bulk),
            "fts5_batched_events_per_s": round(events / fts_bulk),
            "ours_one_by_one_events_per_s": round(len(single) / ours_single),
            "fts5_one_by_one_events_per_s": round(len(single) / fts_single),
        }
        fts.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        text_bytes = sum(len(d.text.encode()) + len((d.caption or "").encode()) for d in [*bulk, *single])
        report["disk_bytes"] = {
            "ours": _size(folder / "ours"),
            "fts5": (folder / "fts.sqlite").stat().st_size,
            "event_texts": text_bytes,
        }
        # ---------------------------------------------------------------- open + first answer
        listeners.store.close()
        gc.collect()
        question, session = questions[0]
        started = time.perf_counter()
        index = VerbatimIndex()
        listeners = open_standalone(folder / "ours", index)
        index.search(question, 10, sessions=[session])
        report["open_and_first_answer_ms"] = round((time.perf_counter() - started) * 1000, 2)
        # ---------------------------------------------------------------- queries
        for question, session in questions[:20]:  # warm the page cache and the block cache alike for both
            index.search(question, 10, sessions=[session])
            fts.search(question, session)
        latency = {
            "ours_session_k10": _timed(lambda q, s: index.search(q, 10, sessions=[s]), questions),
            "ours_session_k50": _timed(lambda q, s: index.search(q, 50, sessions=[s]), questions),
            "ours_all_k10": _timed(lambda q, s: index.search(q, 10), questions),
            "fts5_session_k10": _timed(lambda q, s: fts.search(q, s), questions),
            "fts5_all_k10": _timed(lambda q, s: fts.search(q, None), questions),
        }
        report["inexact_share"] = round(index.counters["inexact"] / max(index.counters["queries"], 1), 4)
        if events <= dense_up_to:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "retrieval"))
            from dense_reference import DenseVerbatim

            dense = DenseVerbatim()
            for doc in [*bulk, *single]:
                dense.add(doc)
            latency["dense_session_k10"] = _timed(lambda q, s: dense.search(q, 10, sessions=[s]), questions)
            latency["dense_all_k10"] = _timed(lambda q, s: dense.search(q, 10), questions)
            same = sum(
                [(h.session, h.seq) for h in index.search(q, 10, sessions=[s])]
                == [(h.session, h.seq) for h in dense.search(q, 10, sessions=[s])]
                for q, s in questions
            )
            report["top10_equal_to_dense"] = f"{same}/{len(questions)}"
            del dense
        report["latency_ms"] = {name: _summary(samples) for name, samples in latency.items()}
        listeners.store.close()
        fts.db.close()
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--dense-up-to", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    corpus = Corpus.load()
    reports = []
    for size in (int(s) for s in args.sizes.split(",")):
        reports.append(run_size(corpus, size, args.queries, args.dense_up_to))
        if not args.json:
            print(json.dumps(reports[-1], indent=1), flush=True)
    if args.json:
        print(json.dumps(reports, indent=1))


if __name__ == "__main__":
    main()
