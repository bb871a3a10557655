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
