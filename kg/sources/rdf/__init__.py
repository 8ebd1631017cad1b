"""Wikidata-style RDF (N-Triples and Turtle, as in Wikidata's RDF dumps, Special:EntityData and
query service, or another Wikibase's) into the store, via rdflib: terms.py (IRIs and literals
to Wikidata's ids and values), collect.py (triples to staged pieces), staging.py (the pieces'
table), assemble.py (pieces to rows, inside the chunk's transaction), read.py (Turtle in
blocks), source.py (`RdfSource`). The mapping and
the design of statement assembly across chunks: docs/design/graph.md, "kg/sources/rdf".
"""

from __future__ import annotations

from .assemble import RdfRows, assemble
from .collect import TripleCollector
from .read import TurtleChunk, turtle_chunks
from .source import RdfSource, quiet_rdflib
from .terms import SOURCE, entity_kind, entity_of, statement_id, term_key, wikidata_time

__all__ = ["RdfRows", "RdfSource", "SOURCE", "TripleCollector", "TurtleChunk", "assemble", "entity_kind", "entity_of",
           "quiet_rdflib", "statement_id", "term_key", "turtle_chunks", "wikidata_time"]
