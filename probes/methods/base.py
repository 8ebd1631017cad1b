"""What every method shares: its context (options, the probe set's demonstration pool), its
interface (its declared options, running, its measures, its headline line, its report
sections) with the defaults, the one reading of its options (`read_options`: `eval`, the
pipeline file and the service's door say the same words), and the number formats of headline
lines."""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass, field, is_dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Iterator, Mapping, Sequence

from ...kg.jsonl import jsonl_lines
from ..declare import as_dict, check_value, option_specs
from ..document import Section, bucket_key
from ..measures import answer_key  # noqa: F401  (re-exported: the methods compare answers with it)


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


@dataclass(frozen=True)
class NoOptions:
    """The options of a method that takes none."""


class _OldName:
    """`Method.defaults`, the name of `option_defaults` before issue 36: read with a warning for one release."""

    def __get__(self, instance, owner) -> Mapping[str, Any]:
        warnings.warn("Method.defaults is now Method.option_defaults; the old name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return owner.option_defaults


class Method:
    """A probing method, declared in one class: the registry (probes/methods/__init__.py) and
    through it the runner, the aggregator, `factprobe eval`, the pipeline, the report and the
    service read these declarations and nothing else."""

    name: ClassVar[str]  # what --method, the pipeline config and the service call it
    summary: ClassVar[str]  # one line: the method's entry in `factprobe eval --help`
    kinds: ClassVar[tuple[str, ...]]  # probe-set kinds it reads (probes/kinds KINDS)
    reads: ClassVar[tuple[str, ...]] = ()  # item fields every test item must have; the runner skips others
    # Its options: a frozen dataclass of option() fields (probes/declare.py): type, default,
    # bounds, choices, help, and exposure for a value naming a model, a file or a URL.
    Options: ClassVar[type] = NoOptions
    # Derived from Options when the class is made: option -> default, JSON-ready, read-only.
    option_defaults: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    # its parts of the report's "Method measures" (probes/document `Section`), beside what every run gets
    report_sections: ClassVar[tuple[Section, ...]] = ()
    defaults = _OldName()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if {"defaults", "option_defaults"} & set(vars(cls)):  # options are declared once; a dict guessed their types
            raise TypeError(f"{cls.__name__}: declare its options as `Options`, a frozen dataclass of "
                            "option(...) fields (probes/declare.py), not as `defaults`")
        if not is_dataclass(cls.Options):
            raise TypeError(f"{cls.__name__}.Options: a frozen dataclass of option(...) fields (probes/declare.py)")
        option_specs(cls.Options)  # every field declared with option(): TypeError naming one that is not
        cls.option_defaults = MappingProxyType(as_dict(cls.Options()))

    @classmethod
    def check(cls, options: Any) -> None:
        """Refuse (OptionError naming the option), before any model loads, options that each pass
        their declaration but cannot run together (EIC-LKE's start beyond its examples)."""

    @classmethod
    def aggregate_extra(cls, records: Sequence[dict], options: dict) -> dict:
        """The method's own measures over its records, added to what probes/evaluation/aggregate.py computes
        for every method (accuracy, breakdowns by relation and bucket) and overriding those keys
        where it returns them. `options` are the run's (run.json). None by default."""
        return {}

    @classmethod
    def headline(cls, aggregate: dict, probes: Path | None) -> str:
        """The run's figures in `factprobe run`'s closing summary, after "folder (N items):"; by
        default accuracy with its 95% interval, a uniform guess's accuracy when the probe set
        (`probes`, the file the run read) is multiple choice, and accuracy per frequency bucket.
        `probes` None: the file is not at hand (a merged run's, not found), no figure from it."""
        chance = chance_accuracy(probes)
        text = f"accuracy {headline_number(aggregate.get('accuracy'))}"
        text += headline_interval(aggregate.get("accuracy_interval"))
        text += f" (chance {chance:.3f})" if chance is not None else ""
        # by lower edge (0, [1,10), [10,100), ...): aggregate.json's keys are sorted as text
        buckets = {b: (aggregate.get("by_bucket") or {})[b]
                   for b in sorted(aggregate.get("by_bucket") or {}, key=bucket_key) if b != "none"}
        if buckets:
            text += " | by bucket " + ", ".join(
                f"{b} {headline_number(v.get('accuracy'), 2)}{headline_interval(v.get('interval'), 2)}"
                for b, v in buckets.items())
        return text

    def __init__(self, context: MethodContext) -> None:
        self.context = context
        self.given = read_options(type(self), context.options)  # OptionError naming the first refused
        # Lists, not tuples: options are compared with run.json's JSON when a run resumes.
        self.options = {**as_dict(self.Options()), **self.given}

    def order(self, items: Sequence[dict]) -> list[dict]:
        """The order the runner computes (and writes) test items in; the probe set's by default.
        A method whose prompts nest (EIC-LKE) puts them side by side so one batch shares work."""
        return list(items)

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        raise NotImplementedError

    #: Whether the runner shows progress inside one piece of run_each, read off the scorer's share
    #: of each call answered (Scorer.call_progress); a method whose pieces are items already says
    #: exactly how many are done.
    progress_within_piece: bool = True

    def run_each(self, scorer, items: Sequence[dict]) -> Iterator[list[dict]]:
        """The records of `items` in pieces as they are scored; the runner reports progress after
        each piece and writes the batch once all are in. By default one piece, the whole batch
        in the method's own calls (`--batch` is items per scorer call: the backend shares work
        across them, and the items finish together). A method whose backend answers request by
        request anyway yields item by item, so its bar moves per item (DistractorMeasure)."""
        yield self.run(scorer, items)


def base_record(item: dict, **fields) -> dict:
    # popularity where the item has one (PopQA's page views, `--popularity-bins`' statements), so a
    # run's accuracy reads against it as against frequency
    popular = {"popularity": item["popularity"]} if item.get("popularity") is not None else {}
    return {"id": item["id"], "fact": item.get("fact"), "relation": item.get("relation"),
            "subject_label": item.get("subject_label"), "object_label": item.get("object_label"),
            "bucket": item.get("bucket"), "frequency": item.get("frequency"), **popular, **fields}


def chance_accuracy(probes: Path | None) -> float | None:
    """Expected accuracy of a uniform guess over a multiple-choice set's test items (None when the
    items have no choices, or the file cannot be read or is None): a headline number means little
    without it."""
    if probes is None:
        return None
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


class OptionError(ValueError):
    """A method option refused; `key` names it (the service's 422 names the field by it)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def read_options(cls: type[Method], given: Mapping[str, Any]) -> dict:
    """The options `given` by name (`eval --option`'s, a pipeline evaluation's, a request's),
    each checked against its declaration in `cls.Options` (a known name, its type without
    reading text as a number, its bounds and choices), then together by `cls.check`. Returns
    them JSON-ready (lists for tuples), only those given. OptionError, one line naming the
    option: "method kdf: option shots: 'abc' is not an int"."""
    specs = {spec.name: spec for spec in option_specs(cls.Options)}
    checked = {}
    for key, value in given.items():
        spec = specs.get(key)
        if spec is None:
            raise OptionError(key, f"method {cls.name} has no option {key} (it takes {', '.join(specs) or 'none'})")
        try:
            checked[key] = check_value(spec, value, f"method {cls.name}: ", strict=True)
        except ValueError as error:
            raise OptionError(key, str(error)) from None
    cls.check(cls.Options(**checked))
    return {key: list(value) if isinstance(value, tuple) else value for key, value in checked.items()}


def check_option_types(cls: type[Method], options: Mapping[str, Any]) -> None:
    """`read_options`'s checks alone, for a caller that only refuses (the runner's plan, before
    any model loads)."""
    read_options(cls, options)
