"""Corpus index, co-occurrence frequency, semantic index and distractor retrieval."""
