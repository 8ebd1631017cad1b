"""BELIEF's report sections over the aggregates of probes/measures/belief_records.py: the table of
its headline measures, and one line per BELIEF / BELIEF-ICL run naming the definitions its numbers
follow."""

from __future__ import annotations

from typing import Sequence

from ..document import Block, Heading, ReportRun, Section, Text, measure_columns, table


def _measures_blocks(runs: Sequence[ReportRun]) -> list[Block]:
    shown = [r for r in runs if "acc_at_1" in r.aggregate or "consistency" in r.aggregate]
    if not shown:
        return []
    columns = measure_columns([r.aggregate for r in shown])
    return [Heading("BELIEF measures", 3),
            table(("Run", *(h for h, _ in columns)),
                  [(r.rid, *(get(r.aggregate) for _, get in columns)) for r in shown])]


UNITS = {"pair": "subject-relation pair (BELIEF's)", "fact": "(s, r, o) fact, not BELIEF's pair",
         "mixed": "mixed pairs and facts"}
BIAS = {"entropy": "1 - H/H_max of the content-free distribution over the candidate objects, averaged over the "
                   "prompts before normalizing (BELIEF's); single-prompt: the mean of each template's level",
        "entropy-rows": "1 - H/H_max of the mean of the content-free distributions, each renormalized over the "
                        "candidates first (factprobe's earlier default), not BELIEF's",
        "top1": "share of answers equal to the content-free prompt's top-1 answer, not BELIEF's"}
MAXIMUM = {"best-subject": "best subject expression per template (MyriadLAMA's)",
           "mean": "mean over a template's subject expressions, not MyriadLAMA's"}


def _definitions_blocks(runs: Sequence[ReportRun]) -> list[Block]:
    """Which definition each BELIEF / BELIEF-ICL run's numbers follow (the aggregate's
    `definitions`), one line per run, beside the numbers."""
    lines = []
    for r in runs:
        d = r.aggregate.get("definitions")
        if not isinstance(d, dict):
            continue
        parts = [f"unit {d.get('unit')}: {UNITS.get(d.get('unit'), '?')}",
                 f"Acc@1 over {d.get('acc_draws')} one-prompt draws"
                 + (" (BELIEF's N)" if d.get("acc_draws") == 50_000 else " (BELIEF uses 50000)")]
        if d.get("bias"):
            parts.append(f"bias={d['bias']}: {BIAS.get(d['bias'], '?')}")
        if d.get("coverage_maximum"):
            parts.append(f"coverage_maximum={d['coverage_maximum']}: {MAXIMUM.get(d['coverage_maximum'], '?')}")
        if "max_tokens" in d:  # BELIEF-ICL's generated answers
            parts.append(_answer_length(d["max_tokens"], r.aggregate.get("by_setting")))
        if "sample_prompts" in d:  # BELIEF-ICL's sampled answers behind Ovconf
            parts.append(_sampling(d))
        if "ovconf_bins" in d:
            parts.append(_bins(d))
        if "empty_answers" in d:
            parts.append(EMPTY.get(d["empty_answers"], f"empty_answers={d['empty_answers']}"))
        lines.append(f"{r.rid}: " + "; ".join(parts) + ".")
    return [Text("Definitions of the BELIEF measures. " + " ".join(lines))] if lines else []


def _answer_length(cap, by_setting) -> str:
    """How long a BELIEF-ICL answer may run, and how many greedy answers the limit stopped."""
    cut = sum(v.get("answers_cut") or 0 for v in (by_setting or {}).values() if isinstance(v, dict))
    text = ("answers run to the end of their line (BELIEF-ICL's)" if cap is None else
            f"answers cut at {cap} tokens, not BELIEF-ICL's (no cap)")
    return text + (f"; {cut} greedy answer{'s' if cut != 1 else ''} reached the limit" if cut else "")


def _sampling(d: dict) -> str:
    """Which prompts BELIEF-ICL's confidence (and so Ovconf) is measured on, and the prompt style."""
    where = (f"one prompt of each of up to {d['sample_prompts']} subject-relation pairs"
             + (" (BELIEF-ICL's 10K)" if d["sample_prompts"] == 10_000 else ", not BELIEF-ICL's 10K")
             if d["sample_prompts"] != "all" else "every prompt, not BELIEF-ICL's 10K pairs")
    text = f"Ovconf from {d.get('samples')} sampled answers on {where}"
    return text + ("; QA-style prompts (BELIEF-ICL's appendix D)" if d.get("prompt_style") == "qa" else "")


EMPTY = {"disagree": "an answer without words agrees with no answer, in Consist and in confidence (factprobe's "
                     "reading: BELIEF does not say)",
         "agree": "two answers without words agree, in Consist and in confidence (empty_answers=agree, factprobe's "
                  "earlier default)"}


def _bins(d: dict) -> str:
    """How Ovconf's bins are formed: the order, the size and what happens to tied confidences."""
    order = d["ovconf_bins"]
    text = (f"Ovconf's bins: the prompts sorted by confidence, {order}"
            + (" (BELIEF's)" if order == "descending" else ", not BELIEF's descending")
            + ", cut into 10 bins of equal size (one per prompt when fewer; when the count does not divide, the "
              "first bins hold one prompt more), Ovconf the mean over the bins of mean confidence - accuracy")
    ties = d.get("ovconf_ties", "file-order")  # an aggregate from before the option kept file order
    if ties == "average":
        return text + ("; prompts of equal confidence that a bin edge cuts apart give each of their places their "
                       "share of correct answers, the mean over every order of the ties, so the records' order "
                       "changes no bin")
    return text + "; prompts of equal confidence in the records' order (ovconf_ties=file-order: that order can change Ovconf)"


BELIEF_MEASURES = Section(10, _measures_blocks)  # BELIEF's table of its headline measures
BELIEF_DEFINITIONS = Section(20, _definitions_blocks)  # BELIEF's and BELIEF-ICL's
