"""Erasing events from the verbatim index: their postings, features, doc rows and whatever names only they held.

Called inside a write transaction (the store runs with ``secure_delete``, so deleted rows are zeroed in the
file; the caller folds the WAL afterwards). The index holds no event text, but it holds terms, surface words
(query expansion's vocabulary) and speaker names: a term no other event uses is deleted, and so is every
surface word of a term that lost a posting (a word cannot be traced to the events that used it, so the words of
those terms are forgotten and re-learnt from events still holding the term when a text source is attached).
Neighbour links skip the erased events, and the length sums the scoring uses are corrected.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from . import features as feat
from . import verbatim_df
from .postings import decode_runs
from .verbatim import _POSTINGS, PREFIX, read_stats

if TYPE_CHECKING:
    from .verbatim import VerbatimIndex

RELEARN_SAMPLE = 50  # events re-read per affected term to re-learn its surface words


def erase(index: VerbatimIndex, db: sqlite3.Connection, session: str, seqs: Sequence[int]) -> None:
    p = PREFIX
    row = db.execute(f"SELECT id FROM {p}_session WHERE name = ?", (session,)).fetchone()
    if row is None or not seqs:
        return
    session_id = row[0]
    doomed: list[int] = []
    wanted = sorted(set(int(s) for s in seqs))
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        doomed += [r[0] for r in db.execute(f"SELECT id FROM {p}_doc WHERE session = ? AND seq IN ({marks})",
                                            [session_id, *chunk])]  # fmt: skip
    if not doomed:
        return
    gone = np.array(sorted(doomed), dtype=np.int64)
    verbatim_df.fold(db, p)  # the stored counts exact before they are lowered (and terms at zero deleted)
    stats = read_stats(db).values
    lost = _remove_postings(db, session_id, gone)
    _forget_terms(db, lost)
    writer = feat.FeatureWriter(p, db)
    speakers: Counter[int] = Counter()
    groups = {int(writer.record(int(d))["group"]) for d in gone}
    ends = {g: _ends(db, g) for g in groups}
    old_lengths = {g: [_length(writer, d, index.cfg.caption_weight) for d in ends[g]] for g in groups}
    for doc in gone.tolist():
        record = writer.record(doc)
        length = _length(writer, doc, index.cfg.caption_weight)
        stats["docs"] -= 1
        stats["text_total"] -= float(record["tl"])
        stats["text_nonempty"] -= float(record["tl"] > 0)
        stats["cap_total"] -= float(record["cl"])
        stats["cap_nonempty"] -= float(record["cl"] > 0)
        stats["ln_total"] -= length
        if record["speaker"] >= 0:
            speakers[int(record["speaker"])] += 1
        # Relink the neighbours; the erased record keeps its own links until every erasure is done, so a walk
        # through consecutive erased docs still reaches the next live one.
        previous, following = int(record["prev"]), int(record["next"])
        if previous >= 0:
            writer.set(previous, "next", following)
        if following >= 0:
            writer.set(following, "prev", previous)
        writer.set(doc, "flags", int(record["flags"]) | feat.FLAG_ERASED)
        db.execute(f"UPDATE {p}_group SET docs = docs - 1, len = len - ? WHERE id = ?", (length, int(record["group"])))
    for group in groups:
        first, _, last, _ = ends[group]
        head, tail = _live(writer, first, "next"), _live(writer, last, "prev")
        if head < 0:
            db.execute(f"DELETE FROM {p}_group WHERE id = ?", (group,))
            stats["groups"] -= 1
            new_ends = (-1, -1, -1, -1)
        else:
            new_ends = (head, int(writer.record(head)["next"]), tail, int(writer.record(tail)["prev"]))
            db.execute(
                f"UPDATE {p}_group SET first = ?, second = ?, last = ?, last2 = ? WHERE id = ?", (*new_ends, group)
            )
        new_lengths = [_length(writer, d, index.cfg.caption_weight) for d in new_ends]
        for name, old, new in zip(("first1", "first2", "last1", "last2"), old_lengths[group], new_lengths, strict=True):
            stats[name] += new - old
    blank = feat.empty_block()[:1].copy()
    blank["flags"] = feat.FLAG_ERASED
    for doc in gone.tolist():
        writer.put(doc, blank[0])  # nothing of the event stays in its record
    marks = ",".join(str(d) for d in gone.tolist())
    db.execute(f"DELETE FROM {p}_doc WHERE id IN ({marks})")
    db.execute(f"UPDATE {p}_session SET docs = docs - ? WHERE id = ?", (len(gone), session_id))
    _forget_speakers(index, db, speakers)
    low, high = db.execute(f"SELECT min(day), max(day) FROM {p}_doc WHERE day >= 0").fetchone()
    stats["min_day"], stats["max_day"] = (low, high) if low is not None else (-1, -1)
    stats["wseq"] += 1
    stats["erasures"] += 1
    blocks = writer.flush(int(stats["wseq"]))
    names = list(stats)
    db.execute(f"UPDATE {p}_stats SET {', '.join(f'{n} = ?' for n in names)} WHERE id = 1", [stats[n] for n in names])
    index._pending = (blocks, -2, int(stats["wseq"]))  # -2: never the cache's; it reloads what changed
    index._known_words.clear()
    _relearn(index, db, [term for term, _ in lost])


def _remove_postings(db: sqlite3.Connection, session: int, gone: np.ndarray) -> list[tuple[str, tuple[int, int]]]:
    """Delete the postings of ``gone`` docs; returns ``(term, (text postings lost, caption postings lost))``."""
    out = []
    for term_id, (text, caption) in _POSTINGS.remove_docs(db, session, gone).items():
        db.execute(f"UPDATE {PREFIX}_term SET df = df - ?, cdf = cdf - ? WHERE id = ?", (text, caption, term_id))
        name = db.execute(f"SELECT term FROM {PREFIX}_term WHERE id = ?", (term_id,)).fetchone()[0]
        out.append((name, (text, caption)))
    return out


def _forget_terms(db: sqlite3.Connection, lost: list[tuple[str, tuple[int, int]]]) -> None:
    p = PREFIX
    terms = sorted({term for term, _ in lost})
    for start in range(0, len(terms), 500):  # one pass over the word table per 500 terms (it has no index on term:
        chunk = terms[start : start + 500]  # a statement per term scanned it once per term, O(erased docs x words))
        db.execute(f"DELETE FROM {p}_word WHERE term IN ({','.join('?' * len(chunk))})", chunk)
    db.execute(f"DELETE FROM {p}_term WHERE df <= 0 AND cdf <= 0")


def _ends(db: sqlite3.Connection, group: int) -> tuple[int, int, int, int]:
    """A group's first, second, last and second-to-last docs."""
    row = db.execute(f"SELECT first, second, last, last2 FROM {PREFIX}_group WHERE id = ?", (group,)).fetchone()
    return tuple(row)  # type: ignore[return-value]


def _length(writer: feat.FeatureWriter, doc: int, caption_weight: float) -> float:
    if doc < 0:
        return 0.0
    record = writer.record(doc)
    if record["flags"] & feat.FLAG_ERASED:
        return 0.0
    return float(record["tl"]) + caption_weight * float(record["cl"])


def _live(writer: feat.FeatureWriter, doc: int, step: str) -> int:
    """``doc`` if it is live, else the first live doc reached from it following ``step`` links (-1: none)."""
    while doc >= 0 and writer.record(doc)["flags"] & feat.FLAG_ERASED:
        doc = int(writer.record(doc)[step])
    return doc


def _forget_speakers(index: VerbatimIndex, db: sqlite3.Connection, speakers: Counter[int]) -> None:
    p = PREFIX
    for speaker, count in speakers.items():
        db.execute(f"UPDATE {p}_speaker SET docs = docs - ? WHERE id = ?", (count, speaker))
    dropped = [row[0] for row in db.execute(f"SELECT id FROM {p}_speaker WHERE docs <= 0")]
    if not dropped:
        return
    marks = ",".join(str(s) for s in dropped)
    terms = [row[0] for row in db.execute(f"SELECT term FROM {p}_speaker_term WHERE speaker IN ({marks})")]
    db.execute(f"DELETE FROM {p}_speaker_term WHERE speaker IN ({marks})")
    db.execute(f"DELETE FROM {p}_speaker WHERE id IN ({marks})")
    remaining = db.execute(f"SELECT id, name FROM {p}_speaker ORDER BY id").fetchall()
    for term in terms:
        owners = [speaker for speaker, name in remaining if term in index.an(name)]
        if owners:
            db.execute(f"INSERT OR REPLACE INTO {p}_speaker_term VALUES (?, ?)", (term, owners[-1]))
        elif not db.execute(f"SELECT 1 FROM {p}_term WHERE term = ?", (term,)).fetchone():
            db.execute(f"DELETE FROM {p}_word WHERE term = ?", (term,))


def _relearn(index: VerbatimIndex, db: sqlite3.Connection, terms: list[str]) -> None:
    """Re-learn the surface words of ``terms`` from events that still hold them (needs a text source)."""
    source = index.text_source
    if source is None or not terms:
        return
    known = index.term_ids(db, terms)
    keys: dict[tuple[int, int], None] = {}
    for term in terms:
        if term not in known:
            continue
        docs, _ = decode_runs(_POSTINGS.sample(db, 0, known[term][0], 4))
        for doc in docs[:RELEARN_SAMPLE].tolist():
            keys[(int(doc), 0)] = None
    if not keys:
        return
    marks = ",".join(str(doc) for doc, _ in keys)
    names = dict(db.execute(f"SELECT id, name FROM {PREFIX}_session").fetchall())
    events = [(names[s], seq) for s, seq in db.execute(f"SELECT session, seq FROM {PREFIX}_doc WHERE id IN ({marks})")]
    wanted = set(terms)
    words: dict[str, str] = {}
    for text in source(events).values():
        for word in index.an.analyse(text)[1]:
            term = index.an.term(word)
            if term in wanted:
                words[word] = term
    db.executemany(f"INSERT OR IGNORE INTO {PREFIX}_word(word, term) VALUES (?, ?)", sorted(words.items()))
