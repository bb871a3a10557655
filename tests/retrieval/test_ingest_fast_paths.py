"""Ingest fast paths give exactly what the slow paths gave: the time-cue shortcut, the analyser's memo lookups,
the writer's cached term ids, and the collector pause (which must always hand the collector back)."""

from __future__ import annotations

import gc
import random
import re
import sqlite3
from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection.collector import collector_paused
from zaxy_agents.retrieval.text import (
    _IDENTIFIER_HINT,
    _IDENTIFIER_RE,
    _POSS_RE,
    _TEMPORAL_RE,
    _TOKEN_RE,
    STOPWORDS,
    TEMPORAL_WORDS,
    Analyzer,
    has_time_cue,
)

_PIECES = [
    *sorted(TEMPORAL_WORDS), "last", "next", "this", "past", "few", "couple of", "three", "12", "1999", "2020",
    "19", "20", "x20", "2019x", "20\u0663\u0664", "sunday's", "x'today", "to'day", "today\u2019s", "TODAY", "Mays",
    "_today", "today_", "\u00e9today", "weekends", "ago.", "agora", "chicago", "bada", "fisu", "the", "a", "of",
    "couple", "of", "?", "!", ",", "-", "/", "'", "\u2019", "\u0130stanbul", "caf\u00e9", "T-102", "src/app.py",
    "v1.2.3", "retry_policy", "a-b", "x:y#z", "9-" + "a" * 90,
]  # fmt: skip


def _texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    joiners = [" ", " ", " ", "", "'", "-", ". ", "_"]
    return ["".join(rng.choice(_PIECES) + rng.choice(joiners) for _ in range(rng.randint(1, 12))) for _ in range(count)]


def test_time_words_are_never_stop_words() -> None:
    assert not TEMPORAL_WORDS & STOPWORDS  # the shortcut reads stop-word-filtered words


@pytest.mark.parametrize("stopwords", [True, False])
def test_time_cue_shortcut_agrees_with_the_regex(stopwords: bool) -> None:
    analyser = Analyzer(stopwords=stopwords)
    texts = [*_texts(6000, seed=7), "We met yesterday.", "in 2019", "bada fisu", "three weeks", "last Mondays"]
    skipped = 0
    for text in texts:
        _, surface = analyser.analyse(text)
        expected = _TEMPORAL_RE.search(text.lower()) is not None
        assert has_time_cue(text, surface) is expected, text
        skipped += not expected
    assert skipped > 1000  # the corpus exercises both answers


_REFERENCE_IDENTIFIER = re.compile(r"[a-z0-9]+(?:[-_./:#][a-z0-9]+)+")  # the plain patterns (reference)
_REFERENCE_HINT = re.compile(r"[A-Za-z0-9][-_./:#][A-Za-z0-9]")


def test_identifier_patterns_match_the_plain_ones() -> None:
    texts = [
        *_texts(3000, seed=9),
        "a-b-c x_1 v1.2.3. src/app.py: T-102 9-" + "a" * 90,
        "\u00e9t-1 \u0130d-2 a--b a-.b",
    ]
    from benchmarks.realistic_stream import RealisticStream

    stream = RealisticStream(seed=3, vocabulary=2000)
    texts += [str(stream.draft(i)["payload"]) for i in range(300)]
    hinted = 0
    for text in texts:
        assert bool(_IDENTIFIER_HINT.search(text)) is bool(_REFERENCE_HINT.search(text)), text
        lower = text.lower()
        assert _IDENTIFIER_RE.findall(lower) == _REFERENCE_IDENTIFIER.findall(lower), text
        hinted += bool(_REFERENCE_HINT.search(text))
    assert 500 < hinted < len(texts)  # both answers exercised


def _reference_analyse(analyser: Analyzer, text: str) -> tuple[list[str], list[str]]:
    """The analyser before the fast paths (substitution always run, one list comprehension per step)."""
    words = _TOKEN_RE.findall(_POSS_RE.sub("", text.lower().replace("\u2019", "'")).replace("'", ""))
    if analyser.stop:
        words = [w for w in words if w not in STOPWORDS]
    terms = [analyser.term(w) for w in words]
    if _REFERENCE_HINT.search(text):
        for match in _REFERENCE_IDENTIFIER.finditer(text.lower()):
            token = match.group(0).strip("-_./:#")
            if any(c.isdigit() or c in "_/." for c in token) and len(token) <= 80:
                terms.append("id:" + token)
    return terms, words


def test_analyser_memo_path_equals_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("zaxy_agents.retrieval.text.MEMO_LIMIT", 50)  # the memo is cleared mid-text too
    fast, reference = Analyzer(), Analyzer()
    for text in _texts(800, seed=3):
        terms, words = fast.analyse(text)
        want_terms, want_words = _reference_analyse(reference, text)
        assert (terms, words) == (want_terms, want_words)


def test_analysers_of_one_configuration_share_their_memo() -> None:
    """The ingest analysers (verbatim index, entity keyword index) stem each new word once between them; an analyser
    of another configuration never reads their terms, and a shared memo gives every analyser the terms a fresh,
    private one gives."""
    verbatim, entity = Analyzer(), Analyzer()
    assert verbatim._cache is entity._cache
    assert Analyzer(stopwords=False)._cache is verbatim._cache  # stop words filter words, they change no term
    plain, no_irregular = Analyzer(stem=False), Analyzer(irregular=False)
    assert plain._cache is not verbatim._cache and no_irregular._cache is not verbatim._cache
    assert verbatim("She bought running shoes") == ["buy", "run", "shoe"]
    assert "running" in entity._cache  # memoised by the other analyser
    assert plain("She bought running shoes") == ["buy", "running", "shoes"]  # not the stemmed memo's terms
    assert no_irregular("She bought running shoes") == ["bought", "run", "shoe"]
    for text in _texts(300, seed=21):
        private = Analyzer()
        private._cache = {}
        assert entity.analyse(text) == private.analyse(text)


def test_ascii_words_equal_the_regex_tokens() -> None:
    """The byte-table tokeniser (ASCII texts) gives the regex's tokens on random texts (apostrophes, capitals,
    punctuation runs, non-ASCII) and realistic payloads."""
    from benchmarks.realistic_stream import RealisticStream

    rng = random.Random(13)
    extra = ["Don't", "IT'S", "Ann's", "?!", "...", "?.", " ? ", "A.B", "x?y", "\t", "\n", "Q?", "caf\u00e9?"]
    texts = [t + rng.choice(extra) + t.upper() for t in _texts(3000, seed=12)] + ["", "?", "...abc", "a?. b"]
    stream = RealisticStream(seed=4, vocabulary=2000)
    texts += [str(stream.draft(i)["payload"]) for i in range(300)]
    analyser, ascii_apostrophes = Analyzer(), 0
    for text in texts:
        want = _TOKEN_RE.findall(_POSS_RE.sub("", text.lower().replace("\u2019", "'")).replace("'", ""))
        assert analyser.words(text) == want, text
        ascii_apostrophes += text.isascii() and "'" in text
    assert ascii_apostrophes > 500 and sum(not t.isascii() for t in texts) > 100  # every path exercised


@pytest.mark.parametrize("enabled", [True, False])
def test_collector_pause_restores_the_collector(enabled: bool) -> None:
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        with collector_paused():
            assert not gc.isenabled()
            with collector_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()  # the outer pause still holds
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError), collector_paused():
            raise RuntimeError("a failed batch")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def _drafts(count: int) -> list[dict]:
    rng = random.Random(11)
    words = ["bada", "fisu", "kolo", "zaba", "retry", "deploy", "yesterday", "port", "service", "T-12", "src/a.py"]
    drafts = []
    for i in range(count):
        text = " ".join(rng.choice(words) + ("" if rng.random() < 0.9 else f"{i}") for _ in range(rng.randint(3, 30)))
        if i % 3 == 0:
            drafts.append({"type": "fact.asserted", "payload": {"subject": f"service {i % 7}", "predicate": "port",
                                                                "object": str(i), "fact": text}})  # fmt: skip
        else:
            drafts.append({"type": "transcript.turn", "payload": {"role": "user", "speaker": "Ann", "text": text}})
    return drafts


def _tables(root: Path) -> dict[str, list[tuple]]:
    db = sqlite3.connect(root / ".zaxy" / "derived.sqlite")
    try:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        # verbatim_stats and entity_keyword_stats hold a random creation token: compare every other column
        return {
            name: sorted(db.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
            for name in names
            if name not in ("verbatim_stats", "entity_keyword_stats")
        } | {
            "verbatim_stats": [r[:-3] for r in db.execute("SELECT * FROM verbatim_stats")],
            "entity_keyword_stats": [r[:-1] for r in db.execute("SELECT * FROM entity_keyword_stats")],
        }
    finally:
        db.close()


def test_cached_term_ids_write_what_a_cold_writer_writes(tmp_path: Path) -> None:
    """One process projecting three bulk batches (term ids cached between them) leaves the same derived rows as a
    fresh process per batch (every id looked up in the database)."""
    warm, cold = tmp_path / "warm", tmp_path / "cold"
    with MemoryFabric.from_path(warm, durability="batch") as fabric:
        drafts = _drafts(900)
        for start in (0, 300, 600):  # three appends: a prefix of the log ending at one is a whole log
            fabric.append_many("s", drafts[start : start + 300])
    (log,) = warm.glob("*.jsonl")
    lines = log.read_bytes().splitlines(keepends=True)
    assert len(lines) == 900
    with MemoryFabric.from_path(warm, durability="batch") as fabric:
        fabric.projector.batch_events = 300
        fabric.project()
        warm_hits = [h.seq for h in fabric.query("bada retry yesterday", k=10).hits]
    cold.mkdir()
    for stop in (300, 600, 900):  # the log grows by 300 events between fresh processes
        (cold / log.name).write_bytes(b"".join(lines[:stop]))
        with MemoryFabric.from_path(cold, durability="batch") as fabric:
            fabric.project()  # (opening the fabric may have projected already)
            assert fabric.projector.catalog.cursors["s"][0] == stop
            cold_hits = [h.seq for h in fabric.query("bada retry yesterday", k=10).hits]
    assert warm_hits == cold_hits and warm_hits
    assert _tables(warm) == _tables(cold)


class _EntityBatch:
    def __init__(self, rows: list[dict]) -> None:
        self.searchable, self.entities, self.cursors = [], rows, {}


def _entity_batches(count: int, size: int) -> list[list[dict]]:
    rng = random.Random(5)
    words = ["bada", "fisu", "kolo", "zaba", "retry", "deploy", "port", "service", "T-12"] + [
        f"w{i}" for i in range(40)
    ]
    batches = []
    for b in range(count):
        rows = []
        for i in range(size):
            seq = b * size + i + 1
            rows.append(
                {
                    "id": f"v{seq}",
                    "entity_type": "fact",
                    "session_id": f"s{seq % 3}",
                    "source_event_seq": seq,
                    "name": f"service {seq % 5}",
                    # a rare word: erasing its versions deletes the term, a later version brings it back
                    "summary": " ".join(rng.choices(words, k=rng.randint(2, 12))) + f" rare{seq % 40}",
                }
            )
        batches.append(rows)
    return batches


def _entity_keyword_tables(folder: Path) -> dict[str, list[tuple]]:
    """Every entity keyword table of ``folder``'s derived.sqlite, rows sorted (the stats' creation token left out),
    with the document-frequency count rows folded into the term table first (what readers see: ``verbatim_df``),
    inside a transaction rolled back afterwards."""
    from zaxy_agents.retrieval import verbatim_df

    db = sqlite3.connect(folder / "derived.sqlite", isolation_level=None)
    db.execute("BEGIN")
    try:
        verbatim_df.fold(db, "entity_keyword", captions=False)
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE "
                                          "'entity_keyword%' ORDER BY name")]  # fmt: skip
        rows = {name: sorted(db.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr) for name in names}
        rows["entity_keyword_stats"] = [row[:-1] for row in rows["entity_keyword_stats"]]  # the creation token
        return rows
    finally:
        db.execute("ROLLBACK")
        db.close()


def test_entity_index_cached_term_ids_with_two_writers_and_erasures(tmp_path: Path) -> None:
    """Two connections (two processes) write the entity keyword index in turn, with erasures between: each
    keeps term ids between its own writes only while nobody else wrote (TermCache); the rows equal one writer's."""
    from zaxy_agents.retrieval.derived import open_standalone
    from zaxy_agents.retrieval.entity_index import EntityKeywordIndex

    batches = _entity_batches(24, 7)
    erase_after = {5: (0, "s1"), 11: (1, "s2"), 17: (1, "s0")}  # batch -> (which writer erases, session)

    def run(folder: Path, writer_count: int) -> dict[str, list[tuple]]:
        writers = [open_standalone(folder, EntityKeywordIndex()) for _ in range(writer_count)]
        try:
            for number, rows in enumerate(batches):
                writers[number % writer_count].on_batch(_EntityBatch(rows))
                if number in erase_after:
                    who, session = erase_after[number]
                    seqs = [
                        r["source_event_seq"] for b in batches[: number + 1] for r in b if r["session_id"] == session
                    ]
                    writers[who % writer_count].erase(session, seqs[-4:])
        finally:
            for writer in writers:
                writer.close()
        return _entity_keyword_tables(folder)

    one, two = run(tmp_path / "one", 1), run(tmp_path / "two", 2)
    assert one["entity_keyword_term"] and one == two


def test_entity_index_given_term_ids_equal_the_ids_sqlite_assigns(tmp_path: Path) -> None:
    """New terms get ``max(id) + 1`` onwards from the writer; a writer that inserts them without ids and reads the
    ids back (SQLite's own assignment) leaves the same tables, through erasures that delete terms (the largest id
    among them: the next new term reuses it in both)."""
    from collections import Counter

    from zaxy_agents.retrieval import entity_index
    from zaxy_agents.retrieval.derived import open_standalone
    from zaxy_agents.retrieval.entity_index import EntityKeywordIndex

    class SqliteAssigned(EntityKeywordIndex):
        def _count_terms(self, db: sqlite3.Connection, df: Counter[str], wseq: int) -> dict[str, int]:
            known = dict(entity_index._in(db, "SELECT term, id FROM entity_keyword_term WHERE term IN", list(df)))
            db.executemany(
                "UPDATE entity_keyword_term SET df = df + ? WHERE id = ?",
                [(n, known[t]) for t, n in df.items() if t in known],
            )
            for term in df:
                if term not in known:
                    insert = "INSERT INTO entity_keyword_term(term, df) VALUES (?, ?)"
                    known[term] = db.execute(insert, (term, df[term])).lastrowid  # type: ignore[assignment]
            return known

    batches = _entity_batches(30, 9)
    for number, rows in enumerate(batches):  # a word only this batch has: its term has the largest id
        rows[-1]["summary"] += f" newest{number}"

    def run(folder: Path, index: EntityKeywordIndex) -> tuple[dict[str, list[tuple]], int]:
        writer = open_standalone(folder, index)
        try:
            for number, rows in enumerate(batches):
                writer.on_batch(_EntityBatch(rows))
                if number % 4 == 3:  # erase the batch's last version: its newest word's term (the max id) goes
                    writer.erase(rows[-1]["session_id"], [rows[-1]["source_event_seq"]])
        finally:
            writer.close()
        return _entity_keyword_tables(folder), sum(1 for number in range(len(batches)) if number % 4 == 3)

    given, gone = run(tmp_path / "given", EntityKeywordIndex())
    assigned, _ = run(tmp_path / "assigned", SqliteAssigned())
    terms = {term for _, term, _ in given["entity_keyword_term"]}
    assert gone and not any(f"newest{n}" in terms for n in range(3, len(batches), 4))  # those terms were deleted
    assert all(f"newest{n}" in terms for n in range(len(batches) - 2) if n % 4 != 3)  # (merged before the end)
    assert given == assigned


def test_compiled_stemmer_gives_the_pure_python_reference_stems() -> None:
    """The analyser stems with PyStemmer (Snowball's C code, ~12x faster per new word); snowballstemmer's pure-Python
    English stemmer is the reference. Same stems on this repository's docs (real English) and on the realistic
    stream's vocabulary (also checked on LoCoMo dev six's 7,812 words, docs/benchmarks.md "Ingest cost")."""
    import Stemmer
    from snowballstemmer.english_stemmer import EnglishStemmer

    from benchmarks.realistic_stream import RealisticStream
    from zaxy_agents.retrieval import text as text_module

    assert isinstance(text_module._STEMMER, Stemmer.Stemmer)
    words = Analyzer(stem=False)
    docs = Path(__file__).resolve().parents[2] / "docs"
    vocabulary = set(RealisticStream(seed=7, vocabulary=5000).words)
    for page in docs.glob("*.md"):
        vocabulary.update(words.words(page.read_text(encoding="utf-8")))
    assert len(vocabulary) > 8000
    reference = EnglishStemmer()
    compiled = Stemmer.Stemmer("english")
    assert [compiled.stemWord(w) for w in sorted(vocabulary)] == [reference.stemWord(w) for w in sorted(vocabulary)]
