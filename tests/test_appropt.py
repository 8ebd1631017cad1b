"""ApprOpt on both real PyPI models: the trie, the KV-cached beam search, the uncached search and
the exhaustive reference must tell the same story.

The candidates are 14 capitals and cities with multi-token names, names sharing a prefix
("San Marino" / "San José" / "Santiago" / "Santiago de Compostela"), one entity with two names
(San Marino) and one name shared by two entities ("Santiago"). Beam search is approximate, so
equality with the exhaustive top n is asserted only for the (prompt, n) pairs where it was
observed to hold; where it does not, every hit must still carry its label's exact log-prob and
never rank above the exact top n.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from factprobe.probes.scoring.appropt import (
    ApprOptHit,
    ApprOptQuery,
    LabelTrie,
    TrieCache,
    appropt,
    appropt_many,
    appropt_search,
    appropt_uncached,
    exhaustive,
    path_logprob,
    path_logprobs,
    prompt_ids,
)
from factprobe.probes.scoring.label_trie import ROOT
from scoring_models import REAL_MODELS, real_scorer

TOLERANCE = 1e-4  # nats, fp32

CANDIDATES = {
    "Q90": ["Paris"], "Q64": ["Berlin"], "Q220": ["Rome"], "Q1490": ["Tokyo"], "Q2807": ["Madrid"],
    "Q1861": ["San Marino", "City of San Marino"], "Q3070": ["San José"], "Q2887": ["Santiago"],
    "Q14314": ["Santiago de Compostela", "Santiago"], "Q23430": ["Ulaanbaatar"], "Q3130": ["Sydney"],
    "Q456": ["Lyon"], "Q1085": ["Prague"], "Q23661": ["Marseille"],
}
FRANCE, ITALY, CHILE, JAPAN = (f"The capital of {c} is" for c in ("France", "Italy", "Chile", "Japan"))

# (prompt, n, entities) where the beam was seen to find the exact top n, per model.
BEAM_IS_EXACT = {
    "smollm2-135m-instruct": [
        (FRANCE, 1, ("Q90",)),
        (ITALY, 2, ("Q220", "Q1861")),
        (CHILE, 2, ("Q14314", "Q2887")),  # one name, two entities: tied, ordered by entity id
    ],
    "gemma3-270m": [
        (FRANCE, 5, ("Q90", "Q456", "Q220", "Q23661", "Q64")),
        (ITALY, 5, ("Q220", "Q1861", "Q90", "Q2807", "Q64")),
        (CHILE, 2, ("Q14314", "Q2887")),
    ],
}

_tries = TrieCache(on_disk=False)


def _trie(spec: str) -> LabelTrie:
    return _tries.get(real_scorer(spec), "capitals", CANDIDATES)


@lru_cache(maxsize=None)
def _exact(spec: str, prompt: str) -> tuple[ApprOptHit, ...]:
    """Every entity scored exactly, best first: the exhaustive top n is its first n."""
    return tuple(exhaustive(real_scorer(spec), prompt, _trie(spec), len(CANDIDATES)))


def _keys(hits) -> list[tuple[str, str]]:
    return [(h.entity, h.name) for h in hits]


def _same(got, want) -> None:
    assert _keys(got) == _keys(want)
    for g, w in zip(got, want):
        assert abs(g.logprob - w.logprob) <= TOLERANCE, (g, w)


def _node(trie: LabelTrie, scorer, name: str) -> int:
    """The node a name's tokens (EOS excluded) lead to."""
    node = ROOT
    for token in scorer.tokenizer(" " + name, add_special_tokens=False)["input_ids"]:
        node = trie.children[node][token]
    return node


def _ancestors(trie: LabelTrie, node: int) -> list[int]:
    """The nodes above `node`, nearest first, ROOT last."""
    out = []
    while (node := trie.parent[node]) != -1:
        out.append(node)
    return out


@pytest.fixture(scope="module", params=REAL_MODELS)
def spec(request) -> str:
    return request.param


def one_model(spec: str) -> None:
    """The exhaustive searches beyond the first run on SmolLM2 only: Gemma's 262k-token
    vocabulary makes each cost CI 8-19 s, and test_beam_equals_the_exhaustive_top_n holds the
    search to the exhaustive top n on both models."""
    if spec != "smollm2-135m-instruct":
        pytest.skip("exhaustive search checked on SmolLM2 (and on both models by the beam test)")


# -- the trie ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_label_paths_are_the_tokens_the_prompt_continues_with(spec):
    """The trie's one assumption: prompt tokens + " name" tokens alone = tokens of prompt + " name"."""
    scorer, trie = real_scorer(spec), _trie(spec)
    ids = prompt_ids(scorer, FRANCE)
    for node, terminals in trie.terminals.items():
        path = trie.tokens_to(node)
        assert path[-1] == trie.eos_id
        for terminal in terminals:
            assert scorer.encode(f"{FRANCE} {terminal.name}") == ids + list(path[:-1]), terminal


def test_trie_shape(spec):
    scorer, trie = real_scorer(spec), _trie(spec)
    assert trie.below[ROOT] == 16  # terminal entries: 16 (entity, name) pairs
    assert len(trie.terminals) == 15  # "Santiago" ends one path for two entities
    santiago = trie.children[_node(trie, scorer, "Santiago")][trie.eos_id]
    assert [(t.entity, t.name) for t in trie.terminals[santiago]] == [("Q14314", "Santiago"), ("Q2887", "Santiago")]
    assert len(trie.by_entity["Q1861"]) == 2  # San Marino, City of San Marino
    # " San" is one node shared by San Marino and San José.
    san = trie.children[ROOT][scorer.tokenizer(" San", add_special_tokens=False)["input_ids"][0]]
    assert trie.below[san] == 2
    assert san in _ancestors(trie, _node(trie, scorer, "San Marino"))
    assert san in _ancestors(trie, _node(trie, scorer, "San José"))
    # Banning San Marino blocks its own subtrees, never the prefix it shares with San José.
    blocked = trie.blocked({"Q1861"})
    assert _node(trie, scorer, "San Marino") in blocked and _node(trie, scorer, "City") in blocked
    assert san not in blocked and ROOT not in blocked
    # Below " San" the search has two ways to go; with San Marino banned, one.
    jose = scorer.tokenizer(" San José", add_special_tokens=False)["input_ids"]
    assert len(trie.children[san]) == 2
    assert [c for c in trie.children[san].values() if c not in blocked] == [trie.children[san][jose[1]]]
    assert list(trie.children[_node(trie, scorer, "San José")]) == [trie.eos_id]
    # A banned entity that shares its terminal with another blocks nothing.
    assert trie.blocked({"Q2887"}) == frozenset()
    assert ROOT in trie.blocked(CANDIDATES)


def test_trie_does_not_depend_on_the_order_of_candidates():
    scorer = real_scorer("smollm2-135m-instruct")
    a = LabelTrie.for_scorer(scorer, CANDIDATES)
    b = LabelTrie.for_scorer(scorer, {e: list(reversed(n)) for e, n in reversed(list(CANDIDATES.items()))})
    assert (a.token, a.parent, a.terminals, a.paths) == (b.token, b.parent, b.terminals, b.paths)


def test_trie_cache_builds_once_and_reloads_from_disk(tmp_path, monkeypatch):
    scorer = real_scorer("smollm2-135m-instruct")
    cache = TrieCache(tmp_path)
    first = cache.get(scorer, "Q515", CANDIDATES)
    for _ in range(3):
        assert cache.get(scorer, "Q515", dict(reversed(list(CANDIDATES.items())))) is first
    assert (cache.builds, cache.disk_loads) == (1, 0)
    cache.get(scorer, "Q5119", CANDIDATES)  # another key: its own trie
    cache.get(scorer, "Q515", {**CANDIDATES, "Q1748": ["Copenhagen"]})  # other candidates: another
    assert cache.builds == 3
    assert len(list(tmp_path.glob("*.json"))) == 3 and not list(tmp_path.glob("*.partial"))

    # A new process (a new cache over the same folder) reads the tokens back instead of tokenizing.
    again = TrieCache(tmp_path)
    loaded = again.get(scorer, "Q515", CANDIDATES)
    assert (again.builds, again.disk_loads) == (0, 1)
    assert (loaded.token, loaded.parent, loaded.terminals, loaded.below) == (
        first.token, first.parent, first.terminals, first.below)

    # A damaged file is rebuilt, not trusted.
    for file in tmp_path.glob("*.json"):
        file.write_text(file.read_text()[:50])
    damaged = TrieCache(tmp_path)
    assert damaged.get(scorer, "Q515", CANDIDATES).terminals == first.terminals
    assert (damaged.builds, damaged.disk_loads) == (1, 0)
    assert sum(_parses(file) for file in tmp_path.glob("*.json")) == 1  # that one rewritten whole

    monkeypatch.setenv("FACTPROBE_CACHE", str(tmp_path / "home"))
    assert TrieCache().directory == tmp_path / "home" / "tries"
    assert TrieCache(on_disk=False).directory is None


def _parses(file) -> bool:
    try:
        json.loads(file.read_text())
        return True
    except ValueError:
        return False


# -- the search -------------------------------------------------------------------------------


@pytest.mark.slow
def test_beam_equals_the_exhaustive_top_n(spec):
    scorer, trie = real_scorer(spec), _trie(spec)
    for prompt, n, entities in BEAM_IS_EXACT[spec]:
        exact = _exact(spec, prompt)[:n]
        assert tuple(h.entity for h in exact) == entities, (prompt, n)
        hits = appropt(scorer, prompt, trie, n)
        _same(hits, exact)
        _same(appropt_uncached(scorer, prompt, trie, n), hits)


@pytest.mark.slow
def test_where_the_beam_misses_every_hit_is_still_exact(spec):
    """Japan, n=5: the beam keeps prefixes (" San", " U") that outscore labels completing later,
    so it misses part of the exact top 5 on both models. What it returns is still exact."""
    one_model(spec)
    scorer, trie = real_scorer(spec), _trie(spec)
    result = appropt_search(scorer, JAPAN, trie, 5)
    hits, exact = result.hits, _exact(spec, JAPAN)
    assert hits[0].entity == exact[0].entity == "Q1490"  # Tokyo
    assert _keys(hits) != _keys(exact[:5])
    assert len({h.entity for h in hits}) == 5
    assert [h.logprob for h in hits] == sorted((h.logprob for h in hits), reverse=True)
    ids = prompt_ids(scorer, JAPAN)
    for rank, hit in enumerate(hits):
        node = _node(trie, scorer, hit.name)
        assert abs(hit.logprob - path_logprob(scorer, ids, trie.tokens_to(node) + (trie.eos_id,))) <= TOLERANCE
        assert hit.logprob <= exact[rank].logprob + TOLERANCE  # never better than the optimum
    assert result.stats.steps >= 3  # several steps of reordered caches behind it
    # The last steps had every beam on a forced path: one look-ahead pass served them.
    assert result.stats.forward_passes < result.stats.steps + 1
    _same(appropt_uncached(scorer, JAPAN, trie, 5), hits)


@pytest.mark.slow
def test_exact_search_equals_the_exhaustive_top_n_and_certifies_only_what_is_exact(spec):
    """exact=True: the exhaustive top n for every prompt and n. The published beam: whatever it
    certifies is the exhaustive top n, and the misses are never certified."""
    one_model(spec)
    scorer, trie = real_scorer(spec), _trie(spec)
    queries = [ApprOptQuery(p, trie, n) for p in (FRANCE, ITALY, CHILE, JAPAN) for n in (1, 2, 3, 5)]
    beams = appropt_many(scorer, queries)
    exacts = appropt_many(scorer, queries, exact=True)
    widened = 0
    for query, beam, exact in zip(queries, beams, exacts):
        want = _exact(spec, query.prompt)[:query.n]
        _same(exact.hits, want)
        assert exact.stats.certified
        widened += exact.stats.width > query.n
        assert beam.stats.width == query.n
        if beam.stats.certified:
            _same(beam.hits, want)
            assert exact.stats.width == query.n and exact.stats.forward_passes == beam.stats.forward_passes
        if _keys(beam.hits) != _keys(want):
            assert not beam.stats.certified, query
    assert widened  # the prefix bound is loose: at width n the beam rarely certifies itself


@pytest.mark.slow
def test_a_batch_of_searches_finds_what_each_finds_alone_with_fewer_passes(spec):
    """Different prompts (one long), widths, bans and two tries in one batch; some searches end
    early (nothing to find, a single candidate) while others go on."""
    one_model(spec)
    scorer, trie = real_scorer(spec), _trie(spec)
    few = _tries.get(scorer, "few", {"Q90": ["Paris"], "Q1861": ["San Marino"], "Q3070": ["San José"]})
    long_prompt = "The capital of Germany is Berlin.\nThe capital of Spain is Madrid.\n" + FRANCE
    queries = [
        ApprOptQuery(JAPAN, trie, 5), ApprOptQuery(FRANCE, few, 2), ApprOptQuery(ITALY, trie, 3, frozenset({"Q1861"})),
        ApprOptQuery(CHILE, trie, 1), ApprOptQuery(FRANCE, trie, 2, frozenset(CANDIDATES)),
        ApprOptQuery(long_prompt, trie, 4), ApprOptQuery(ITALY, few, 1, frozenset({"Q90", "Q3070"})),
    ]
    before = scorer.work.forward_passes
    batched = appropt_many(scorer, queries, batch_size=16)
    batch_passes = scorer.work.forward_passes - before
    alone = [appropt_search(scorer, q.prompt, q.trie, q.n, banned=q.banned) for q in queries]
    alone_passes = sum(r.stats.forward_passes for r in alone)
    for query, got, want in zip(queries, batched, alone):
        _same(got.hits, want.hits)
        assert got.stats.steps == want.stats.steps and got.stats.visited == want.stats.visited, query
        _same(got.hits, exhaustive(scorer, query.prompt, query.trie, query.n, banned=query.banned)
              if want.stats.certified else want.hits)
    assert batched[4].hits == () and batched[6].hits[0].entity == "Q1861"
    assert batch_passes < alone_passes / 2, (batch_passes, alone_passes)
    # In chunks of two the same again.
    for got, want in zip(appropt_many(scorer, queries, batch_size=2), alone):
        _same(got.hits, want.hits)


@pytest.mark.slow
def test_a_beam_wider_than_the_candidates_is_exhaustive_and_returns_fewer(spec):
    scorer, trie = real_scorer(spec), _trie(spec)
    result = appropt_search(scorer, ITALY, trie, 20)
    hits = result.hits
    assert len(hits) == len(CANDIDATES) == 14  # fewer than n, never padded
    # Many beams on forced paths of different lengths: the look-ahead pass had padded rows.
    assert result.stats.forward_passes < result.stats.steps + 1
    _same(hits, _exact(spec, ITALY))
    assert {h.name for h in hits if h.entity == "Q1861"} <= {"San Marino", "City of San Marino"}


@pytest.mark.slow
def test_banned_entities_never_appear_and_their_subtrees_are_never_entered(spec):
    one_model(spec)
    scorer, trie = real_scorer(spec), _trie(spec)
    banned = frozenset({"Q1861", "Q2887"})  # San Marino (two names), Chile's Santiago (shared name)
    blocked = trie.blocked(banned)
    free = appropt_search(scorer, ITALY, trie, 3)
    assert "Q1861" in {h.entity for h in free.hits}
    assert free.stats.visited & blocked  # without the ban the search goes there
    result = appropt_search(scorer, ITALY, trie, 3, banned=banned)
    assert not {h.entity for h in result.hits} & banned
    assert not result.stats.visited & blocked
    assert len(result.hits) == 3
    _same(appropt_uncached(scorer, ITALY, trie, 3, banned=banned), result.hits)
    exact = exhaustive(scorer, ITALY, trie, 3, banned=banned)
    _same(exact, [h for h in _exact(spec, ITALY) if h.entity not in banned][:3])
    for rank, hit in enumerate(result.hits):
        assert hit.logprob <= exact[rank].logprob + TOLERANCE

    # Banning one of the two entities named "Santiago" keeps the other, at the same score.
    chile = appropt(scorer, CHILE, trie, 1, banned={"Q2887"})
    _same(chile, [h for h in _exact(spec, CHILE) if h.entity != "Q2887"][:1])
    assert _keys(chile) == [("Q14314", "Santiago")]


@pytest.mark.slow
def test_with_all_but_two_banned_two_come_back(spec):
    scorer, trie = real_scorer(spec), _trie(spec)
    banned = set(CANDIDATES) - {"Q64", "Q3070"}  # Berlin, San José
    hits = appropt(scorer, FRANCE, trie, 5, banned=banned)
    _same(hits, exhaustive(scorer, FRANCE, trie, 5, banned=banned))
    assert {h.entity for h in hits} == {"Q64", "Q3070"}


def test_nothing_to_find_costs_no_forward_pass():
    scorer = real_scorer("smollm2-135m-instruct")
    trie = _trie("smollm2-135m-instruct")
    result = appropt_search(scorer, FRANCE, trie, 3, banned=set(CANDIDATES))
    assert result.hits == () and result.stats.forward_passes == 0
    assert appropt(scorer, FRANCE, LabelTrie.for_scorer(scorer, {}), 3) == []
    with pytest.raises(ValueError, match="at least 1"):
        appropt(scorer, FRANCE, trie, 0)
    with pytest.raises(ValueError, match="built for"):
        appropt(scorer, FRANCE, _trie("gemma3-270m"), 1)  # Gemma's token ids under SmolLM2


def test_a_trailing_space_in_the_prompt_is_dropped():
    scorer = real_scorer("smollm2-135m-instruct")
    trie = _trie("smollm2-135m-instruct")
    assert prompt_ids(scorer, FRANCE + " ") == prompt_ids(scorer, FRANCE)
    _same(appropt(scorer, FRANCE + " ", trie, 1), appropt(scorer, FRANCE, trie, 1))


@pytest.mark.slow
def test_batched_path_scores_equal_one_pass_per_path(spec):
    """path_logprobs pads shorter paths on the right in one pass; each path's score must equal
    its own unpadded pass (the distractor measure scores every name this way)."""
    scorer, trie = real_scorer(spec), _trie(spec)
    ids = prompt_ids(scorer, FRANCE)
    paths = [trie.tokens_to(node) + (trie.eos_id,) for node in sorted(trie.terminals)]
    assert len({len(p) for p in paths}) > 1  # padding really happens
    batched = path_logprobs(scorer, ids, paths)
    alone = [path_logprob(scorer, ids, p) for p in paths]
    assert len(batched) == len(paths)
    # A padded batch is a pass of another shape: fp32 sums round differently (seen: 1.03e-4 on
    # Gemma for a 6-token path), so the other-shape bound bench/appropt.py uses applies.
    assert max(abs(a - b) for a, b in zip(batched, alone)) <= 5e-4
