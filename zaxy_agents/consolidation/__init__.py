"""Review-gated consolidation: cited, non-authoritative candidate summaries of the log (episodes, claims,
procedures) that only a review can accept, and an accepted candidate is still labelled non-authoritative.
See docs/cognitive.md."""
