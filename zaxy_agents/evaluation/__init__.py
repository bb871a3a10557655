"""Evaluations that drive the real memory engine end to end (``zaxy benchmark ...``)."""
