"""BELIEF-ICL on causal LMs (Zhao et al.): the model fills a cloze written as a Q/A exchange,
after an instruction and, per setting (zero-shot, x-random, x-relation, x-template), a few solved
examples answered as the paper's appendix E writes them ("A: Nanjing."); `prompt_style=qa` asks
question templates as questions (appendix D). It reads belief-icl sets and cloze sets (a MyriadLAMA
import: every prompt a question, demonstrations from the set's own items, belief_icl_questions.py).
The greedy answer runs to the end of its line (no token cap, `max_tokens=N` sets one) and is
correct when it contains a gold name; on the sampled prompts (belief_icl_sampling.py: one of each
of up to 10K pairs, the paper's) its confidence is the share of sampled answers that agree with it.
Prompt layout, options and the (top-1 only) bias level: docs/design/methods.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .. import measures
from ..declare import option
from ..measures.answers import answer_tokens, matches_any, same_answer
from ..measures import BIAS_DEFINITIONS, PAPER_ACC_DRAWS, answer_key
from ..scoring.requests import GenerateRequest
from .base import Method, OptionError, base_record, headline_interval, headline_number
from .belief import check_token, ovconf_ties_option
from ..measures.belief_records import belief_definitions, bias_levels, overconfidence_interval
from .belief_sections import BELIEF_DEFINITIONS
from ..measures.accuracy import accuracy_breakdown, interval
from .belief_icl_questions import MP, QA, QA_INSTRUCTION, STYLES, ClozePool, asked, check_qa, cloze_questions, \
    is_cloze, pair_key
from .belief_icl_sampling import ALL, PAPER_SAMPLE_PROMPTS, sampled_prompts

SETTINGS = ("zero-shot", "x-random", "x-relation", "x-template")
INSTRUCTION = "Predict the [MASK] in each sentence in one word."
MASK = "[MASK]"
STOP = ("\n",)  # an answer is one line; the next "Q:" would follow it
# BELIEF-ICL sets no token limit ("LLMs generate responses without a token limit",
# 000_d5e47173cc9830b1.txt:98): with `max_tokens` None an answer ends with its line, and this
# guard only stops a line that never ends (such an answer counts in `answers_cut`).
LINE_GUARD = 64
# An answer without words (an empty line, "...") against another answer: BELIEF's partial match
# (000:100-104) does not say; `disagree` reads it as no answer, which agrees with nothing;
# `agree` lets two such answers agree, as factprobe did before issue 45.
EMPTY_ANSWERS = ("disagree", "agree")


@dataclass(frozen=True)
class BeliefICLOptions:
    settings: tuple[str, ...] = option(SETTINGS, "the ICL settings asked, a list or comma-separated ('all': every "
                                                 "one).", choices=(*SETTINGS, "all"), comma=True, minimum=1)
    samples: int = option(100, "sampled answers per sampled prompt and setting behind its confidence.", minimum=1,
                          http_limit=1000)
    sample_prompts: int = option(PAPER_SAMPLE_PROMPTS, "prompts that get samples: one of each of up to N "
                                                       "subject-relation pairs drawn with the seed (the paper's "
                                                       "10K), or all.", minimum=1, choices=(ALL,))
    shots: int = option(4, "cloze sets: demonstrations per setting, drawn from the set's other subjects (a "
                           "belief-icl set carries its own).", minimum=0, http_limit=20)  # 000:519, X = 4
    prompt_style: str = option(MP, "mp: mask prediction (the paper's); qa: question templates asked as questions "
                                   "(appendix D).", choices=STYLES)
    max_tokens: int | None = option(None, "cap greedy answers at N tokens (default: to the end of the line, "
                                          "the paper's).", minimum=1, http_limit=512)
    temperature: float = option(1.0, "the samples' temperature (above 0).", minimum=0)
    instruction: str = option(INSTRUCTION, "the line before the examples (prompt_style=qa: QA's unless given).")
    content_free: bool = option(False, "also answer each prompt with a content-free subject (the bias level).")
    content_free_token: str = option("N/A", "the content-free subject (not blank).")
    bias: str = option("top1", "the bias level; only top1 (agreement with the content-free answer) for decoders.",
                       choices=BIAS_DEFINITIONS)
    acc_draws: int = option(PAPER_ACC_DRAWS, "one-template-per-fact draws behind Acc@1.", minimum=1,
                            http_limit=1_000_000)
    empty_answers: str = option(EMPTY_ANSWERS[0], "an answer without words, in Consist and in the sampled answers "
                                                  "behind confidence: disagree (no answer: it agrees with nothing) "
                                                  "or agree (two such answers agree, factprobe's earlier default).",
                                choices=EMPTY_ANSWERS)
    ovconf_ties: str = ovconf_ties_option()


class BeliefICL(Method):
    name = "belief-icl"
    summary = ("causal-LM Q/A answers per ICL setting on belief-icl or cloze sets, confidence from samples on one "
               "prompt of up to 10K pairs (options settings, samples, sample_prompts, prompt_style)")
    kinds = ("belief-icl", "cloze")
    reads = ("gold",)  # and a belief-icl item's prompt and demonstrations, or a cloze item's prompts (is_cloze)
    # BELIEF's definitions; `by_setting` gets the report's generic breakdown table
    report_sections = (BELIEF_DEFINITIONS,)
    Options = BeliefICLOptions

    @staticmethod
    def aggregate_extra(records: Sequence[dict], options: dict) -> dict:
        """Per ICL setting (`by_setting`), over every prompt (a belief-icl record, or each of a
        cloze record's `prompts`): accuracy, Acc@1 over `acc_draws` one-prompt-per-unit draws,
        Consist (pairs of a unit's answers that are the same answer by lemmas, probes/measures/answers.py),
        one-word ratio, the greedy answers the token limit cut (`answers_cut`), relation and
        bucket breakdowns and the bias level; Ovconf and reliability bins (10, or one per answer
        when fewer; ties by `ovconf_ties`) over the sampled prompts only (`sampled_prompts`). An
        answer without words agrees with nothing, in Consist and in confidence (`empty_answers`:
        a record from before the option, whose empty answer counted its empty samples, is read
        with confidence 0, what its samples give under the rule). A record's own `correct` is
        the share of its answers (settings, prompts) that are correct. `definitions` names the
        unit, draws, bias, `max_tokens` (None: answers to the end of the line, the paper's), the
        samples and the prompts they go to (`sample_prompts`: N pairs, or all; a run before the
        option sampled every prompt), the prompt style and, for cloze sets, the shots drawn."""
        prompts = list(_prompt_rows(records))
        settings = list(dict.fromkeys(s for r in prompts for s in r["by_setting"]))
        by_setting = {}
        for setting in settings:
            # One flat row per (prompt, setting): the setting's answer over the record's fields.
            rows = [{**r, **r["by_setting"][setting]} for r in prompts if setting in r["by_setting"]]
            by_setting[setting] = _setting_measures(rows, options)
        # The bias is the top-1 agreement share (bias_levels, per setting); the content-free
        # entropy is not computed for decoders yet.
        definitions = {**belief_definitions(records, options, options.get("bias", "top1")), "coverage_maximum": None,
                       "max_tokens": options.get("max_tokens"), "samples": options.get("samples"),
                       "sample_prompts": options.get("sample_prompts", ALL),
                       "prompt_style": options.get("prompt_style", MP),
                       "empty_answers": options.get("empty_answers", EMPTY_ANSWERS[0])}
        if any("prompts" in r for r in records):  # demonstrations drawn at run time
            definitions["shots"] = options.get("shots")
        return {"by_setting": by_setting, "definitions": definitions}

    @classmethod
    def headline(cls, aggregate: dict, probes: Path) -> str:
        """Acc@1, Consist and Ovconf per setting."""
        if not isinstance(aggregate.get("by_setting"), dict):  # no records: what every method has
            return super().headline(aggregate, probes)
        # Acc@1 is the mean of the one-prompt-per-unit draws (000:66), not the share of prompts right
        return "; ".join(f"{name} Acc@1 {headline_number((v.get('acc_at_1') or {}).get('mean', v.get('accuracy')))}"
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
        if self.options["prompt_style"] == QA and "instruction" not in self.given:
            self.options["instruction"] = QA_INSTRUCTION  # recorded in run.json as asked
        cap = self.options["max_tokens"]
        self.tokens = LINE_GUARD if cap is None else cap
        self.pool: ClozePool | None = None
        self.sampled: set | None = None
        tests = [item for items in context.tests.values() for item in items]
        self.whole_set = bool(tests)  # the runner's: every test item of the set (before --limit)
        if tests:
            self._prepare(tests)

    def _prepare(self, items: Sequence[dict]) -> None:
        """The demonstration pool of a cloze set and the prompts that get samples, from the
        probe set's test items (the runner gives them all; a method made without them draws over
        the items of each `run` call). ValueError for an option the set cannot follow."""
        style, cloze = self.options["prompt_style"], [item for item in items if is_cloze(item)]
        if "shots" in self.given and len(cloze) < len(items):
            raise ValueError("method belief-icl: option shots: a belief-icl set carries its demonstrations (its "
                             "build's --shots); shots is for cloze sets, whose demonstrations are drawn here")
        if style == QA:
            for item in items:
                if not is_cloze(item):
                    check_qa(item)
            if cloze and not any(asked(item, QA) for item in cloze):
                raise ValueError("prompt_style=qa: no prompt of the set is a question template (\"Who developed "
                                 "[X]? [Y].\"); the QA style asks MyriadLAMA's question templates")
        self.pool = ClozePool(cloze, style) if cloze else None
        keys = ((pair_key(item), item["id"], asked(item, style) if is_cloze(item) else [None]) for item in items)
        self.sampled = sampled_prompts(keys, self.options["sample_prompts"], self.context.rng)

    def questions(self, item: dict) -> list[dict]:
        """What is asked for `item`: itself (a belief-icl item), or each asked prompt of a cloze
        item with its demonstrations (belief_icl_questions.py)."""
        if not is_cloze(item):
            return [item]
        if self.pool is None:
            raise ValueError(f"{item['id']}: a cloze item outside the probe set the method was prepared with")
        return cloze_questions(item, self.pool, self.context.rng, self.options["shots"])

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
            lines += [f"Q: {self.question(demo['template'], demo['subject_label'])}",
                      f"A: {answered(demo['object_label'])}"]
        if item["prompt"].count("[Y]") != 1:
            raise ValueError(f"{item['id']}: prompt {item['prompt']!r} needs exactly one [Y] for the mask")
        if subject is not None and "template" not in item:
            raise ValueError(f"{item['id']}: content_free needs the item's template (rebuild the probe set)")
        if subject is not None:
            question = self.question(item["template"], subject)
        elif self.options["prompt_style"] == QA:
            question = item["prompt"].split("[Y]")[0].strip()
        else:
            question = item["prompt"].replace("[Y]", MASK)
        lines += [f"Q: {question}", "A:"]
        return "\n".join(lines)

    def question(self, template: str, subject: str) -> str:
        """A Q line: the cloze with the mask (mp), or the question before [Y] (qa)."""
        if self.options["prompt_style"] == QA:
            return template.split("[Y]")[0].replace("[X]", subject).strip()
        return masked(template, subject)

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        if not self.whole_set:
            self._prepare(items)
        settings = self.options["settings"]
        asked_now = [(item, question) for item in items for question in self.questions(item)]
        requests, sampled = [], []
        for item, question in asked_now:
            key = _index(item, question)
            sampled.append(self.sampled is None or (item["id"], key) in self.sampled)
            for setting in settings:
                text = self.prompt(question, setting)
                requests.append(GenerateRequest(text, max_tokens=self.tokens, stop=STOP))
                if sampled[-1]:
                    where = (item["id"], setting) if key is None else (item["id"], str(key), setting)
                    requests.append(GenerateRequest(text, max_tokens=self.tokens, n=self.options["samples"],
                                                    temperature=float(self.options["temperature"]), stop=STOP,
                                                    seed=self.context.rng("belief-icl", *where).randrange(2**31)))
        generations = iter(scorer.generate(requests) if requests else [])
        free = self._content_free(scorer, asked_now) if self.options["content_free"] else None
        answers = {}
        for (item, question), is_sampled in zip(asked_now, sampled):
            by_setting = {setting: _answer(next(generations), next(generations) if is_sampled else None, item["gold"],
                                           self.options["empty_answers"]) for setting in settings}
            if free is not None:
                for setting, entry in by_setting.items():
                    entry["content_free_prediction"] = free[(item["id"], _index(item, question), setting)]
            answers.setdefault(item["id"], []).append((question, by_setting))
        return [self._record(item, answers.get(item["id"], [])) for item in items]

    @staticmethod
    def _record(item: dict, answered_: list[tuple[dict, dict]]) -> dict:
        """One record per item: a belief-icl item's answers per setting; a cloze item's per asked
        prompt (`prompts`); `correct` the share of its answers that are correct."""
        verdicts = [e["correct"] for _, by_setting in answered_ for e in by_setting.values()]
        share = sum(verdicts) / len(verdicts) if verdicts else None
        # the unit and subject name of items that say (sets built before them are per fact, label only)
        named = {key: item[key] for key in ("unit", "subject_name") if key in item}
        if not is_cloze(item):
            return base_record(item, template_id=item.get("template_id"), **named, gold=list(item["gold"]),
                               by_setting=answered_[0][1], correct=share)
        prompts = [{"index": q["index"], "template_id": q["template_id"], "subject_name": q["subject_name"],
                    "by_setting": by_setting} for q, by_setting in answered_]
        return base_record(item, **named, gold=list(item["gold"]), prompts=prompts, correct=share)

    def _content_free(self, scorer, asked_now: Sequence[tuple[dict, dict]]) -> dict[tuple, str]:
        """(item id, prompt index or None, setting) -> the greedy answer with the content-free
        subject; each distinct prompt is generated once."""
        texts = {(item["id"], _index(item, question), setting):
                 self.prompt(question, setting, self.options["content_free_token"])
                 for item, question in asked_now for setting in self.options["settings"]}
        unique = list(dict.fromkeys(texts.values()))
        requests = [GenerateRequest(text, max_tokens=self.tokens, stop=STOP) for text in unique]
        answers = dict(zip(unique, (g.texts[0].strip() for g in scorer.generate(requests)))) if requests else {}
        return {key: answers[text] for key, text in texts.items()}


def _index(item: dict, question: dict) -> int | None:
    """A question's place in its item: a cloze prompt's position, None for a belief-icl item."""
    return None if question is item else question["index"]


def agrees(a: str, b: str, empty_answers: str = EMPTY_ANSWERS[0]) -> bool:
    """Consist's and confidence's test (same_answer), where under `disagree` an answer without
    words agrees with nothing, itself included."""
    if empty_answers == "disagree" and not (answer_tokens(a) and answer_tokens(b)):
        return False
    return same_answer(a, b)


def _answer(greedy, samples, gold: Sequence[str], empty_answers: str = EMPTY_ANSWERS[0]) -> dict:
    """One setting's greedy answer, its verdict and, on a sampled prompt, its confidence (None
    on the others) with the sampled answers behind it (`samples`: each distinct text, stripped,
    and how often it came, most frequent first), so a reader can count the agreeing ones again."""
    answer = greedy.texts[0].strip()
    agreeing = None if samples is None else sum(agrees(text, answer, empty_answers) for text in samples.texts)
    entry = {"prediction": answer, "correct": matches_any(answer, gold),
             "confidence": None if samples is None else agreeing / len(samples.texts), "agreeing": agreeing,
             "one_word": len(answer.split()) == 1,
             "finish_reason": greedy.finish_reasons[0] if greedy.finish_reasons else None}
    if samples is not None:
        entry["samples"] = [[text, count] for text, count in Counter(t.strip() for t in samples.texts).most_common()]
    return entry


def _prompt_rows(records: Sequence[dict]):
    """One row per prompt asked: a belief-icl record, or each of a cloze record's `prompts` with
    the record's fields."""
    for r in records:
        if not isinstance(r.get("prompts"), list):
            yield r
            continue
        fields = {k: v for k, v in r.items() if k != "prompts"}
        for p in r["prompts"]:
            yield {**fields, "template_id": p.get("template_id"), "subject_name": p.get("subject_name"),
                   "by_setting": p["by_setting"]}


def _setting_measures(rows: list[dict], options: dict) -> dict:
    draws = options.get("acc_draws", PAPER_ACC_DRAWS)
    empty, ties = options.get("empty_answers", EMPTY_ANSWERS[0]), options.get("ovconf_ties", "average")
    per_fact: dict[str, list[dict]] = {}
    for row in rows:
        per_fact.setdefault(row.get("fact") or row["id"], []).append(row)
    acc = measures.acc_at_1([[bool(r["correct"]) for r in group] for group in per_fact.values()], draws=draws)
    shares = []
    for group in per_fact.values():
        answers = [r["prediction"] for r in group]
        pairs = [(a, b) for k, a in enumerate(answers) for b in answers[k + 1:]]
        if pairs:
            shares.append(sum(agrees(a, b, empty) for a, b in pairs) / len(pairs))
    correct = [bool(r["correct"]) for r in rows]
    # Ovconf and its reliability bins over the prompts that got samples (000:106)
    sampled = [[r for r in group if r.get("confidence") is not None] for group in per_fact.values()]
    facts = [([_confidence(r, empty) for r in g], [bool(r["correct"]) for r in g]) for g in sampled if g]
    confidence = [c for conf, _ in facts for c in conf]
    sampled_correct = [k for _, ks in facts for k in ks]
    bins = min(10, len(confidence))
    return {"items": len(rows), "sampled_prompts": len(confidence), "accuracy": sum(correct) / len(correct),
            "accuracy_interval": interval([float(c) for c in correct]),
            "acc_at_1_interval": interval([sum(bool(r["correct"]) for r in g) / len(g) for g in per_fact.values()]),
            "consistency_interval": interval(shares),
            "overconfidence_interval": overconfidence_interval(facts, bins, ties=ties) if confidence else None,
            "acc_at_1": {"mean": acc.mean, "sd": acc.sd, "min": acc.min, "max": acc.max, "range": acc.range,
                         "draws": acc.draws},
            "consistency": sum(shares) / len(shares) if shares else None,  # None: no fact has two templates
            "overconfidence": measures.overconfidence(confidence, sampled_correct, bins, ties=ties)
            if confidence else None,
            "mean_confidence": sum(confidence) / len(confidence) if confidence else None,
            "one_word_ratio": measures.one_word_ratio([r["prediction"] for r in rows]),
            # greedy answers stopped by the token limit rather than by their line's end
            "answers_cut": sum(r.get("finish_reason") == "length" for r in rows),
            "reliability": [{"confidence": b.confidence, "accuracy": b.accuracy, "count": b.count}
                            for b in measures.reliability_bins(confidence, sampled_correct, bins, ties=ties)]
            if confidence else [],
            "by_relation": accuracy_breakdown(rows, "relation"), "by_bucket": accuracy_breakdown(rows, "bucket"),
            **bias_levels([(answer_key(r["prediction"]), _key(r.get("content_free_prediction")), r.get("relation"))
                           for r in rows])}


def _confidence(row: dict, empty_answers: str) -> float:
    """A sampled prompt's confidence under `empty_answers`: a greedy answer without words agrees
    with no sample under `disagree`; any other answer's agreeing samples are the same under
    either rule (an empty sample never agrees with words), so the recorded share stands."""
    if empty_answers == "disagree" and not answer_tokens(row["prediction"]):
        return 0.0
    return row["confidence"]


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
