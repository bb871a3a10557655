"""A batch's postings ``(field, term, session, doc, tf)`` from its documents' analysed terms.

Two shapes for the verbatim writer's two destinations: a small batch's postings doc by doc in first-appearance order
(the tail's packed row keeps it), a bulk batch's counted all at once with NumPy (the main tables sort them anyway).
"""

from __future__ import annotations

from collections import Counter
from itertools import chain

import numpy as np

from .verbatim import FIELD_CAPTION, FIELD_TEXT
from .verbatim_tail import Prepared


def tail_postings(
    prepared: Prepared, terms_by_doc: list[tuple[int, list[str], list[str]]], ids: dict[str, int]
) -> None:
    """The postings of a small batch, doc by doc, each doc's terms in order of first appearance (the tail's
    packed row keeps this order)."""
    post_term, post_tf, post_field, post_session, post_doc = [], [], [], [], []
    for offset, (session_id, terms, caption) in enumerate(terms_by_doc):
        for field_id, found in ((FIELD_TEXT, terms), (FIELD_CAPTION, caption)):
            if not found:
                continue
            counts = Counter(found)
            size = len(counts)
            post_term.extend(map(ids.__getitem__, counts))
            post_tf.extend(counts.values())
            post_field.extend([field_id] * size)
            post_session.extend([session_id] * size)
            post_doc.extend([prepared.first + offset] * size)
    prepared.post_term, prepared.post_tf, prepared.post_field = post_term, post_tf, post_field
    prepared.post_session, prepared.post_doc = post_session, post_doc


def count_postings(
    prepared: Prepared, terms_by_doc: list[tuple[int, list[str], list[str]]], tokens: list[str], ids: dict[str, int]
) -> None:
    """The postings ``(field, term, session, doc, tf)`` of a bulk batch, counted by one ``np.unique`` over every
    token (a ``Counter`` per doc and field cost ~8 % of bulk projection). The same postings as the per-doc loop,
    in key order instead of first-appearance order: only the tail (small batches) keeps that order on disk.
    ``tokens``: every doc's text then caption terms, one after the other (as ``terms_by_doc`` holds them)."""
    if not tokens:
        return
    term_of = np.fromiter(map(ids.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    docs = len(terms_by_doc)
    segments = np.fromiter(chain.from_iterable((len(t), len(c)) for _, t, c in terms_by_doc), np.int64, 2 * docs)
    segment = np.repeat(np.arange(2 * docs, dtype=np.int64), segments)  # doc offset * 2 + (0 text, 1 caption)
    width = int(term_of.max()) + 1
    keys, counts = np.unique(segment * width + term_of, return_counts=True)
    segment, term = np.divmod(keys, width)
    offset, caption = np.divmod(segment, 2)
    sessions = np.fromiter((session for session, _, _ in terms_by_doc), np.int64, docs)
    prepared.post_field = np.where(caption == 1, FIELD_CAPTION, FIELD_TEXT)
    prepared.post_term, prepared.post_tf = term, counts
    prepared.post_session, prepared.post_doc = sessions[offset], prepared.first + offset
