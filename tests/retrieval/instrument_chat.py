"""A small chat whose evidence shares no word with the question: only "instruments" -> "guitar" can reach it
(the query-expansion tests of every re-rank embedder use it)."""

QUESTION = "Which instruments does Caroline own?"
TURNS = [
    ("Caroline", "I finally bought a second-hand guitar last week."),
    ("Melanie", "Nice, which shop?"),
    ("Caroline", "The little one next to the bakery, they also repair bikes."),
    ("Melanie", "My sister owns a bakery too."),
    ("Caroline", "Does she sell sourdough?"),
]
