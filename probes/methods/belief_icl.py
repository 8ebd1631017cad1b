"""BELIEF-ICL on causal LMs (Zhao et al.): the model fills a cloze written as a Q/A exchange,
after an instruction and, per setting (zero-shot, x-random, x-relation, x-template), a few solved
examples answered as the paper's appendix E writes them ("A: Nanjing."). The greedy answer runs to
the end of its line (no token cap, `max_tokens=N` sets one) and is correct when it contains a
gold name; its confidence is the share of sampled answers that agree with it. Prompt layout,
options and the (top-1 only) bias level: docs/design-notes.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .. import measures
from ..declare import option
from ..answers import matches_any, same_answer
from ..measures import BIAS_DEFINITIONS, PAPER_ACC_DRAWS, answer_key
from ..scoring.requests import GenerateRequest
from .base import Method, OptionError, base_record, headline_interval, headline_number
from .belief import check_token
from ..measures.belief_records import belief_definitions, bias_levels, overconfidence_interval
from .belief_sections import BELIEF_DEFINITIONS
from ..measures.accuracy import accuracy_breakdown, interval

SETTINGS = ("zero-shot", "x-random", "x-relation", "x-template")
INSTRUCTION = "Predict the [MASK] in each sentence in one word."
MASK = "[MASK]"
STOP = ("\n",)  # an answer is one line; the next "Q:" would follow it
# BELIEF-ICL sets no token limit ("LLMs generate responses without a token limit",
# 000_d5e47173cc9830b1.txt:98): with `max_tokens` None an answer ends with its line, and this
# guard only stops a line that never ends (such an answer counts in `answers_cut`).
LINE_GUARD = 64


@dataclass(frozen=True)
class BeliefICLOptions:
    settings: tuple[str, ...] = option(SETTINGS, "the ICL settings asked, a list or comma-separated ('all': every "
                                                 "one).", choices=(*SETTINGS, "all"), comma=True, minimum=1)
    samples: int = option(100, "sampled answers per item and setting behind its confidence.", minimum=1,
                          http_limit=1000)
    max_tokens: int | None = option(None, "cap greedy answers at N tokens (default: to the end of the line, "
                                          "the paper's).", minimum=1, http_limit=512)
    temperature: float = option(1.0, "the samples' temperature (above 0).", minimum=0)
    instruction: str = option(INSTRUCTION, "the line before the examples.")
    content_free: bool = option(False, "also answer each prompt with a content-free subject (the bias level).")
    content_free_token: str = option("N/A", "the content-free subject (not blank).")
    bias: str = option("top1", "the bias level; only top1 (agreement with the content-free answer) for decoders.",
                       choices=BIAS_DEFINITIONS)
    acc_draws: int = option(PAPER_ACC_DRAWS, "one-template-per-fact draws behind Acc@1.", minimum=1,
                            http_limit=1_000_000)


class BeliefICL(Method):
    name = "belief-icl"
    summary = "causal-LM Q/A answers per ICL setting, confidence from samples (options settings, samples)"
    kinds = ("belief-icl",)
    reads = ("prompt", "gold", "demonstrations")
    # BELIEF's definitions; `by_setting` gets the report's generic breakdown table
    report_sections = (BELIEF_DEFINITIONS,)
    Options = BeliefICLOptions

    @staticmethod
    def aggregate_extra(records: Sequence[dict], options: dict) -> dict:
        """Per ICL setting (`by_setting`): accuracy, Acc@1 over `acc_draws` one-prompt-per-unit
        draws, Consist (pairs of a unit's answers that are the same answer by lemmas,
        probes/answers.py), Ovconf and reliability bins (10, or one per answer when fewer),
        one-word ratio, the greedy answers the token limit cut (`answers_cut`), relation and
        bucket breakdowns and the bias level; a record's own `correct` is the share of its
        settings that are correct. `definitions` names the unit, draws, bias and `max_tokens`
        (None: answers to the end of the line, the paper's)."""
        settings = list(dict.fromkeys(s for r in records for s in r["by_setting"]))
        by_setting = {}
        for setting in settings:
            # One flat row per (item, setting): the setting's answer over the item's fields.
            rows = [{**r, **r["by_setting"][setting]} for r in records if setting in r["by_setting"]]
            by_setting[setting] = _setting_measures(rows, options.get("acc_draws", PAPER_ACC_DRAWS))
        # The bias is the top-1 agreement share (bias_levels, per setting); the content-free
        # entropy is not computed for decoders yet.
        definitions = {**belief_definitions(records, options, options.get("bias", "top1")), "coverage_maximum": None,
                       "max_tokens": options.get("max_tokens")}
        return {"by_setting": by_setting, "definitions": definitions}

    @classmethod
    def headline(cls, aggregate: dict, probes: Path) -> str:
        """Acc@1, Consist and Ovconf per setting."""
        if not isinstance(aggregate.get("by_setting"), dict):  # no records: what every method has
            return super().headline(aggregate, probes)
        return "; ".join(f"{name} Acc@1 {headline_number(v.get('accuracy'))}"
                         f"{headline_interval(v.get('acc_at_1_interval'))} Consist {headline_number(v.get('consistency'))}"
                         f" Ovconf {headline_number(v.get('overconfidence'))}"
                         f"{headline_interval(v.get('overconfidence_interval'))}"
                         for name, v in aggregate["by_setting"].items())

    @classmethod
    def check(cls, options: BeliefICLOptions) -> None:
        if options.bias != "top1":
            raise OptionError("bias", "method belief-icl: option bias: only top1 (the share of answers equal to the "
                                      "content-free answer) is implemented for decoders; the paper's entropy bias "
                                      "is there for masked LMs (--method belief)")
        if not options.temperature > 0:
            raise OptionError("temperature", "method belief-icl: option temperature: the samples' temperature must "
                                             "be above 0 (0 would repeat the greedy answer)")
        check_token(cls.name, options.content_free_token)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.options["settings"] = _settings(self.options["settings"])
        cap = self.options["max_tokens"]
        self.tokens = LINE_GUARD if cap is None else cap

    def prompt(self, item: dict, setting: str, subject: str | None = None) -> str:
        """The instruction, one Q/A pair per demonstration, then the item's question (with its
        template filled with `subject` instead, when given: the content-free question)."""
        demos = item["demonstrations"].get(setting) if setting != "zero-shot" else []
        if demos is None:
            raise ValueError(f"{item['id']}: no {setting} demonstrations in the item")
        lines = [self.options["instruction"]]
        for demo in demos:
            if "subject_label" not in demo or "object_label" not in demo:
                raise ValueError(f"{item['id']}: a demonstration lacks subject_label/object_label; rebuild the "
                                 "probe set with `factprobe probeset build --kind belief-icl`")
            lines += [f"Q: {masked(demo['template'], demo['subject_label'])}", f"A: {answered(demo['object_label'])}"]
        if item["prompt"].count("[Y]") != 1:
            raise ValueError(f"{item['id']}: prompt {item['prompt']!r} needs exactly one [Y] for the mask")
        if subject is not None and "template" not in item:
            raise ValueError(f"{item['id']}: content_free needs the item's template (rebuild the probe set)")
        question = item["prompt"].replace("[Y]", MASK) if subject is None else masked(item["template"], subject)
        lines += [f"Q: {question}", "A:"]
        return "\n".join(lines)

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        settings, n = self.options["settings"], self.options["samples"]
        requests = []
        for item in items:
            for setting in settings:
                text = self.prompt(item, setting)
                seed = self.context.rng("belief-icl", item["id"], setting).randrange(2**31)
                requests.append(GenerateRequest(text, max_tokens=self.tokens, stop=STOP))
                requests.append(GenerateRequest(text, max_tokens=self.tokens,
                                                temperature=float(self.options["temperature"]), n=n, stop=STOP,
                                                seed=seed))
        generations = iter(scorer.generate(requests) if requests else [])
        free = self._content_free(scorer, items) if self.options["content_free"] else None
        records = []
        for item in items:
            by_setting = {}
            for setting in settings:
                greedy, sampled = next(generations), next(generations)
                answer = greedy.texts[0].strip()
                agreeing = sum(same_answer(text, answer) for text in sampled.texts)
                by_setting[setting] = {
                    "prediction": answer, "correct": matches_any(answer, item["gold"]),
                    "confidence": agreeing / len(sampled.texts), "agreeing": agreeing,
                    "one_word": len(answer.split()) == 1,
                    "finish_reason": greedy.finish_reasons[0] if greedy.finish_reasons else None}
                if free is not None:
                    by_setting[setting]["content_free_prediction"] = free[(item["id"], setting)]
            share = sum(r["correct"] for r in by_setting.values()) / len(by_setting)
            # the unit and subject name of items that say (sets built before them are per fact, label only)
            named = {key: item[key] for key in ("unit", "subject_name") if key in item}
            records.append(base_record(item, template_id=item.get("template_id"), **named, gold=list(item["gold"]),
                                       by_setting=by_setting, correct=share))
        return records

    def _content_free(self, scorer, items: Sequence[dict]) -> dict[tuple[str, str], str]:
        """(item id, setting) -> the greedy answer with the content-free subject; each distinct
        prompt is generated once."""
        texts = {(item["id"], setting): self.prompt(item, setting, self.options["content_free_token"])
                 for item in items for setting in self.options["settings"]}
        unique = list(dict.fromkeys(texts.values()))
        requests = [GenerateRequest(text, max_tokens=self.tokens, stop=STOP) for text in unique]
        answers = dict(zip(unique, (g.texts[0].strip() for g in scorer.generate(requests)))) if requests else {}
        return {key: answers[text] for key, text in texts.items()}


def _setting_measures(rows: list[dict], draws: int) -> dict:
    per_fact: dict[str, list[dict]] = {}
    for row in rows:
        per_fact.setdefault(row.get("fact") or row["id"], []).append(row)
    acc = measures.acc_at_1([[bool(r["correct"]) for r in group] for group in per_fact.values()], draws=draws)
    shares = []
    for group in per_fact.values():
        answers = [r["prediction"] for r in group]
        pairs = [(a, b) for k, a in enumerate(answers) for b in answers[k + 1:]]
        if pairs:
            shares.append(sum(same_answer(a, b) for a, b in pairs) / len(pairs))
    confidence = [r["confidence"] for r in rows]
    correct = [bool(r["correct"]) for r in rows]
    bins = min(10, len(rows))
    facts = [([r["confidence"] for r in g], [bool(r["correct"]) for r in g]) for g in per_fact.values()]
    return {"items": len(rows), "accuracy": sum(correct) / len(correct),
            "accuracy_interval": interval([float(c) for c in correct]),
            "acc_at_1_interval": interval([sum(c) / len(c) for _, c in facts]),
            "consistency_interval": interval(shares),
            "overconfidence_interval": overconfidence_interval(facts, bins),
            "acc_at_1": {"mean": acc.mean, "sd": acc.sd, "min": acc.min, "max": acc.max, "range": acc.range,
                         "draws": acc.draws},
            "consistency": sum(shares) / len(shares) if shares else None,  # None: no fact has two templates
            "overconfidence": measures.overconfidence(confidence, correct, bins),
            "mean_confidence": sum(confidence) / len(confidence),
            "one_word_ratio": measures.one_word_ratio([r["prediction"] for r in rows]),
            # greedy answers stopped by the token limit rather than by their line's end
            "answers_cut": sum(r.get("finish_reason") == "length" for r in rows),
            "reliability": [{"confidence": b.confidence, "accuracy": b.accuracy, "count": b.count}
                            for b in measures.reliability_bins(confidence, correct, bins)],
            "by_relation": accuracy_breakdown(rows, "relation"), "by_bucket": accuracy_breakdown(rows, "bucket"),
            **bias_levels([(answer_key(r["prediction"]), _key(r.get("content_free_prediction")), r.get("relation"))
                           for r in rows])}


def _key(answer: str | None) -> str | None:
    return None if answer is None else answer_key(answer)


def answered(label: str) -> str:
    """A demonstration's answer as the paper's examples end it, with a period ("A: Nanjing.",
    000_d5e47173cc9830b1.txt:531); a label already ending in one keeps it ("D.C.")."""
    return label if label.endswith(".") else label + "."


def masked(template: str, subject_label: str) -> str:
    """The cloze with the subject filled in and the mask where the object goes. The template is
    split at [Y] first, so a subject label that happens to contain "[Y]" stays text."""
    parts = template.split("[Y]")
    if len(parts) != 2:
        raise ValueError(f"{template!r} needs exactly one [Y] for the mask")
    return MASK.join(part.replace("[X]", subject_label) for part in parts)


def _settings(value: list[str]) -> list[str]:
    """The settings asked, each once in the order given; `all` stands for every one."""
    return list(SETTINGS) if "all" in value else list(dict.fromkeys(value))
