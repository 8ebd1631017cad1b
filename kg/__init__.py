"""Knowledge graph: data model, sources, and the embedded SQLite store with its read API."""

from .graph import KnowledgeGraph
from .model import Entity, Fact, Labels, Stats, TimeValue
from .store import Store, StoreError

__all__ = ["KnowledgeGraph", "Store", "StoreError", "Entity", "Fact", "Labels", "Stats", "TimeValue"]
