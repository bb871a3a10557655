"""The byte layout of posting runs and session ranges: LEB128 varints, run cuts, encoding and decoding.

Pure functions over NumPy arrays, no SQL (the tables that hold these bytes are :mod:`.postings`'). A run holds the
postings of one term in one segment, doc ascending: ``docs`` one varint code per posting, ``gap << 2 | restart << 1
| (tf > 1)`` (the gap from the previous doc; at a restart, the doc's offset in its segment), and ``tfs`` the counts
above one, ``tf - 2``, in order. Every run starts with a restart, so runs concatenated in doc order decode as they
are (a sealed row is such a concatenation). Session ranges are ``(offset in the segment, count)`` uint16 pairs of
consecutive docs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RUN_BYTES = 384  # bytes of varints per run a write stores (docs + tfs)
MAX_TF = 65535
SEGMENT_BITS = 14  # a segment holds the postings of 16,384 consecutive doc ids
RESTART = 2  # the bit of a posting's code that says its gap is an offset in the segment (a stretch starts)
RANGE = np.dtype("<u2")  # post_seg ranges: (offset in the segment, count) pairs
_EMPTY = b""


# ---------------------------------------------------------------------------------------------------- varints
def varint_sizes(values: np.ndarray) -> np.ndarray:
    """Bytes of each value (int64, >= 0) as a LEB128 varint."""
    sizes = np.ones(values.size, dtype=np.int64)
    limit = 128
    while values.size:
        more = values >= limit
        if not more.any():
            break
        sizes += more
        limit <<= 7
    return sizes


def encode_varints(values: np.ndarray, sizes: np.ndarray) -> bytes:
    """``values`` (int64, >= 0) as consecutive LEB128 varints of ``sizes`` bytes (:func:`varint_sizes`)."""
    total = int(sizes.sum())
    if total == values.size:
        return values.astype(np.uint8).tobytes()
    out = np.empty(total, dtype=np.uint8)
    position = np.cumsum(sizes) - sizes
    level = 0
    chosen = np.arange(values.size)
    while chosen.size:
        part = (values[chosen] >> (7 * level)) & 0x7F
        more = sizes[chosen] > level + 1
        out[position[chosen] + level] = part | (more.astype(np.int64) << 7)
        chosen = chosen[more]
        level += 1
    return out.tobytes()


def decode_varints(data: bytes) -> np.ndarray:
    """The int64 values of consecutive LEB128 varints."""
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = raw < 128
    if ends.all():
        return raw.astype(np.int64)
    low = (raw & 0x7F).astype(np.int64)
    last = np.flatnonzero(ends)
    starts = np.empty_like(last)
    starts[0] = 0
    starts[1:] = last[:-1] + 1
    within = np.arange(raw.size) - np.repeat(starts, last - starts + 1)
    return np.add.reduceat(low << (7 * within), starts)


# ---------------------------------------------------------------------------------------------------- runs
def run_starts(key_starts: np.ndarray, docs: np.ndarray, tfs: np.ndarray) -> np.ndarray:
    """Where runs start in postings sorted by key then doc: at each key's start, then wherever the key's varint
    bytes so far pass another ``RUN_BYTES``."""
    size = docs.size
    gaps = np.diff(docs, prepend=docs[0])
    gaps[key_starts] = docs[key_starts] & ((1 << SEGMENT_BITS) - 1)
    counts = np.minimum(tfs, MAX_TF)
    cost = varint_sizes((gaps << 2) | 3) + np.where(counts > 1, varint_sizes(np.maximum(counts - 2, 0)), 0)
    before = np.cumsum(cost) - cost
    lengths = np.diff(np.append(key_starts, size))
    bucket = (before - np.repeat(before[key_starts], lengths)) // RUN_BYTES
    cut = np.zeros(size, dtype=bool)
    cut[key_starts] = True
    cut[1:] |= bucket[1:] != bucket[:-1]
    return np.flatnonzero(cut)


def encode_runs(docs: np.ndarray, tfs: np.ndarray, starts: np.ndarray) -> list[tuple[int, int, bytes, bytes]]:
    """``(first doc, n, docs, tfs)`` of the runs of ``docs`` (int64, ascending within each run, each run in one
    segment) starting at ``starts`` (:func:`encode_columns`, as rows)."""
    return list(zip(*encode_columns(docs, tfs, starts), strict=True))


def encode_columns(
    docs: np.ndarray, tfs: np.ndarray, starts: np.ndarray
) -> tuple[list[int], list[int], list[bytes], list[bytes]]:
    """The runs of :func:`encode_runs` as four columns: first docs, sizes, ``docs`` bytes, ``tfs`` bytes. All runs
    at once (a bulk write holds ~20k runs per 1,000 events; per-run NumPy calls would cost more than the postings),
    each run's bytes cut from one encoding of every code by ``map(slice)`` at C speed, and ``tfs`` cut only for the
    runs that have counts above one (the others share one empty ``bytes``): a comprehension over the runs cost
    ~1.7x. A run's first code holds its doc's offset in the segment."""
    size = docs.size
    if not size:
        return [], [], [], []
    stream = encode_stream(docs, tfs, starts)
    code_bytes, code_at = stream.codes, stream.code_at
    ends = np.append(starts[1:], size)
    firsts, sizes = docs[starts].tolist(), (ends - starts).tolist()
    doc_blobs = list(map(code_bytes.__getitem__, map(slice, code_at[starts].tolist(), code_at[ends].tolist())))
    tf_blobs = [_EMPTY] * len(firsts)
    if not stream.extra:  # the usual run: no count above one, no tfs bytes
        return firsts, sizes, doc_blobs, tf_blobs
    extra_bytes, extra_at = stream.extra, stream.extra_at
    low, high = extra_at[starts], extra_at[ends]
    holding = np.flatnonzero(high > low)
    cut = map(extra_bytes.__getitem__, map(slice, low[holding].tolist(), high[holding].tolist()))
    for run, blob in zip(holding.tolist(), cut, strict=True):
        tf_blobs[run] = blob
    return firsts, sizes, doc_blobs, tf_blobs


@dataclass
class Stream:
    """The runs of :func:`encode_columns` as one byte string each for docs and tfs: ``codes[code_at[i]:]`` starts
    posting ``i``'s code, ``extra[extra_at[i]:]`` its count above one (if any); both offsets have one more entry,
    the end. Runs of consecutive postings are consecutive slices (the open-segment rows of :mod:`.posting_open`
    store whole (field, segment) stretches of them)."""

    codes: bytes
    code_at: np.ndarray
    extra: bytes
    extra_at: np.ndarray


def encode_stream(docs: np.ndarray, tfs: np.ndarray, starts: np.ndarray) -> Stream:
    """Every posting's code (a restart at each of ``starts``) and count above one, encoded once."""
    counts = np.minimum(tfs, MAX_TF).astype(np.int64)
    gaps = np.diff(docs, prepend=docs[0])
    gaps[starts] = docs[starts] & ((1 << SEGMENT_BITS) - 1)
    many = counts > 1
    codes = (gaps << 2) | many
    codes[starts] |= RESTART
    code_sizes = varint_sizes(codes)
    code_at = np.append(0, np.cumsum(code_sizes))
    if not many.any():
        return Stream(encode_varints(codes, code_sizes), code_at, _EMPTY, np.zeros(docs.size + 1, dtype=np.int64))
    extra = counts[many] - 2
    extra_sizes = varint_sizes(extra)
    extra_at = np.append(0, np.cumsum(extra_sizes))[np.append(0, np.cumsum(many))]  # by posting
    return Stream(encode_varints(codes, code_sizes), code_at, encode_varints(extra, extra_sizes), extra_at)


def decode_runs(runs: Sequence[tuple[int, int, bytes, bytes]]) -> tuple[np.ndarray, np.ndarray]:
    """Docs (int64) and tfs (float64) of ``(seg, n, docs, tfs)`` runs, concatenated in run order."""
    if not runs:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    segs, sizes, doc_blobs, tf_blobs = zip(*runs, strict=True)
    return decode_columns(segs, sizes, doc_blobs, tf_blobs)


def decode_columns(
    segs: Sequence[int], sizes: Sequence[int], doc_blobs: Sequence[bytes], tf_blobs: Sequence[bytes]
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`decode_runs` over the columns of the runs (as ``zip(*rows)`` gives them): one pass of NumPy over all
    their bytes, whatever the number of runs."""
    count = len(sizes)
    if not count:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    codes = decode_varints(doc_blobs[0] if count == 1 else b"".join(doc_blobs))
    gaps = codes >> 2
    total = np.cumsum(gaps)
    restarts = np.flatnonzero(codes & RESTART)  # every run starts with one; a sealed run holds several
    if count == 1:
        base = segs[0] << SEGMENT_BITS
        if restarts.size == 1:
            docs = total + base
        else:
            docs = total + np.repeat(
                base - (total[restarts] - gaps[restarts]), np.diff(np.append(restarts, total.size))
            )
    else:
        # each stretch from a restart counts from its offset in the segment: take off what the stretches before it
        # summed, add its segment's base
        n = np.fromiter(sizes, dtype=np.int64, count=count)
        bases = np.repeat(np.fromiter(segs, dtype=np.int64, count=count) << SEGMENT_BITS, n)[restarts]
        docs = total + np.repeat(bases - (total[restarts] - gaps[restarts]), np.diff(np.append(restarts, total.size)))
    tfs = np.ones(codes.size)
    many = (codes & 1).astype(bool)
    if many.any():
        tfs[many] = decode_varints(b"".join(tf_blobs)) + 2
    return docs, tfs


# ---------------------------------------------------------------------------------------------------- sessions
def ranges_of(offsets: np.ndarray) -> bytes:
    """Sorted doc offsets in a segment as ``(offset, count)`` uint16 pairs of consecutive docs."""
    breaks = np.flatnonzero(np.diff(offsets) != 1) + 1
    starts = np.concatenate(([0], breaks))
    counts = np.diff(np.append(starts, offsets.size))
    return np.stack((offsets[starts], counts), axis=1).astype(RANGE).tobytes()


def range_docs(seg: int, ranges: bytes) -> np.ndarray:
    """The docs (int64, ascending) of one session's ``ranges`` in segment ``seg``."""
    pairs = np.frombuffer(ranges, dtype=RANGE).reshape(-1, 2).astype(np.int64)
    pairs = pairs[np.argsort(pairs[:, 0], kind="stable")]
    counts = pairs[:, 1]
    starts = np.cumsum(counts) - counts
    return (seg << SEGMENT_BITS) + np.repeat(pairs[:, 0] - starts, counts) + np.arange(int(counts.sum()))
