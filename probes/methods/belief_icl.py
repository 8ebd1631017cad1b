"""BELIEF-ICL on causal LMs (Zhao et al.): the model fills a cloze written as a Q/A exchange,
after an instruction and, depending on the setting, a few solved examples.

    Predict the [MASK] in each sentence in one word.
    Q: The capital of Japan is [MASK].
    A: Tokyo
    Q: The capital of France is [MASK].
    A:

Settings (the demonstrations come with each belief-icl item, see probes/builders.py):
zero-shot (no example), x-random (examples of any relation and template), x-relation (same
relation, any of its templates), x-template (same relation and template).

Per item and setting: the greedy continuation, cut at the first newline and stripped, is the
answer; it is correct when it contains a gold name (probes/answers.py `matches`: lemmas,
gold-in-prediction). Its confidence is the share of `samples` multinomial samples of the same
prompt (at `temperature`, seeded per item and setting from the run's seed) that give the same
answer as the greedy one (`same_answer`: lemmas, either contained in the other), so a model that
answers the same way whatever it samples is confident. `one_word` uses whitespace words, as
probes/metrics.py `one_word_ratio` does ("Mexico City" is two words, "Paris." one).

Options: `settings` (a list, or one name, or a comma-separated string; default all four),
`samples` (N, default 100), `max_tokens` (default 8), `temperature` (of the samples, default
1.0), `instruction` (default the paper's).

Bias level (`content_free`, default off; `bias`, only "top1" so far): per setting, the same
prompt is also answered greedily
with the item's subject replaced by `content_free_token` (default "N/A") in its question, and
the answer is kept as `content_free_prediction`; the aggregate reports, per setting, the share
of answers that equal their content-free answer (probes/metrics.py `bias_level`, compared after
`answer_key`: casefolded, outer punctuation dropped), averaged over relations. It costs one more
greedy generation per item and setting (identical prompts, as zero-shot ones of one template,
are asked once per batch), which is why it is off unless asked for. This is factprobe's top-1
agreement share, not the paper's 1 - H/H_max over the candidate objects (BELIEF on masked LMs has
that, methods/belief.py): for decoders it would need log P(candidate | content-free prompt) for
every candidate object of the relation, and is not implemented; `bias=entropy` is refused.

`acc_draws` (default the paper's 50,000): the one-template-per-fact draws behind Acc@1 and its
fluctuation (probes/aggregate.py).

One record per item (one per (fact, template)), with the results of every setting under
`by_setting`; the runner resumes by item id, so settings of one item are computed together.
The record's own `correct` is the share of the settings whose answer is correct.
"""

from __future__ import annotations

from typing import Sequence

from ..answers import matches_any, same_answer
from ..metrics import PAPER_ACC_DRAWS
from ..scoring.requests import GenerateRequest
from .base import Method, base_record
from .belief import check_belief_options

SETTINGS = ("zero-shot", "x-random", "x-relation", "x-template")
INSTRUCTION = "Predict the [MASK] in each sentence in one word."
MASK = "[MASK]"
STOP = ("\n",)  # an answer is one line; the next "Q:" would follow it


class BeliefICL(Method):
    name = "belief-icl"
    kinds = ("belief-icl",)
    # A list, not a tuple: options are compared with run.json's JSON when a run resumes.
    defaults = {"settings": list(SETTINGS), "samples": 100, "max_tokens": 8, "temperature": 1.0,
                "instruction": INSTRUCTION, "content_free": False, "content_free_token": "N/A",
                "bias": "top1", "acc_draws": PAPER_ACC_DRAWS}

    def __init__(self, context) -> None:
        super().__init__(context)
        check_belief_options("belief-icl", self.options)
        if self.options["bias"] != "top1":
            raise ValueError("belief-icl: only bias=top1 (the share of answers equal to the content-free answer) is "
                             "implemented for decoders; the paper's entropy bias is there for masked LMs "
                             "(--method belief)")
        self.options["settings"] = _settings(self.options["settings"])
        if not isinstance(self.options["samples"], int) or self.options["samples"] < 1:
            raise ValueError(f"belief-icl: samples must be a whole number >= 1, got {self.options['samples']!r}")
        if not float(self.options["temperature"]) > 0:
            raise ValueError("belief-icl: the samples' temperature must be > 0 (0 would repeat the greedy answer)")
        token = self.options["content_free_token"]
        if not isinstance(token, str) or not token.strip():
            raise ValueError(f"belief-icl: content_free_token must be a non-empty text, got {token!r}")

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
            lines += [f"Q: {masked(demo['template'], demo['subject_label'])}", f"A: {demo['object_label']}"]
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
                requests.append(GenerateRequest(text, max_tokens=self.options["max_tokens"], stop=STOP))
                requests.append(GenerateRequest(text, max_tokens=self.options["max_tokens"],
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
            records.append(base_record(item, template_id=item.get("template_id"), gold=list(item["gold"]),
                                       by_setting=by_setting, correct=share))
        return records

    def _content_free(self, scorer, items: Sequence[dict]) -> dict[tuple[str, str], str]:
        """(item id, setting) -> the greedy answer with the content-free subject; each distinct
        prompt is generated once."""
        texts = {(item["id"], setting): self.prompt(item, setting, self.options["content_free_token"])
                 for item in items for setting in self.options["settings"]}
        unique = list(dict.fromkeys(texts.values()))
        requests = [GenerateRequest(text, max_tokens=self.options["max_tokens"], stop=STOP) for text in unique]
        answers = dict(zip(unique, (g.texts[0].strip() for g in scorer.generate(requests)))) if requests else {}
        return {key: answers[text] for key, text in texts.items()}


def masked(template: str, subject_label: str) -> str:
    """The cloze with the subject filled in and the mask where the object goes. The template is
    split at [Y] first, so a subject label that happens to contain "[Y]" stays text."""
    parts = template.split("[Y]")
    if len(parts) != 2:
        raise ValueError(f"{template!r} needs exactly one [Y] for the mask")
    return MASK.join(part.replace("[X]", subject_label) for part in parts)


def _settings(value) -> list[str]:
    """settings=all, settings=x-relation, settings=zero-shot,x-template or a JSON list."""
    if isinstance(value, str):
        value = list(SETTINGS) if value.strip() == "all" else [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"belief-icl: settings must name one or more of {', '.join(SETTINGS)}")
    unknown = [v for v in value if v not in SETTINGS]
    if unknown:
        raise ValueError(f"belief-icl: unknown setting {', '.join(map(str, unknown))} (use {', '.join(SETTINGS)})")
    return list(dict.fromkeys(value))  # each once, in the order given
