"""What every method shares: its context (options, the probe set's demonstration pool) and its
interface."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import ClassVar, Sequence

from ..metrics import answer_key  # noqa: F401  (re-exported: the methods compare answers with it)


@dataclass
class MethodContext:
    options: dict = field(default_factory=dict)
    seed: int = 0
    demonstrations: dict[str, list[dict]] = field(default_factory=dict)  # relation -> demo-split items
    # relation -> every test item of the probe set (before --limit), for methods whose prompts
    # are made of other test items (EIC-LKE), so a prompt never depends on batch, limit or resume
    tests: dict[str, list[dict]] = field(default_factory=dict)

    def rng(self, *parts: str) -> random.Random:
        return random.Random("|".join([str(self.seed), *parts]))


class Method:
    """A probing method, declared in one class: the registry (probes/methods/__init__.py) and
    through it the runner, the aggregator, `factprobe eval`, the pipeline and the service read
    these declarations and nothing else."""

    name: ClassVar[str]  # what --method, the pipeline config and the service call it
    summary: ClassVar[str]  # one line: the method's entry in `factprobe eval --help`
    kinds: ClassVar[tuple[str, ...]]  # probe-set kinds it reads (probes/probeset.py KINDS)
    reads: ClassVar[tuple[str, ...]] = ()  # item fields every test item must have; the runner skips others
    defaults: ClassVar[dict] = {}  # its options and their defaults

    @classmethod
    def aggregate_extra(cls, records: Sequence[dict], options: dict) -> dict:
        """The method's own measures over its records, added to what probes/aggregate.py computes
        for every method (accuracy, breakdowns by relation and bucket) and overriding those keys
        where it returns them. `options` are the run's (run.json). None by default."""
        return {}

    def __init__(self, context: MethodContext) -> None:
        unknown = set(context.options) - set(self.defaults)
        if unknown:
            raise ValueError(f"method {self.name} has no option {', '.join(sorted(unknown))} "
                             f"(it takes {', '.join(sorted(self.defaults)) or 'none'})")
        self.context = context
        self.options = {**self.defaults, **context.options}

    def order(self, items: Sequence[dict]) -> list[dict]:
        """The order the runner computes (and writes) test items in; the probe set's by default.
        A method whose prompts nest (EIC-LKE) puts them side by side so one batch shares work."""
        return list(items)

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        raise NotImplementedError


def base_record(item: dict, **fields) -> dict:
    return {"id": item["id"], "fact": item.get("fact"), "relation": item.get("relation"),
            "subject_label": item.get("subject_label"), "object_label": item.get("object_label"),
            "bucket": item.get("bucket"), "frequency": item.get("frequency"), **fields}
