"""Every measure factprobe reports, in one package. The pure functions over values (no I/O, no
model): BELIEF / BELIEF-ICL and MyriadLAMA (belief.py), IC-LKE (iclke.py), the distractor measure
and its baselines (distractors.py; ROUGE-L is rouge-score's), DistFact's evaluation of measures
against human judgement (assess.py), standard errors, intervals and
paired tests (uncertainty.py; scipy.stats' bootstrap and binomial test), accuracy per group, KDF's
frequency buckets included (breakdowns.py). Over a run's records: accuracy with its interval and
breakdowns (accuracy.py, what every aggregate starts from), BELIEF's measures (belief_records.py),
and what two runs know in common (overlap.py). probes/evaluation/aggregate.py applies them to a run, each
method choosing its own through `aggregate_extra`.
Every pure function is importable from here: `from factprobe.probes import measures; measures.acc_at_1`.

Conventions: empty or mismatched input raises ValueError naming the argument, a defined value with
nothing to average over is NaN; "correct" is read with bool(); whether a model "knows" a fact is a
strict comparison (a tie is not knowledge). The details: docs/design/measures.md.
"""

from __future__ import annotations

from .assess import (ClozeWins, FoldChoice, best_config, binarize, cloze_subset, cross_validate, distractor_counts,
                     distractor_score, kfold, mean_and_std, paired_tau, proportional_gain, rescored)
from .belief import (BIAS_DEFINITIONS, COVERAGE_MAXIMUM, PAPER_ACC_DRAWS, PAPER_CONTENT_FREE, AccAt1, Bin, Coverage,
                     acc_at_1, answer_key, bias_level, consistency, coverage, entropy_bias_level, expected_acc_at_1,
                     one_word_ratio, overconfidence, reliability_bins, sharing_rates,
                     single_prompt_bias_level)
from .breakdowns import GroupAccuracy, accuracy_by
from .distractors import (UnicodeWords, avg_at_n, fact_means, mean_over_facts, min_at_n, precision_at_n,
                          probability_known, rouge_l)
from .iclke import (AccuracyAtK, accuracy_at_k, kendall_tau, mean_over_relations, normalize_choice_probs, pearson,
                    shared_rate, sharing_rate, subsumption_rate, subsumption_rate_by_relation)
from .uncertainty import (BOOTSTRAP_DRAWS, FEW_ITEMS, Estimate, PairedTest, bootstrap, items_for_width, mcnemar,
                          mcnemar_p, proportion, wilson)

__all__ = [
    # DistFact's evaluation of measures against human judgement (`factprobe assess`)
    "ClozeWins", "FoldChoice", "best_config", "binarize", "cloze_subset", "cross_validate", "distractor_counts",
    "distractor_score", "kfold", "mean_and_std", "paired_tau", "proportional_gain", "rescored",
    # BELIEF / BELIEF-ICL / MyriadLAMA
    "AccAt1", "BIAS_DEFINITIONS", "Bin", "COVERAGE_MAXIMUM", "Coverage", "PAPER_ACC_DRAWS", "PAPER_CONTENT_FREE",
    "acc_at_1", "answer_key", "bias_level", "consistency", "coverage", "entropy_bias_level", "expected_acc_at_1",
    "one_word_ratio", "overconfidence", "reliability_bins", "sharing_rates", "single_prompt_bias_level",
    # breakdowns
    "GroupAccuracy", "accuracy_by",
    # IC-LKE
    "AccuracyAtK", "accuracy_at_k", "kendall_tau", "mean_over_relations", "normalize_choice_probs", "pearson",
    "shared_rate", "sharing_rate", "subsumption_rate", "subsumption_rate_by_relation",
    # uncertainty
    "BOOTSTRAP_DRAWS", "Estimate", "FEW_ITEMS", "PairedTest", "bootstrap", "items_for_width", "mcnemar", "mcnemar_p",
    "proportion",
    "wilson",
    # distractors and baselines
    "UnicodeWords", "avg_at_n", "fact_means", "mean_over_facts", "min_at_n", "precision_at_n", "probability_known",
    "rouge_l",
]
