"""KaRR (Dong et al. 2023, "Statistical Knowledge Assessment for Large Language Models"), one of
the measures the distractor paper compares against (seed 004 line 174), in factprobe's terms.

A fact (s, r, o) is scored by P(o | s, r), the sum over the relation's prompts beta (its first
`clozes` object-final clozes with s filled in) of P_M(beta) times the sum over o's names gamma of
P_M(gamma | beta). KaRR_s divides it by P(o | r), its mean over up to `karr_samples` subjects of r
drawn from the probe set (s may be among them, as in a marginal over r's subjects); KaRR_r by
P(o | s), the mean over up to `karr_samples` relations of the probe set that have o as an object
(r among them), each asked with one of its clozes drawn by seed. KaRR is the geometric mean of
the two ratios; the fact counts as known above `karr_threshold` (22, the authors' code). A
probability is by default per token (exp of the mean token log-probability, 1/perplexity, as the
authors' code takes it; `karr_probability=joint`: the product). The items carry the subject's
label only, so s has one name where the paper sums over its aliases. Details and every difference
from the paper: docs/design/methods.md. The arithmetic is pure (`karr_scores`); `KarrAsker` builds
the scorer's requests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..scoring.requests import ContinuationScore, LabelPathRequest, LabelPathScore, LoglikelihoodRequest
from ..templates import prompt_before_object
from .distractor import all_names

PROBABILITIES = ("per-token", "joint")  # the authors' code's first


def log_sum_exp(values: Sequence[float]) -> float:
    """log of the sum of exp(values), without underflow; -inf for nothing."""
    if not values:
        return -math.inf
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


def log_probability(logprob: float, n_tokens: int, per_token: bool) -> float:
    """A text's log-probability as KaRR takes it: per token (the mean) or joint (the sum)."""
    return logprob / n_tokens if per_token else logprob


def log_term(prompt: tuple[float, int], names: Sequence[tuple[float, int]], per_token: bool) -> float:
    """log [P_M(beta) * sum over names gamma of P_M(gamma | beta)]: `prompt` and each name as
    (summed log-probability, tokens)."""
    return log_probability(*prompt, per_token) + log_sum_exp([log_probability(lp, n, per_token) for lp, n in names])


@dataclass(frozen=True)
class KaRR:
    karr: float
    karr_r: float
    karr_s: float
    log_p_sr: float  # log P(o | s, r)
    log_p_s: float  # log P(o | s)
    log_p_r: float  # log P(o | r)

    def known(self, threshold: float) -> bool:
        return self.karr > threshold


def karr_scores(true_terms: Sequence[float], subject_terms: Sequence[Sequence[float]],
                relation_terms: Sequence[float]) -> KaRR:
    """KaRR from log terms (`log_term`): `true_terms` per prompt of (s, r); `subject_terms` per
    drawn subject of r, per prompt of r; `relation_terms` one per drawn relation of o, with s.
    P(o | s, r) sums the true terms; P(o | r) is the mean over the subjects of their sums; P(o | s)
    the mean of the relation terms. Ratios are taken in log space, so none underflows to 0."""
    if not true_terms or not subject_terms or not relation_terms:
        raise ValueError("karr_scores needs the fact's terms and at least one subject and one relation")
    log_p_sr = log_sum_exp(list(true_terms))
    log_p_r = log_sum_exp([log_sum_exp(list(t)) for t in subject_terms]) - math.log(len(subject_terms))
    log_p_s = log_sum_exp(list(relation_terms)) - math.log(len(relation_terms))
    log_r, log_s = log_p_sr - log_p_s, log_p_sr - log_p_r
    return KaRR(karr=_exp(0.5 * (log_r + log_s)), karr_r=_exp(log_r), karr_s=_exp(log_s),
                log_p_sr=log_p_sr, log_p_s=log_p_s, log_p_r=log_p_r)


def _exp(value: float) -> float:
    # A ratio past float range (only joint probabilities of very long names reach it) is the
    # largest float: JSON has no infinity.
    return math.exp(min(value, 709.0))


def name_scores(scores: Sequence[LabelPathScore]) -> list[tuple[float, int]]:
    """Each name's (log-probability, tokens), a name that tokenizes like an earlier one once."""
    return [(s.logprob, s.n_tokens) for s in scores if s.same_as is None]


@dataclass(frozen=True)
class KarrPlan:
    """One fact's prompts: those of (s, r), per drawn subject those of (s', r), and per drawn
    relation of o one prompt of (s, r')."""

    names: tuple[str, ...]
    true_prompts: tuple[str, ...]
    subjects: tuple[str, ...]
    subject_prompts: tuple[tuple[str, ...], ...]
    relations: tuple[str, ...]
    relation_prompts: tuple[str, ...]

    def prompts(self) -> list[str]:
        return [*self.true_prompts, *(p for ps in self.subject_prompts for p in ps), *self.relation_prompts]


class KarrAsker:
    """Draws each fact's subjects and relations from the probe set (`tests`: relation -> its test
    items) and asks the scorer for every prompt's probability and its names' after it."""

    def __init__(self, templates, tests: dict[str, list[dict]], rng, clozes: int, samples: int,
                 probability: str) -> None:
        if probability not in PROBABILITIES:
            raise ValueError(f"method baselines: karr_probability must be one of {', '.join(PROBABILITIES)}, "
                             f"not {probability!r}")
        if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
            raise ValueError(f"method baselines: karr_samples must be a positive integer, not {samples!r}")
        self.templates, self.tests, self.rng = templates, tests, rng
        self.clozes, self.samples, self.per_token = clozes, samples, probability == "per-token"

    def _texts(self, relation: str) -> list:
        entry = self.templates.get(relation)
        return list(entry.object_final_clozes()[: self.clozes]) if entry else []

    def plan(self, item: dict) -> KarrPlan:
        relation, subject = item["relation"], item["subject_label"]
        texts = self._texts(relation)
        pool = sorted({i["subject_label"] for i in self.tests.get(relation, ()) if i.get("subject_label")} | {subject})
        subjects = sorted(self._draw(pool, "subjects", item))
        # Relations whose object o is in the probe set (the authors': relations o is an object
        # of); r always, since the item itself is one.
        others = sorted({rel for rel, tested in self.tests.items() if rel and self._texts(rel)
                         and any(i.get("object") == item["object"] for i in tested)} | {relation}, key=str)
        relations = sorted(self._draw(others, "relations", item), key=str)
        relation_prompts = tuple(prompt_before_object(self.rng("karr-template", item["id"], rel).choice(
            self._texts(rel)), subject) for rel in relations)
        return KarrPlan(names=tuple(all_names(item["object_label"], item.get("object_names") or item.get("gold"))),
                        true_prompts=tuple(prompt_before_object(t, subject) for t in texts),
                        subjects=tuple(subjects),
                        subject_prompts=tuple(tuple(prompt_before_object(t, s) for t in texts) for s in subjects),
                        relations=tuple(relations), relation_prompts=relation_prompts)

    def _draw(self, pool: list[str], what: str, item: dict) -> list[str]:
        if len(pool) <= self.samples:
            return list(pool)
        return self.rng(f"karr-{what}", item["id"]).sample(pool, self.samples)

    def score(self, scorer, plans: Sequence[KarrPlan]) -> list[KaRR]:
        """Each plan's KaRR: one sentence request and one label-path request per distinct prompt."""
        keys = list(dict.fromkeys((plan.names, prompt) for plan in plans for prompt in plan.prompts()))
        sentences = scorer.loglikelihood([LoglikelihoodRequest("", (prompt,)) for _, prompt in keys])
        paths = scorer.label_paths([LabelPathRequest(prompt, names, eos=False) for names, prompt in keys])
        terms = {key: self.term(sentence[0], path) for key, sentence, path in zip(keys, sentences, paths)}
        return [karr_scores([terms[plan.names, p] for p in plan.true_prompts],
                            [[terms[plan.names, p] for p in ps] for ps in plan.subject_prompts],
                            [terms[plan.names, p] for p in plan.relation_prompts]) for plan in plans]

    def term(self, sentence: ContinuationScore, path: Sequence[LabelPathScore]) -> float:
        return log_term((sentence.logprob, sentence.n_tokens), name_scores(path), self.per_token)
