"""Finding a few lines of a session file by binary search over byte offsets, without its line index.

Line ``n`` of a session file is the event with seq ``n``, and seqs only grow down the file, so the line of a seq is
found by bisecting the file's bytes: probe the middle, skip to the next line start, decode that line's seq, keep
the half that holds the wanted seq. Each probe is one small ``pread`` (:data:`_PROBE` bytes, more only for a line
longer than that) and one JSON decode, so a lookup costs O(log(file size)) small reads instead of the whole-file
scan that builds the dense index (:meth:`.jsonl_file.SessionFile._index`, ~1 MB and a loop over every newline for a
1,000-event session). A checkout that cites a few events of many sessions never cited before in the process (a
whole-memory checkout) pays that scan once per session.

The seq of a probed line is read by decoding the line as JSON, never by looking for ``"seq"`` in its bytes: a
payload may hold a ``seq`` key of its own. A line that does not decode as an envelope, or a seq that is not where a
well-formed log has it, raises :class:`Unsearchable`: the caller then answers from the index, which is what it did
before (so a damaged file reads exactly as it did). Visibility is the caller's: it passes only seqs up to the last
visible one (:meth:`~.jsonl_file.SessionFile.read_tail`); lines past it (an unfinished batch, a torn final line) are
only ever probed to steer the search, never returned. Stdlib only.
"""

from __future__ import annotations

import json
import os

_PROBE = 4096  # bytes per probe: a 200-2,000 byte event and the newline before it fit in one read


class Unsearchable(Exception):
    """The file is not shaped as a well-formed log where the search looked: answer from the index instead."""


def search_lines(fd: int, size: int, wanted: list[int]) -> dict[int, bytes]:
    """The lines (newline included) of the sorted, distinct seqs ``wanted`` (each >= 1 and visible) in the first
    ``size`` bytes of ``fd``. Raises :class:`Unsearchable` when one of them is not where a well-formed log has it."""
    found: dict[int, bytes] = {}
    lo, lo_seq = 0, 1  # a line start and its seq: line 1 starts the file; later searches start past the last found
    for seq in wanted:
        start, line = _find(fd, size, seq, lo, lo_seq)
        found[seq] = line
        lo, lo_seq = start + len(line), seq + 1
    return found


def _find(fd: int, size: int, seq: int, lo: int, lo_seq: int) -> tuple[int, bytes]:
    """``(start, line)`` of ``seq``, which starts in ``[lo, size)`` where the line at ``lo`` has seq ``lo_seq``."""
    if seq == lo_seq:  # the first line, or the one right after the last found (a citation and its successor)
        return lo, _checked(_line_from(fd, lo, size), seq)
    hi = size  # invariant: the line of ``seq`` starts in [lo, hi) and the line starting at ``lo`` is ``lo_seq``
    while hi - lo > _PROBE:
        mid = (lo + hi) // 2
        probed = _line_after(fd, mid, hi, size)
        if probed is None:  # no complete line starts in [mid, hi) (or only a torn final one)
            hi = mid
            continue
        start, line = probed
        probed_seq = _seq_of(line)
        if probed_seq == seq:
            return start, line
        if probed_seq < seq:
            lo, lo_seq = start + len(line), probed_seq + 1
        else:
            hi = mid  # ``start`` is the first line start at or after ``mid``: the line of ``seq`` starts before
    if lo >= hi:
        raise Unsearchable(seq)
    # A short window: the line of ``seq`` is the (seq - lo_seq)-th line after ``lo``.
    data = os.pread(fd, min(hi + _PROBE, size) - lo, lo)
    position = 0
    for _ in range(seq - lo_seq):
        newline = data.find(b"\n", position)
        if newline < 0:
            raise Unsearchable(seq)
        position = newline + 1
    end = data.find(b"\n", position)
    line = data[position : end + 1] if end >= 0 else _line_from(fd, lo + position, size)
    return lo + position, _checked(line, seq)


def _checked(line: bytes | None, seq: int) -> bytes:
    if line is None or _seq_of(line) != seq:
        raise Unsearchable(seq)
    return line


def _line_after(fd: int, mid: int, hi: int, size: int) -> tuple[int, bytes] | None:
    """The first complete line starting in ``[mid, hi)`` (``mid`` > 0), or ``None``."""
    data = os.pread(fd, _PROBE, mid - 1)  # from mid - 1: a line starting exactly at ``mid`` is found too
    newline = data.find(b"\n")
    read = len(data)
    while newline < 0 and mid - 1 + read < hi:  # a line longer than a probe
        more = os.pread(fd, _PROBE, mid - 1 + read)
        if not more:
            return None
        found = more.find(b"\n")
        newline = -1 if found < 0 else read + found
        data += more
        read += len(more)
    start = mid + newline
    if newline < 0 or start >= hi:
        return None
    end = data.find(b"\n", newline + 1)
    if end >= 0:
        return start, data[newline + 1 : end + 1]
    line = _line_from(fd, start, size)
    return None if line is None else (start, line)


def _line_from(fd: int, start: int, size: int) -> bytes | None:
    """The complete line starting at ``start`` (newline included), or ``None`` when no newline ends it before
    ``size`` (the torn final line a crash left)."""
    pieces: list[bytes] = []
    position, chunk = start, _PROBE
    while position < size:
        piece = os.pread(fd, min(chunk, size - position), position)
        if not piece:
            return None
        newline = piece.find(b"\n")
        if newline >= 0:
            pieces.append(piece[: newline + 1])
            return b"".join(pieces)
        pieces.append(piece)
        position += len(piece)
        chunk *= 2
    return None


def _seq_of(line: bytes) -> int:
    """The envelope's seq, decoded as JSON (a payload may hold a ``seq`` key of its own)."""
    try:
        envelope = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise Unsearchable(line[:80]) from exc
    seq = envelope.get("seq") if isinstance(envelope, dict) else None
    if type(seq) is not int:
        raise Unsearchable(line[:80])
    return seq
