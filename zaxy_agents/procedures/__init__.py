"""Procedure mining: successful multi-step tool sequences that recur across sessions become review-pending
procedure candidates citing their traces (docs/cognitive.md)."""
