"""LoCoMo: can a cheap re-rank inside the default top 50 lift recall? (issue 23)

Multi-hop gold turns are in the default top 50 far more often than in the top 10 (0.67 vs 0.44), and the hits
above them are mostly the same speaker's turns: a ranking problem inside the top 50. This study asks every dev
question once through the real engine (``MemoryFabric.query``, default install and profile, k=50), keeps each
hit's verbatim score and components, and re-ranks those 50 offline with each family of ideas:

* ``neighbour``: + a x the best adjacent turn's normalised score in the list (same sitting);
* ``sitting``: + a x the summed normalised scores of the other listed turns of the turn's sitting;
* ``sitting_top10``: + a x how many of the default top 10 share the turn's sitting;
* ``diversity``: greedy, a turn's score x (1 - d)^(turns of its sitting already picked);
* ``coverage``: + a x the IDF-weighted share of the question's terms the turn itself holds;
* ``answer_type``: + a when a "when / how many / how often" question meets a turn with a number or date word;
* ``first_person``: + a x the share of first-person words (self-disclosure: "I joined ...");
* ``linear``: a logistic regression over every feature above plus the verbatim components, fitted on the tuning
  half (the "small hand-set linear re-rank", with its weights learnt instead of guessed);
* ``prf``: a second verbatim round whose query adds the top hits' most salient terms (tf x IDF, weight w x
  share), alone or merged with the default by reciprocal rank fusion;
* ``conjunction``: a question joining two words by "and" ("Did Jon and Gina both ...") is also asked once per
  word ("Did Jon both ...", "Did Gina both ..."); the answers are interleaved with the default's, or merged with
  it by reciprocal rank fusion;
* ``embedder`` (``--embedder NAME``, e.g. ``e5``, ``wordllama``, ``e5-words``): + a x the z-scored cosine of
  the question and the turn, and the linear re-rank with that cosine as one more feature.

Every family's setting is chosen on the tuning half (conv-26/30/41, best R@10 then R@5) and reported on the
held-out half (conv-42/43/44) and on all six, beside the default in the same run, with the paired bootstrap 95%
interval of the R@10 difference (held-out, all six), multi-hop R@10 and adversarial R@5. The engine's own ranking
is the ``default`` row: nothing here changes it. Settings are normalised scores (the verbatim score over the
list's best), so they carry over between questions.

Usage: python benchmarks/locomo_rerank_study.py [--dataset PATH] [--embedder NAME] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from zaxy_agents.evaluation.locomo import _ingest, session_for
from zaxy_agents.evaluation.locomo_data import Conversation, load_conversations
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval.engine import NOT_RECALLED
from zaxy_agents.retrieval.text import _WHEN_RE, Analyzer

DATASET = "/work/shared/datasets/locomo/locomo_dev6.json"
DEPTH = 50  # the balanced profile's per-lane depth: what the engine ranks before fusion
COMPONENTS = ("text", "caption", "context", "segment", "neighbour", "temporal", "speaker", "date", "date_match")
NUMBER = re.compile(r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|once|twice|weeks?|months?|years?)\b")
FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|mine|myself|we|our|us)\b")
HOW_MANY = re.compile(r"\bhow (many|often|long|much)\b")
CONJUNCTION = re.compile(r"\b([\w'-]+) and ([\w'-]+)\b")
PRF_GRID = [(m, t, w) for m in (5, 10) for t in (5, 10) for w in (0.1, 0.2)]
ANALYZE = Analyzer()
Ranker = Callable[["Question"], list[str]]


@dataclass
class Question:
    conversation: str
    text: str
    category: int
    gold: list[str]
    hits: list[str]  # the engine's top 50, best first (LoCoMo dia ids)
    features: np.ndarray  # one row per hit (FEATURES)
    prf: dict[tuple[int, int, float], list[str]] = field(default_factory=dict)
    parts: list[list[str]] = field(default_factory=list)  # the answers to each conjunct's question
    cosine: np.ndarray | None = None
    named_gold: tuple[int, int] = (0, 0)  # (gold turns by the one speaker the question names, gold turns) or (0, 0)


FEATURES = ["score", "reciprocal_rank", *COMPONENTS, "neighbour_list", "sitting", "sitting_top10", "coverage",
            "answer_type", "first_person", "log_length"]  # fmt: skip
COL = {name: i for i, name in enumerate(FEATURES)}


@dataclass
class Turns:
    """One conversation's turns as the study needs them: order, sitting, text, analysed terms and IDF."""

    order: list[str]
    sitting: dict[str, str]
    text: dict[str, str]
    terms: dict[str, list[str]]
    idf: dict[str, float]
    speakers: set[str]
    speaker: dict[str, str]  # each turn's speaker

    def __post_init__(self) -> None:
        self.position = {dia: i for i, dia in enumerate(self.order)}

    @classmethod
    def of(cls, conversation: Conversation) -> Turns:
        terms = {t.dia_id: ANALYZE(t.text + " " + (t.caption or "")) for t in conversation.turns}
        df = Counter(term for words in terms.values() for term in set(words))
        n = len(terms)
        idf = {term: math.log(1 + (n - count + 0.5) / (count + 0.5)) for term, count in df.items()}
        return cls(
            [t.dia_id for t in conversation.turns],
            {t.dia_id: t.segment for t in conversation.turns},
            {t.dia_id: t.text for t in conversation.turns},
            terms,
            idf,
            set(ANALYZE(" ".join({t.speaker for t in conversation.turns}))),
            {t.dia_id: t.speaker for t in conversation.turns},
        )

    def neighbours(self, dia: str) -> list[str]:
        at = self.position[dia]
        around = (self.order[j] for j in (at - 1, at + 1) if 0 <= j < len(self.order))
        return [other for other in around if self.sitting[other] == self.sitting[dia]]

    def question_terms(self, question: str) -> dict[str, float]:
        return {t: self.idf[t] for t in set(ANALYZE(question)) - self.speakers if t in self.idf}


def features(turns: Turns, question: str, hits: list[str], scores: list[float], components: list[dict]) -> np.ndarray:
    top = max(max(scores, default=0.0), 1e-9)
    normal = {dia: score / top for dia, score in zip(hits, scores, strict=True)}
    by_sitting: dict[str, float] = defaultdict(float)
    top10: Counter = Counter(turns.sitting[dia] for dia in hits[:10])
    for dia, value in normal.items():
        by_sitting[turns.sitting[dia]] += value
    wanted = turns.question_terms(question)
    total = sum(wanted.values()) or 1.0
    lowered = question.lower()
    asks_number = bool(_WHEN_RE.search(lowered) or HOW_MANY.search(lowered))
    rows = []
    for rank, dia in enumerate(hits):
        own = set(turns.terms[dia])
        text = turns.text[dia].lower()
        words = max(1, len(text.split()))
        rows.append(
            [
                normal[dia],
                1.0 / (rank + 1),
                *(components[rank].get(c, 0.0) / top for c in COMPONENTS),
                max([normal.get(n, 0.0) for n in turns.neighbours(dia)] or [0.0]),
                by_sitting[turns.sitting[dia]] - normal[dia],
                top10[turns.sitting[dia]],
                sum(v for t, v in wanted.items() if t in own) / total,
                float(asks_number and bool(NUMBER.search(text))),
                len(FIRST_PERSON.findall(text)) / words,
                math.log(1 + len(turns.terms[dia])),
            ]
        )
    return np.array(rows, dtype=np.float64).reshape(len(hits), len(FEATURES))


def prf_terms(turns: Turns, question: str, hits: list[str], m: int, t: int, weight: float) -> dict[str, float]:
    """The ``t`` most salient terms (tf x IDF) of the top ``m`` hits that the question does not hold."""
    asked = set(ANALYZE(question))
    salience: dict[str, float] = defaultdict(float)
    for dia in hits[:m]:
        for term, count in Counter(turns.terms[dia]).items():
            if term in asked or term in turns.speakers or len(term) < 3 or term.isdigit():
                continue
            salience[term] += count * turns.idf[term]
    chosen = sorted(salience.items(), key=lambda item: (-item[1], item[0]))[:t]
    return {term: weight * value / chosen[0][1] for term, value in chosen} if chosen else {}


def collect(dataset: str) -> tuple[list[Question], list[str], dict[str, float]]:
    conversations = load_conversations(dataset)
    questions: list[Question] = []
    cpu: list[float] = []
    with (
        tempfile.TemporaryDirectory(prefix="zaxy-rerank-") as scratch,
        MemoryFabric.from_path(Path(scratch) / "loom", durability="batch") as fabric,
    ):
        lane = fabric.retriever.verbatim
        for conversation in conversations:
            session = session_for(conversation.sample_id)
            dia_of_seq = _ingest(fabric, session, conversation)
            turns = Turns.of(conversation)
            for asked in conversation.questions:
                started = time.thread_time()
                response = fabric.query(asked.text, sessions=[session], k=DEPTH)
                cpu.append((time.thread_time() - started) * 1000)
                found = [(dia_of_seq[h.seq], h.score_explanation) for h in response.hits if h.seq in dia_of_seq]
                hits = [dia for dia, _ in found]
                scores = [float(e["lane_scores"].get("verbatim", 0.0)) for _, e in found]
                components = [e.get("verbatim_components", {}) for _, e in found]
                question = Question(conversation.sample_id, asked.text, asked.category, asked.gold, hits,
                                    features(turns, asked.text, hits, scores, components))  # fmt: skip
                named = [n for n in set(turns.speaker.values()) if re.search(rf"\b{re.escape(n)}\b", asked.text)]
                if len(named) == 1:
                    by_named = sum(turns.speaker[g] == named[0] for g in asked.gold)
                    question.named_gold = (by_named, len(asked.gold))
                for m, t, w in PRF_GRID:
                    expansion = prf_terms(turns, asked.text, hits, m, t, w)
                    again = lane.search(asked.text, DEPTH, sessions=[session], exclude_types=NOT_RECALLED,
                                        expansion=expansion) if expansion else []  # fmt: skip
                    question.prf[(m, t, w)] = [dia_of_seq[h.seq] for h in again if h.seq in dia_of_seq] or hits
                joined = CONJUNCTION.search(asked.text)
                for word in joined.groups() if joined else ():
                    part = asked.text[: joined.start()] + word + asked.text[joined.end() :]
                    found = lane.search(part, DEPTH, sessions=[session], exclude_types=NOT_RECALLED)
                    question.parts.append([dia_of_seq[h.seq] for h in found if h.seq in dia_of_seq])
                questions.append(question)
    ordered = sorted(cpu)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0.0
    return questions, [c.sample_id for c in conversations], {"query_cpu_ms_p95": round(p95, 2)}


def attach_cosines(questions: list[Question], dataset: str, name: str) -> float:
    """Give each question the z-scored cosine of its hits; returns the CPU seconds the embedding took."""
    from zaxy_agents.retrieval.embeddings import resolve_embedder

    started = time.process_time()
    embedder = resolve_embedder(name)
    if embedder is None:
        raise SystemExit(f"--embedder {name!r} resolves to no embedder")
    conversations = {c.sample_id: c for c in load_conversations(dataset)}
    for sample_id, conversation in conversations.items():
        texts = [t.text + (f" [image: {t.caption}]" if t.caption else "") for t in conversation.turns]
        matrix = _unit(np.asarray(embedder.embed_documents(texts), dtype=np.float64))
        row = {t.dia_id: i for i, t in enumerate(conversation.turns)}
        for question in (q for q in questions if q.conversation == sample_id and q.hits):
            query = _unit(np.asarray(embedder.embed_query(question.text), dtype=np.float64)[None, :])[0]
            cosine = matrix[[row[d] for d in question.hits]] @ query
            question.cosine = (cosine - cosine.mean()) / (cosine.std() + 1e-9)
    return time.process_time() - started


def _unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / (np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12)


# ------------------------------------------------------------------ re-rankers


def by_score(question: Question, score: np.ndarray) -> list[str]:
    return [question.hits[i] for i in sorted(range(len(question.hits)), key=lambda i: (-score[i], i))]


def additive(column: str, weight: float) -> Ranker:
    return lambda q: by_score(q, q.features[:, 0] + weight * q.features[:, COL[column]]) if q.hits else []


def cosine_blend(weight: float) -> Ranker:
    return lambda q: by_score(q, q.features[:, 0] + weight * q.cosine) if q.hits and q.cosine is not None else q.hits


def diversity(decay: float, sitting_of: Callable[[str], str]) -> Ranker:
    def rank(q: Question) -> list[str]:
        left, picked, seen = list(range(len(q.hits))), [], Counter()
        while left:
            best = max(left, key=lambda i: (q.features[i, 0] * (1 - decay) ** seen[sitting_of(q.hits[i])], -i))
            picked.append(q.hits[best])
            seen[sitting_of(q.hits[best])] += 1
            left.remove(best)
        return picked

    return rank


def rrf(*lists: list[str], k: float = 60.0) -> list[str]:
    score: dict[str, float] = defaultdict(float)
    for ranked in lists:
        for rank, dia in enumerate(ranked, start=1):
            score[dia] += 1.0 / (k + rank)
    return sorted(score, key=lambda dia: -score[dia])


def interleave(*lists: list[str]) -> list[str]:
    merged: dict[str, None] = {}
    for rank in range(max(map(len, lists), default=0)):
        for ranked in lists:
            if rank < len(ranked):
                merged.setdefault(ranked[rank])
    return list(merged)


def linear(train: list[Question], with_cosine: bool) -> Ranker:
    """Logistic regression (gold turn or not) over the standardised features, fitted on ``train``."""

    def matrix(q: Question) -> np.ndarray:
        return np.column_stack([q.features, q.cosine]) if with_cosine and q.cosine is not None else q.features

    rows = [(matrix(q), [float(d in q.gold) for d in q.hits]) for q in train if q.hits]
    x = np.vstack([m for m, _ in rows])
    y = np.concatenate([np.array(labels) for _, labels in rows])
    mean, scale = x.mean(0), x.std(0) + 1e-9
    z = (x - mean) / scale
    weights, bias = np.zeros(z.shape[1]), 0.0
    for _ in range(2000):
        p = 1.0 / (1.0 + np.exp(-(z @ weights + bias)))
        weights -= 0.5 * (z.T @ (p - y) + weights) / y.size
        bias -= 0.5 * float((p - y).mean())
    return lambda q: by_score(q, ((matrix(q) - mean) / scale) @ weights) if q.hits else []


# ------------------------------------------------------------------ scoring


def recall(question: Question, ranked: list[str], k: int) -> float:
    top = set(ranked[:k])
    return sum(g in top for g in question.gold) / len(question.gold)


def mean_recall(questions: list[Question], ranker: Ranker, k: int) -> float:
    return round(statistics.fmean(recall(q, ranker(q), k) for q in questions), 4) if questions else 0.0


def bootstrap(questions: list[Question], ranker: Ranker, k: int = 10, rounds: int = 5000) -> list[float]:
    deltas = [recall(q, ranker(q), k) - recall(q, q.hits, k) for q in questions]
    rng = random.Random(5)
    means = sorted(statistics.fmean(rng.choices(deltas, k=len(deltas))) for _ in range(rounds))
    return [round(statistics.fmean(deltas), 4), round(means[int(0.025 * rounds)], 4),
            round(means[int(0.975 * rounds)], 4)]  # fmt: skip


def study(questions: list[Question], names: list[str], with_cosine: bool) -> dict:
    tuning, held = set(names[:3]), set(names[3:])
    answerable = [q for q in questions if q.category in (1, 2, 3, 4)]
    parts = {
        "tuning": [q for q in answerable if q.conversation in tuning],
        "held_out": [q for q in answerable if q.conversation in held],
        "all": answerable,
    }
    multi_hop = [q for q in answerable if q.category == 1]
    adversarial = [q for q in questions if q.category == 5]
    sitting = {d: d.split(":", 1)[0] for q in questions for d in q.hits}
    families: dict[str, list[tuple[str, Ranker]]] = {
        "neighbour": [(f"a={a}", additive("neighbour_list", a)) for a in (-0.3, -0.2, -0.1, 0.1, 0.2, 0.3)],
        "sitting": [(f"a={a}", additive("sitting", a)) for a in (-0.05, -0.02, 0.02, 0.05, 0.1)],
        "sitting_top10": [(f"a={a}", additive("sitting_top10", a)) for a in (-0.05, -0.02, 0.02, 0.05)],
        "diversity": [(f"d={d}", diversity(d, sitting.__getitem__)) for d in (0.05, 0.1, 0.2, 0.3)],
        "coverage": [(f"a={a}", additive("coverage", a)) for a in (0.05, 0.1, 0.2, 0.3, 0.5)],
        "answer_type": [(f"a={a}", additive("answer_type", a)) for a in (0.02, 0.05, 0.1, 0.2)],
        "first_person": [(f"a={a}", additive("first_person", a)) for a in (0.1, 0.2, 0.4, 0.8)],
        "linear": [("fitted on tuning", linear(parts["tuning"], False))],
        "prf": [
            (
                f"m={m},t={t},w={w},{merge}",
                (lambda q, key=(m, t, w): q.prf[key])
                if merge == "alone"
                else (lambda q, key=(m, t, w): rrf(q.hits, q.prf[key])),
            )
            for (m, t, w), merge in itertools.product(PRF_GRID, ("alone", "rrf"))
        ],
        "conjunction": [
            ("interleaved", lambda q: interleave(q.hits, *q.parts)),
            ("rrf", lambda q: rrf(q.hits, *q.parts)),
            ("conjuncts only", lambda q: interleave(*q.parts) if q.parts else q.hits),
        ],
    }
    if with_cosine:
        families["embedder"] = [(f"a={a}", cosine_blend(a)) for a in (0.02, 0.05, 0.1, 0.2)]
        families["linear+embedder"] = [("fitted on tuning", linear(parts["tuning"], True))]
    default: Ranker = lambda q: q.hits  # noqa: E731

    def row(ranker: Ranker) -> dict:
        out = {part: [mean_recall(rows, ranker, 5), mean_recall(rows, ranker, 10)] for part, rows in parts.items()}
        out["multi_hop_r10"] = mean_recall(multi_hop, ranker, 10)
        out["adversarial_r5"] = mean_recall(adversarial, ranker, 5)
        return out

    oracle: Ranker = lambda q: sorted(q.hits, key=lambda d: d not in q.gold)  # noqa: E731
    report = {
        "default": row(default),
        # what no re-rank of these 50 can pass: gold turns in the top 50, and R@10 with every one of them first
        "ceiling": {
            "r50_all": mean_recall(answerable, default, DEPTH),
            "r50_multi_hop": mean_recall(multi_hop, default, DEPTH),
            "oracle_r10_all": mean_recall(answerable, oracle, 10),
            "oracle_r10_multi_hop": mean_recall(multi_hop, oracle, 10),
            # the wrong hits above a gold turn are mostly the same speaker's: the gold is that speaker's
            "gold_by_named_speaker": round(
                sum(q.named_gold[0] for q in answerable) / max(1, sum(q.named_gold[1] for q in answerable)), 4
            ),
        },
        "families": {},
    }
    for family, settings in families.items():
        scored = [(name, ranker, mean_recall(parts["tuning"], ranker, 10), mean_recall(parts["tuning"], ranker, 5))
                  for name, ranker in settings]  # fmt: skip
        name, ranker, _, _ = max(scored, key=lambda s: (s[2], s[3]))
        report["families"][family] = {
            "chosen_on_tuning": name,
            **row(ranker),
            "r10_delta_held_out_95": bootstrap(parts["held_out"], ranker),
            "r10_delta_all_95": bootstrap(parts["all"], ranker),
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=DATASET)
    parser.add_argument("--embedder", default=None, help="add a cosine blend with this embedder (e.g. e5)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    questions, names, timing = collect(args.dataset)
    if args.embedder:
        timing["embedding_cpu_s"] = round(attach_cosines(questions, args.dataset, args.embedder), 1)
    report = {"questions": len(questions), **timing, "embedder": args.embedder}
    report.update(study(questions, names, bool(args.embedder)))
    if args.json:
        print(json.dumps(report))
        return
    embedded = f"; embedding every turn and question: {timing['embedding_cpu_s']} s CPU" if args.embedder else ""
    print(f"{report['questions']} questions; default query CPU p95 {report['query_cpu_ms_p95']} ms{embedded}")
    print("ceiling of any re-rank of the top 50:", json.dumps(report["ceiling"]))
    head = "family (setting chosen on tuning)"
    print(f"{head:44s} tuning R@5/R@10  held-out R@5/R@10  all R@5/R@10  multi-hop R@10  adv R@5  "
          "R@10 delta held-out [95%]  all [95%]")  # fmt: skip
    rows = [("default", "", report["default"]), *((f, r["chosen_on_tuning"], r) for f, r in report["families"].items())]
    for family, setting, r in rows:
        label = f"{family} ({setting})" if setting else family
        deltas = ""
        if "r10_delta_all_95" in r:
            h, a = r["r10_delta_held_out_95"], r["r10_delta_all_95"]
            deltas = f"{h[0]:+.4f} [{h[1]:+.4f}, {h[2]:+.4f}]  {a[0]:+.4f} [{a[1]:+.4f}, {a[2]:+.4f}]"
        print(f"{label[:44]:44s} {r['tuning'][0]:.3f}/{r['tuning'][1]:.3f}      {r['held_out'][0]:.3f}/"
              f"{r['held_out'][1]:.3f}        {r['all'][0]:.3f}/{r['all'][1]:.3f}   {r['multi_hop_r10']:.3f}"
              f"           {r['adversarial_r5']:.3f}    {deltas}")  # fmt: skip
    sys.stdout.flush()


if __name__ == "__main__":
    main()
