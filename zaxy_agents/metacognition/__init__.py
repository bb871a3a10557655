"""Metacognition: cheap judgements about memory itself (does it probably know the answer?)."""
