"""infini-gram's API as a frequency backend (issue 43 item 5): `frequency entity|pair|annotate
--backend infini-gram-api` against a real `factprobe serve --ngram-index` on 127.0.0.1, over the
Gutenberg texts (tests/fixtures/gutenberg) in SmolLM2's tokens.

An entity's count is occurrences and a pair's is window co-occurrence (approximate), said so in
every output and never as documents: each equals a brute force over the index's decoded tokens,
and sits beside the local infini-gram backend's document counts to show they are other numbers.
A tokenizer that is not the index's is refused by the index's name before any request."""

from __future__ import annotations

import json
import re
from itertools import product

import pytest

pytest.importorskip("infini_gram")
pytest.importorskip("fastapi")

from conftest import free_port, run_cli  # noqa: E402
from test_infini_gram_api import serving_ngram  # noqa: E402
from test_token_backend import GUTENBERG_NAMES, build, gutenberg, token_backend, tokenizer  # noqa: E402
from wikidata_builder import item, write_dump  # noqa: E402

from factprobe.index.backend import Backend, open_for_counting, open_for_indexing  # noqa: E402
from factprobe.index.infini_gram.api import InfiniGramApi  # noqa: E402
from factprobe.index.infini_gram.api_backend import (  # noqa: E402
    ENTITY_SEMANTICS,
    PAIR_SEMANTICS,
    ApiBackendError,
    ApiCountIndex,
)
from factprobe.index.infini_gram.layout import TokenIndexFolder, token_folder  # noqa: E402
from factprobe.index.infini_gram.vocabulary import Vocabulary  # noqa: E402
from factprobe.index.settings import IndexSettings  # noqa: E402
from factprobe.index.text import at_word_boundaries, normalize  # noqa: E402
from factprobe.kg.graph import KnowledgeGraph  # noqa: E402

# The API cannot be asked which tokenizer built an index: its name says, as infini-gram's do.
NAME = "v4_gutenberg_smollm2"
MODEL = "smollm2-135m-instruct"
CLAIMS = {  # facts among the Gutenberg entities, for annotate
    "Q2028": {"P17": ["Q38"]}, "Q641": {"P17": ["Q38"]}, "Q6247": {"P17": ["Q38"]}, "Q490": {"P17": ["Q38"]},
    "Q617": {"P17": ["Q38"]}, "Q1449": {"P17": ["Q38"]}, "Q220": {"P17": ["Q38"]}, "Q90": {"P17": ["Q142"]},
    "Q38": {"P36": ["Q220"]}, "Q142": {"P36": ["Q90"]}, "Q21": {"P36": ["Q84"]},
    "Q83186": {"P840": ["Q2028", "Q6247"], "P50": ["Q692"]},  # its narrative locations, its author
}
# Occurrences by hand-checked brute force (below). "Rome" is 1 word-boundary occurrence and 193
# inside "Romeo" ("Rome" + "o" in SmolLM2's tokens): the API has no positions to tell them apart.
OCCURRENCES = {"Q220": 194, "Q90": 61, "Q641": 33, "Q2028": 26, "Q6247": 20, "Q490": 14, "Q692": 8,
               "Q617": 5, "Q1449": 4, "Q21": 4, "Q38": 4, "Q79759": 2, "Q83186": 2, "Q142": 1, "Q183": 1,
               "Q84": 0, "Q1524": 0, "Q2634": 0, "Q29": 0, "Q22673": 0, "Q8958": 0}
ROMEO = 193
# Documents (the local infini-gram backend, mentions="any"): other numbers than occurrences
DOCUMENTS = {"Q220": 1, "Q90": 30, "Q641": 25, "Q2028": 20, "Q6247": 18, "Q490": 11, "Q692": 5}
# (head, tail) -> {window: co-occurrences}, and the documents with both
PAIRS = {("Q2028", "Q6247"): ({10: 1, 100: 3, 1000: 4}, 4),
         ("Q2028", "Q490"): ({10: 2, 100: 4, 1000: 4}, 2),
         ("Q490", "Q6247"): ({10: 1, 100: 2, 1000: 3}, 1),
         ("Q641", "Q1449"): ({10: 0, 100: 1, 1000: 1}, 1),
         ("Q641", "Q617"): ({10: 0, 100: 2, 1000: 2}, 2),
         ("Q641", "Q38"): ({10: 0, 100: 0, 1000: 1}, 1),
         ("Q220", "Q90"): ({10: 0, 100: 11, 1000: 19}, 0),  # Romeo and Paris, never Rome and Paris
         ("Q692", "Q83186"): ({10: 0, 100: 1, 1000: 1}, 1),
         ("Q21", "Q84"): ({10: 0, 100: 0, 1000: 0}, 0)}
LEADS = (" ", "'", "\u2019")  # a character a token may carry before a name (" Venice")


def dump_entities() -> list[dict]:
    names: dict[str, list[str]] = {}
    for qid, name in GUTENBERG_NAMES:
        names.setdefault(qid, []).append(name)
    return [item(qid, found[0], tuple(found[1:]), CLAIMS.get(qid)) for qid, found in names.items()]


class Reference:
    """Counts by brute force over the index's own tokens, decoded: a name occurs at a token
    where its bytes, in any casing of its words, begin there (or one LEADS character in) and
    end at a token boundary."""

    def __init__(self, folder, vocabulary: Vocabulary) -> None:
        self.docs = []
        with TokenIndexFolder(token_folder(folder)) as tokens:
            for d in range(tokens.documents):
                pieces = [vocabulary.pieces[t] for t in tokens.document(d).tolist()]
                starts = [0]
                for piece in pieces:
                    starts.append(starts[-1] + len(piece))
                self.docs.append((b"".join(pieces), {at: i for i, at in enumerate(starts)}))

    @staticmethod
    def casings(name: str) -> set[bytes]:
        parts = re.split(r"(\W+)", name)
        choices = [{p, p.upper(), p[:1].upper() + p[1:]} if i % 2 == 0 else {p} for i, p in enumerate(parts)]
        return {"".join(c).encode() for c in product(*choices)}

    def positions(self, names) -> dict[tuple[int, int], bytes]:
        """(document, token) -> the bytes found there, lead included."""
        found = {}
        for name in names:
            for needle in self.casings(normalize(name)):
                for d, (text, token_at) in enumerate(self.docs):
                    p = text.find(needle)
                    while p >= 0:
                        if p + len(needle) in token_at:
                            if p in token_at:
                                found[(d, token_at[p])] = needle
                            for lead in (x.encode() for x in LEADS):
                                if p not in token_at and p - len(lead) in token_at and text[p - len(lead):p] == lead:
                                    found[(d, token_at[p - len(lead)])] = lead + needle
                        p = text.find(needle, p + 1)
        return found

    @staticmethod
    def window(left, right, window: int) -> int:
        """The server's AND of two clauses: positions of the rarer one (the first of equals) with
        one of the other's starting within `window` tokens in the same document."""
        anchor, other = (left, right) if len(left) <= len(right) else (right, left)
        return sum(1 for d, i in anchor if any(e == d and abs(j - i) <= window for e, j in other))


def names_of(qid: str) -> list[str]:
    return [name for q, name in GUTENBERG_NAMES if q == qid]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    base = tmp_path_factory.mktemp("api-backend")
    store = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(base / "gutenberg.json", dump_entities())), "--store",
            str(store), "--quiet", check=True)
    folder = base / NAME
    backend = token_backend(folder, "smollm2")
    build(backend, store, gutenberg(), IndexSettings(languages=("en",), mentions="any"))
    with serving_ngram(base, store, [folder]) as url:
        yield {"url": url, "store": store, "folder": folder, "base": base,
               "tokenizer": backend.tokenizer, "tokenizer_name": backend.tokenizer_name,
               "reference": Reference(folder, Vocabulary(folder / "tokenizer.json"))}


def api_backend(served, **changes) -> Backend:
    fields = {"tokenizer": served["tokenizer"], "tokenizer_name": served["tokenizer_name"], "api_index": NAME,
              "api_url": served["url"], **changes}
    return Backend("infini-gram-api", **fields)


def api_args(served, url=None, model=MODEL) -> list[str]:
    return ["--backend", "infini-gram-api", "--api-url", url or served["url"], "--api-index", NAME, "--model", model,
            "--store", str(served["store"])]


def one_line_error(result, code: int) -> str:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_entity_counts_are_occurrences_equal_to_the_brute_force(served):
    reference = served["reference"]
    index = open_for_counting(api_backend(served), served["store"])
    local = open_for_counting(Backend("infini-gram", str(served["folder"])), served["store"])
    texts = [normalize(document.text) for document in gutenberg()]
    try:
        for qid, expected in OCCURRENCES.items():
            assert index.entity_frequency(qid) == len(reference.positions(names_of(qid))) == expected, qid
            keys = [normalize(name) for name in names_of(qid)]
            # the text index's rule (word boundaries) finds the same occurrences, but Rome's in Romeo
            bounded = sum(1 for key in keys for text in texts for at in
                          (m.start() for m in re.finditer(re.escape(key), text))
                          if at_word_boundaries(text, at, at + len(key)))
            assert bounded == expected - (ROMEO if qid == "Q220" else 0), qid
        for qid, documents in DOCUMENTS.items():
            assert local.entity_frequency(qid) == documents != index.entity_frequency(qid)
        assert index.entity_semantics == ENTITY_SEMANTICS and "not documents" in ENTITY_SEMANTICS
        assert index.approximate == set() and IndexSettings.from_dict(index.settings()).mentions == "any"
        with pytest.raises(ApiBackendError, match="counts tokens, not documents"):
            index.document_count()
    finally:
        index.close()
        local.close()


def test_an_or_split_into_single_forms_sums_to_the_same(served):
    # one form per clause: 45 requests for "Romeo and Juliet", still the one OR's count
    index = ApiCountIndex(InfiniGramApi(NAME, served["url"]), served["store"], served["tokenizer"],
                          served["tokenizer_name"], max_terms=1)
    try:
        assert len(index.forms("Q83186").ids) == 45 and len(index.forms("Q692").ids) == 25
        assert [index.entity_frequency(q) for q in ("Q83186", "Q692", "Q220")] == [2, 8, 194]
    finally:
        index.close()


@pytest.mark.parametrize("window", [10, 100, 1000])
def test_pairs_are_window_cooccurrence_equal_to_the_brute_force(served, window):
    reference = served["reference"]
    index = ApiCountIndex(InfiniGramApi(NAME, served["url"]), served["store"], served["tokenizer"],
                          served["tokenizer_name"], window=window)
    local = open_for_counting(Backend("infini-gram", str(served["folder"])), served["store"])
    try:
        got = index.pair_frequencies(list(PAIRS))
        for (head, tail), count in zip(PAIRS, got):
            expected = reference.window(reference.positions(names_of(head)), reference.positions(names_of(tail)),
                                        window)
            assert count == expected == PAIRS[(head, tail)][0][window], (head, tail)
            assert local.pair_frequency(head, tail) == PAIRS[(head, tail)][1]
        assert index.pair_semantics == PAIR_SEMANTICS.format(window=window)
        assert index.pair_semantics.startswith(f"window co-occurrence within {window} tokens (approximate)")
        # every side past 4 forms kept all its occurrences: no pair is marked for its forms
        assert index.approximate == set() and index.reasons == {}
    finally:
        index.close()
        local.close()


def test_a_side_past_max_terms_keeps_its_most_frequent_forms_and_says_so(served):
    reference = served["reference"]
    index = ApiCountIndex(InfiniGramApi(NAME, served["url"]), served["store"], served["tokenizer"],
                          served["tokenizer_name"], max_terms=1)
    try:
        found = reference.positions(names_of("Q692"))
        by_text: dict[bytes, set] = {}
        for at, text in found.items():
            by_text.setdefault(text, set()).add(at)
        kept_text = max(by_text, key=lambda t: len(by_text[t]))
        assert (kept_text, len(by_text[kept_text]), len(found)) == (b" Shakespeare", 5, 8)
        tail = reference.positions(names_of("Q83186"))
        expected = reference.window(by_text[kept_text], tail, 100)
        assert index.pair_frequency("Q692", "Q83186") == expected == 1
        assert index.approximate == {"Q692+Q83186"}
        assert index.reasons["Q692+Q83186"] == ("Q692: 1 of its 25 token forms (62.5% of its occurrences); "
                                                "Q83186: 1 of its 45 token forms (50.0% of its occurrences)")
    finally:
        index.close()


def test_the_cli_says_occurrences_and_window_cooccurrence_never_documents(served):
    where = f"{served['url']} index {NAME}"
    result = run_cli("frequency", "entity", "Q641", *api_args(served), "--json")
    assert result.returncode == 0, result.stderr
    assert {k: v for k, v in json.loads(result.stdout).items() if not k.endswith("label")} == {
        "entity": "Q641", "occurrences": 33, "semantics": ENTITY_SEMANTICS, "documents": None,
        "counted_by": "infini-gram-api", "index": where, "approximate": [], "approximate_because": None}
    result = run_cli("frequency", "entity", "Q220", *api_args(served))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Q220: 194 occurrences  ({ENTITY_SEMANTICS}; by infini-gram-api {where})")
    semantics = PAIR_SEMANTICS.format(window=100)
    result = run_cli("frequency", "pair", "Q2028", "Q6247", *api_args(served), "--json")
    assert result.returncode == 0, result.stderr
    assert {k: v for k, v in json.loads(result.stdout).items() if not k.endswith("label")} == {
        "head": "Q2028", "tail": "Q6247", "window_cooccurrences": 3, "semantics": semantics, "documents": None,
        "counted_by": "infini-gram-api", "index": where, "approximate": [], "approximate_because": None}
    result = run_cli("frequency", "pair", "Q220", "Q90", *api_args(served))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Q220 + Q90: 11 window co-occurrences  ({semantics}; by infini-gram-api {where})")
    for line in result.stdout, json.loads(run_cli("frequency", "pair", "Q2028", "Q6247", *api_args(served),
                                                  "--json").stdout)["semantics"]:
        assert "documents" not in line.replace("not KDF's document counts", "") and "bucket" not in line


def test_annotate_rows_and_annotator_say_what_they_count(served):
    out = served["base"] / "counts.jsonl"
    result = run_cli("frequency", "annotate", "--relation", "P36", "--relation", "P17", "--relation", "P840",
                     "--relation", "P50", "--out", str(out),
                     "--to-store", *api_args(served), "--quiet", "--json")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    got = {(r["relation"], r["subject"], r["object"]): r["window_cooccurrences"] for r in rows}
    reference = served["reference"]
    expected = {(pid, s, o): reference.window(reference.positions(names_of(s)), reference.positions(names_of(o)),
                                              100)
                for s, claims in CLAIMS.items() for pid, objects in claims.items() for o in objects}
    # the title "Romeo and Juliet" within 100 tokens of "Verona" and of "Shakespeare" once each;
    # Italy is 4 occurrences, none within 100 tokens of a city's
    assert got == expected == {
        ("P36", "Q38", "Q220"): 0, ("P36", "Q142", "Q90"): 0, ("P36", "Q21", "Q84"): 0,
        ("P17", "Q2028", "Q38"): 0, ("P17", "Q641", "Q38"): 0, ("P17", "Q6247", "Q38"): 0,
        ("P17", "Q490", "Q38"): 0, ("P17", "Q617", "Q38"): 0, ("P17", "Q1449", "Q38"): 0,
        ("P17", "Q220", "Q38"): 0, ("P17", "Q90", "Q142"): 0,
        ("P840", "Q83186", "Q2028"): 1, ("P840", "Q83186", "Q6247"): 0, ("P50", "Q83186", "Q692"): 1}
    assert all(set(r) == {"fact", "subject", "relation", "object", "window_cooccurrences", "bucket", "subject_label",
                          "relation_label", "object_label"} for r in rows)
    summary = json.loads(result.stdout)
    annotator = summary["annotator"]
    assert (annotator["backend"], annotator["index"], annotator["counts"]) == (
        "infini-gram-api", f"{served['url']} index {NAME}", PAIR_SEMANTICS.format(window=100))
    assert annotator["tokenizer"] == served["tokenizer_name"]
    assert summary["store_corpus"] == NAME and summary["facts"] == 14
    with KnowledgeGraph(served["store"]) as kg:  # what the probe-set builders read says it too
        recorded = kg.frequency_annotators(NAME, ["P17", "P840"])
    assert [[a["counts"] for a in found] for found in recorded.values()] == [[PAIR_SEMANTICS.format(window=100)]] * 2
    text = run_cli("frequency", "annotate", "--relation", "P36", "--out", str(out), "--overwrite",
                   *api_args(served), "--quiet")
    assert text.returncode == 0, text.stderr
    assert f"  counts are {PAIR_SEMANTICS.format(window=100)}" in text.stdout.splitlines()


def test_a_tokenizer_not_the_index_is_refused_by_name_before_any_request(served):
    tokenizer("gemma3")  # skips without Gemma's tokenizer
    nowhere = f"http://127.0.0.1:{free_port()}/infini-gram"  # a request would be exit 3, not 2
    for args in (["entity", "Q641"], ["pair", "Q2028", "Q6247"],
                 ["annotate", "--relation", "P17", "--out", str(served["base"] / "no.jsonl")]):
        for url in (nowhere, served["url"]):
            line = one_line_error(run_cli("frequency", *args, *api_args(served, url, "gemma3-270m")), 2)
            assert re.fullmatch(rf"error: api index {NAME}: built with the smollm2 tokenizer \(by its name, like "
                                r"v4_pileval_gpt2\), not '[^']*gemma[^']*'; give --model a model with that "
                                r"index's tokenizer", line, re.I), line
    assert not (served["base"] / "no.jsonl").exists()
    path, name = tokenizer("gemma3")
    with pytest.raises(ApiBackendError, match=f"api index {NAME}: built with the smollm2 tokenizer"):
        open_for_counting(api_backend(served, api_url=nowhere, tokenizer=path, tokenizer_name=name),
                          served["store"])
    unnamed = one_line_error(run_cli("frequency", "entity", "Q641", "--backend", "infini-gram-api", "--api-url",
                                     nowhere, "--api-index", "v4_gutenberg", "--model", MODEL, "--store",
                                     str(served["store"])), 2)
    assert unnamed.startswith("error: api index v4_gutenberg: its name does not end in a tokenizer family")


def test_a_server_down_or_an_index_it_lacks_is_one_line(served):
    nowhere = f"http://127.0.0.1:{free_port()}/infini-gram"
    line = one_line_error(run_cli("frequency", "entity", "Q641", *api_args(served, nowhere)), 3)
    assert line.startswith(f"error: {nowhere}: unreachable after 3 tries (")
    line = one_line_error(run_cli("frequency", "pair", "Q2028", "Q6247", *api_args(served, nowhere)), 3)
    assert line.startswith(f"error: {nowhere}: unreachable after 3 tries (")
    args = api_args(served)
    args[args.index(NAME)] = "v4_other_smollm2"
    assert one_line_error(run_cli("frequency", "entity", "Q641", *args), 2) == (
        f"error: {served['url']}: unknown index 'v4_other_smollm2'; this server serves: {NAME}")


def test_bad_options_are_one_line(served):
    base = served["base"]
    cases = [
        (["entity", "Venice", *api_args(served)], "error: 'Venice': --backend infini-gram-api counts entities by QID"),
        (["entity", "Q641", "--backend", "infini-gram-api", "--model", MODEL], "error: --backend infini-gram-api "
         "needs --api-index NAME"),
        (["entity", "Q641", "--backend", "infini-gram-api", "--api-index", NAME], "error: --backend "
         "infini-gram-api tokenizes names with the index's tokenizer: give --model SPEC"),
        (["entity", "Q641", *api_args(served, "ftp://127.0.0.1/x")], "error: --api-url ftp://127.0.0.1/x: an "
         "infini-gram API URL starts with http:// or https://"),
        (["entity", "Q641", *api_args(served)[:-1], str(base / "missing.sqlite")], "error: counting names through "
         f"the infini-gram API needs the knowledge-graph store (no store at {base / 'missing.sqlite'})"),
    ]
    for args, start in cases:
        assert one_line_error(run_cli("frequency", *args), 2).startswith(start), args


def test_corpus_index_refuses_the_api_backend_in_one_line(served):
    corpus = served["base"] / "more.jsonl"
    corpus.write_text(json.dumps({"id": "x", "title": "", "text": "Venice and Verona."}) + "\n")
    for extra in ([], ["--model", MODEL], ["--from-store"]):
        files = [] if extra == ["--from-store"] else [str(corpus)]
        line = one_line_error(run_cli("corpus", "index", *files, "--backend", "infini-gram-api", "--store",
                                      str(served["store"]), *extra), 2)
        assert line == ("error: --backend infini-gram-api: an API index is read-only; build a local one with "
                        "--backend infini-gram --model SPEC (and answer the same API from it with `factprobe "
                        "serve --ngram-index DIR`)")
    with pytest.raises(ApiBackendError, match="built by its server: nothing can be added to it"):
        open_for_indexing(api_backend(served), IndexSettings(languages=("en",)), served["store"])
