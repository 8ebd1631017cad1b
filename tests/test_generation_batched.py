"""Batched generation (issue 16.3): greedy texts equal the model's own one-at-a-time `generate`,
padding, shared prefixes and Gemma's sliding window included; a sampled request's texts depend on
its seed, not on its batch; finished rows stop costing compute; a device out of memory halves the
batch; batches are cut where prompts share little."""

from __future__ import annotations

import pytest
import torch

from factprobe.probes.scoring import hf_decode
from factprobe.probes.scoring.tokens import eos_ids
from factprobe.probes.scoring.requests import GenerateRequest
from scoring_models import real_scorer

INSTRUCTION = "Predict the [MASK] in each sentence in one word."
DEMOS = "\n".join(f"Q: The capital of {country} is [MASK].\nA: {city}"
                  for country, city in [("Spain", "Madrid"), ("Italy", "Rome"), ("Japan", "Tokyo")])
ICL = [f"{INSTRUCTION}\n{DEMOS}\nQ: The capital of {c} is [MASK].\nA:" for c in ("France", "Germany", "the Netherlands")]
OTHERS = ["Q: What is the capital of Portugal?\nA:", "Albert Einstein was born in the year", "Count: one, two, three,",
          "x", ""]


def _reference(scorer, request: GenerateRequest) -> tuple[str, str]:
    """One prompt through the model's own greedy `generate`, stopped as the scorer stops."""
    ids = torch.tensor([scorer.encode(request.prompt) or [scorer.start_id]])
    out = scorer.model.generate(ids, max_new_tokens=request.max_tokens, do_sample=False,
                                attention_mask=torch.ones_like(ids))
    eos, tokens, text = set(eos_ids(scorer.tokenizer, scorer.model)), [], ""
    for token in out[0, ids.shape[1]:].tolist():
        if token in eos:
            return text, "eos"
        tokens.append(token)
        text = scorer.tokenizer.decode(tokens, skip_special_tokens=True)
        hits = [text.find(s) for s in request.stop if s in text]
        if hits:
            return text[:min(hits)], "stop"
    return text, "length"


def _answers(generations) -> list[tuple[str, str]]:
    return [(g.texts[0], g.finish_reasons[0]) for g in generations]


@pytest.mark.slow
# Gemma's batched greedy is held to the one-prompt path by test_batched_greedy_past_gemmas_sliding_window
# (the harder case); both models here cost CI 51 s for no more coverage.
@pytest.mark.parametrize("spec", ["smollm2-135m-instruct"])
def test_batched_greedy_equals_generate_one_prompt_at_a_time(spec):
    scorer = real_scorer(spec)
    requests = ([GenerateRequest(p, max_tokens=6) for p in ICL + OTHERS]
                + [GenerateRequest(p, max_tokens=8, stop=("\n", ".")) for p in ICL + OTHERS[:2]])
    before = scorer.work.padding_tokens
    batched = scorer.generate(requests)
    assert scorer.work.padding_tokens > before  # prompts of different lengths shared a pass
    assert _answers(batched) == [_reference(scorer, r) for r in requests]
    # The instruction and demonstrations are fed once for the three ICL prompts (one token each
    # to generate: nothing is fed after the prompts).
    encoded = [scorer.encode(p) for p in ICL]
    common = min(len(e) for e in encoded) - 1
    while any(e[:common] != encoded[0][:common] for e in encoded):
        common -= 1
    assert common >= 60  # the instruction and the three demonstrations
    before = scorer.work.tokens_forwarded
    scorer.generate([GenerateRequest(p, max_tokens=1) for p in ICL])
    assert scorer.work.tokens_forwarded - before == common + 3 * (max(map(len, encoded)) - common)


@pytest.mark.slow
def test_batched_greedy_past_gemmas_sliding_window():
    """Rows padded by different amounts past the 512-token window: the sliding layers count the
    window in positions, so each row sees what it sees alone."""
    scorer = real_scorer("gemma3-270m")
    window = scorer.model.config.get_text_config().sliding_window
    facts = " ".join(f"Country {k} has the capital city {k}." for k in range(70))
    assert len(scorer.encode(facts)) > window
    requests = [GenerateRequest(facts + question, max_tokens=5) for question in
                ("\nQ: Which city is the capital of country 3?\nA:", "\nQ: Capital of 12?\nA:",
                 " Now tell me, in one word and without any hesitation, the capital of country 41.\nA:")]
    before = scorer.work.padding_tokens
    batched = scorer.generate(requests)
    assert scorer.work.padding_tokens > before
    assert _answers(batched) == [_reference(scorer, r) for r in requests]


@pytest.mark.slow
def test_samples_depend_on_the_seed_not_the_batch():
    """In float64: in float32 a batch rounds the logits otherwise (within 1e-4 nats), and a draw
    that falls that near a token's boundary in the cumulative distribution picks its neighbour
    (seen here: 1 sample in 5 at temperature 1, on the first token). The generators, not the
    arithmetic, are what this test pins."""
    scorer = real_scorer("smollm2-135m-instruct", "float64")
    mine = GenerateRequest("My favourite animal is the", max_tokens=6, temperature=1.0, n=5, seed=7, stop=(".",))
    others = [GenerateRequest("My favourite animal is the", max_tokens=6, temperature=1.0, n=5, seed=8, stop=(".",)),
              GenerateRequest("The capital of France is", max_tokens=4),
              GenerateRequest("Q: What is the capital of Italy?\nA:", max_tokens=5, temperature=0.7, n=3, seed=7),
              GenerateRequest("Once upon a time", max_tokens=7, temperature=1.3, n=2, seed=1, top_p=0.9),
              GenerateRequest("My favourite animal is the", max_tokens=3, temperature=1.0, seed=7),
              mine,
              GenerateRequest("My favourite animal is the", max_tokens=6, temperature=1.0, n=3, top_p=1e-6, seed=3)]
    alone = scorer.generate([mine])[0]
    assert len(set(alone.texts)) > 1
    batched = scorer.generate(others[:3] + [mine] + others[3:])
    assert batched[3] == batched[6] == alone  # the same request twice in a batch: the same samples
    assert batched[0] != alone  # another seed
    greedy = scorer.generate([GenerateRequest("My favourite animal is the", max_tokens=6)])[0].texts[0]
    assert greedy.startswith(" cat") and batched[7].texts == (greedy,) * 3  # a nucleus of one token: greedy
    scorer.generate_rows = 3  # the samples of one request spread over batches
    try:
        spread = scorer.generate(others[::-1] + [mine])
    finally:
        del scorer.generate_rows
    assert spread[-1] == alone
    assert spread[:-1][::-1] == batched[:3] + batched[4:]


@pytest.mark.slow
def test_finished_rows_leave_the_batch():
    scorer = real_scorer("smollm2-135m-instruct")
    short = GenerateRequest("The capital of France is", max_tokens=10, stop=(".",))  # " Paris", "."
    long = GenerateRequest("Count: one, two, three,", max_tokens=8)
    ids = [scorer.encode(r.prompt) for r in (short, long)]
    shared = min(hf_decode._common(*ids), min(map(len, ids)) - 1)
    width = max(map(len, ids)) - shared
    before = scorer.work.forward_passes, scorer.work.tokens_forwarded
    stopped, limited = scorer.generate([short, long])
    assert (stopped.texts, stopped.finish_reasons, limited.finish_reasons) == ((" Paris",), ("stop",), ("length",))
    # One batch: its prefill, then the long row's 7 steps; the short row is fed once (" Paris").
    assert scorer.work.forward_passes - before[0] == (shared > 0) + 1 + 7
    assert scorer.work.tokens_forwarded - before[1] == shared + 2 * width + 1 + 7


class _OutOfMemoryAbove:
    """The model, refusing passes of more than `rows` rows as a full device does."""

    def __init__(self, model, rows: int) -> None:
        self.model, self.rows, self.refused = model, rows, 0

    def __getattr__(self, name):
        return getattr(self.model, name)

    def __call__(self, input_ids, **kwargs):
        if input_ids.shape[0] > self.rows:
            self.refused += 1
            raise torch.OutOfMemoryError("out of memory (simulated)")
        return self.model(input_ids=input_ids, **kwargs)


@pytest.mark.slow
def test_out_of_memory_halves_the_batch():
    scorer = real_scorer("smollm2-135m-instruct")
    requests = [GenerateRequest(p, max_tokens=4) for p in OTHERS[:3]] + [
        GenerateRequest("My favourite animal is the", max_tokens=4, temperature=1.0, n=4, seed=5)]
    expected = scorer.generate(requests)
    model, scorer.model = scorer.model, _OutOfMemoryAbove(scorer.model, 2)
    try:
        assert scorer.generate(requests) == expected
        assert scorer.model.refused and scorer.generate_rows <= 2
    finally:
        scorer.model = model
        del scorer.generate_rows


@pytest.mark.slow
def test_kernels_without_masks_batch_prompts_of_one_length(monkeypatch):
    scorer = real_scorer("smollm2-135m-instruct")
    monkeypatch.setattr(hf_decode, "_MASKED_KERNELS", ())
    requests = [GenerateRequest(f"Q: What is the capital of {c}?\nA:", max_tokens=4, stop=("\n",))
                for c in ("France", "Spain", "Czechia")] + [GenerateRequest(OTHERS[1], max_tokens=4)]
    lengths = [len(scorer.encode(r.prompt)) for r in requests]
    assert lengths[0] == lengths[1] != lengths[2]
    before = scorer.work.padding_tokens
    assert _answers(scorer.generate(requests)) == [_reference(scorer, r) for r in requests]
    assert scorer.work.padding_tokens == before


def _shape(budget: int = 1 << 40, masks: bool = True):
    """A batch plan's shape without a model: 1000 bytes a cached token, 100-token vocabulary."""
    shape = object.__new__(hf_decode._Shape)
    shape.kv_bytes, shape.act_bytes, shape.score_bytes, shape.vocab = 1000, 1000, 10, 100
    shape.budget, shape.masks, shape.window, shape.additive = budget, masks, None, False
    shape.requests = [GenerateRequest("p", max_tokens=8, temperature=1.0, n=3)]
    return shape


def test_batches_cut_where_prompts_share_little():
    # Two groups of four prompts, each group sharing 300 tokens of demonstrations, the groups 3.
    groups = [tuple(range(300)), (0, 1, 2) + tuple(range(1000, 1297))]
    prompts = sorted((demos + (5000 + k,) * (1 + k), [(0, 0), (0, 1), (0, 2)]) for demos in groups for k in range(4))
    batches = hf_decode._batches(prompts, 64, _shape())
    assert [[ids[:300] for ids, _ in b] for b in batches] == [[groups[0]] * 4, [groups[1]] * 4]
    # Five rows a batch at most: the second prompt's rows are split.
    batches = hf_decode._batches(prompts[:4], 5, _shape())
    assert [sum(len(r) for _, r in b) for b in batches] == [5, 5, 2]
    assert batches[1][0] == (prompts[1][0], [(0, 2)])
    # A memory budget of about two rows of 310 tokens (each held twice while a step appends).
    small = _shape(budget=2 * 2 * 320 * 1000)
    batches = hf_decode._batches(prompts[:4], 64, small)
    assert all(small.fits(b) and sum(len(r) for _, r in b) <= 2 for b in batches)
    assert [(ids, row) for b in batches for ids, rows in b for row in rows] == [
        (ids, row) for ids, rows in prompts[:4] for row in rows]
    # Kernels without masks: one length a batch.
    batches = hf_decode._batches(prompts[:4], 64, _shape(masks=False))
    assert all(len({len(ids) for ids, _ in b}) == 1 for b in batches)


def test_order_keeps_shared_prefixes_together_and_the_rest_by_length():
    demos = tuple(range(20))  # shared by three prompts: more than _SHARE_TOKENS
    near = tuple(range(100, 110))  # shared by two prompts: 10 tokens, too few to keep them together
    rows = [(0, 0)]
    prompts = {demos + (7,) * 5: rows, demos + (8,): rows, demos + (9,) * 3: rows,
               near + (1,) * 12: rows, near + (2,): rows, (900,) * 7: rows, (50,) * 2: rows}
    order = [ids for ids, _ in hf_decode._ordered(prompts.items())]
    assert order == [demos + (8,), demos + (9,) * 3, demos + (7,) * 5,  # the run, shortest first
                     (50,) * 2, (900,) * 7, near + (2,), near + (1,) * 12]  # the rest by length
    # A batch's shared prefix in any order: what its first and last in token order share.
    shape = _shape()
    assert shape.prefill([(demos + (7,) * 5, rows), (demos + (8,), rows), (demos + (9,) * 3, rows)]) == (20, 5)
    assert shape.prefill([(near + (2,), rows), (near + (1,) * 12, rows)]) == (10, 12)
    assert shape.prefill([(demos + (8,), rows), (demos + (8,), rows)]) == (20, 1)  # one token of its own


def test_questions_of_mixed_lengths_batch_by_length():
    # Eight prompts that share nothing, of 9 to 22 tokens, whose token order mixes the lengths.
    lengths = [22, 9, 21, 10, 20, 11, 19, 12]
    prompts = {(k,) * n: [(0, k)] for k, n in enumerate(lengths)}
    shape = _shape()

    def padding(batches):
        return sum(shape.prefill(b)[1] * len(b) - sum(len(ids) for ids, _ in b) for b in batches)

    in_token_order = hf_decode._batches(sorted(prompts.items()), 4, shape)
    ordered = hf_decode._batches(hf_decode._ordered(prompts.items()), 4, shape)
    assert [[len(ids) for ids, _ in b] for b in ordered] == [[9, 10, 11, 12], [19, 20, 21, 22]]
    assert padding(in_token_order) == (22 * 4 - 62) + (20 * 4 - 62) == 44
    assert padding(ordered) == (12 * 4 - 42) + (22 * 4 - 82) == 12


def test_order_keeps_each_demonstration_block_together_under_a_shared_instruction():
    # BELIEF-ICL settings in one call: one instruction, then two blocks of demonstrations, each
    # under questions of several lengths. A batch of a block's prompts shares instruction + block.
    instruction, blocks = tuple(range(20)), (tuple(range(200, 230)), tuple(range(300, 330)))
    prompts = {instruction + block + (9,) * n: [(0, 0)] for block in blocks for n in (6, 2, 4)}
    order = [ids for ids, _ in hf_decode._ordered(prompts.items())]
    assert order == [instruction + block + (9,) * n for block in blocks for n in (2, 4, 6)]
    batches = hf_decode._batches(hf_decode._ordered(prompts.items()), 3, _shape())
    # Instruction, block and the questions' first tokens (the shortest keeps one of its own).
    assert [_shape().prefill(b) for b in batches] == [(51, 5), (51, 5)]
