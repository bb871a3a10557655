"""Text analysis shared by the lexical lanes: tokens, stop words, irregular forms, stemming, time cues.

Designed and validated in the LoCoMo retrieval study (docs/retrieval.md): stemming + stop words + irregular
inflections ("bought" -> "buy") were the largest single gain over plain BM25 on conversational memory.
Stemming uses Snowball (PyStemmer's C implementation when installed).
"""

from __future__ import annotations

import re
from itertools import filterfalse

import snowballstemmer

_STEMMER = snowballstemmer.stemmer("english")
# PyStemmer keeps its own memo of every word it stems, one ``[stem, counter]`` list each: a container the garbage
# collector tracks, left alive for every new word a checkout analyses (~100 a whole-memory question at 1M; the
# objects that survive each question are what bring a full collection, docs/benchmarks.md, "the garbage collector's
# share"). Our memos (:data:`_MEMOS`, plain ``str -> str``: untracked) already answer every word seen before, so
# PyStemmer's is switched off; stemming is a pure function of the word, no term changes.
if hasattr(_STEMMER, "maxCacheSize"):
    _STEMMER.maxCacheSize = 0

STOPWORDS = frozenset(
    """
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during
each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's
hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's
me more most mustn't my myself no nor not of off on once only or other ought our ours ourselves out over
own same shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs
them themselves then there there's these they they'd they'll they're they've this those through to too
under until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where
where's which while who who's whom why why's with won't would wouldn't you you'd you'll you're you've
your yours yourself yourselves s t d ll m re ve just also yeah oh wow hey hi really
""".split()  # noqa: SIM905 - a word list reads better as text
)

# Irregular English inflections -> base form. Snowball only handles regular suffixes, and
# questions often use another tense than the memory ("What did she buy?" / "I bought").
_IRREGULAR_SRC = """
arise arose arisen|awake awoke awoken|be was were been|bear bore born borne|beat beaten|become became|
begin began begun|bend bent|bet|bind bound|bite bit bitten|bleed bled|blow blew blown|break broke broken|
breed bred|bring brought|build built|burn burnt|buy bought|catch caught|choose chose chosen|cling clung|
come came|cost|creep crept|cut|deal dealt|dig dug|do did done|draw drew drawn|dream dreamt|drink drank drunk|
drive drove driven|eat ate eaten|fall fell fallen|feed fed|feel felt|fight fought|find found|flee fled|
fly flew flown|forbid forbade forbidden|forget forgot forgotten|forgive forgave forgiven|freeze froze frozen|
get got gotten|give gave given|go went gone|grind ground|grow grew grown|hang hung|have had|hear heard|
hide hid hidden|hit|hold held|hurt|keep kept|kneel knelt|know knew known|lay laid|lead led|lean leant|
leap leapt|learn learnt|leave left|lend lent|let|lie lay lain|light lit|lose lost|make made|mean meant|
meet met|pay paid|put|quit|read|ride rode ridden|ring rang rung|rise rose risen|run ran|say said|see saw seen|
seek sought|sell sold|send sent|set|sew sewn|shake shook shaken|shine shone|shoot shot|show shown|
shrink shrank shrunk|shut|sing sang sung|sink sank sunk|sit sat|sleep slept|slide slid|speak spoke spoken|
speed sped|spend spent|spin spun|spit spat|split|spread|spring sprang sprung|stand stood|steal stole stolen|
stick stuck|sting stung|stink stank stunk|stride strode|strike struck|swear swore sworn|sweep swept|
swim swam swum|swing swung|take took taken|teach taught|tear tore torn|tell told|think thought|throw threw thrown|
understand understood|wake woke woken|wear wore worn|weave wove woven|weep wept|win won|wind wound|write wrote written|
child children|person people|man men|woman women|mouse mice|foot feet|tooth teeth|
one 1|two 2|three 3|four 4|five 5|six 6|seven 7|eight 8|nine 9|ten 10|eleven 11|twelve 12|twenty 20|hundred 100
"""
IRREGULAR: dict[str, str] = {}
for _grp in _IRREGULAR_SRC.replace("\n", "").split("|"):
    _forms = _grp.split()
    for _f in _forms[1:]:
        IRREGULAR.setdefault(_f, _forms[0])

_TOKEN_RE = re.compile(r"[a-z0-9]+")
# A compound only starts where a run of [a-z0-9] starts, and its runs are taken whole (possessive): the plain
# pattern retried every suffix of every word (quadratic in word length), 4x slower for the same matches
# (tests/retrieval/test_ingest_fast_paths.py compares them).
_IDENTIFIER_RE = re.compile(r"(?<![a-z0-9])[a-z0-9]++(?:[-_./:#][a-z0-9]++)+")
_IDENTIFIER_MARK = re.compile(r"[0-9_/.]")  # what makes a compound an identifier (a digit, _, / or .)
_IDENTIFIER_HINT = re.compile(r"[-_./:#](?<=[A-Za-z0-9].)(?=[A-Za-z0-9])")  # anchored on the rarer separator
_POSS_RE = re.compile(r"'s\b")
# The same tokens as ``_TOKEN_RE.findall(text.lower())`` for an ASCII text, at C speed without the regex engine:
# one byte table lower-cases A-Z, keeps a-z / 0-9 and turns every other byte into a space, then ``split()``
# (1.5x faster over realistic turns; tests/retrieval/test_ingest_fast_paths.py compares the two).
_ASCII_WORDS = bytes(c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 or 48 <= c <= 57 else 32 for c in range(256))
_SENT_RE = re.compile(r"[^.!?]+[.!?]*")
_PROPN_RE = re.compile(r"(?<=[a-z,;:] )([A-Z][a-z]+)")

_MONTHS = "january february march april may june july august september october november december".split()  # noqa: SIM905
_MON = "|".join(_MONTHS)
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
# Generic English expressions that anchor an event in time, relative or absolute.
_TEMPORAL_RE = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|recently|lately|"
    r"(last|next|this|past|coming|previous) (few |couple of )?(night|morning|evening|week|weekend|month|year|"
    r"summer|winter|spring|fall|autumn|time|" + _WEEKDAYS + r")s?|" + _WEEKDAYS + "|" + _MON + r"|(19|20)\d\d|"
    r"(a|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of|\d+) (days?|weeks?|months?|years?))\b"
)
# Every match of _TEMPORAL_RE holds one of these as a whole [a-z0-9]+ token of the lower-cased text, or the digits
# "19" / "20": a text with neither cannot match, and the regex (slow: it tries ~60 alternatives at every word)
# is skipped (tested against the regex in tests/retrieval/test_text_analysis.py).
_TIME_UNITS = "night morning evening week weekend month year summer winter spring fall autumn time day"
TEMPORAL_WORDS = frozenset(
    ["yesterday", "today", "tonight", "tomorrow", "ago", "recently", "lately"]
    + _MONTHS
    + [form for unit in (*_TIME_UNITS.split(), *_WEEKDAYS.split("|")) for form in (unit, unit + "s")]
)


def has_time_cue(text: str, surface: list[str]) -> bool:
    """``_TEMPORAL_RE.search(text.lower())``, answered without the regex when it cannot match. ``surface`` is
    what :meth:`Analyzer.analyse` returned for ``text``: its words equal the text's lower-case tokens (minus stop
    words, none of which is a time word) unless the text has an apostrophe, which the analyser removes."""
    lower = text.lower()
    if (
        "'" not in lower
        and "\u2019" not in lower
        and "19" not in lower
        and "20" not in lower
        and TEMPORAL_WORDS.isdisjoint(surface)
    ):
        return False
    return _TEMPORAL_RE.search(lower) is not None


# Questions about time.
_WHEN_RE = re.compile(
    r"^\s*when\b|\b(what|which) (year|month|day|date|time|week|weekend)\b|\bhow long\b"
    r"|\bhow many (years|months|weeks|days)\b|\bsince when\b"
)


def question_share(text: str) -> float:
    """Share of a text's words that sit in sentences ending with '?' (questions carry few facts)."""
    tot = q = 0
    for sent in _SENT_RE.findall(text):
        n = len(sent.split())
        tot += n
        if sent.rstrip().endswith("?"):
            q += n
    return q / tot if tot else 0.0


MEMO_LIMIT = 400_000  # surface words memoised per configuration (the memos below)
# Surface word -> index term, one memo per (stem, irregular) shared by every analyser of the process with that
# configuration (stop words only filter words, they never change a term). Projection analyses each event with two
# analysers, the verbatim index's and the entity keyword index's, whose texts share many words (an entity's name and
# summary come from the event's text): with a memo each, both stemmed every such word (docs/benchmarks.md, "Batched
# ingest: rows lane", counts the Snowball calls). A term is a pure function of the word and the configuration, so
# sharing changes no term; the bound is twice the old per-analyser one (the two ingest analysers each held 200k).
_MEMOS: dict[tuple[bool, bool], dict[str, str]] = {}


class Analyzer:
    """Lower-case word tokens with possessives stripped, stop words removed, irregular
    inflections mapped to their base form, then Snowball-stemmed. Results are memoised
    per surface word (in a memo shared by the analysers of one configuration: :data:`_MEMOS`),
    so analysis cost is dominated by the regex split."""

    def __init__(self, stem: bool = True, stopwords: bool = True, irregular: bool = True) -> None:
        self.stem, self.stop, self.irregular = stem, stopwords, irregular
        self._cache: dict[str, str] = _MEMOS.setdefault((bool(stem), bool(irregular)), {})

    def words(self, text: str) -> list[str]:
        """Surface words (lower-case, possessive 's and apostrophes removed)."""
        if text.isascii():
            if "'" in text:
                return _POSS_RE.sub("", text.lower()).encode().translate(_ASCII_WORDS, b"'").decode().split()
            return text.encode().translate(_ASCII_WORDS).decode().split()
        text = text.lower()
        if "'" in text or "\u2019" in text:  # most texts have none: skip the substitution
            text = _POSS_RE.sub("", text.replace("\u2019", "'")).replace("'", "")
        return _TOKEN_RE.findall(text)

    def term(self, word: str) -> str:
        """Index term for one surface word."""
        t = self._cache.get(word)
        if t is None:
            b = IRREGULAR.get(word, word) if self.irregular else word
            t = _STEMMER.stemWord(b) if self.stem else b
            if len(self._cache) >= MEMO_LIMIT:
                self._cache.clear()  # bounded: a long-lived process meets an open-ended vocabulary
            self._cache[word] = t
        return t

    def __call__(self, text: str) -> list[str]:
        return self.analyse(text)[0]

    def analyse(self, text: str) -> tuple[list[str], list[str]]:
        """``(index terms, the surface words they came from)`` of ``text`` (identifiers have no surface word)."""
        words = self.words(text)
        if self.stop:
            words = list(filterfalse(STOPWORDS.__contains__, words))
        terms = list(map(self._cache.get, words))  # memoised words at C speed; misses are None
        if None in terms:
            terms = [term if term is not None else self.term(word) for term, word in zip(terms, words, strict=True)]
        if _IDENTIFIER_HINT.search(text):
            terms += identifiers(text)
        return terms, words


def identifiers(text: str) -> list[str]:
    """Whole identifier tokens (``T-102``, ``src/app.py``, ``retry_policy``, ``v1.2.3``) as extra terms.

    Only compounds that contain a digit, ``_``, ``/`` or ``.`` count, so ordinary hyphenated words are left to
    the word tokens. Kept unstemmed and prefixed so they never collide with a word term.
    """
    found = []
    for match in _IDENTIFIER_RE.findall(text.lower()):
        token = match.strip("-_./:#")
        if len(token) <= 80 and _IDENTIFIER_MARK.search(token):  # ASCII only: the pattern matched [a-z0-9] runs
            found.append("id:" + token)
    return found
