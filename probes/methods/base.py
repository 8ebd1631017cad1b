"""What every method shares: its context (options, the probe set's demonstration pool), its
interface (running, its measures, its headline line, its report sections) with the defaults, and
the number formats of headline lines."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Sequence

from ...kg.jsonl import jsonl_lines
from ..document import Section
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
    through it the runner, the aggregator, `factprobe eval`, the pipeline, the report and the
    service read these declarations and nothing else."""

    name: ClassVar[str]  # what --method, the pipeline config and the service call it
    summary: ClassVar[str]  # one line: the method's entry in `factprobe eval --help`
    kinds: ClassVar[tuple[str, ...]]  # probe-set kinds it reads (probes/probeset.py KINDS)
    reads: ClassVar[tuple[str, ...]] = ()  # item fields every test item must have; the runner skips others
    defaults: ClassVar[dict] = {}  # its options and their defaults
    # its parts of the report's "Method measures" (probes/document `Section`), beside what every run gets
    report_sections: ClassVar[tuple[Section, ...]] = ()

    @classmethod
    def aggregate_extra(cls, records: Sequence[dict], options: dict) -> dict:
        """The method's own measures over its records, added to what probes/aggregate.py computes
        for every method (accuracy, breakdowns by relation and bucket) and overriding those keys
        where it returns them. `options` are the run's (run.json). None by default."""
        return {}

    @classmethod
    def headline(cls, aggregate: dict, probes: Path) -> str:
        """The run's figures in `factprobe run`'s closing summary, after "folder (N items):"; by
        default accuracy with its 95% interval, a uniform guess's accuracy when the probe set
        (`probes`, the file the run read) is multiple choice, and accuracy per frequency bucket."""
        chance = chance_accuracy(probes)
        text = f"accuracy {headline_number(aggregate.get('accuracy'))}"
        text += headline_interval(aggregate.get("accuracy_interval"))
        text += f" (chance {chance:.3f})" if chance is not None else ""
        buckets = {b: v for b, v in (aggregate.get("by_bucket") or {}).items() if b != "none"}
        if buckets:
            text += " | by bucket " + ", ".join(
                f"{b} {headline_number(v.get('accuracy'), 2)}{headline_interval(v.get('interval'), 2)}"
                for b, v in buckets.items())
        return text

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


def chance_accuracy(probes: Path) -> float | None:
    """Expected accuracy of a uniform guess over a multiple-choice set's test items (None when the
    items have no choices, or the file cannot be read): a headline number means little without it."""
    shares = []
    try:
        for line in jsonl_lines(probes):
            if line.error:
                return None
            item = line.value
            options = item.get("choices") or item.get("options")
            if item.get("split") != "demo" and options:
                shares.append(1 / len(options))
    except OSError:
        return None
    return sum(shares) / len(shares) if shares else None


def headline_number(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def headline_interval(interval: dict | None, digits: int = 3) -> str:
    """" [low, high]", the 95% interval to follow a headline number; a figure over too few items
    says so; nothing without an interval."""
    if not interval or interval.get("low") is None:
        return ""
    few = f", {interval['n']} items: too few to read" if interval.get("few") else ""
    return f" [{interval['low']:.{digits}f}, {interval['high']:.{digits}f}{few}]"


# What an option whose default is of the key's type accepts (a None default: anything).
_ACCEPTS = {bool: ((bool,), "true or false"), int: ((int,), "a whole number"), float: ((int, float), "a number"),
            str: ((str,), "text (a number is read as one: write it as a JSON string)"), list: ((list,), "a JSON list")}


class OptionError(ValueError):
    """A method option's value of the wrong type; `key` names the option."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def check_option_types(cls: type[Method], options: dict) -> None:
    """Each option's value is of its default's type (a None default takes anything), so a typo
    is named before a model loads (`eval`) or at the door (the service), in the same words.
    OptionError naming the first that is not."""
    import json

    for key, value in options.items():
        accepted = _ACCEPTS.get(type(cls.defaults.get(key)))
        if accepted is None:
            continue
        types, what = accepted
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise OptionError(key, f"method {cls.name} option {key}: expected {what}, got {json.dumps(value)}")

