"""A data-only file format for in-memory state (never pickle): JSON for structure, one binary heap for arrays.

Used for the state of projection listeners that still live in memory: reading a file can only ever produce
plain data (dicts, lists, tuples, sets, strings, numbers, numpy arrays, ``array.array``) and instances of the
few classes named in :data:`ALLOWED_CLASSES`, rebuilt attribute by attribute from data. Nothing in a file can
name a class, a function or a module to load. A file that does not parse raises :class:`StateFileError`.

Layout: ``MAGIC`` + 8-byte little-endian JSON length + UTF-8 JSON + heap bytes. Arrays are stored in the heap
and referenced from the JSON by offset, dtype and shape.
"""

from __future__ import annotations

import dataclasses
import json
import os
from array import array
from pathlib import Path
from typing import Any

import numpy as np

from zaxy_agents.sharing.election import pid_alive

MAGIC = b"ZAXYSTATE1\n"
_ARRAY_CODES = frozenset("bBhHiIlLqQfd")
_DTYPES = frozenset(
    {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64", "bool"}
)


class StateFileError(ValueError):
    """The file is not a state file of this format (garbage, truncated, another version, unknown class)."""


# The classes a state file may hold, by name: given by whoever owns the listeners (the fabric passes the
# retrieval indexes' classes), so this codec depends on no listener package and can rebuild no other class.
StateClasses = dict[str, type]


class _Encoder:
    def __init__(self, classes: StateClasses) -> None:
        self.heap = bytearray()
        self.names = {cls: name for name, cls in classes.items()}

    def _blob(self, data: bytes) -> int:
        offset = len(self.heap)
        self.heap += data
        return offset

    def encode(self, value: Any) -> Any:
        if value is None or isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, np.ndarray):
            if value.dtype.name not in _DTYPES:
                raise TypeError(f"unsupported array dtype {value.dtype}")
            data = np.ascontiguousarray(value).tobytes()
            return {"$nd": [self._blob(data), len(data), value.dtype.name, list(value.shape)]}
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, array):
            data = value.tobytes()
            return {"$ar": [self._blob(data), len(data), value.typecode]}
        if isinstance(value, list):
            return [self.encode(item) for item in value]
        if isinstance(value, tuple):
            return {"$tu": [self.encode(item) for item in value]}
        if isinstance(value, set | frozenset):
            return {"$se": [self.encode(item) for item in sorted(value, key=repr)]}
        if isinstance(value, dict):
            if all(isinstance(key, str) for key in value):
                return {"$di": {key: self.encode(item) for key, item in value.items()}}
            return {"$dp": [[self.encode(key), self.encode(item)] for key, item in value.items()]}
        name = self.names.get(type(value))
        if name is not None:
            fields = (
                {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
                if dataclasses.is_dataclass(value)
                else dict(vars(value))
            )
            return {"$ob": [name, self.encode(fields)]}
        raise TypeError(f"cannot store {type(value).__name__} in a state file")


class _Decoder:
    def __init__(self, heap: memoryview, classes: StateClasses) -> None:
        self.heap = heap
        self.classes = classes

    def _slice(self, offset: Any, length: Any) -> memoryview:
        if not isinstance(offset, int) or not isinstance(length, int) or offset < 0 or length < 0:
            raise StateFileError("bad array reference")
        if offset + length > len(self.heap):
            raise StateFileError("array reference past the end of the file")
        return self.heap[offset : offset + length]

    def decode(self, value: Any) -> Any:
        if not isinstance(value, dict):
            if isinstance(value, list):
                return [self.decode(item) for item in value]
            return value
        if len(value) != 1:
            raise StateFileError("malformed value")
        tag, body = next(iter(value.items()))
        if tag == "$di" and isinstance(body, dict):
            return {key: self.decode(item) for key, item in body.items()}
        if tag == "$tu" and isinstance(body, list):
            return tuple(self.decode(item) for item in body)
        if tag == "$se" and isinstance(body, list):
            return {self.decode(item) for item in body}
        if tag == "$dp" and isinstance(body, list):
            return {self._hashable(self.decode(pair[0])): self.decode(pair[1]) for pair in body}
        if tag == "$nd" and isinstance(body, list) and len(body) == 4:
            offset, length, dtype, shape = body
            if dtype not in _DTYPES or not isinstance(shape, list) or not all(isinstance(n, int) for n in shape):
                raise StateFileError("bad array")
            data = np.frombuffer(self._slice(offset, length), dtype=np.dtype(dtype))
            try:
                return data.reshape(shape).copy()
            except ValueError as exc:
                raise StateFileError("array shape does not match its data") from exc
        if tag == "$ar" and isinstance(body, list) and len(body) == 3:
            offset, length, code = body
            if code not in _ARRAY_CODES:
                raise StateFileError("bad array type")
            result = array(code)
            try:
                result.frombytes(self._slice(offset, length))
            except ValueError as exc:
                raise StateFileError("array length does not match its type") from exc
            return result
        if tag == "$ob" and isinstance(body, list) and len(body) == 2 and body[0] in self.classes:
            cls = self.classes[body[0]]
            fields = self.decode(body[1])
            if not isinstance(fields, dict):
                raise StateFileError("bad object fields")
            if dataclasses.is_dataclass(cls):
                try:
                    return cls(**fields)
                except TypeError as exc:
                    raise StateFileError(f"bad fields for {body[0]}") from exc
            instance = cls.__new__(cls)
            vars(instance).update(fields)
            return instance
        raise StateFileError(f"unknown value tag {tag!r}")

    @staticmethod
    def _hashable(key: Any) -> Any:
        try:
            hash(key)
        except TypeError as exc:
            raise StateFileError("unhashable dictionary key") from exc
        return key


def dumps(value: Any, classes: StateClasses) -> bytes:
    encoder = _Encoder(classes)
    document = json.dumps(encoder.encode(value), ensure_ascii=False, separators=(",", ":")).encode()
    return MAGIC + len(document).to_bytes(8, "little") + document + bytes(encoder.heap)


def loads(data: bytes, classes: StateClasses) -> Any:
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 8:
        raise StateFileError("not a zaxy state file")
    start = len(MAGIC) + 8
    length = int.from_bytes(data[len(MAGIC) : start], "little")
    if start + length > len(data):
        raise StateFileError("truncated state file")
    try:
        document = json.loads(data[start : start + length])
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StateFileError(f"unreadable structure: {exc}") from exc
    try:
        return _Decoder(memoryview(data)[start + length :], classes).decode(document)
    except RecursionError as exc:
        raise StateFileError("structure nested too deeply") from exc


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` next to ``path`` and rename it over ``path``; a crash leaves the old file (and no debris
    once :func:`remove_debris` ran)."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def remove_debris(folder: Path) -> list[Path]:
    """Delete temporary files a killed writer left behind (``*.tmp`` whose writing process is gone)."""
    removed = []
    if not folder.is_dir():
        return removed
    for candidate in folder.glob("*.tmp"):
        parts = candidate.name.split(".")
        pid = int(parts[-2]) if len(parts) >= 3 and parts[-2].isdigit() else None
        if pid is not None and pid != os.getpid() and pid_alive(pid):
            continue
        candidate.unlink(missing_ok=True)
        removed.append(candidate)
    return removed
