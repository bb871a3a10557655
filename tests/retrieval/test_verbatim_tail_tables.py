"""The tail's postings arrays, reused and extended from query to query, equal a fresh conversion of its lists."""

from __future__ import annotations

import numpy as np

from zaxy_agents.retrieval.verbatim_tail import TailView


def test_tables_grow_with_the_filed_postings_and_handed_out_arrays_never_change() -> None:
    view = TailView()
    view.add_postings([0, 0, 1], [7, 8, 7], [1, 1, 2], [10, 10, 11], [1, 2, 3])  # (field, term, session, doc, tf)
    view.settle()
    first = view.table((0, 7))
    assert first is not None and first.dtype == np.int64
    assert first.tolist() == [[10, 1, 1]] and view.table((0, 9)) is None
    assert view.table((0, 7)) is first  # nothing filed since: the same array, not a new conversion
    view.add_postings([0, 0], [7, 7], [2, 3], [12, 13], [4, 5])
    view.settle()
    grown = view.table((0, 7))
    assert grown is not None and grown.tolist() == np.array(view.post[(0, 7)], dtype=np.int64).tolist()
    assert grown.tolist() == [[10, 1, 1], [12, 2, 4], [13, 3, 5]]
    assert first.tolist() == [[10, 1, 1]]  # a snapshot taken before keeps what it was given
    assert view.table((1, 7)).tolist() == [[11, 2, 3]]  # type: ignore[union-attr]


def test_a_small_batch_packs_the_same_records_as_a_numpy_table() -> None:
    """One event's postings (lists) are packed by ``struct``; the bytes equal the ``TAIL_POSTING`` table a bulk
    batch's arrays give (term frequencies above the codec's limit capped alike), and unpack to the same columns."""
    import random

    from zaxy_agents.retrieval import posting_codec
    from zaxy_agents.retrieval.verbatim_tail import Prepared, pack_postings, unpack_postings

    rng = random.Random(5)
    count = 70
    columns = (
        [rng.randint(0, 1) for _ in range(count)],
        [rng.randint(0, 2**32 - 1) for _ in range(count)],
        [rng.randint(0, 5000) for _ in range(count)],
        [rng.randint(0, 2**32 - 1) for _ in range(count)],
        [rng.randint(1, 9) for _ in range(count - 2)] + [posting_codec.MAX_TF, posting_codec.MAX_TF + 7],
    )
    lists = Prepared(np.zeros(0), 0, [], *columns)
    arrays = Prepared(np.zeros(0), 0, [], *(np.array(column, dtype=np.int64) for column in columns))
    packed = pack_postings(lists)
    assert packed == pack_postings(arrays) and len(packed) == count * 15
    table = unpack_postings([packed])
    assert table["term"].tolist() == columns[1] and table["tf"].tolist()[-2:] == [posting_codec.MAX_TF] * 2
    assert pack_postings(Prepared(np.zeros(0), 0, [])) == b""
