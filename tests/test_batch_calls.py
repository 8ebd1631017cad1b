"""`--batch` is items per scorer call (issue 16.4): the methods hand a whole batch of items to the
scorer in a fixed number of calls, so the backend sees every prompt of the batch at once and can
batch and share work across them. Counted on real scorers, wrapped only to count their calls."""

from __future__ import annotations

import math

import pytest

from factprobe.probes.methods import MethodContext
from factprobe.probes.methods.belief_icl import BeliefICL
from factprobe.probes.evaluation.runner import evaluate
from test_belief_bias import FACTS, TOP1, _cloze_set
from test_belief_icl import _item


class Counting:
    """A real scorer, its calls counted by kind (and everything else passed through)."""

    def __init__(self, scorer):
        self._scorer = scorer
        self.calls: dict[str, int] = {}

    def __getattr__(self, name):
        value = getattr(self._scorer, name)
        if name in ("loglikelihood", "generate", "fill_mask", "label_paths"):
            def counted(*args, **kwargs):
                self.calls[name] = self.calls.get(name, 0) + 1
                return value(*args, **kwargs)
            return counted
        return value


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    from factprobe.probes.scoring.loader import load_scorer
    from scoring_models import tiny_bert

    return load_scorer(f"hf-mlm:{tiny_bert(tmp_path_factory.mktemp('bert') / 'bert', seed=5)}", device="cpu")


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    from factprobe.probes.scoring.loader import load_scorer
    from scoring_models import tiny_llama

    return load_scorer(f"hf:{tiny_llama(tmp_path_factory.mktemp('llama') / 'llama')}", device="cpu")


@pytest.mark.parametrize("batch", [1, 2, 16])
def test_belief_asks_every_prompt_of_a_batch_in_one_call(bert, tmp_path, batch):
    scorer = Counting(bert)
    evaluate(scorer, "belief", _cloze_set(tmp_path / "cloze.jsonl"), tmp_path / "run", options=TOP1, batch=batch)
    batches = math.ceil(len(FACTS) / batch)
    # one call for the batch's prompts, one for its content-free prompts
    assert scorer.calls == {"fill_mask": 2 * batches}


def test_belief_icl_asks_a_batch_in_one_generate_call(llama):
    items = [_item(id=f"belief-icl:F{k}:0", fact=f"F{k}", subject_label=f"Country {k}") for k in range(6)]
    # a cap: the tiny random model seldom ends a line, and answer length is not what this counts
    method = BeliefICL(MethodContext({"samples": 2, "settings": ["zero-shot", "x-relation"], "max_tokens": 8}))
    for size in (1, 6):
        scorer = Counting(llama)
        before = llama.work.requests
        records = method.run(scorer, items[:size])
        assert len(records) == size
        # greedy and sampled requests of every item and setting go in one call
        assert scorer.calls == {"generate": 1}
        assert llama.work.requests - before == size * 2 * 2
