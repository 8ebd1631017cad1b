"""Every method's item records in one shape, for the item view (the report's items.html and the
service's /items): an `ItemRow` per record, or per ICL setting (BELIEF-ICL) or distractor strategy
(its own Min@n verdict), holding the prompt split into what came before (`context`: the
demonstrations, folded on the page) and the `question`, the choices or answers with their scores,
the model's pick, the gold and its names, the verdict, and the record's other numbers. One pure
function per method family, declared once in `FAMILIES`; a method none declares reads as
`generic_rows`. A prompt that items.jsonl does not hold is rebuilt by the caller's `prompt`
(the method's own code, items_data.py) and passed in.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..measures.belief import answer_key

# (probe item, setting or None) -> the prompt the model read; raises when it cannot be rebuilt
PromptFn = Callable[[dict, Optional[str]], str]
OUTCOMES = ("right", "wrong", "partly", "unscored")


@dataclass(frozen=True)
class Choice:
    text: str
    score: float | None = None  # what the row's `score_name` says
    picked: bool = False  # the model's answer
    gold: bool = False  # a gold answer
    note: str = ""


@dataclass(frozen=True)
class ItemRow:
    id: str  # the probe item's id
    relation: str
    relation_label: str
    subject: str
    bucket: str  # "none" for an item without a frequency annotation
    correct: float | None  # the record's verdict for this row (1.0 right, 0.0 wrong, shares between)
    context: str  # what the prompt holds before the question (demonstrations); "" when nothing
    question: str  # the rest of the prompt: context + question is the prompt as scored
    pick: str | None
    gold: str | None
    names: tuple[str, ...]  # every gold name
    choices: tuple[Choice, ...] = ()
    score_name: str = ""
    strategy: str | None = None
    setting: str | None = None
    measures: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def outcome(self) -> str:
        return outcome_of(self.correct)

    @property
    def key(self) -> str:
        """What the same row of another run has: the item id, and the setting or strategy."""
        part = self.setting or self.strategy
        return f"{self.id}|{part}" if part else self.id

    def as_dict(self, run: str, method: str, disagree: bool = False) -> dict:
        return {"run": run, "method": method, "id": self.id, "key": self.key, "relation": self.relation,
                "relation_label": self.relation_label, "subject": self.subject, "bucket": self.bucket,
                "strategy": self.strategy, "setting": self.setting, "outcome": self.outcome,
                "correct": self.correct, "disagree": disagree, "context": self.context, "question": self.question,
                "pick": self.pick, "gold": self.gold, "names": list(self.names), "score_name": self.score_name,
                "choices": [{"text": c.text, "score": c.score, "picked": c.picked, "gold": c.gold, "note": c.note}
                            for c in self.choices],
                "measures": dict(self.measures), "notes": list(self.notes)}


def outcome_of(correct) -> str:
    """right (True, 1), wrong (False, 0), partly (a share between), unscored (None)."""
    if correct is None or isinstance(correct, str):
        return "unscored"
    value = float(correct)
    return "right" if value >= 1.0 else "wrong" if value <= 0.0 else "partly"


def _number(value) -> float | None:
    return None if isinstance(value, bool) or not isinstance(value, (int, float)) else value


def _verdict(value) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    return _number(value)


def _common(record: dict, item: dict | None) -> dict:
    """The fields every family reads alike: the probe item's where the record lacks them."""
    item = item or {}
    relation = str(record.get("relation") or item.get("relation") or "?")
    names = item.get("gold") or record.get("gold") or record.get("names") or [record.get("object_label")]
    bucket = record.get("bucket", item.get("bucket"))
    return {"id": str(record["id"]), "relation": relation, "relation_label": str(item.get("relation_label") or relation),
            "subject": str(record.get("subject_label") or item.get("subject_label") or ""),
            "bucket": "none" if bucket is None else str(bucket),
            "names": tuple(str(n) for n in names if n is not None)}


def _split(prompt: str, at: int) -> tuple[str, str]:
    """(context, question) cut at `at`; the whole prompt is the question when there is no cut."""
    return (prompt[:at], prompt[at:]) if at > 0 else ("", prompt)


def _rebuilt(prompt: PromptFn | None, item: dict | None, setting: str | None = None) -> tuple[str | None, str]:
    """The prompt rebuilt by the method's code, or None and why not."""
    if prompt is None or item is None:
        return None, "the prompt is not in items.jsonl and the probe set was not found to rebuild it"
    try:
        return prompt(item, setting), ""
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as error:
        return None, f"the prompt could not be rebuilt: {error}"


def _notes(*notes: str) -> tuple[str, ...]:
    return tuple(n for n in notes if n)


# -- multiple choice by continuation (IC-LKE, EIC-LKE, mc) ---------------------------------------


def choice_rows(record: dict, item: dict | None, prompt: PromptFn | None) -> list[ItemRow]:
    common = _common(record, item)
    own = item is not None and isinstance(item.get("prompt"), str)  # an imported task's item carries its prompt
    text, why = (item["prompt"], "") if own else _rebuilt(prompt, item)
    if text is None:
        context, question = "", ""
    elif own:  # its question is its last paragraph
        context, question = _split(text, text.rfind("\n\n") + 2 if "\n\n" in text else 0)
    else:  # IC-LKE's and EIC-LKE's last line is the test subject
        context, question = _split(text, max(text.rfind(common["subject"]), 0) if common["subject"] else 0)
    labels = (item or {}).get("choices") or []
    pick, gold = record.get("predicted_index"), record.get("answer_index", (item or {}).get("answer_index"))
    every = record.get("choice_logprobs")  # a run that records every choice's log-probability
    probability = _number(record.get("probability"))
    if labels:
        choices = tuple(Choice(str(c), every[k] if every else (record.get("gold_logprob") if k == gold else None),
                               picked=k == pick, gold=k == gold,
                               note=f"normalized probability {probability:.4f}" if k == pick and probability is not None
                               else "")
                        for k, c in enumerate(labels))
        gold_text = str(labels[gold]) if isinstance(gold, int) and 0 <= gold < len(labels) else record.get("object_label")
    else:
        gold_text = record.get("object_label")
        predicted = record.get("prediction")
        choices = ((Choice(str(gold_text), record.get("gold_logprob"), picked=True, gold=True),)
                   if predicted == gold_text else
                   (Choice(str(predicted), picked=True), Choice(str(gold_text), record.get("gold_logprob"), gold=True)))
    measures = {k: record[k] for k in ("probability", "gold_logprob", "choices", "examples_seen", "examples_requested",
                                       "tests_before") if k in record}
    notes = _notes(why, "" if every else "this run recorded the gold choice's log-probability and the pick's "
                                         "probability normalized over the choices, not every choice's score",
                   "" if labels else "the choices are in the probe set, which was not found")
    return [ItemRow(**common, correct=_verdict(record.get("correct")), context=context, question=question,
                    pick=record.get("prediction"), gold=gold_text, choices=choices,
                    score_name="log-probability of the choice after the prompt", measures=measures, notes=notes)]


# -- KDF: lettered options ------------------------------------------------------------------------

_OPTION_LINE = re.compile(r"^([A-Z]): (.*)$", re.MULTILINE)
_KDF_SCORES = {"letters": ("letter_logprobs", "log-probability of the letter"),
               "option-text": ("option_logprobs", "log-probability of the option's text"),
               "option-text-norm": ("option_logprobs", "log-probability of the option's text per token")}


def kdf_rows(record: dict, item: dict | None, prompt: PromptFn | None) -> list[ItemRow]:
    common = _common(record, item)
    text = record.get("prompt")
    why = ""
    if not isinstance(text, str):
        text, why = _rebuilt(prompt, item)
    context, question = _split(text or "", (text or "").rfind("\n\n") + 2 if text and "\n\n" in text else 0)
    options = list((item or {}).get("options") or [])
    if not options:  # the record's own prompt lists them: "A: Rabat"
        options = [m.group(2) for m in _OPTION_LINE.finditer(question)]
    scoring = str(record.get("scoring") or "letters")
    key, score_name = _KDF_SCORES.get(scoring, _KDF_SCORES["letters"])
    tokens = record.get("option_tokens") or []
    if scoring == "option-text-norm" and "option_logprobs_per_token" in record:
        # the compared means as recorded (issue 45), the sums beside them for the note
        scores, sums = record.get("option_logprobs_per_token") or [], record.get("option_logprob_sums") or []
    else:  # before issue 45 option-text-norm kept only the sums, as `option_logprobs`
        sums = scores = record.get(key) or []
        if scoring == "option-text-norm" and len(tokens) == len(scores):
            scores = [s / max(1, n) for s, n in zip(sums, tokens)]
    per_token = scoring == "option-text-norm" and len(tokens) == len(sums) == len(scores)

    def score(k: int) -> float | None:
        return scores[k] if k < len(scores) else None

    def label(letter) -> str | None:
        k = ord(letter) - ord("A") if isinstance(letter, str) and len(letter) == 1 else -1
        return f"{letter}: {options[k]}" if 0 <= k < len(options) else letter

    choices = tuple(Choice(f"{chr(ord('A') + k)}: {o}", score(k), picked=chr(ord("A") + k) == record.get("prediction"),
                           gold=chr(ord("A") + k) == record.get("answer"),
                           note=f"{sums[k]} over {tokens[k]} token(s)" if per_token and k < len(sums) else "")
                    for k, o in enumerate(options))
    return [ItemRow(**common, correct=_verdict(record.get("correct")), context=context, question=question,
                    pick=label(record.get("prediction")), gold=label(record.get("answer")), choices=choices,
                    score_name=score_name, measures={"scoring": scoring}, notes=_notes(why))]


# -- the distractor measure: the gold against each strategy's distractors -------------------------


def distractor_rows(record: dict, item: dict | None, prompt: PromptFn | None) -> list[ItemRow]:
    common = _common(record, item)
    item = item or {}
    clozes = [c for c in record.get("per_cloze") or [] if isinstance(c, dict)]
    gold_entity = record.get("object") or item.get("object")
    labels = {gold_entity: record.get("object_label")} if gold_entity else {}
    for found in (item.get("distractors") or {}).values():
        labels.update({d["entity"]: d.get("label") or d["entity"] for d in found if isinstance(d, dict)})

    def mean(entity: str) -> float | None:
        values = [c["log_plausibility"][entity] for c in clozes if entity in (c.get("log_plausibility") or {})]
        return sum(values) / len(values) if values else None

    question = str(clozes[0].get("cloze", "")) if clozes else ""
    context = "".join(f"{c.get('cloze', '')}\n" for c in clozes[1:])  # further clozes, scored alike
    several = f"scores are the mean over the {len(clozes)} clozes" if len(clozes) > 1 else ""
    strategies = {s: v for s, v in (record.get("by_strategy") or {}).items() if isinstance(v, dict)}
    rows = []
    for strategy, verdict in strategies.items() or [(None, {})]:
        asked = verdict.get("distractors") or [d["entity"] for d in (item.get("distractors") or {}).get(strategy, [])
                                               if isinstance(d, dict)]
        if not asked:  # neither the record nor the probe set says which: every entity scored
            asked = sorted({e for c in clozes for e in (c.get("log_plausibility") or {})} - {gold_entity})
        entities = [e for e in dict.fromkeys([gold_entity, *asked]) if e]
        scored = {e: mean(e) for e in entities}
        best = max((e for e in entities if scored[e] is not None), key=lambda e: scored[e], default=None)
        choices = tuple(Choice(str(labels.get(e) or e), scored[e], picked=e == best, gold=e == gold_entity, note=e)
                        for e in entities)
        measures = {k: verdict[k] for k in ("min_at_n", "avg_at_n", "compared") if k in verdict}
        if verdict.get("skipped"):
            measures["skipped"] = ", ".join(map(str, verdict["skipped"]))
        correct = verdict.get("min_at_n") if strategy is not None else record.get("correct")
        rows.append(ItemRow(**common, correct=_verdict(correct), context=context, question=question,
                            pick=str(labels.get(best) or best) if best else None, gold=record.get("object_label"),
                            choices=choices, score_name="log-plausibility: log of the summed probability of the "
                                                        "entity's names after the cloze",
                            strategy=strategy, measures=measures,
                            notes=_notes(several, "" if gold_entity else "the gold entity is not in the record, "
                                                                         "and the probe set was not found")))
    return rows


# -- the distractor paper's baselines: a greedy answer and beams after a cloze --------------------

_BASELINE_MEASURES = ("probability", "precision_at_n", "rouge_l", "bertscore", "karr", "karr_r", "karr_s",
                      "karr_known", "judge", "answer_tokens")


def baselines_rows(record: dict, item: dict | None, prompt: PromptFn | None) -> list[ItemRow]:
    common = _common(record, item)
    names = tuple(record.get("names") or common["names"])
    keys = {answer_key(n) for n in names}
    clozes = [str(c) for c in record.get("clozes") or [record.get("cloze") or ""]]
    answer = str(record.get("answer") or "")
    beams = [str(c).strip() for c in ((record.get("candidates") or [[]])[0] or [])]
    choices = (Choice(answer, picked=True, gold=answer_key(answer) in keys, note="greedy answer"),
               *(Choice(b, gold=answer_key(b) in keys, note=f"candidate {k + 1}") for k, b in enumerate(beams)))
    measures = {k: record[k] for k in _BASELINE_MEASURES if k in record and not isinstance(record[k], (dict, list))}
    return [ItemRow(**{**common, "names": names}, correct=_verdict(record.get("correct")),
                    context="".join(f"{c}\n" for c in clozes[1:]), question=clozes[0], pick=answer,
                    gold=record.get("object_label"), choices=choices, score_name="", measures=measures,
                    notes=("correct: the probability of the gold names is above the run's threshold",))]


# -- BELIEF on masked LMs: one answer per prompt --------------------------------------------------


def belief_rows(record: dict, item: dict | None, prompt: PromptFn | None) -> list[ItemRow]:
    common = _common(record, item)
    prompts = [p for p in (item or {}).get("prompts") or [] if isinstance(p, dict)]
    predictions = [str(p) for p in record.get("predictions") or []]
    right = record.get("prompt_correct") or []
    confidence = record.get("confidence") or []
    templates = record.get("template_ids") or []

    def asked(k: int) -> str:
        text = prompts[k].get("text") if k < len(prompts) else None
        return str(text) if text else f"template {templates[k] if k < len(templates) else '?'}"

    choices = tuple(Choice(p, confidence[k] if k < len(confidence) else None, picked=True,
                           gold=bool(right[k]) if k < len(right) else False, note=asked(k))
                    for k, p in enumerate(predictions))
    most = Counter(predictions).most_common(1)
    return [ItemRow(**common, correct=_verdict(record.get("correct")), context="",
                    question="\n".join(asked(k) for k in range(len(predictions))),
                    pick=most[0][0] if most else None, gold=record.get("object_label"), choices=choices,
                    score_name="confidence: the top-1 probability", measures={"unit": record.get("unit")},
                    notes=_notes("" if prompts else "the prompts' texts are in the probe set, which was not found"))]


# -- BELIEF-ICL: a greedy answer per setting (and per prompt of a cloze set) -----------------------


def belief_icl_rows(record: dict, item: dict | None, prompt: PromptFn | None) -> list[ItemRow]:
    common = _common(record, item)
    score_name = "confidence: the share of sampled answers that agree with the greedy answer"
    if isinstance(record.get("prompts"), list):
        return _belief_icl_cloze_rows(record, item, common, score_name)
    rows = []
    for setting, v in (record.get("by_setting") or {}).items():
        text, why = _rebuilt(prompt, item, setting)
        at = text.rfind("\nQ: ") + 1 if text else 0
        context, question = _split(text or "", at)
        answer = str(v.get("prediction", ""))
        measures = {k: v[k] for k in ("confidence", "agreeing", "one_word", "finish_reason",
                                      "content_free_prediction") if k in v}
        rows.append(ItemRow(**common, correct=_verdict(v.get("correct")), context=context, question=question,
                            pick=answer, gold=record.get("object_label"),
                            choices=(Choice(answer, _number(v.get("confidence")), picked=True,
                                            gold=bool(v.get("correct")), note="greedy answer"),),
                            score_name=score_name, setting=setting, measures=measures,
                            notes=_notes(why, "the sampled answers themselves are not recorded, only how many agree")))
    return rows


def _belief_icl_cloze_rows(record: dict, item: dict | None, common: dict, score_name: str) -> list[ItemRow]:
    """A cloze set's record (a MyriadLAMA import): per setting, one answer per prompt asked."""
    texts = [p.get("text") for p in (item or {}).get("prompts") or [] if isinstance(p, dict)]
    asked = [p for p in record["prompts"] if isinstance(p, dict)]
    settings = list(dict.fromkeys(s for p in asked for s in p.get("by_setting") or {}))
    rows = []
    for setting in settings:
        answers = [(p, p["by_setting"][setting]) for p in asked if setting in (p.get("by_setting") or {})]
        choices = tuple(Choice(str(v.get("prediction", "")), _number(v.get("confidence")), picked=True,
                               gold=bool(v.get("correct")),
                               note=f"prompt {p.get('index')} (template {p.get('template_id')}, "
                                    f"{p.get('subject_name')})") for p, v in answers)
        verdicts = [bool(v.get("correct")) for _, v in answers]
        index = [p.get("index") for p, _ in answers]
        question = "\n".join(str(texts[k]) for k in index if isinstance(k, int) and 0 <= k < len(texts))
        rows.append(ItemRow(**common, correct=sum(verdicts) / len(verdicts) if verdicts else None, context="",
                            question=question, pick=choices[0].text if choices else None,
                            gold=record.get("object_label"), choices=choices, score_name=score_name, setting=setting,
                            notes=("the demonstrations of a cloze set are drawn at run time and not rebuilt here",)))
    return rows


# -- any other method ------------------------------------------------------------------------------

_SHOWN = {"id", "fact", "relation", "subject_label", "object_label", "bucket", "frequency", "prediction", "correct",
          "prompt"}


def generic_rows(record: dict, item: dict | None, prompt: PromptFn | None) -> list[ItemRow]:
    common = _common(record, item)
    text = record.get("prompt") if isinstance(record.get("prompt"), str) else (item or {}).get("prompt")
    pick = record.get("prediction")
    gold = record.get("object_label")
    keys = {answer_key(n) for n in common["names"]}
    choices = (Choice(str(pick), picked=True, gold=answer_key(str(pick)) in keys),) if pick is not None else ()
    measures = {k: v for k, v in record.items() if k not in _SHOWN and isinstance(v, (int, float, str, bool))}
    return [ItemRow(**common, correct=_verdict(record.get("correct")), context="", question=str(text or ""),
                    pick=None if pick is None else str(pick), gold=gold, choices=choices, measures=measures,
                    notes=("this method declares no item view: its record's plain fields are shown",))]


# Each method's mapping, declared once; and the methods whose prompts their own code rebuilds from
# the probe set (items_data.py): what the method needs of the set besides the item.
FAMILIES: dict[str, Callable[[dict, Optional[dict], Optional[PromptFn]], list[ItemRow]]] = {
    "ic-lke": choice_rows, "eic-lke": choice_rows, "mc": choice_rows, "kdf": kdf_rows,
    "distractor": distractor_rows, "baselines": baselines_rows, "belief": belief_rows,
    "belief-icl": belief_icl_rows}
REBUILT_PROMPTS = {"ic-lke": "demonstrations", "eic-lke": "tests", "belief-icl": "item"}


def rows_of(method: str, record: dict, item: dict | None = None, prompt: PromptFn | None = None) -> list[ItemRow]:
    """The record's rows in the common shape, by its method's family."""
    return FAMILIES.get(method, generic_rows)(record, item, prompt)
