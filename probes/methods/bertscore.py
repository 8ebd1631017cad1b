"""BERT-score as the distractor paper takes it (seed 004 Table 2, line 205): per cloze, the best
BERTScore between a name of the object (o's own names Λ(o) by default, baselines.py) and one of
the cloze's beam search answers, then the mean over the clozes. BERTScore (Zhang et al. 2020) is its F1, the package's headline number: tokens
of the two texts matched greedily by the cosine of an encoder layer's embeddings, no idf
weighting, no baseline rescaling (the `bert-score` package's defaults). The encoder is a local
folder (`bertscore_model`) and the layer `bertscore_layers`: nothing is downloaded; the
package's English default is roberta-large at layer 17. An empty answer scores 0.
"""

from __future__ import annotations

import math
from typing import Sequence

SCORE = "F1"


class BertScoreModel:
    """The `bert-score` package's scorer over a local encoder, loaded once per run."""

    def __init__(self, model: str, layers: int | None) -> None:
        try:
            from bert_score import BERTScorer
        except ImportError as exc:  # an optional dependency
            raise ValueError("method baselines: bertscore_model needs the bert-score package "
                             "(pip install 'factprobe[eval]')") from exc
        if layers is not None and (not isinstance(layers, int) or isinstance(layers, bool) or layers < 0):
            raise ValueError(f"method baselines: bertscore_layers must be a layer number, not {layers!r}")
        try:
            self.scorer = BERTScorer(model_type=str(model), num_layers=layers)
        except KeyError as exc:  # the package knows default layers only for hub names
            raise ValueError(f"method baselines: bertscore_layers is needed for {model!r} (the package "
                             f"knows no default layer for it)") from exc
        tokenizer = self.scorer._tokenizer
        # A tokenizer saved without a length limit says 10**30, which transformers 5's fast
        # tokenizers refuse as the truncation length bert-score asks for: use the encoder's.
        if tokenizer.model_max_length > 10**6:
            tokenizer.model_max_length = self.scorer._model.config.max_position_embeddings
        self.layers = self.scorer.num_layers

    def f1(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """BERTScore F1 of each (candidate, reference) pair; 0 where either is blank."""
        asked = [k for k, (c, r) in enumerate(zip(candidates, references)) if c.strip() and r.strip()]
        out = [0.0] * len(candidates)
        if asked:
            _, _, f1 = self.scorer.score([candidates[k] for k in asked], [references[k] for k in asked])
            for k, value in zip(asked, f1.tolist()):
                out[k] = float(value)
        return out


def best_per_cloze(scorer: BertScoreModel, names: Sequence[Sequence[str]],
                   answers: Sequence[Sequence[Sequence[str]]]) -> list[float]:
    """Per item, the mean over its clozes of the best F1 over (name, answer) pairs: `names` per
    item, `answers` per item per cloze. All pairs go to the encoder in one call."""
    return [math.fsum(best) / len(best) if best else 0.0 for best in bests_per_cloze(scorer, names, answers)]


def bests_per_cloze(scorer: BertScoreModel, names: Sequence[Sequence[str]],
                    answers: Sequence[Sequence[Sequence[str]]]) -> list[list[float]]:
    """Per item, per cloze, the best F1 over (name, answer) pairs (0 without a pair)."""
    pairs = [(a.strip(), n) for item_names, per_cloze in zip(names, answers)
             for texts in per_cloze for a in texts for n in item_names]
    scores = iter(scorer.f1([a for a, _ in pairs], [n for _, n in pairs]))
    return [[max((next(scores) for _ in range(len(texts) * len(item_names))), default=0.0) for texts in per_cloze]
            for item_names, per_cloze in zip(names, answers)]
