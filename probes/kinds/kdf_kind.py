"""The kdf kind (KDF): per fact, a question with four options A-D (the gold object and three fair
wrong answers, shuffled) and answered questions of other facts as demonstrations. By default as
the KDF paper: the question is its sentence with a blank ("The capital of [X] is ____",
"[X]的行政中心是____。") in the names' language, demonstrations of other relations, wrong options
drawn from the relation's tails. A relation without templates in that language is refused."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Sequence

from ...index.distractors import CLASS_CANDIDATES, CLASS_CANDIDATES_HELP, TYPE_DATES, TYPE_DATES_HELP
from ..building.facts import ProbeFact
from .base import BuildContext, ProbeSetKind, TemplateOptions, exclude_objects_option
from ..declare import option
from .sampling import AllBut, ChoicePool, distinct_by_name, positions_by_subject, seeded

LETTERS = "ABCD"
KDF_DEMONSTRATIONS = ("other-relations", "same-relation")  # the paper's first
KDF_OPTIONS = ("relation-tails", "type-pool")  # the paper's first
KDF_QUESTIONS = ("paper", "qa")  # the paper's first
# Two sentences of KDF's Table 3 that factprobe does not ask as printed, corrected in the relation
# files (probes/templates/relations/P551.yaml, P1441.yaml): relation -> (the sentence as printed,
# why). A zh build with the paper's questions names them in its sidecar and output.
TABLE3_CORRECTED = {
    "P551": ("[X]的创作作者是[Y]。", "003:184 prints creator's sentence ('the creator of [X] is') for residence"),
    "P1441": ("[X]是中[Y]的人物。", "003:176 puts 中 before the work ('[X] is in-[Y]'s character')"),
}


@dataclass(frozen=True)
class KdfKindOptions(TemplateOptions):
    shots: int = option(5, "demonstrations per question.", minimum=0, http_limit=20)
    kdf_demonstrations: str = option("other-relations", "other-relations (the KDF paper's) or same-relation "
                                                        "demonstrations, other subjects either way.",
                                     choices=KDF_DEMONSTRATIONS)
    kdf_options: str = option("relation-tails", "wrong options drawn from the relation's tails (the KDF paper's) "
                                                "or from the object's type pool (fair random distractors).",
                              choices=KDF_OPTIONS)
    kdf_question: str = option("paper", "paper: the KDF paper's sentence with a blank ('The capital of [X] is ____', "
                                        "its Table 3 in zh); qa: the relation's first QA template ('What is the "
                                        "capital of [X]?', factprobe's earlier). In the names' language either way.",
                               choices=KDF_QUESTIONS)
    exclude_objects: str = exclude_objects_option()
    # kdf-options type-pool draws random distractors: their candidate rules (index/distractors.py)
    class_candidates: str = option(CLASS_CANDIDATES[0], CLASS_CANDIDATES_HELP, choices=CLASS_CANDIDATES)
    type_dates: str = option(TYPE_DATES[0], TYPE_DATES_HELP, choices=TYPE_DATES)


class KdfKind(ProbeSetKind):
    name = "kdf"
    summary = "A-D questions with 5-shot demonstrations"
    options = KdfKindOptions
    item_fields = ("language", "question", "options", "option_ids", "answer", "demonstrations")

    def build(self, context: BuildContext, facts: list[ProbeFact], options: KdfKindOptions) -> list[dict]:
        questions = _questions(context, options, sorted({f.relation for f in facts}))

        def question(f: ProbeFact) -> str:
            return questions[f.relation].replace("[X]", f.subject_label)

        seed = context.selection.seed
        wrong = (relation_tails(context.objects_of, context.excluded_objects(options), seed=seed)
                 if options.kdf_options == "relation-tails" else _type_pool(context, options))
        return build_kdf(facts, wrong, question, shots=options.shots, seed=seed,
                         demonstrations=options.kdf_demonstrations, language=context.lang)

    def source_notes(self, context: BuildContext, facts: list[ProbeFact], items: list[dict],
                     options: KdfKindOptions) -> dict:
        """The facts left out for want of 3 wrong options, per relation."""
        asked = {item["fact"] for item in items}
        skipped: dict[str, int] = {}
        for fact in facts:
            if fact.id not in asked:
                skipped[fact.relation] = skipped.get(fact.relation, 0) + 1
        notes = {"skipped_too_few_options": skipped, "language": context.lang}
        corrected = _table3_corrected(context, options, sorted({f.relation for f in facts}))
        if corrected:
            notes["table3_corrected"] = corrected
        if options.kdf_demonstrations == "other-relations":
            relation_of = {fact.id: fact.relation for fact in facts}
            notes["relations_repeat"] = sum(
                len({relation_of[d["fact"]] for d in item["demonstrations"]}) < len(item["demonstrations"])
                for item in items)
        return {"kdf": notes}

    @classmethod
    def warnings(cls, source: dict) -> list[str]:
        kdf = source.get("kdf") or {}
        lines = [f"{relation}: {count} fact(s) left out, fewer than 3 fair wrong options"
                 for relation, count in sorted((kdf.get("skipped_too_few_options") or {}).items())]
        lines += [f"{relation}: KDF's Table 3 prints {entry['paper']!r}, asked as {entry['asked']!r} ({entry['why']})"
                  for relation, entry in sorted((kdf.get("table3_corrected") or {}).items())]
        if kdf.get("relations_repeat"):
            lines.append(f"{kdf['relations_repeat']} question(s) repeat a relation among their demonstrations: "
                         "fewer other relations than --shots (the paper's 5 are of 5 distinct relations)")
        return lines


def _questions(context: BuildContext, options: KdfKindOptions, relations: Sequence[str]) -> dict[str, str]:
    """A question per relation, [X] unfilled, in the names' language (`context.lang`): with
    kdf_question=paper `RelationTemplates.kdf_question()`, with qa `question()` (its first QA
    template, else a cloze with a blank). ValueError naming every relation without one there."""
    from ..templates import MissingLanguage

    loaded, language = context.templates(options), context.lang
    out, missing = {}, []
    for relation in relations:
        entry = loaded.get(relation)
        if entry is None or not (entry.qa or entry.cloze):
            raise ValueError(f"no templates for {relation}: KDF questions are written from them")
        try:
            entry = entry.in_language(language)
            out[relation] = entry.kdf_question() if options.kdf_question == "paper" else entry.question()
        except MissingLanguage:
            missing.append(f"{relation} has no {language} template")
        except ValueError as error:  # a language's section without the sentence or question asked for
            missing.append(str(error))
    if missing:
        raise ValueError(f"{'; '.join(missing)}: KDF asks in the names' language ({language}), never in another. "
                         f"Add a `languages: {language}:` section with a `kdf` sentence (and `qa` for "
                         f"--kdf-question qa) to the relation's file in a --templates folder, or build with "
                         f"--languages en")
    return out


def _table3_corrected(context: BuildContext, options: KdfKindOptions, relations: Sequence[str]) -> dict:
    """Relation -> {paper, asked, why} for the relations whose Chinese question, as the paper's
    (kdf_question=paper), is not KDF's Table 3 sentence as printed (TABLE3_CORRECTED)."""
    from ...index.chinese import is_chinese
    from ..templates import BLANK

    mine = [r for r in relations if r in TABLE3_CORRECTED]
    if options.kdf_question != "paper" or not mine or not is_chinese(context.lang):
        return {}
    asked = _questions(context, options, mine)
    out = {}
    for relation in mine:
        printed, why = TABLE3_CORRECTED[relation]
        if asked[relation] != printed.replace("[Y]", BLANK):
            out[relation] = {"paper": printed, "asked": asked[relation].replace(BLANK, "[Y]"), "why": why}
    return out


def _type_pool(context: BuildContext, options: KdfKindOptions) -> Callable[[ProbeFact], list[tuple[str, str]]]:
    """Wrong options as fair random distractors sharing a type with the object."""
    from ...index.distractors import DistractorFinder

    # factprobe's own option keeps the type rules it was built with (DistFact's are the
    # distractor kind's default since issue 28).
    finder = DistractorFinder(context.kg, languages=context.languages, types="instance-first",
                              untyped="relation-objects", exclude_objects=options.exclude_objects,
                              class_candidates=options.class_candidates, type_dates=options.type_dates,
                              truth=context.selection.truth)
    at, seed = context.selection.at, context.selection.seed

    def wrong(fact: ProbeFact) -> list[tuple[str, str]]:
        # Random distractors follow one seeded order whatever n is, so a larger n only extends the
        # list: ask again for more while entities sharing a label leave fewer than 3 distinct ones.
        n = 3
        while True:
            found = finder.find(fact.subject, fact.relation, fact.object, strategy="random", n=n, at=at, seed=seed)
            pairs = [(d.entity, d.label or d.entity) for d in found.distractors]
            if len(distinct_by_name(pairs, fact.gold)) >= 3 or len(pairs) < n:
                return pairs
            n *= 2

    return wrong


def relation_tails(objects_of: Callable[[str], Sequence[tuple[str, str, tuple[str, ...]]]],
                   true_objects: Callable[[str, str], set[str]], *, seed: int = 0,
                   n: int = 3) -> Callable[[ProbeFact], list[tuple[str, str]]]:
    """KDF's wrong answers as the paper draws them: random tails (objects) of the fact's own
    relation, whatever their type. They are as fair as icl-mc choices (ChoicePool): none of
    `true_objects(subject, relation)` (a kind passes every object the subject ever held, or those
    true at the date), not the subject, no name shared with those, a gold answer or the subject's
    label, one entity per label; a seeded draw per fact."""
    pools: dict[str, ChoicePool] = {}

    def tails(fact: ProbeFact) -> list[tuple[str, str]]:
        if fact.relation not in pools:
            pools[fact.relation] = ChoicePool(objects_of(fact.relation))
        others = pools[fact.relation].fair(fact, true_objects(fact.subject, fact.relation))
        return seeded(seed, "tails", fact.id).sample(others, min(n, len(others)))

    return tails


def build_kdf(facts: Sequence[ProbeFact], distractors_of: Callable[[ProbeFact], list[tuple[str, str]]],
              question_of: Callable[[ProbeFact], str], *, shots: int = 5, seed: int = 0,
              demonstrations: str = "other-relations", language: str = "en") -> list[dict]:
    """`distractors_of(fact)`: fair (entity, label) wrong answers, best first; the first 3 that read
    differently from each other and from every gold name are the options, and a fact with fewer
    is skipped (the caller counts what is missing). `question_of(fact)`: the question text.
    Demonstrations are other asked facts, each with its own options and answer: with
    `demonstrations="other-relations"` (the paper) facts of other relations, about other subjects;
    with "same-relation" facts of the same relation with other subjects. `language`: the
    questions' and names' language, which each item carries (the method's answer line follows it)."""
    if demonstrations not in KDF_DEMONSTRATIONS:
        raise ValueError(f"kdf demonstrations {demonstrations!r}: use one of {', '.join(KDF_DEMONSTRATIONS)}")
    questions = {}
    for fact in facts:
        wrong = distinct_by_name(distractors_of(fact), fact.gold)[:3]
        if len(wrong) < 3:
            continue
        options = [(fact.object, fact.object_label), *wrong]
        seeded(seed, "options", fact.id).shuffle(options)
        answer = [e for e, _ in options].index(fact.object)
        questions[fact.id] = {"question": question_of(fact), "options": [label for _, label in options],
                              "option_ids": [e for e, _ in options], "answer": LETTERS[answer]}
    by_relation: dict[str, list[ProbeFact]] = defaultdict(list)
    for fact in facts:
        if fact.id in questions:
            by_relation[fact.relation].append(fact)
    if demonstrations == "other-relations" and shots > 0 and len(by_relation) < 2:
        only = ", ".join(by_relation) or "none"
        raise ValueError(f"kdf: demonstrations from other relations (the KDF paper's) need questions of at "
                         f"least two relations; only {only} has any. Add relations, or build with "
                         "--kdf-demonstrations same-relation")
    subject_at = {relation: positions_by_subject(source) for relation, source in by_relation.items()}
    items = []
    for fact in facts:
        if fact.id not in questions:
            continue
        if demonstrations == "other-relations":
            shots_taken = _distinct_relations(fact, by_relation, subject_at, shots, seed)
        else:
            pool = AllBut(by_relation[fact.relation], subject_at[fact.relation].get(fact.subject, []))
            shots_taken = seeded(seed, "shots", fact.id).sample(pool, min(shots, len(pool)))
        items.append({"id": f"kdf:{fact.id}", "kind": "kdf", "split": "test", **fact.fields(), "language": language,
                      **questions[fact.id],
                      "demonstrations": [{"fact": f.id, **questions[f.id]} for f in shots_taken]})
    return items


def _distinct_relations(fact: ProbeFact, by_relation: dict[str, list[ProbeFact]],
                        subject_at: dict[str, dict[str, list[int]]], shots: int, seed: int) -> list[ProbeFact]:
    """The paper's demonstrations: one question from each of `shots` relations other than the
    fact's, all distinct (its Figure 3, seed 003 line 190: five examples, five relations), about
    other subjects. With fewer other relations than shots the relations take turns, each used
    once before any is used twice (`relations_repeat` counts such facts in the sidecar)."""
    draw = seeded(seed, "shots", fact.id)
    pools = {relation: AllBut(asked, subject_at[relation].get(fact.subject, []))
             for relation, asked in by_relation.items() if relation != fact.relation}
    relations = [relation for relation in pools if len(pools[relation])]
    order = draw.sample(relations, len(relations))
    turns = [order[k % len(order)] for k in range(shots)] if order else []
    # a relation's turns take distinct facts, in the order the turns come
    drawn = {relation: draw.sample(pools[relation], min(turns.count(relation), len(pools[relation])))
             for relation in order}
    taken = []
    for relation in turns:
        if drawn[relation]:
            taken.append(drawn[relation].pop(0))
    return taken

