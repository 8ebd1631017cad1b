"""Which facts a probe set asks about: relations, truth at a date, provenance, frequency buckets,
caps and the seed. Every builder starts from `select_facts`.

A probe fact is an entity-valued statement (s, r, o) that is true at the probe date, whose
subject and object have a label. Its gold answers are the names (labels and aliases) of every
object true for (s, r) at that date, so a model that names another true object of a
non-functional relation is right. Sampling is a seeded shuffle per relation (and per bucket),
taken over facts sorted by id, so the same store, parameters and seed give the same facts.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from typing import NamedTuple, Sequence

from ...kg.graph import KnowledgeGraph
from ...kg.model import TRUTH_RULES
from ...kg.relations import RELATION_NAME
from ..declare import LOCAL, as_dict, option
from ..formats.fact_list import read_fact_list
from .listed import ListCheck

# T-REx annotators, as MyriadLAMA widened LAMA's NoSub-only facts by admitting all three.
TREX_ANNOTATORS = ("NoSub", "AllEnt", "SPO")


# The patterns a selection's values follow, wherever they come from (CLI, config, HTTP). A relation
# is a P-id or a label, read against the store when the set is built (kg/relations.py).
DATE = r"[0-9]{4}(-[0-9]{2}-[0-9]{2})?"
LANGUAGE = r"[a-z]{2,3}(-[a-z0-9]{1,8})?"


@dataclass(frozen=True)
class FactSelection:
    """Which facts a probe set asks about; its fields are the options every kind shares
    (probes/declare.py: the CLI, the pipeline and the service derive theirs from them)."""
    relations: tuple[str, ...] = option((), "A P-id or a relation's label in the store (`kg relations`); "
                                            "repeatable [default: every relation with entity objects].",
                                        flag="--relation", pattern=RELATION_NAME, http_limit=50, metavar="RELATION")
    facts: str | None = option(None, "Only these facts: JSONL, JSON, CSV or TSV of (subject, relation, object) "
                                     "Wikidata ids or fact ids, DistFact's [[s, r, o], score] too; each listed fact "
                                     "not selected is named with why.", exposure=LOCAL, metavar="FILE")
    per_relation: int | None = option(None, "At most this many facts per relation.", minimum=1, http_limit=10_000)
    per_bucket: int | None = option(None, "At most this many facts per (relation, bucket).", minimum=1,
                                    http_limit=10_000)
    buckets: tuple[str, ...] = option((), 'Keep only these buckets, e.g. "0" "[1,10)". Repeatable.', flag="--bucket",
                                      pattern=r".{1,20}", http_limit=10)
    corpus: str | None = option(None, "Frequency corpus in the store (`frequency annotate --to-store --corpus`): "
                                      "items get `frequency` and `bucket`.", pattern=r"[\w.:-]{1,64}", metavar="NAME")
    annotators: tuple[str, ...] = option((), "Keep facts with provenance from these annotators (T-REx: NoSub, "
                                             "AllEnt, SPO). Repeatable.", flag="--annotator",
                                         choices=TREX_ANNOTATORS, http_limit=len(TREX_ANNOTATORS))
    at: str | None = option(None, "Truth date YYYY-MM-DD: facts (and gold answers) valid then [default: the "
                                  "graph's own date; the sidecar records the date used].", pattern=DATE)
    truth: str = option(TRUTH_RULES[0], "Which statements are true: non-deprecated, every value of normal or "
                                        "preferred rank (factprobe's); truthy, Wikidata's truthy view, only the best "
                                        "rank of each subject-relation group (a preferred value hides normal ones). "
                                        "Gold answers, true objects and the types distractors share follow it.",
                        choices=TRUTH_RULES)
    popularity_bins: int = option(0, "Label items with the subject's popularity bin (by its number of statements).",
                                  minimum=0, http_limit=100)
    seed: int = option(0, "Seed of every draw.", minimum=0, maximum=2**31 - 1)
    languages: tuple[str, ...] = option((), "Name languages, comma-separated [default: the store's].", comma=True,
                                        pattern=LANGUAGE, http_limit=5)

    def to_dict(self) -> dict:
        return as_dict(self)


@dataclass(frozen=True)
class ProbeFact:
    id: str
    subject: str
    relation: str
    object: str
    subject_label: str
    relation_label: str
    object_label: str
    gold: tuple[str, ...]  # names of every true object of (subject, relation)
    subject_aliases: tuple[str, ...] = ()
    frequency: int | None = None
    bucket: str | None = None
    popularity: int | None = None  # the subject's number of true statements
    popularity_bin: int | None = None

    def fields(self) -> dict:
        """The item fields every probe-set kind carries."""
        return {"fact": self.id, "relation": self.relation, "relation_label": self.relation_label,
                "subject": self.subject, "subject_label": self.subject_label, "object": self.object,
                "object_label": self.object_label, "gold": list(self.gold), "frequency": self.frequency,
                "bucket": self.bucket, "popularity": self.popularity, "popularity_bin": self.popularity_bin}


@dataclass
class SelectionReport:
    relations: list[str] = field(default_factory=list)
    seen: int = 0  # entity-valued statements read
    not_true: int = 0  # deprecated, or not valid at the date
    unlabelled: int = 0  # subject or object without a label
    wrong_provenance: int = 0
    not_counted: int = 0  # no frequency in the corpus (when a corpus is named)
    other_bucket: int = 0
    capped: int = 0
    kept: int = 0
    listed: ListCheck | None = field(default=None, repr=False, compare=False)  # with a fact list

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(replace(self, listed=None)).items() if k != "listed"}


def select_facts(kg: KnowledgeGraph, selection: FactSelection,
                 languages: Sequence[str] | None = None) -> tuple[list[ProbeFact], SelectionReport]:
    """The facts of a probe set, ordered by relation then sampled order; and what was dropped.

    One scan per relation decides which facts qualify (`statement_groups`: truth, labels,
    frequency in SQL); only the sampled ones are then read in full (names, gold answers), so
    a build costs one pass over its relations plus a few queries per kept fact, whatever the
    size of the graph. With a fact list (`selection.facts`) only the listed facts are read and
    candidates, and `report.listed` says why each one not selected is left out."""
    if selection.per_bucket is not None and not selection.corpus:
        raise ValueError("per-bucket caps need frequencies: name the corpus (--corpus) counted into the store")
    if selection.buckets and not selection.corpus:
        raise ValueError("bucket filters need frequencies: name the corpus (--corpus) counted into the store")
    lang = (tuple(languages) or kg.languages)[0] if languages else kg.languages[0]
    if selection.corpus and not kg.has_frequencies(selection.corpus):
        raise ValueError(f"the store holds no frequencies for corpus {selection.corpus!r} "
                         "(run `factprobe frequency annotate --to-store --corpus NAME ...` first)")
    missing = [r for r in selection.relations if not kg.has_entity_facts(r)]
    if missing:
        raise ValueError(f"no entity-valued facts of {', '.join(missing)} in the store")
    listed = ListCheck(kg, read_fact_list(selection.facts), selection.relations) if selection.facts else None
    relations = listed.relations() if listed else list(selection.relations) or [r for r, _, _ in kg.relations()]
    report = SelectionReport(relations=sorted(relations), listed=listed)
    label = _Labels(kg, lang)
    chosen: list[ProbeFact] = []
    for relation in sorted(relations):
        candidates = _relation_facts(kg, relation, selection, lang, report)
        sampled = _sample(candidates, relation, selection, report)
        chosen += [_probe_fact(kg, c, relation, selection, label) for c in sampled]
        if listed:
            _note_listed(listed, relation, candidates, sampled, selection)
    if listed:
        listed.finish(kg)
    if selection.popularity_bins > 0:
        chosen = _with_popularity(kg, chosen, selection.popularity_bins)
    report.kept = len(chosen)
    return chosen, report


class _Labels:
    """Labels of the kept facts' entities, memoized (bounded: a popular object recurs, most
    subjects do not)."""

    def __init__(self, kg: KnowledgeGraph, lang: str) -> None:
        self.kg, self.lang, self.memo = kg, lang, {}

    def __call__(self, entity: str):
        if entity not in self.memo:
            if len(self.memo) >= 200_000:
                self.memo.clear()
            self.memo[entity] = self.kg.labels(entity, self.lang)
        return self.memo[entity]


class _Candidate(NamedTuple):
    """A fact that passed the filters, before its names are read."""
    id: str  # its first statement id
    subject: str
    object: str
    frequency: int | None
    bucket: str | None


def _relation_facts(kg, relation, selection, lang, report) -> list[_Candidate]:
    # The same triple may be stated more than once (other qualifiers, or another source such as
    # T-REx beside Wikidata): one probe fact, whose provenance and frequency are the group's.
    out: list[_Candidate] = []
    listed = report.listed
    for subject, obj, ids, true, subject_labelled, object_labelled, counted in _groups(kg, relation, selection,
                                                                                      lang, listed):
        report.seen += len(ids)
        drop = (lambda reason, text: listed.drop(subject, relation, obj, reason, text)) if listed else _ignore
        if not true:
            report.not_true += 1
            truthy = " (truthy)" if selection.truth == "truthy" else ""
            drop("not-true", f"not true at {selection.at or 'today'}{truthy}")
            continue
        if not subject_labelled or not object_labelled:
            report.unlabelled += 1
            unnamed = [e for e, named in ((subject, subject_labelled), (obj, object_labelled)) if not named]
            drop("no-label", f"no label in {lang} for {' nor '.join(unnamed)}")
            continue
        if selection.annotators:
            annotators = {a for fact_id in ids for _, a, _ in kg.provenance(fact_id)}
            if not annotators & set(selection.annotators):
                report.wrong_provenance += 1
                drop("provenance", f"no provenance from {', '.join(selection.annotators)}")
                continue
        frequency = bucket = None
        if selection.corpus:
            if counted is None:
                report.not_counted += 1
                drop("not-counted", f"not counted in corpus {selection.corpus}")
                continue
            frequency, bucket = counted
            if selection.buckets and bucket not in selection.buckets:
                report.other_bucket += 1
                drop("other-bucket", f"in bucket {bucket}, not among --bucket")
                continue
        out.append(_Candidate(ids[0], subject, obj, frequency, bucket))
    out.sort(key=lambda c: c.id)
    return out


def _groups(kg, relation, selection, lang, listed: ListCheck | None):
    """The relation's statement groups: all of them, or those of the listed facts only (read
    off the subject index, whatever the size of the relation)."""
    if listed is None:
        yield from kg.statement_groups(relation, at=selection.at, lang=lang, corpus=selection.corpus,
                                       truth=selection.truth)
        return
    for subjects in listed.subject_batches(relation):
        for group in kg.statement_groups(relation, at=selection.at, lang=lang, corpus=selection.corpus,
                                         subjects=subjects, truth=selection.truth):
            if listed.wants(group[0], relation, group[1]):
                yield group


def _ignore(reason: str, text: str) -> None:
    pass


def _note_listed(listed: ListCheck, relation: str, candidates: list[_Candidate], sampled: list[_Candidate],
                 selection: FactSelection) -> None:
    """The listed facts the caps left out, and those kept."""
    caps = [f"--{name.replace('_', '-')} {value}" for name, value in (("per_relation", selection.per_relation),
                                                                        ("per_bucket", selection.per_bucket))
            if value is not None]
    kept = {c.id for c in sampled}
    for c in candidates:
        if c.id in kept:
            listed.keep(c.subject, relation, c.object, c.id)
        else:
            listed.drop(c.subject, relation, c.object, "capped", f"left out by {' and '.join(caps)} (seed {selection.seed})")


def _probe_fact(kg, candidate: _Candidate, relation: str, selection: FactSelection, label) -> ProbeFact:
    fact_id, subject_id, object_id, frequency, bucket = candidate
    subject = label(subject_id)
    gold: list[str] = []
    for true_object in kg.objects(subject_id, relation, at=selection.at, truth=selection.truth):
        gold += [n for n in label(true_object).all() if n not in gold]
    return ProbeFact(fact_id, subject_id, relation, object_id, subject.label, label(relation).label or relation,
                     label(object_id).label, tuple(gold), subject.aliases, frequency, bucket)


def _sample(facts: list[_Candidate], relation: str, selection: FactSelection,
            report: SelectionReport) -> list[_Candidate]:
    if not facts:
        return []
    rng = random.Random(f"{selection.seed}|{relation}")
    order = rng.sample(facts, len(facts))
    if selection.per_bucket is not None:
        taken: Counter = Counter()
        kept = []
        for fact in order:
            if taken[fact.bucket] < selection.per_bucket:
                taken[fact.bucket] += 1
                kept.append(fact)
        order = kept
    if selection.per_relation is not None:
        order = order[:selection.per_relation]
    report.capped += len(facts) - len(order)
    return order


def _with_popularity(kg: KnowledgeGraph, facts: list[ProbeFact], bins: int) -> list[ProbeFact]:
    """Popularity = the number of statements about the subject (any date, deprecated ones and
    no-values excluded). Bins split the distinct subjects by rank into `bins` near-equal parts,
    0 the least popular; subjects with equal popularity share a bin (the lowest rank decides)."""
    from bisect import bisect_left
    from dataclasses import replace

    popularity = {s: sum(1 for f in kg.facts(subject=s) if f.is_true) for s in sorted({f.subject for f in facts})}
    values = sorted(popularity.values())
    bin_of = {s: min(bins - 1, bisect_left(values, p) * bins // len(values)) for s, p in popularity.items()}
    return [replace(f, popularity=popularity[f.subject], popularity_bin=bin_of[f.subject]) for f in facts]
