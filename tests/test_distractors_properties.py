"""Property-based checks: on generated graphs, every distractor is fair, and a short answer means
the fair candidates really ran out. The oracle below reads the generated spec, not the store, under
DistFact's type rule (instance-of and subclass-of together, no candidates for an untyped object:
../shared/papers/004_9e1422d598bbbe4c.txt lines 115 and 142) and factprobe's older one, with the
finder's defaults since issue 45 (no object ever held, no class for an instance)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from factprobe.index.distractors import DistractorFinder
from factprobe.index.semantic import SemanticIndex, feature_bags
from factprobe.index.semantic_check import reference_top
from factprobe.index.text import name_key
from factprobe.kg.graph import KnowledgeGraph
from factprobe.kg.model import DEPRECATED, NORMAL, Rows, TimeValue, fact_row
from factprobe.kg.store import Store

WORDS = ["Alpha", "beta", "ALPHA", "Gamma", "Delta", "Alpha City", "Epsilon", "Zeta", "Eta"]
TYPES = ["Q9001", "Q9002", "Q9003"]
RELATIONS = ["P1", "P2"]
TODAY = int(dt.date.today().strftime("%Y%m%d"))


@st.composite
def graphs(draw):
    n = draw(st.integers(6, 18))
    entities = [f"Q{i}" for i in range(1, n + 1)]
    spec = {"names": {}, "types": {}, "facts": []}
    for e in entities:
        spec["names"][e] = draw(st.lists(st.sampled_from(WORDS), max_size=3))  # some entities have no name
        # (type, the property that declares it)
        spec["types"][e] = draw(st.lists(st.tuples(st.sampled_from(TYPES), st.sampled_from(["P31", "P279"])),
                                         max_size=2, unique_by=lambda t: t[0]))
    for k in range(draw(st.integers(3, 30))):
        # few subjects, so that a subject often has several objects of one relation
        s, o = draw(st.sampled_from(entities[:4])), draw(st.sampled_from(entities))
        start = draw(st.one_of(st.none(), st.integers(1900, 2030)))
        end = draw(st.one_of(st.none(), st.integers(1900, 2030)))
        rank = draw(st.sampled_from([NORMAL, NORMAL, NORMAL, DEPRECATED]))
        spec["facts"].append((f"F{k}", s, draw(st.sampled_from(RELATIONS)), o, start, end, rank))
    return entities, spec


def build_store(path, entities, spec):
    rows = Rows()
    for e in entities:
        names = spec["names"][e]
        rows.entities.append((e, "item", names[0] if names else None, None, 0, None))
        rows.names += [(e, "en", name, 0 if i == 0 else 1) for i, name in enumerate(dict.fromkeys(names))]
        rows.types += [(e, t, via) for t, via in spec["types"][e]]
    for fid, s, r, o, start, end, rank in spec["facts"]:
        rows.facts.append(fact_row(fid, s, r, o, "wikibase-item", rank=rank,
                                   start=TimeValue(f"+{start}-01-01T00:00:00Z") if start else None,
                                   end=TimeValue(f"+{end}-01-01T00:00:00Z") if end else None))
    with Store(path) as store, store.transaction() as conn:
        store.write(rows, conn)


def type_pool(entities, spec, r, o, rules) -> set:
    """The candidates sharing a type with o: under "union" (the paper's) P31 and P279 types alike,
    none when o has no type; under "instance-first" o's P31 types if any, else its P279 ones,
    matched through that property, every object of r when o has no type."""
    types = spec["types"]
    if rules == "union":
        mine = {t for t, _ in types[o]}
        return {e for e in entities if {t for t, _ in types[e]} & mine}
    via = "P31" if any(v == "P31" for _, v in types[o]) else "P279"
    mine = {t for t, v in types[o] if v == via}
    if not mine:
        return {f[3] for f in spec["facts"] if f[2] == r and f[6] != DEPRECATED}
    return {e for e in entities if {t for t, v in types[e] if v == via} & mine}


def oracle(entities, spec, s, r, o, at, rules="union"):
    """The fair candidates of (s, r, o) at `at` (YYYY-01-01 or None), and the temporal ones in order.
    Fair (the defaults since issue 45): no object s ever held for r (any date, not deprecated) nor
    one sharing a name with it, and no class (an entity with a P279 type) where o is none when the
    pool is a type's. Temporal ones need only not be true at `at` (Temp+Sem draws former objects)."""
    key = int(f"{at}0101") if at else TODAY
    live = [f for f in spec["facts"] if f[6] != DEPRECATED and f[1] == s and f[2] == r]

    def true_now(f):
        start, end = (f[4] or 0) * 10000 + 101, (f[5] or 99999) * 10000 + 101
        return end >= key if at is None else start <= key <= end

    def is_class(e):
        return any(v == "P279" for _, v in spec["types"][e])

    def names(e):
        return {name_key(x) for x in spec["names"][e]}

    true = {f[3] for f in live if true_now(f)} | {o}
    held = true | {f[3] for f in live}
    pool = type_pool(entities, spec, r, o, rules)
    typed = bool(spec["types"][o])  # the pool is a type's under either rule
    if typed and not is_class(o):
        pool = {e for e in pool if not is_class(e)}

    def fair_against(kept_out):
        taken = set().union(*(names(t) for t in kept_out))
        return {e for e in pool if e not in kept_out and e != s and not taken & names(e)}

    fair, fair_now = fair_against(held), fair_against(true)
    ended: dict[str, int] = {}
    for f in live:
        if f[5] and f[5] * 10000 + 101 < key and f[3] not in true:
            ended[f[3]] = max(ended.get(f[3], 0), f[5])
    temporal = [e for e, _ in sorted(ended.items(), key=lambda x: (-x[1], x[0])) if e in fair_now]
    return fair, temporal


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graphs(), st.data())
def test_every_distractor_is_fair_and_shortfalls_are_real(tmp_path_factory, graph, data):
    entities, spec = graph
    path = tmp_path_factory.mktemp("g") / "g.sqlite"
    build_store(path, entities, spec)
    with KnowledgeGraph(path) as kg:
        semantic = SemanticIndex.build(feature_bags(kg))
        finders = {"union": DistractorFinder(kg, semantic),
                   "instance-first": DistractorFinder(kg, semantic, types="instance-first", untyped="relation-objects")}
        facts = [f for f in spec["facts"] if f[6] != DEPRECATED]
        for _ in range(3):
            if not facts:
                return
            _, s, r, o, *_ = data.draw(st.sampled_from(facts))
            at = data.draw(st.sampled_from([None, 1950, 2000, 2025]))
            n = data.draw(st.integers(1, 6))
            rules = data.draw(st.sampled_from(sorted(finders)))
            finder = finders[rules]
            fair, temporal = oracle(entities, spec, s, r, o, at, rules)
            for strategy in ("random", "sem", "temp+sem"):
                found = finder.find(s, r, o, strategy=strategy, n=n, at=str(at) if at else None, seed=3)
                chosen = [d.entity for d in found.distractors]
                allowed = fair | set(temporal) if strategy == "temp+sem" else fair
                assert len(chosen) == len(set(chosen)) <= n
                assert set(chosen) <= allowed, (strategy, set(chosen) - allowed)
                assert found.pool == ("type" if spec["types"][o] else "none" if rules == "union" else "relation-objects")
                if len(chosen) < n:
                    assert set(chosen) == allowed and found.shortfall  # never short while fair ones remain
                else:
                    assert found.shortfall is None
                if strategy == "sem" and finder.semantic.has_vector(o):
                    # exactly the brute-force ranking of the pool, read down to the n-th fair candidate
                    pool = finder.semantic.pool(finder.pool(finder.rules(s, r, o, str(at) if at else None)))
                    ranking = [e for e, _ in reference_top(finder.semantic, o, pool, len(pool))]
                    assert chosen == [e for e in ranking if e in fair][:n]
                if strategy == "temp+sem":
                    assert chosen[:len(temporal)] == temporal[:n]
                    assert [d.source for d in found.distractors][:len(temporal)] == ["temporal"] * min(n, len(temporal))
