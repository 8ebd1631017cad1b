"""Cross-request batching and prefix sharing in the causal engine, against the slow reference.

One call holds many contexts: some share a long prefix (fixed demonstrations), some nothing,
some nest, some repeat. The engine encodes each shared prefix once and runs the rest many
contexts to a pass; the numbers must still equal one full forward pass per continuation within
1e-4 nats, whatever the budget, batch size or tail mode, on both real models.
"""

from __future__ import annotations

import random

import pytest

from factprobe.probes.scoring.prefix_tree import PrefixTree, distinct_prefixes
from factprobe.probes.scoring.reference import reference_loglikelihood
from factprobe.probes.scoring.requests import LoglikelihoodRequest as Req
from factprobe.probes.scoring.scorer import Work
from scoring_models import REAL_MODELS, real_scorer
from test_scoring_exact import TOLERANCE, _compare, settings

COUNTRIES = ["France", "Germany", "Italy", "Spain", "Austria", "Norway", "Poland", "Greece", "Japan", "Chile",
             "Peru", "Egypt", "Kenya", "Canada", "Mexico", "Sweden", "Ireland", "Portugal", "Turkey", "Brazil"]
CAPITALS = ["Paris", "Berlin", "Rome", "Madrid", "Vienna", "Oslo", "Warsaw", "Athens", "Tokyo", "Santiago",
            "Lima", "Cairo", "Nairobi", "Ottawa", "Mexico City", "Stockholm", "Dublin", "Lisbon", "Ankara", "Brasília"]
DEMOS = "\n".join(f"{c}: {k}" for c, k in zip(COUNTRIES[:12], CAPITALS[:12]))


def _kdf_context(k: int) -> str:
    """A KDF-like prompt of its own: one answered question and the test question, options A-D."""
    rng = random.Random(k)
    def question(with_answer: bool) -> str:
        country = rng.choice(COUNTRIES)
        options = rng.sample(CAPITALS, 4)
        lines = [f"Question: What is the capital of {country}?", *[f"{x}. {o}" for x, o in zip("ABCD", options)]]
        return "\n".join([*lines, "Answer:" + (f" {rng.choice('ABCD')}" if with_answer else "")])
    return question(True) + "\n\n" + question(False)


MIXED = [
    # fixed demonstrations, then a fact: one- and multi-token choices
    *[Req(f"{DEMOS}\n{c}:", (" Paris", " Mexico City", " the city of Lima", " Brasília")) for c in COUNTRIES[12:16]],
    # the same context again, other continuations (grouped with the one above)
    Req(f"{DEMOS}\n{COUNTRIES[12]}:", (" Nairobi", " Ottawa")),
    # nested contexts: each extends the one before
    Req(DEMOS.split("\n")[0], ("\n", "\nGermany")),
    Req("\n".join(DEMOS.split("\n")[:3]), ("\nItaly: Rome", " and")),
    # KDF-like: distinct prompts, one-token letters
    *[Req(_kdf_context(k), (" A", " B", " C", " D")) for k in range(3)],
    # nothing shared
    Req("Zürich liegt in der", (" Schweiz", " Österreich 🇦🇹")),
    Req("", ("Hello", "Hello world")),
    Req("Hel", ("lo", " world")),  # a merge at the context's only token
    Req("The capital of France is ", ("Paris", "the city of Lyon")),  # a trailing space
]

# settings x the engine: every one must give the reference's numbers
# (Gemma puts <bos> first: with the default 512-token rows, this whole call is one tree in one row.)
VARIANTS = [
    {},
    {"batch_size": 1, "row_tokens": 64},
    {"batch_size": 3, "row_tokens": 64},
    {"pass_tokens": 16},  # every shared prefix and long context is cut across passes
    {"memory_budget": "tight"},  # the memory budget cuts them: ~16 tokens a pass, fewer deeper down
    {"share_min": 0, "row_tokens": 48},  # every shared node runs on its own
    {"share_min": 10 ** 9, "row_tokens": 32},  # shared nodes run again under every unit
    {"tail_mode": "expanded"},
    {"tail_mode": "expanded", "batch_size": 2, "pass_tokens": 40},
]


@pytest.fixture(scope="module", params=REAL_MODELS)
def mixed(request):
    scorer = real_scorer(request.param)
    return scorer, [reference_loglikelihood(scorer.model, scorer.tokenizer, r) for r in MIXED]


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(f"{k}={v}" for k, v in v.items()) or "default")
def test_one_call_of_many_contexts_equals_the_reference(mixed, variant):
    scorer, reference = mixed
    if variant.get("memory_budget") == "tight":
        variant = {**variant, "memory_budget": scorer.pass_bytes(1, 16, 96, 2)}
    with settings(scorer, **variant):
        scorer.work = Work()
        _compare(scorer.loglikelihood(MIXED), reference, str(variant), MIXED)
        work = scorer.work
    assert work.tokens_forwarded - work.padding_tokens == work.distinct_tokens + work.repeated_tokens
    assert work.shared_prefix_tokens >= 3 * (len(scorer.encode(DEMOS)) - 2)  # 4 facts, one demonstration block
    if "pass_tokens" in variant or "memory_budget" in variant:
        longest = max(len(scorer.encode(r.context)) for r in MIXED)
        assert work.forward_passes >= longest / 16


@pytest.mark.slow
# What is encoded once is the prefix tree's, not the model's: one model shows it (gemma's
# exactness is held by the other tests here).
@pytest.mark.parametrize("spec", ["smollm2-135m-instruct"])
def test_fixed_demonstrations_are_encoded_once_per_call(spec):
    """20 demonstration lines, 5 facts x 10 choices: the lines run once, not once per fact."""
    scorer = real_scorer(spec)
    demos = "\n".join(f"{c}: {k}" for c, k in zip(COUNTRIES, CAPITALS))
    facts = ["Australia", "Belgium", "Cuba", "Denmark", "Ethiopia"]  # no two start alike
    requests = [Req(f"{demos}\n{fact}:", tuple(f" {k}" for k in CAPITALS[:10])) for fact in facts]
    scorer.work = Work()
    got = scorer.loglikelihood(requests)
    work = scorer.work
    # what runs: each continuation's tokens but its last, as the sets of their prefixes
    fed = [[scorer.split(r.context, c).ids[:-1] for c in r.continuations] for r in requests]
    prefixes = [{tuple(s[:k]) for s in seqs for k in range(1, len(s) + 1)} for seqs in fed]
    everything = set().union(*prefixes)
    alone = sum(map(len, prefixes))
    shared = len(scorer.encode(f"{demos}\n"))  # the facts' common prefix
    contexts = [scorer.encode(r.context) for r in requests]
    assert all(c[:shared] == contexts[0][:shared] for c in contexts)
    assert work.distinct_tokens == len(everything)
    assert work.shared_prefix_tokens == alone - len(everything) == (len(facts) - 1) * shared
    # Each distinct prefix once: the demonstrations once, then each fact's rest and choices.
    assert work.repeated_tokens == 0 and work.padding_tokens == 0
    assert work.tokens_forwarded == work.distinct_tokens
    assert work.forward_passes <= 3
    reference = [reference_loglikelihood(scorer.model, scorer.tokenizer, r) for r in requests]
    _compare(got, reference, "fixed demonstrations", requests)


@pytest.mark.slow
@pytest.mark.parametrize("spec", REAL_MODELS)
def test_kdf_contexts_run_many_to_a_pass(spec):
    scorer = real_scorer(spec)
    requests = [Req(_kdf_context(k), (" A", " B", " C", " D")) for k in range(30)]
    assert len({r.context for r in requests}) == 30
    scorer.work = Work()
    got = scorer.loglikelihood(requests)
    assert scorer.work.forward_passes < len(requests) / 4
    assert scorer.work.tokens_forwarded <= scorer.work.min_tokens
    # the slow path on every third context (each of its 4 letters is a whole forward pass): the
    # batching is measured on all 30, exactness on 10 spread over the packed rows
    checked = range(0, len(requests), 3)
    reference = [reference_loglikelihood(scorer.model, scorer.tokenizer, requests[k]) for k in checked]
    _compare([got[k] for k in checked], reference, "kdf", [requests[k] for k in checked])


LONG_SHARED = "\n".join(f"Country number {i} has capital city number {i}." for i in range(60))


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["gemma3-270m"])  # the model with a sliding window (SmolLM2 has none)
def test_shared_prefix_past_the_sliding_window(spec):
    """Two contexts share 800 tokens, past Gemma 3's 512-token window; the prefix is cut across
    passes so the window reaches back into the cache from the later pieces."""
    scorer = real_scorer(spec)
    requests = [Req(f"{LONG_SHARED}\nFrance", (" Paris", " is not the capital")),
                Req(f"{LONG_SHARED}\nThe last country is", (" number 59", " Peru"))]
    assert len(scorer.encode(LONG_SHARED)) > 600
    reference = [reference_loglikelihood(scorer.model, scorer.tokenizer, r) for r in requests]
    for variant in ({}, {"pass_tokens": 200}, {"pass_tokens": 300, "tail_mode": "expanded"}):
        with settings(scorer, **variant):
            scorer.work = Work()
            _compare(scorer.loglikelihood(requests), reference, f"long shared prefix {variant}", requests)
            assert scorer.work.shared_prefix_tokens >= len(scorer.encode(LONG_SHARED)) - 2


@pytest.mark.slow
def test_prefix_cache_serves_a_later_call():
    scorer = real_scorer("smollm2-135m-instruct")
    choices = (" Paris", " Mexico City", " the city of Lima")
    first = [Req(f"{DEMOS}\n{c}:", choices) for c in COUNTRIES[12:15]]
    later = [Req(f"{DEMOS}\n{c}:", choices) for c in COUNTRIES[15:18]]
    plain = scorer.loglikelihood(later)
    # small rows: the demonstrations run as a shared node of their own, which is what is kept
    with settings(scorer, prefix_cache_bytes=64 << 20, row_tokens=16):
        try:
            scorer.loglikelihood(first)
            scorer.work = Work()
            served = scorer.loglikelihood(later)
        finally:
            scorer._prefix_cache.clear()
    assert scorer.work.cached_tokens >= len(scorer.encode(DEMOS))
    assert scorer.work.tokens_forwarded < len(scorer.encode(DEMOS))
    for a, b in zip(plain, served):
        for x, y in zip(a, b):
            assert abs(x.logprob - y.logprob) <= TOLERANCE


@pytest.mark.slow
def test_isolated_contexts_give_the_same_bits_whatever_else_is_scored():
    scorer = real_scorer("smollm2-135m-instruct")
    contexts = [r.context for r in MIXED]
    unique = [r for r in MIXED if contexts.count(r.context) == 1]  # a context's continuations run together
    with settings(scorer, share_across_requests=False):
        together = scorer.loglikelihood(unique)
        alone = [scorer.loglikelihood([r])[0] for r in unique]
    assert together == alone


def test_prefix_tree_shares_prefixes_and_keeps_its_marks_through_splits():
    seqs = [(1, 2, 3, 4, 5), (1, 2, 3, 9), (1, 2), (7, 8), (1, 2, 3, 4, 5, 6)]
    tree = PrefixTree()
    for s in seqs:
        tree.insert(s)
    for k, s in enumerate(seqs):
        tree.mark(s, len(s) - 1, 100 + k, k)
    assert tree.measure() == len({s[:n] for s in seqs for n in range(1, len(s) + 1)}) == distinct_prefixes(seqs)
    assert [c.tokens for c in tree.root.children.values()] == [[1, 2], [7, 8]]
    node = tree.cut(seqs[0], 4)  # ends after (1, 2, 3, 4)
    assert node.tokens == [4] and node.end == 4 and node.size == 3 and node.is_chain()
    for k, s in enumerate(seqs):
        found, offset = tree.locate(s, len(s) - 1)
        assert found.keep[offset] == {100 + k: [k]}
    tail = PrefixTree.split(tree.root.children[7], 1)
    assert tail.tokens == [8] and tail.keep == {0: {103: [3]}} and tail.size == 1


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from factprobe.probes.scoring.loader import load_scorer
    from scoring_models import tiny_llama

    return load_scorer(f"hf:{tiny_llama(tmp_path_factory.mktemp('tiny'))}", device="cpu")


_references: dict[tuple[int, int], list] = {}


def _tiny_reference(tiny, seed: int) -> list:
    """The reference's answers to _random_calls(seed), computed once for every variant."""
    key = (id(tiny), seed)
    if key not in _references:
        _references[key] = [reference_loglikelihood(tiny.model, tiny.tokenizer, r) for r in _random_calls(seed)]
    return _references[key]


def _random_calls(seed: int) -> list[Req]:
    """Contexts grown from a few stems, so they share prefixes of every length, some nested in
    others, with one- to four-word continuations."""
    rng = random.Random(seed)
    words = ["river", "stone", " hill", "a", ",", "\n", "North", "lake", "the", "of", ":", "1", "22"]
    stems = ["".join(rng.choice(words) + " " for _ in range(rng.randint(0, 30))) for _ in range(3)]
    requests, grown = [], []
    for _ in range(40):
        base = rng.choice(stems + grown) if grown else rng.choice(stems)
        context = base + "".join(rng.choice(words) for _ in range(rng.randint(0, 6)))
        grown.append(context)
        choices = {" " + " ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 5))}
        requests.append(Req(context, tuple(sorted(choices))))
    return requests


@pytest.mark.parametrize("variant", [{}, {"batch_size": 2, "row_tokens": 24}, {"pass_tokens": 7},
                                     {"share_min": 0, "row_tokens": 16}, {"tail_mode": "expanded"},
                                     {"tail_mode": "expanded", "pass_tokens": 9, "max_padding_share": 1.0}])
def test_random_calls_on_a_tiny_model_equal_the_reference(tiny, variant):
    for seed in range(3):
        requests = _random_calls(seed)
        reference = _tiny_reference(tiny, seed)
        with settings(tiny, **variant):
            tiny.work = Work()
            _compare(tiny.loglikelihood(requests), reference, f"seed {seed}, {variant}", requests)
            work = tiny.work
        assert work.tokens_forwarded - work.padding_tokens == work.distinct_tokens + work.repeated_tokens


@pytest.mark.slow
def test_a_chain_of_nested_contexts_thousands_deep(tiny):
    """Each context extends the one before and is scored too: the tree is as deep as the chain."""
    digits = "".join(str(k * 7 % 10) for k in range(1200))  # one token a digit
    requests = [Req(digits[:k], (" yes please", " no")) for k in range(1, 1200)]  # a branch at every digit
    with settings(tiny, pass_tokens=4096, row_tokens=64):
        tiny.work = Work()
        got = tiny.loglikelihood(requests)
    # the digits once, and one " yes" under each
    assert tiny.work.distinct_tokens == 2 * len(tiny.encode(requests[-1].context))
    assert tiny.work.forward_passes <= len(requests)
    for k in (0, 500, 1198):
        reference = reference_loglikelihood(tiny.model, tiny.tokenizer, requests[k])
        _compare([got[k]], [reference], "nested", [requests[k]])
