"""Building a probe set from a store: build.py (`BuildRequest`, `build_probeset`: the one entry),
facts.py (which facts a set asks about), listed.py (what became of each fact of a fact list),
probeset.py (the set's files: items, a Parquet copy, the sidecar that ties it to its inputs). The
kinds that turn facts into items are probes/kinds/; the templates they ask with, probes/templates/.
"""
