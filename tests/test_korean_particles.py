"""Korean names with their particles (issue 46 item 4): a Hangul name followed directly by
particles (우주가, 영국에서, 미국을) counts as a mention, one glued into a longer word (영국군,
포르투갈어, 한국적) does not (index/korean.py). Counted on 150 real Korean Wikipedia sentences
(tests/data/ko/, KLUE-NLI's Wikipedia premises), each document's count by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from conftest import run_cli
from factprobe.index.korean import PARTICLES, particles_only
from factprobe.index.mentions import MentionFinder
from factprobe.index.settings import IndexSettings
from factprobe.index.text import at_word_boundaries, mentioned_keys, name_key, normalize
from factprobe.kg.model import Rows
from factprobe.kg.store import Store

CORPUS = Path(__file__).parent / "data" / "ko" / "klue_nli_wikipedia_premises.jsonl"
# Wikidata's Korean labels (and 한국, an alias of 대한민국)
NAMES = [("Q30", "ko", "미국", 0), ("Q142", "ko", "프랑스", 0), ("Q145", "ko", "영국", 0), ("Q183", "ko", "독일", 0),
         ("Q148", "ko", "중국", 0), ("Q17", "ko", "일본", 0), ("Q884", "ko", "대한민국", 0), ("Q884", "ko", "한국", 1),
         ("Q28179", "ko", "조선", 0), ("Q46", "ko", "유럽", 0), ("Q45", "ko", "포르투갈", 0)]
# documents (KLUE ids, klue-nli-v1_dev_NNNNN) naming each, read one by one: what follows the name
WITH_PARTICLES = {
    "Q30": {"00901", "01030", "01432", "02857"},  # 미국 달러, 미국 시애틀, 미국을, 미국,
    "Q142": {"00427", "00805", "02755"},  # 프랑스에, 프랑스의, 프랑스 함대
    # 영국 하이위컴, 영국으로, 영국에서 (twice), 영국으로, 영국의 (and 영국군을, a compound), 영국 엘리트
    "Q145": {"00034", "01432", "01672", "01675", "02647", "02755", "02761"},
    "Q183": {"00805", "00808", "02059"},  # 독일의 (twice), 독일의, 독일 부잣집
    "Q148": {"02857"},  # 중국과
    "Q17": {"00778", "01489"},  # 일본에; 일본 (and 일본인, a compound)
    "Q884": {"02857"},  # 한국의 (한국적 in 01075 is a compound)
    "Q28179": {"00016"},  # 조선 (조선인임을 in 01489: 인 makes a word)
    "Q46": {"01420"},  # 유럽의
    "Q45": set(),
}
WHOLE_WORDS = {"Q30": {"00901", "01030", "02857"}, "Q142": {"02755"}, "Q145": {"00034", "02761"},
               "Q183": {"02059"}, "Q148": set(), "Q17": {"01489"}, "Q884": set(), "Q28179": {"00016"},
               "Q46": set(), "Q45": set()}


def documents() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("run, expected", [
    ("가", True), ("의", True), ("에서는", True), ("으로부터는", True), ("이었다", True), ("과의", True),
    ("어", False), ("인", False), ("군을", False), ("적", False), ("인임을", False), ("", False),
    ("에서는도의", False),  # four particles: more than a noun takes
])
def test_particle_runs(run, expected):
    assert particles_only(run) is expected


def test_the_edge_rule():
    text = "우주가 넓다. 포르투갈어. 서울역"
    assert at_word_boundaries(text, 0, 2, particles=True) and not at_word_boundaries(text, 0, 2)
    assert not at_word_boundaries(text, 8, 12, particles=True)  # 포르투갈 + 어
    assert not at_word_boundaries(text, 15, 17, particles=True)  # 서울 + 역
    assert "인" not in PARTICLES and "어" not in PARTICLES


@pytest.mark.parametrize("particles, expected", [(True, WITH_PARTICLES), (False, WHOLE_WORDS)])
def test_real_sentences_counted_by_hand(particles, expected):
    rows = documents()
    finder = MentionFinder([(e, n) for e, _, n, _ in NAMES], particles=particles)
    found = finder.in_texts([r["text"] for r in rows])
    got = {e: {r["id"][-5:] for r, f in zip(rows, found) if e in f} for e in expected}
    assert got == expected
    # the automaton and the slow definition agree document by document
    keys = {name_key(n): e for e, _, n, _ in NAMES}
    slow = [{keys[k] for k in mentioned_keys(normalize(r["text"]), keys, particles)} for r in rows]
    assert found == slow


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="미국인어의에서는도 a.", max_size=30), min_size=1, max_size=4),
       st.lists(st.sampled_from(["미국", "국인", "미국인", "국의", "a미국", "에서"]), min_size=1, max_size=4, unique=True),
       st.booleans())
def test_the_automaton_agrees_with_the_slow_definition(texts, names, particles):
    finder = MentionFinder([(n, n) for n in names], particles=particles)
    assert finder.in_texts(texts) == [mentioned_keys(normalize(t), names, particles) for t in texts]


def make_store(path: Path) -> str:
    rows = Rows()
    for entity in dict.fromkeys(e for e, *_ in NAMES):
        rows.entities.append((entity, "item", next(n for e, _, n, a in NAMES if e == entity and not a), None, 0, None))
    rows.names.extend(NAMES)
    with Store(path) as store, store.transaction() as conn:
        store.write(rows, conn)
    return str(path)


def frequency(*args: str) -> int:
    return json.loads(run_cli("frequency", *args, "--json", check=True).stdout)["documents"]


def test_corpus_index_counts_particles_and_records_the_rule(tmp_path):
    store = make_store(tmp_path / "ko.sqlite")
    index, old = str(tmp_path / "ko.idx"), str(tmp_path / "old.idx")
    run_cli("corpus", "index", str(CORPUS), "--store", store, "--index", index, "--languages", "ko", "--quiet",
            check=True)
    run_cli("corpus", "index", str(CORPUS), "--store", store, "--index", old, "--languages", "ko", "--quiet",
            "--no-ko-particles", check=True)
    assert frequency("entity", "Q145", "--index", index) == 7
    assert frequency("entity", "Q145", "--index", old) == 2
    assert frequency("pair", "Q145", "Q142", "--index", index) == 1  # 02755: 프랑스 함대는 ... 영국의
    assert frequency("pair", "Q30", "Q148", "--index", index) == 1  # 02857: 미국, 중국과
    from factprobe.index.embedded import EmbeddedIndex

    assert EmbeddedIndex(index).settings()["ko_particles"] is True
    assert "ko_particles" not in EmbeddedIndex(old).settings()  # as an index built before the rule existed


def test_settings_record_the_rule_only_where_korean_is_indexed():
    assert IndexSettings(languages=("ko",)).to_dict()["ko_particles"] is True
    assert "ko_particles" not in IndexSettings(languages=("en",)).to_dict()
    old = {"method": "names", "languages": ["ko"], "min_alias_length": 2, "excluded": []}
    assert IndexSettings.from_dict(old).particles is False
    assert "particles" in IndexSettings(languages=("ko",)).describe()


@pytest.mark.parametrize("particles", [True, False])
def test_the_token_index_counts_as_the_text_index(tmp_path, particles):
    """Counted in a model's own tokens (--backend infini-gram), every entity and pair as the
    embedded index counts them, particles or not."""
    from test_token_backend import compare

    from factprobe.index.corpus import Document

    store = Path(make_store(tmp_path / "ko.sqlite"))
    rows = [Document(r["id"], "", r["text"]) for r in documents()]
    entities, pairs = compare(tmp_path, store, rows, IndexSettings(languages=("ko",), ko_particles=particles),
                              "smollm2")
    # pairs by hand: 미국-중국, 미국-한국, 중국-한국 (02857), 프랑스-영국 (02755), 프랑스-독일 (00805), 미국-영국
    # (01432); as whole words only 01489's 일본 and 조선 are not together (조선인임을)
    assert (entities, pairs) == ((9, 6) if particles else (6, 0))
