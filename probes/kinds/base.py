"""What every probe-set kind is: a class declaring its name, summary, options (a dataclass of
`option` fields, probes/declare.py), the fields its items carry, and how it builds items
from the selected facts; and the `BuildContext` a kind builds in (the graph, the truth date, the
languages, the relation's objects and templates, read once per build).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Sequence

from ...index.distractors import EXCLUDE_OBJECTS
from ...kg.graph import KnowledgeGraph
from ..building.facts import FactSelection, ProbeFact
from ..scoring.model_cache import ModelCache
from ..declare import LOCAL, option


@dataclass(frozen=True)
class KindOptions:
    """The options every kind has."""
    parquet: bool = option(False, "Also write NAME.parquet (needs pyarrow).")


def exclude_objects_option():
    """The `exclude_objects` field of a kind whose wrong options or choices are drawn from the
    graph: one declaration, the same name, help and choices in every such kind
    (index/distractors.py EXCLUDE_OBJECTS says why the first is the default)."""
    return option(EXCLUDE_OBJECTS[0], "ever-held: wrong options, choices and distractors never name an object the "
                                      "subject held for the relation at any date and any rank but deprecated "
                                      "(Temp+Sem's temporal distractors aside); true-at-date: only the objects true "
                                      "at the truth date are kept out (factprobe's earlier default).",
                  choices=EXCLUDE_OBJECTS)


@dataclass(frozen=True)
class TemplateOptions(KindOptions):
    """Kinds whose prompts come from the relation templates."""
    templates: tuple[str, ...] = option((), "Folders of extra template YAML (e.g. from `templates paraphrase`). "
                                            "Repeatable.", exposure=LOCAL, metavar="DIR")


@dataclass(frozen=True)
class ClozeTemplateOptions(TemplateOptions):
    """Kinds whose prompts are the relation's cloze templates."""
    manual_only: bool = option(False, "hand-written templates only.")


@dataclass
class BuildContext:
    """One build's view of the graph: the selection (its truth date fixed), the name language,
    and what several kinds read, memoized for the build."""
    kg: KnowledgeGraph
    selection: FactSelection
    say: Callable[[str], None] = lambda _: None
    models: ModelCache = field(default_factory=ModelCache)  # for kinds that ask a model (appropt, single_token)
    _objects: dict = field(default_factory=dict, repr=False)

    @property
    def languages(self) -> tuple[str, ...] | None:
        return self.selection.languages or None

    @property
    def lang(self) -> str:
        """The display language: the first asked for, else the store's first."""
        return (self.selection.languages or self.kg.languages)[0]

    def objects_of(self, relation: str) -> list[tuple[str, str, tuple[str, ...]]]:
        """(entity, label, names) of every labelled object of `relation`, as the graph lists them."""
        if relation not in self._objects:
            rows = []
            for entity in self.kg.distinct_objects(relation):
                names = self.kg.labels(entity, self.lang)
                if names.label:
                    rows.append((entity, names.label, names.all()))
            self._objects[relation] = rows
        return self._objects[relation]

    def true_objects(self, subject: str, relation: str) -> set[str]:
        """The objects true for (subject, relation) at the truth date, under the selection's `truth`."""
        return set(self.kg.objects(subject, relation, at=self.selection.at, truth=self.selection.truth))

    def held_objects(self, subject: str, relation: str) -> set[str]:
        """Every object (subject, relation) ever had (any date, any rank but deprecated)."""
        return set(self.kg.held_objects(subject, relation))

    def excluded_objects(self, options: Any) -> Callable[[str, str], set[str]]:
        """What a kind's wrong options keep out, by its `exclude_objects` (EXCLUDE_OBJECTS): every
        object ever held, or (true-at-date) only those true at the truth date."""
        if options.exclude_objects == "true-at-date":
            return self.true_objects
        return lambda subject, relation: self.true_objects(subject, relation) | self.held_objects(subject, relation)

    def true_statements(self, subject: str, relation: str) -> list[tuple[str, str, str]]:
        """(object, first statement id, label) of every labelled object true for (subject,
        relation) at the truth date, by object id: what a subject-relation unit stands for."""
        out = []
        for obj, ids, true, _, labelled in (
                (g[1], g[2], g[3], g[4], g[5]) for g in self.kg.statement_groups(
                    relation, at=self.selection.at, lang=self.lang, subjects=[subject], truth=self.selection.truth)):
            if true and labelled:
                out.append((obj, ids[0], self.kg.labels(obj, self.lang).label))
        return out

    def templates(self, options: TemplateOptions) -> dict:
        """Relation -> RelationTemplates: the shipped templates with the options' folders over them."""
        from ..templates import load_templates

        return load_templates([Path(d) for d in options.templates] or None)

    def cloze_texts(self, options: ClozeTemplateOptions, relations: Sequence[str]) -> dict[str, list[str]]:
        """Relation -> its cloze texts (hand-written only with `manual_only`); ValueError naming
        every relation without one."""
        loaded = self.templates(options)
        out = {}
        for relation in relations:
            entry = loaded.get(relation)
            if entry is None:
                continue
            texts = [t.text for t in entry.cloze if not options.manual_only or t.source == "manual"]
            if texts:
                out[relation] = texts
        missing = sorted(set(relations) - set(out))
        if missing:
            raise ValueError(f"no cloze templates for {', '.join(missing)}: add a YAML file for each "
                             "(see `factprobe templates list`) and pass its folder with --templates")
        return out


class ProbeSetKind:
    """A probe-set kind, declared in one class: the registry (probes/kinds/__init__.py) and
    through it `probeset build`, the pipeline's `probesets:` and the service's probe-set jobs
    read these declarations and nothing else."""

    name: ClassVar[str]  # what --kind, the pipeline and the service call it
    summary: ClassVar[str]  # one line: its entry in `probeset build --help`
    options: ClassVar[type] = KindOptions  # a frozen dataclass of option() fields
    item_fields: ClassVar[tuple[str, ...]] = ()  # what every item carries besides the fact's fields

    @classmethod
    def check(cls, options: Any) -> None:
        """Refuse (ValueError), before anything runs, options that cannot build together."""

    def build(self, context: BuildContext, facts: list[ProbeFact], options: Any) -> list[dict]:
        """The items, in their final order, from the selected facts."""
        raise NotImplementedError

    def source_notes(self, context: BuildContext, facts: list[ProbeFact], items: list[dict],
                     options: Any) -> dict:
        """What the sidecar's `source` says of this build beyond the selection (paper checks)."""
        return {}

    @classmethod
    def warnings(cls, source: dict) -> list[str]:
        """What a build did that the published construction would not (from the sidecar's source)."""
        return []

    @classmethod
    def summary_lines(cls, source: dict) -> list[str]:
        """Lines a finished build prints after its one-line summary."""
        return []
