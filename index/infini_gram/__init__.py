"""Frequency in a model's own pretraining tokens: an index in infini-gram's suffix-array layout."""
