"""Retrieval: lexical, vector, graph and verbatim lanes, fusion, embedding providers."""
