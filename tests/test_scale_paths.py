"""The read paths that keep probe-set builds linear at a million entities give exactly what the
slow paths they replaced gave: the lazy shuffle of distractor pools, and the graph's set-wise
reads (distinct objects, pair counts, statement groups) against plain Python over `facts()`."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from factprobe.index.distractors import _shuffled
from factprobe.kg import KnowledgeGraph, Store
from factprobe.kg.ingest import ingest
from factprobe.kg.sources.wikidata_json import WikidataJsonSource


@given(n=st.integers(0, 3000), seed=st.text(max_size=8))
@settings(max_examples=60, deadline=None)
def test_lazy_shuffle_is_random_sample_of_the_whole_pool(n, seed):
    pool = [f"Q{i}" for i in range(n)]
    assert list(_shuffled(pool, random.Random(seed))) == random.Random(seed).sample(pool, n)


@pytest.fixture
def kg(tmp_path, wikidata_dump):
    with Store(tmp_path / "g.sqlite") as st_:
        ingest(st_, WikidataJsonSource(), wikidata_dump, workers=0)
        st_.optimize()
    graph = KnowledgeGraph(tmp_path / "g.sqlite")
    yield graph
    graph.close()


@pytest.mark.parametrize("at", [None, "1950-01-01", "2000-06-01"])
def test_set_wise_reads_equal_python_over_facts(kg, at):
    for relation, _, _ in kg.relations():
        facts = list(kg.facts(relation, entity_objects_only=True))
        assert kg.distinct_objects(relation) == sorted({f.object for f in facts})
        assert kg.count_pairs(relation) == len({(f.subject, f.object) for f in facts if f.is_true})
        groups = list(kg.statement_groups(relation, at=at))
        want = {}
        for f in facts:
            want.setdefault((f.subject, f.object), []).append(f.id)
        assert [(g[0], g[1]) for g in groups] == sorted(want)
        for subject, obj, ids, true, s_label, o_label, counted in groups:
            assert ids == tuple(sorted(want[(subject, obj)]))
            assert true == (obj in kg.objects(subject, relation, at=at))
            assert s_label == bool(kg.labels(subject).label) and o_label == bool(kg.labels(obj).label)
            assert counted is None


def test_statement_groups_stay_right_when_the_frequency_table_shares_column_names(tmp_path, wikidata_dump):
    """statement_groups joins fact_frequencies; if that table ever holds a column named like one
    of facts' (relation, object, rank, start_key, end_key), the graph's clauses must still read
    facts' own. Bare names made this query fail as ambiguous."""
    path = tmp_path / "g.sqlite"
    with Store(path) as store:
        ingest(store, WikidataJsonSource(), wikidata_dump, workers=0)
        with KnowledgeGraph(path) as kg:
            relation = kg.relations()[0][0]
            facts = list(kg.facts(relation, entity_objects_only=True))
        store.write_fact_frequencies("c", (1, 10), [(f.id, 7, "1-10") for f in facts])
        for column in ("relation TEXT", "object TEXT", "rank INTEGER", "start_key TEXT", "end_key TEXT"):
            store.conn.execute(f"ALTER TABLE fact_frequencies ADD COLUMN {column}")
        store.conn.execute("UPDATE fact_frequencies SET relation='P0', object=NULL, rank=-9, "
                           "start_key='9999', end_key='0000'")
        store.conn.commit()
    with KnowledgeGraph(path) as kg:
        plain = list(kg.statement_groups(relation, at="2000-06-01"))
        counted = list(kg.statement_groups(relation, at="2000-06-01", corpus="c"))
    assert plain and [g[:6] for g in counted] == [g[:6] for g in plain]
    assert all(g[6] == (7, "1-10") for g in counted)
