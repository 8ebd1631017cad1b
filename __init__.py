"""factprobe: factual-knowledge probe sets from a knowledge graph, and what models know of them."""

__version__ = "0.1.0"
