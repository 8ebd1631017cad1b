"""The knowledge measures the distractor paper compares against (Ammar Khodja et al. 2025, Table
2, seed 004 = ../shared/papers/004_9e1422d598bbbe4c.txt:201-207): probability, Precision@n,
ROUGE-L, BERT-score (with a local encoder, bertscore.py), KaRR (karr.py) and an optional LLM
judge (judge.py), taken on the item's own `clozes` when it has them, else on the relation's
object-final cloze templates (probes/methods/clozes.py), and averaged over them (KaRR asks its
own, karr.py).

Every measure compares with o's own names Λ(o) (004:203-207; label then aliases, the item's
`object_names`; a probe set without them gives the label alone), not with the names of every
true object of (s, r): a beam naming another capital of a country with two does not count
(`gold=all-objects` was factprobe's before issue 38). The probability is the paper's sum of
P(name | cloze) over those names, without the end-of-sequence token the distractor measure's
plausibility appends (`probability_eos=true`); `correct` is its verdict. Precision@n is over the
n most probable next tokens, as Table 2 takes top-k over the vocabulary V (004:203, 209) and
004:47 says it is "limited to single-token answers" (`precision=beams`: the first n distinct
answers, factprobe's before). Answers are the paper's beams B(c), uncut: the paper sets no length
and no stop string, so a beam ends at the end-of-sequence token or after the longest of the names
compared plus 5 tokens, the length the authors' released code gives its beams (`answer_cut=
punctuation max_tokens=8` was factprobe's before: "Washington, D.C." read "Washington").
Each measure's definitions and options: docs/methods.md.
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
from ..scoring.requests import GenerateRequest, LabelPathRequest
from ..templates import load_templates
from .base import Method, OptionError, answer_key, base_record, headline_interval, headline_number
from .bertscore import SCORE, BertScoreModel, bests_per_cloze
from .clozes import cloze_definition, item_clozes
from .distractor import all_names, label_request, log_plausibility
from .judge import JUDGE_PROMPTS, Judge
from .karr import PROBABILITIES as KARR_PROBABILITIES, KarrAsker
from ..measures.accuracy import interval

PROBABILITY_DEFINITIONS = ("all-names", "label")  # the paper's first
CANDIDATE_DEFINITIONS = ("beam", "sample")
GOLD_DEFINITIONS = ("object", "all-objects")  # the paper's first
PRECISION_DEFINITIONS = ("tokens", "beams")  # the paper's first
ANSWER_CUTS = ("none", "punctuation")  # the paper's first
# The cloze is continued as it ends, without a trailing space: BPE vocabularies put the space
# inside the next word's token (" Paris"), so after "is " SmolLM2 answers "21st-century Paris" or
# digits where after "is" it answers " Paris". Answers are stripped.
STOP = ("\n", ".", ",")  # answer_cut=punctuation
NAME_MARGIN = 5  # max_tokens unset: a beam may run this many tokens past the longest name


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
    # Runs from before an option existed used what factprobe did then: the label, EOS appended;
    # every true object's names, the first n distinct answers, answers cut at 8 tokens and at
    # "\n", "." and ",". BERT-score, KaRR and the judge are named only where the run asked for them.
    definitions = {"probability": options.get("probability", "label"),
                   "probability_eos": options.get("probability_eos", True),
                   "gold": options.get("gold", "all-objects"), "precision": options.get("precision", "beams"),
                   "answer_cut": options.get("answer_cut", "punctuation"),
                   "max_tokens": options.get("max_tokens", 8),  # None: the longest name + NAME_MARGIN
                   "cloze_source": cloze_definition(records),
                   # what a fact's `correct` (and so `probability_known`) needs: factprobe's verdict
                   "threshold": options.get("threshold", BaselinesOptions.threshold)}
    for name, definition in (("bertscore", bertscore_definition(options)), ("karr", karr_definition(options)),
                             ("judge", judge_definition(options))):
        if definition is not None:
            definitions[name] = definition
    return {"baselines": out, "definitions": definitions}


def bertscore_definition(options: dict) -> dict | None:
    """What BERT-score was (None: not asked, no `bertscore_model`)."""
    if not options.get("bertscore_model"):
        return None
    return {"model": str(options["bertscore_model"]), "layers": options.get("bertscore_layers"), "score": SCORE,
            "idf": False, "rescaled": False, "names": options.get("gold", "all-objects"),
            "candidates": options.get("candidates", "beam")}


def judge_definition(options: dict) -> dict | None:
    """What the LLM judge was (None: not asked, no `judge_model`)."""
    if not options.get("judge_model"):
        return None
    prompt = options.get("judge_prompt", "yes-no")
    answers = ("each answer of each cloze; per cloze the best verdict, then the mean over the clozes"
               if prompt == "paper" else "the greedy answer to the first cloze")
    return {"model": str(options["judge_model"]), "prompt": prompt, "names": options.get("gold", "all-objects"),
            "answers": answers}


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
        threshold = _threshold(run)
        rows.append((run.rid, *(with_interval(b.get(k), b.get(f"{k}_interval")) if b.get(k) is not None
                                else ("not asked" if k == "bertscore" and not asked else "n/a")
                                for k in BASELINE_COLUMNS),
                     with_interval(b.get("probability_known"), b.get("probability_known_interval"))
                     + f" (> {threshold:g})"))
    if not rows:
        return []
    blocks = [Heading("Distractor paper's baselines (means over facts)", 3),
              table(("Run", "Probability", "Precision@n", "ROUGE-L", "BERT-score", "KaRR", "KaRR known",
                     "Judge", "Facts with Probability > threshold"), rows),
              Text("Probability, Precision@n, ROUGE-L, BERT-score and the judge are the distractor paper's "
                   "baselines (004:201-207), KaRR and its verdict KaRR's own (Dong et al. 2023), each the mean over "
                   "facts of the fact's mean over its clozes. The last column is factprobe's verdict, no paper's: "
                   "the share of facts whose Probability is above `threshold` (in brackets), which is what the "
                   "run's `correct` and so its accuracy in the bucket, frequency and relation tables are.")]
    if unasked:
        blocks.append(Text(f"BERT-score was not asked in {', '.join(unasked)}: it needs a local encoder "
                           "(--option bertscore_model=PATH --option bertscore_layers=N)."))
    return blocks


def _threshold(run: ReportRun) -> float:
    """The Probability a fact's verdict needed: the aggregate's, else run.json's option (an
    aggregate from before issue 45 did not record it), else the default, as the run then had."""
    recorded = (run.aggregate.get("definitions") or {}).get("threshold")
    if isinstance(recorded, (int, float)):
        return recorded
    given = ((getattr(run, "config", None) or {}).get("options") or {}).get("threshold")
    return given if isinstance(given, (int, float)) else BaselinesOptions.threshold


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
    clozes: int = option(5, "the item's first N object-final clozes (its `clozes`, else its relation's templates), "
                            "each measure averaged over them.", minimum=1, http_limit=100)
    beams: int = option(10, "candidates=beam: beams per cloze (precision=beams: at least n).", minimum=1,
                        http_limit=64)
    samples: int = option(10, "candidates=sample: sampled answers.", minimum=1, http_limit=200)
    n: int = option(3, "Precision@n's n.", minimum=1)
    gold: str = option("object", "answers are compared with o's own names (the paper's) or with the names of "
                                 "every true object of (s, r) (factprobe's before).", choices=GOLD_DEFINITIONS)
    precision: str = option("tokens", "Precision@n over the n most probable next tokens (the paper's; one step "
                                      "of beam search, a local model) or over the first n distinct answers "
                                      "(factprobe's before; with candidates=sample on a served model).",
                            choices=PRECISION_DEFINITIONS)
    answer_cut: str = option("none", "answers end at the end-of-sequence token or max_tokens (the paper's), or "
                                     "also at the first newline, '.' or ',' (factprobe's before).",
                             choices=ANSWER_CUTS)
    max_tokens: int | None = option(None, "tokens per generated answer [default: the longest of the names "
                                          "compared, plus 5; factprobe's before: 8].", minimum=1, http_limit=512)
    judge_model: str | None = option(None, "an OpenAI-compatible chat model that judges every beam with the "
                                           "paper's prompt (its key from the environment).", exposure=SERVED_MODEL,
                                     metavar="MODEL")
    judge_base_url: str | None = option(None, "the judge's endpoint (default the API's own).", exposure=URL,
                                        metavar="URL")
    judge_prompt: str = option("paper", "the paper's prompt (Appendix D) on each beam, the best per cloze, the "
                                        "mean over clozes; or yes-no: factprobe's earlier question on the greedy "
                                        "answer.", choices=JUDGE_PROMPTS)
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
        if options.precision == "beams" and options.candidates == "beam" and options.beams < options.n:
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
        self.judge = Judge(self.options["judge_model"], self.options["judge_base_url"],
                           self.options["judge_prompt"]) if self.options["judge_model"] else None

    def _clozes(self, item: dict) -> tuple[list[str], str, str]:
        """The first `clozes` object-final clozes with the subject filled in (the item's own, else
        its relation's templates: probes/methods/clozes.py), the question, and where they came from."""
        found = item_clozes(item, self.templates, self.options["clozes"])
        return found.prompts(item["subject_label"]), found.question.replace("[X]", item["subject_label"]), found.source

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        prompts = [self._clozes(i) for i in items]
        clozes = [c for c, _, _ in prompts]
        names = [compared_names(i, self.options["gold"]) for i in items]
        lengths = self._answer_lengths(scorer, clozes, names)
        greedy = [g.texts[0].strip() for g in scorer.generate([self._ask(c[0], t) for c, t in zip(clozes, lengths)])]
        candidates = self._candidates(scorer, clozes, lengths)
        tokens = self._next_tokens(scorer, clozes) if self.options["precision"] == "tokens" else [None] * len(items)
        judged = self._judged([q for _, q, _ in prompts], clozes, names, greedy, candidates)
        probabilities = self._probabilities(scorer, items, clozes)
        bert = bests_per_cloze(self.bertscore, names, candidates) \
            if self.bertscore is not None else [None] * len(items)
        plans = [self.karr.plan(i) for i in items] if self.karr is not None else []
        karrs = iter(self.karr.score(scorer, plans) if plans else ())
        records = []
        for item, texts, answer, found, top, judge, per_cloze, bertscore, plan, length, compared, source in zip(
                items, clozes, greedy, candidates, tokens, judged, probabilities, bert, plans or [None] * len(items),
                lengths, names, [s for _, _, s in prompts]):
            probability = math.fsum(per_cloze) / len(per_cloze)
            karr = {}
            if plan is not None:
                k = next(karrs)
                karr = {"karr": k.karr, "karr_r": k.karr_r, "karr_s": k.karr_s,
                        "karr_known": k.known(self.options["karr_threshold"]),
                        "karr_subjects": list(plan.subjects),
                        "karr_relations": dict(zip(plan.relations, plan.relation_prompts))}
            extra = {"next_tokens": top} if top is not None else {}
            records.append(base_record(
                item, cloze=texts[0], clozes=texts[:len(per_cloze)], cloze_source=source, names=compared,
                answer_tokens=length,
                answer=answer, probability=probability, probability_per_cloze=per_cloze,
                correct=measures.probability_known(probability, self.options["threshold"]),
                candidates=found, **self._measured(compared, answer, found, top, bertscore), **judge, **extra,
                **karr))
        return records

    def _measured(self, names: list[str], answer: str, found: list[list[str]], top: list[list[str]] | None,
                  bertscore: list[float] | None) -> dict:
        """Precision@n, ROUGE-L and BERT-score of one fact: the mean over its clozes, and each
        per cloze (`KEY_per_cloze`: `factprobe assess` varies the number of clozes, 004:257)."""
        n = self.options["n"]
        if top is not None:
            precision = precision_at_n(names, top, n)
        elif self.options["candidates"] == "sample":  # ranked by how often each answer was sampled
            counts = Counter(answer_key(t) for t in found[0])
            precision = precision_at_n(names, [[a for a, _ in counts.most_common()]], n)
        else:
            precision = precision_at_n(names, found, n)
        # the sampled answers' ROUGE-L is the greedy answer's (factprobe's before issue 20)
        per = {"precision_at_n": precision,
               "rouge_l": best_rouge(names, [[answer]] if self.options["candidates"] == "sample" else found)}
        if bertscore is not None:
            per["bertscore"] = bertscore
        return {**{k: mean(v) for k, v in per.items()}, **{f"{k}_per_cloze": v for k, v in per.items()}}

    def _ask(self, prompt: str, length: int, **settings) -> GenerateRequest:
        """An answer to `prompt`: at most `length` tokens, cut at punctuation only where asked."""
        stop = STOP if self.options["answer_cut"] == "punctuation" else ()
        return GenerateRequest(prompt, max_tokens=length, stop=stop, **settings)

    def _answer_lengths(self, scorer, clozes: Sequence[list[str]], names: Sequence[list[str]]) -> list[int]:
        """Per item, the tokens an answer may take: `max_tokens`, else the longest of the names
        compared in the model's own tokens (" " + name, as after the cloze) plus NAME_MARGIN."""
        if self.options["max_tokens"] is not None:
            return [self.options["max_tokens"]] * len(clozes)
        paths = scorer.label_paths([LabelPathRequest(texts[0], tuple(n), eos=False) for texts, n in zip(clozes, names)])
        return [max(p.n_tokens for p in found) + NAME_MARGIN for found in paths]

    def _candidates(self, scorer, clozes: Sequence[list[str]], lengths: Sequence[int]) -> list[list[list[str]]]:
        """Per item, per cloze, its answers: the beams B(c) of each cloze (the paper's), or the
        samples of the first cloze."""
        if self.options["candidates"] == "sample":
            sampled = scorer.generate([self._ask(texts[0], length, temperature=1.0, n=self.options["samples"],
                                                 seed=self.context.seed) for texts, length in zip(clozes, lengths)])
            return [[list(s.texts)] for s in sampled]
        beams = self.options["beams"]
        found = iter(scorer.generate([self._ask(cloze, length, beams=beams, n=beams)
                                      for texts, length in zip(clozes, lengths) for cloze in texts]))
        return [[list(next(found).texts) for _ in texts] for texts in clozes]

    def _next_tokens(self, scorer, clozes: Sequence[list[str]]) -> list[list[list[str]]]:
        """Per item, per cloze, the n most probable next tokens, best first: one step of beam
        search with n beams (an end-of-sequence token is an empty answer)."""
        n = self.options["n"]
        found = iter(scorer.generate([GenerateRequest(cloze, max_tokens=1, beams=n, n=n)
                                      for texts in clozes for cloze in texts]))
        return [[list(next(found).texts) for _ in texts] for texts in clozes]

    def _judged(self, questions: Sequence[str], clozes: Sequence[list[str]], names: Sequence[list[str]],
                greedy: Sequence[str], candidates: Sequence[list[list[str]]]) -> list[dict]:
        """Per item, the judge's record fields (none when no judge was asked)."""
        if self.judge is None:
            return [{"judge": None}] * len(clozes)
        if self.judge.prompt == "yes-no":
            return [{"judge": v} for v in self.judge.yes_no(questions, names, greedy)]
        return [{"judge": j.score, "judge_per_cloze": j.per_cloze, "judge_verdicts": [list(v) for v in j.verdicts],
                 "judge_replies": [list(r) for r in j.replies]} for j in self.judge.beams(clozes, names, candidates)]

    def _probabilities(self, scorer, items: Sequence[dict], clozes: Sequence[list[str]]) -> list[list[float]]:
        """Per item, per cloze scored, the probability of the object (see the module docstring):
        one label-path request per cloze, all of them in one call."""
        asked = []  # per item: [(request, the entity of each name)] per cloze
        for item, texts in zip(items, clozes):
            if self.options["probability"] == "label":
                names, texts = [item["object_label"]], texts[:1]
            else:  # o's names; every true object's where an older set has no object_names and gold=all-objects
                more = item.get("object_names") or (item.get("gold") if self.options["gold"] == "all-objects" else None)
                names = all_names(item["object_label"], more)
            asked.append([label_request(text, {item["object"]: names}, self.options["probability_eos"])
                          for text in texts])
        answers = iter(scorer.label_paths([request for per_item in asked for request, _ in per_item]))
        # names that tokenize alike count once (log_plausibility)
        return [[math.exp(log_plausibility(owners, next(answers))[item["object"]]) for _, owners in per_item]
                for item, per_item in zip(items, asked)]


def compared_names(item: dict, gold: str) -> list[str]:
    """The names answers are compared with: o's own, Λ(o) (label, then the item's `object_names`),
    or with gold=all-objects the names of every true object of (s, r) (the item's `gold`)."""
    if gold == "all-objects":
        return all_names(None, item.get("gold"))
    return all_names(item["object_label"], item.get("object_names"))


def precision_at_n(names: Sequence[str], ranked: Sequence[Sequence[str]], n: int) -> list[float]:
    """Per cloze 1.0 when one of its first n distinct answers (compared by `answer_key`) is one of
    the names, else 0.0. Answers that differ only in case or surrounding punctuation are one."""
    keys = {answer_key(name) for name in names}
    return [measures.precision_at_n(list(dict.fromkeys(answer_key(t) for t in texts)), keys, n) for texts in ranked]


def best_rouge(names: Sequence[str], answers: Sequence[Sequence[str]]) -> list[float]:
    """Per cloze the best ROUGE-L over (name, answer) pairs (0 without answers)."""
    return [max((measures.rouge_l(answer_key(a), answer_key(name)) for a in texts for name in names), default=0.0)
            for texts in answers]


def mean(values: Sequence[float]) -> float:
    """The mean over the clozes (Table 2's 1/|C| sum over c)."""
    return math.fsum(values) / len(values)
