"""The knowledge measures the distractor paper compares against (Ammar Khodja et al. 2025, Table
2): probability, Precision@n, ROUGE-L, BERT-score (with a local encoder, bertscore.py), KaRR
(karr.py) and an optional LLM judge, by default taken on the relation's object-final clozes and
averaged over them. The probability is by default the paper's sum of P(name | cloze) over all
the object's names, without the end-of-sequence token the distractor measure's plausibility
appends (`probability_eos=true`); `correct` is its verdict. Each measure's definitions and
options: docs/design-notes.md.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .. import measures
from ..declare import LOCAL, SERVED_MODEL, URL, option
from ..document import Block, Heading, ReportRun, Section, Text, table, with_interval
from ..scoring.requests import GenerateRequest
from ..templates import load_templates, prompt_before_object
from .base import Method, OptionError, answer_key, base_record, headline_interval, headline_number
from .bertscore import SCORE, BertScoreModel, best_per_cloze
from .distractor import all_names, label_request, log_plausibility
from .karr import PROBABILITIES as KARR_PROBABILITIES, KarrAsker
from ..measures.accuracy import interval

JUDGE_PROMPT = ("Question: {question}\nReference answers: {gold}\nProposed answer: {answer}\n"
                "Is the proposed answer correct? Reply with yes or no only.")
PROBABILITY_DEFINITIONS = ("all-names", "label")  # the paper's first
CANDIDATE_DEFINITIONS = ("beam", "sample")
# The cloze is continued as it ends, without a trailing space: BPE vocabularies put the space
# inside the next word's token (" Paris"), so after "is " SmolLM2 answers "21st-century Paris" or
# digits where after "is" it answers " Paris". Answers are stripped.
STOP = ("\n", ".", ",")


def baseline_measures(records: Sequence[dict], options: dict | None = None) -> dict:
    """Each baseline's mean verdict over facts (the probability's mean value too), with its 95%
    interval over facts; the judge when it ran. A record's values are already means over its
    clozes (`Baselines.run`)."""
    out = {}
    for name, key in (("probability", "probability"), ("precision_at_n", "precision_at_n"), ("rouge_l", "rouge_l"),
                      ("judge", "judge"), ("probability_known", "correct"), ("bertscore", "bertscore"),
                      ("karr", "karr"), ("karr_known", "karr_known")):
        kept = [r for r in records if r.get(key) is not None]
        means = measures.fact_means([float(r[key]) for r in kept], [r.get("fact") or r["id"] for r in kept]) \
            if kept else []
        out[name] = math.fsum(means) / len(means) if means else None  # measures.mean_over_facts
        # its 95% interval over facts (Wilson where every fact's value is 0 or 1)
        out[f"{name}_interval"] = interval(means)
    options = options or {}
    # Runs from before an option existed used what factprobe did then: the label, EOS appended.
    # BERT-score and KaRR are named only where the run asked for them.
    definitions = {"probability": options.get("probability", "label"),
                   "probability_eos": options.get("probability_eos", True)}
    for name, definition in (("bertscore", bertscore_definition(options)), ("karr", karr_definition(options))):
        if definition is not None:
            definitions[name] = definition
    return {"baselines": out, "definitions": definitions}


def bertscore_definition(options: dict) -> dict | None:
    """What BERT-score was (None: not asked, no `bertscore_model`)."""
    if not options.get("bertscore_model"):
        return None
    return {"model": str(options["bertscore_model"]), "layers": options.get("bertscore_layers"), "score": SCORE,
            "idf": False, "rescaled": False, "names": "gold", "candidates": options.get("candidates", "beam")}


def karr_definition(options: dict) -> dict | None:
    """What KaRR was (None: not asked, `karr=false`)."""
    if not options.get("karr", False):
        return None
    return {"probability": options.get("karr_probability", "per-token"), "samples": options.get("karr_samples", 4),
            "threshold": options.get("karr_threshold", 22.0), "subject_names": "label",
            "subjects": "probe set", "relations": "probe set, o an object"}


def _baseline_blocks(runs: Sequence[ReportRun]) -> list[Block]:
    rows, unasked = [], []
    for run in runs:
        b = run.aggregate.get("baselines")
        if not isinstance(b, dict):
            continue
        asked = "bertscore" in (run.aggregate.get("definitions") or {})
        unasked += [] if asked else [run.rid]
        rows.append((run.rid, *(with_interval(b.get(k), b.get(f"{k}_interval")) if b.get(k) is not None
                                else ("not asked" if k == "bertscore" and not asked else "n/a")
                                for k in BASELINE_COLUMNS)))
    if not rows:
        return []
    blocks = [Heading("Distractor paper's baselines (means over facts)", 3),
              table(("Run", "Probability", "Precision@n", "ROUGE-L", "BERT-score", "KaRR", "KaRR known",
                     "Judge"), rows)]
    if unasked:
        blocks.append(Text(f"BERT-score was not asked in {', '.join(unasked)}: it needs a local encoder "
                           "(--option bertscore_model=PATH --option bertscore_layers=N)."))
    return blocks


BASELINE_COLUMNS = ("probability", "precision_at_n", "rouge_l", "bertscore", "karr", "karr_known", "judge")
BASELINE_MEASURES = Section(42, _baseline_blocks)


@dataclass(frozen=True)
class BaselinesOptions:
    threshold: float = option(0.5, "a fact is known when its probability is above this.", minimum=0, maximum=1)
    probability: str = option("all-names", "P(object | cloze) summed over all its names (the paper's), or its "
                                           "label's alone.", choices=PROBABILITY_DEFINITIONS)
    probability_eos: bool = option(False, "end each name with the end-of-sequence token, as the distractor "
                                          "measure does.")
    candidates: str = option("beam", "answers for Precision@n, ROUGE-L and BERT-score: beams per cloze (the "
                                     "paper's) or samples of the first cloze.", choices=CANDIDATE_DEFINITIONS)
    clozes: int = option(5, "the relation's first N object-final clozes, each measure averaged over them.",
                         minimum=1, http_limit=100)
    beams: int = option(10, "candidates=beam: beams per cloze (at least n).", minimum=1, http_limit=64)
    samples: int = option(10, "candidates=sample: sampled answers.", minimum=1, http_limit=200)
    n: int = option(3, "Precision@n's n.", minimum=1)
    max_tokens: int = option(8, "tokens per generated answer.", minimum=1, http_limit=512)
    judge_model: str | None = option(None, "an OpenAI-compatible model that judges the greedy answer (its key "
                                           "from the environment).", exposure=SERVED_MODEL, metavar="MODEL")
    judge_base_url: str | None = option(None, "the judge's endpoint (default the API's own).", exposure=URL,
                                        metavar="URL")
    bertscore_model: str | None = option(None, "a local encoder folder for BERT-score (not asked without it).",
                                         exposure=LOCAL, metavar="DIR")
    bertscore_layers: int | None = option(None, "the encoder's layer for BERT-score (needed for a folder).",
                                          minimum=0)
    karr: bool = option(False, "also measure KaRR.")
    karr_samples: int = option(4, "KaRR: subjects and relations sampled per fact.", minimum=1, http_limit=100)
    karr_threshold: float = option(22.0, "KaRR: a fact is known above this score.", minimum=0)
    karr_probability: str = option("per-token", "KaRR: probabilities per token (the authors') or joint.",
                                   choices=KARR_PROBABILITIES)


class Baselines(Method):
    name = "baselines"
    summary = ("probability, Precision@n, ROUGE-L, KaRR, BERT-score (option bertscore_model) and an LLM judge "
               "(options judge_model, judge_base_url)")
    kinds = ("distractor", "kdf", "icl-mc")
    reads = ("relation", "subject_label", "object", "object_label", "gold")
    aggregate_extra = staticmethod(baseline_measures)
    report_sections = (BASELINE_MEASURES,)
    Options = BaselinesOptions

    @classmethod
    def headline(cls, aggregate: dict, probes: Path) -> str:
        """Probability, Precision@n, ROUGE-L, BERT-score and KaRR, those the run has; BERT-score
        not asked when the run named no encoder."""
        b = aggregate.get("baselines")
        if not isinstance(b, dict):  # no records: what every method has
            return super().headline(aggregate, probes)
        text = " ".join(f"{label} {headline_number(b.get(key))}{headline_interval(b.get(key + '_interval'))}"
                        for key, label in (("probability", "probability"), ("precision_at_n", "Precision@n"),
                                           ("rouge_l", "ROUGE-L"), ("bertscore", "BERT-score"), ("karr", "KaRR"),
                                           ("karr_known", "KaRR known")) if b.get(key) is not None)
        if b.get("bertscore") is None and "bertscore" in b:
            text += " BERT-score not asked (bertscore_model)"
        return text

    @classmethod
    def check(cls, options: BaselinesOptions) -> None:
        if options.bertscore_model is not None and not Path(options.bertscore_model).is_dir():
            # a hub name would be fetched from the network; the encoder is a folder here
            raise OptionError("bertscore_model", f"method baselines: option bertscore_model: no encoder folder at "
                                                 f"{options.bertscore_model}")
        if options.candidates == "beam" and options.beams < options.n:
            raise OptionError("beams", f"method baselines: option beams: Precision@{options.n} needs beams >= n "
                                       f"(beams={options.beams})")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.templates = load_templates()
        self.karr = KarrAsker(self.templates, self.context.tests, self.context.rng, self.options["clozes"],
                              self.options["karr_samples"], self.options["karr_probability"]) \
            if self.options["karr"] else None
        self.bertscore = BertScoreModel(self.options["bertscore_model"], self.options["bertscore_layers"]) \
            if self.options["bertscore_model"] else None
        self.judge = None
        if self.options["judge_model"]:
            from ..scoring.openai_api import OpenAIScorer

            self.judge = OpenAIScorer(self.options["judge_model"], base_url=self.options["judge_base_url"], chat=True)

    def _clozes(self, item: dict) -> tuple[list[str], str]:
        """The first `clozes` object-final clozes with the subject filled in, and the question."""
        entry = self.templates.get(item["relation"])
        clozes = entry.object_final_clozes() if entry else ()
        if not clozes:
            raise ValueError(f"{item['id']}: no object-final cloze template for {item['relation']}")
        question = entry.question()
        return ([prompt_before_object(c, item["subject_label"]) for c in clozes[: self.options["clozes"]]],
                question.replace("[X]", item["subject_label"]))

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        prompts = [self._clozes(i) for i in items]
        max_tokens = self.options["max_tokens"]
        greedy = scorer.generate([GenerateRequest(c[0], max_tokens=max_tokens, stop=STOP) for c, _ in prompts])
        if self.options["candidates"] == "beam":
            beams = self.options["beams"]
            flat = scorer.generate([GenerateRequest(cloze, max_tokens=max_tokens, stop=STOP, beams=beams, n=beams)
                                    for clozes, _ in prompts for cloze in clozes])
            found = iter(flat)
            candidates = [[list(next(found).texts) for _ in clozes] for clozes, _ in prompts]
        else:
            sampled = scorer.generate([GenerateRequest(c[0], max_tokens=max_tokens, stop=STOP, temperature=1.0,
                                                       n=self.options["samples"], seed=self.context.seed)
                                       for c, _ in prompts])
            candidates = [[list(s.texts)] for s in sampled]
        verdicts = [None] * len(items)
        if self.judge is not None:
            asks = [GenerateRequest(JUDGE_PROMPT.format(question=q, gold="; ".join(i["gold"]), answer=g.texts[0].strip()),
                                    max_tokens=3) for i, (_, q), g in zip(items, prompts, greedy)]
            verdicts = [a.texts[0].strip().lower().startswith("yes") for a in self.judge.generate(asks)]
        records = []
        probabilities = self._probabilities(scorer, items, [clozes for clozes, _ in prompts])
        bert = best_per_cloze(self.bertscore, [i["gold"] for i in items], candidates) \
            if self.bertscore is not None else [None] * len(items)
        plans = [self.karr.plan(i) for i in items] if self.karr is not None else []
        karrs = iter(self.karr.score(scorer, plans) if plans else ())
        for item, (clozes, _), first, found, verdict, per_cloze, bertscore, plan in zip(
                items, prompts, greedy, candidates, verdicts, probabilities, bert, plans or [None] * len(items)):
            answer = first.texts[0].strip()
            probability = math.fsum(per_cloze) / len(per_cloze)
            precision, rouge = self._generation_scores(item, answer, found)
            karr = {}
            if plan is not None:
                k = next(karrs)
                karr = {"karr": k.karr, "karr_r": k.karr_r, "karr_s": k.karr_s,
                        "karr_known": k.known(self.options["karr_threshold"]),
                        "karr_subjects": list(plan.subjects),
                        "karr_relations": dict(zip(plan.relations, plan.relation_prompts))}
            extra = {"bertscore": bertscore} if self.bertscore is not None else {}
            records.append(base_record(
                item, cloze=clozes[0], clozes=clozes[:len(per_cloze)], answer=answer, probability=probability,
                probability_per_cloze=per_cloze,
                correct=measures.probability_known(probability, self.options["threshold"]),
                candidates=found, precision_at_n=precision, rouge_l=rouge, judge=verdict, **extra, **karr))
        return records

    def _probabilities(self, scorer, items: Sequence[dict], clozes: Sequence[list[str]]) -> list[list[float]]:
        """Per item, per cloze scored, the probability of the object (see the module docstring):
        one label-path request per cloze, all of them in one call."""
        asked = []  # per item: [(request, the entity of each name)] per cloze
        for item, texts in zip(items, clozes):
            if self.options["probability"] == "label":
                names, texts = [item["object_label"]], texts[:1]
            else:
                names = all_names(item["object_label"], item.get("object_names") or item.get("gold"))
            asked.append([label_request(text, {item["object"]: names}, self.options["probability_eos"])
                          for text in texts])
        answers = iter(scorer.label_paths([request for per_item in asked for request, _ in per_item]))
        # names that tokenize alike count once (log_plausibility)
        return [[math.exp(log_plausibility(owners, next(answers))[item["object"]]) for _, owners in per_item]
                for item, per_item in zip(items, asked)]

    def _generation_scores(self, item: dict, answer: str, found: list[list[str]]) -> tuple[float, float]:
        """Precision@n and ROUGE-L from the candidates of each cloze, averaged over the clozes."""
        gold = {answer_key(g) for g in item["gold"]}
        n = self.options["n"]

        def rouge(text: str) -> float:  # the best over the gold names, aliases included
            return max(measures.rouge_l(answer_key(text), answer_key(g)) for g in item["gold"])

        if self.options["candidates"] == "sample":
            counts = Counter(answer_key(t) for t in found[0])
            ranked = [a for a, _ in sorted(counts.items(), key=lambda kv: -kv[1])]  # stable: first seen wins ties
            return measures.precision_at_n(ranked, gold, n), rouge(answer)
        precisions, rouges = [], []
        for texts in found:
            # Beams that differ only after a stop string, or in case, are one answer: rank distinct ones.
            ranked = list(dict.fromkeys(answer_key(t) for t in texts))
            precisions.append(measures.precision_at_n(ranked, gold, n))
            rouges.append(max(rouge(t) for t in texts) if texts else 0.0)
        return math.fsum(precisions) / len(precisions), math.fsum(rouges) / len(rouges)
