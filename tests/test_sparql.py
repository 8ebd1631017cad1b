"""The SPARQL source against a real local endpoint: Oxigraph's server (the `oxigraph` CLI of
the PyPI package in the dev extra) serving tests/fixtures/rdf/sample.nt.

Retry/backoff is tested through a small HTTP server of our own in front of Oxigraph that
answers with scripted errors (429 + Retry-After, 503) before passing requests on.
"""

from __future__ import annotations

import http.server
import json
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from factprobe.kg import KnowledgeGraph, Store
from factprobe.kg.ingest import ingest
from factprobe.kg.sources.rdf import RdfSource
from factprobe.kg.sources.sparql import SparqlError, ingest_sparql

from conftest import FIXTURES, free_port, run_cli, running_server

LANGS = ("en", "de")
RELATIONS = ("P36", "P31")
CONTENT = ("entities", "names", "types", "facts", "staged_parts")


def _oxigraph() -> str | None:
    local = Path(sys.executable).with_name("oxigraph")
    return str(local) if local.exists() else shutil.which("oxigraph")


def _ask(url: str, timeout: float = 2.0) -> bool:
    data = urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }"}).encode()
    req = urllib.request.Request(url, data=data, headers={"Accept": "application/sparql-results+json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="session")
def endpoint(tmp_path_factory):
    binary = _oxigraph()
    if binary is None:
        pytest.skip("the oxigraph CLI (pip install oxigraph, in the dev extra) is not installed")
    base = tmp_path_factory.mktemp("oxigraph")
    # The fixture's one malformed line is for the file tests; a store loads valid RDF only.
    clean = base / "sample.nt"
    lines = (FIXTURES / "rdf" / "sample.nt").read_text(encoding="utf-8").splitlines()
    clean.write_text("\n".join(l for l in lines if '"Minga@de .' not in l) + "\n", encoding="utf-8")
    location = base / "db"
    subprocess.run([binary, "load", "--location", str(location), "--file", str(clean)],
                   check=True, capture_output=True, timeout=60)
    port = free_port()
    url = f"http://127.0.0.1:{port}/query"
    with running_server([binary, "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
                        base / "server.log", lambda: _ask(url), name="oxigraph serve"):
        yield url


def content(store, relations=None) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(store)
    try:
        out = {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in CONTENT}
        if relations:
            out["facts"] = [r for r in out["facts"] if r[2] in relations]
        return out
    finally:
        conn.close()


def pull(store: Path, url: str, relations=RELATIONS, **kw):
    options = {"page_size": 1000, "limit": None, "retries": 2, "timeout": 10.0,
               "restart": False, "progress": False, "backoff": 0.01, **kw}
    with Store(store, languages=LANGS) as st:
        return [ingest_sparql(st, url, r, **options) for r in relations]


@pytest.fixture(scope="session")
def file_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("file") / "g.sqlite"
    with Store(store, languages=LANGS) as st:
        ingest(st, RdfSource(languages=LANGS), FIXTURES / "rdf" / "sample.nt", workers=0)
    return store


@pytest.fixture(scope="session")
def pulled(endpoint, tmp_path_factory):
    store = tmp_path_factory.mktemp("pulled") / "g.sqlite"
    reports = pull(store, endpoint)
    return store, reports


def test_pull_matches_file_ingest(pulled, file_store):
    store, reports = pulled
    assert [(r.records, r.rejected, r.complete) for r in reports] == [(6, 0, True), (12, 0, True)]
    conn, ref = sqlite3.connect(store), sqlite3.connect(file_store)
    q = "SELECT * FROM facts WHERE relation IN ('P36', 'P31') ORDER BY id"
    facts = conn.execute(q).fetchall()
    assert facts == ref.execute(q).fetchall()
    assert conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0] == len(facts) == 14
    ids = {r[0] for r in facts}
    assert {"Q183$B1B2C3D4-0001", "Q183$B1B2C3D4-0002", "Q142$D1B2C3D4-0002"} <= ids
    bonn = conn.execute("SELECT start_time, start_precision, end_time, rank FROM facts "
                        "WHERE id='Q183$B1B2C3D4-0002'").fetchone()
    assert bonn == ("+1949-00-00T00:00:00Z", 9, "+1990-10-03T00:00:00Z", 1)
    # Entities of those facts, with their names, as the file gives them.
    q = ("SELECT * FROM entities WHERE id IN "
         "('Q183', 'Q142', 'Q64', 'Q586', 'Q90', 'Q456', 'Q515', 'Q6256', 'Q1726') ORDER BY id")
    assert conn.execute(q).fetchall() == ref.execute(q).fetchall()
    q = "SELECT * FROM names WHERE entity IN ('Q183', 'Q64', 'Q1726') ORDER BY 1, 2, 3"
    assert conn.execute(q).fetchall() == ref.execute(q).fetchall()
    assert conn.execute("SELECT * FROM entities WHERE id IN ('P31', 'P36') ORDER BY id").fetchall() == [
        ("P31", "property", "instance of", None, 0, "wikibase-item"),
        ("P36", "property", "capital", None, 0, "wikibase-item")]
    # Types of every subject and object (Berlin's and Bonn's come from the endpoint).
    q = "SELECT * FROM types ORDER BY 1, 2, 3"
    assert conn.execute(q).fetchall() == ref.execute(q).fetchall()
    conn.close()
    ref.close()


def test_tiny_pages_give_the_same_store(pulled, endpoint, tmp_path):
    store, _ = pulled
    reports = pull(tmp_path / "tiny.sqlite", endpoint, page_size=1)
    assert [r.records for r in reports] == [6, 12]
    assert content(tmp_path / "tiny.sqlite") == content(store)


def test_resume_after_limit(pulled, endpoint, tmp_path):
    store, _ = pulled
    target = tmp_path / "g.sqlite"
    [first] = pull(target, endpoint, relations=("P36",), page_size=2, limit=3)
    assert first.records == 3 and not first.already_done
    with Store(target) as st:
        state = st.ingest_state(f"sparql:{endpoint}:P36")
    assert (state.position, state.complete) == (3, False)
    [again] = pull(target, endpoint, relations=("P36",), page_size=2, limit=3)
    assert again.records == 0  # the same limit: nothing more to do
    reports = pull(target, endpoint, page_size=2)
    assert reports[0].resumed_from == 3 and reports[0].records == 3 and reports[0].complete
    assert content(target) == content(store)
    [done] = pull(target, endpoint, relations=("P36",))
    assert done.already_done


class ScriptedProxy:
    """A tiny HTTP server in front of the endpoint: it answers each request with the next
    scripted (status, headers) error, if any is left, else passes the request on."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.script: list[tuple[int, dict]] = []
        self.fail_when = None  # a predicate on the query text: answer 503 while it holds
        self.log: list[tuple[float, int]] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                query = urllib.parse.parse_qs(body.decode()).get("query", [""])[0]
                if proxy.fail_when is not None and proxy.fail_when(query):
                    proxy.script.insert(0, (503, {}))
                if proxy.script:
                    status, headers = proxy.script.pop(0)
                    proxy.log.append((time.monotonic(), status))
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                req = urllib.request.Request(proxy.upstream, data=body, headers={
                    "Content-Type": self.headers.get("Content-Type", ""),
                    "Accept": self.headers.get("Accept", "*/*")})
                with urllib.request.urlopen(req, timeout=10) as r:
                    payload, ctype, status = r.read(), r.headers.get("Content-Type"), r.status
                proxy.log.append((time.monotonic(), status))
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/query"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy(endpoint):
    p = ScriptedProxy(endpoint)
    yield p
    p.close()


def test_retry_after_is_honoured(proxy, pulled, tmp_path):
    store, _ = pulled
    proxy.script = [(429, {"Retry-After": "1"}), (503, {})]
    started = time.monotonic()
    reports = pull(tmp_path / "g.sqlite", proxy.url, backoff=0.01, retries=3)
    assert all(r.complete for r in reports)
    (t429, s429), (t503, s503), (t_ok, s_ok) = proxy.log[:3]
    assert (s429, s503, s_ok) == (429, 503, 200)
    assert t503 - t429 >= 0.95  # waited as told, not the 0.01 s backoff
    assert t_ok - t503 < 0.9  # no Retry-After: exponential backoff from 0.01 s
    assert time.monotonic() - started < 10
    assert content(tmp_path / "g.sqlite") == content(store)


def test_resume_after_failure(proxy, pulled, tmp_path):
    """Pages committed before a hard failure stay; the rerun continues after them."""
    store, _ = pulled
    target = tmp_path / "g.sqlite"
    # The endpoint breaks down for good when asked for the third page of records.
    proxy.fail_when = lambda query: "OFFSET 4" in query
    with pytest.raises(SparqlError) as err:
        pull(target, proxy.url, relations=("P36",), page_size=2, retries=1)
    assert proxy.url in str(err.value) and "\n" not in str(err.value)
    assert "HTTP 503" in str(err.value)
    with Store(target) as st:
        state = st.ingest_state(f"sparql:{proxy.url}:P36")
    assert (state.position, state.complete) == (4, False)  # pages 1 and 2 committed

    proxy.fail_when = None
    reports = pull(target, proxy.url, page_size=2)
    assert reports[0].resumed_from == 4 and reports[0].records == 2 and reports[0].complete
    assert content(target) == content(store)


def test_unreachable_endpoint_is_one_line_error(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/sparql"
    started = time.monotonic()
    with pytest.raises(SparqlError) as err:
        pull(tmp_path / "g.sqlite", url, relations=("P36",), retries=2, backoff=0.01)
    message = str(err.value)
    assert url in message and "\n" not in message and "3 attempts" in message
    assert time.monotonic() - started < 5


def test_bad_request_is_not_retried(proxy, tmp_path):
    proxy.script = [(400, {})] * 5
    with pytest.raises(SparqlError) as err:
        pull(tmp_path / "g.sqlite", proxy.url, relations=("P36",), retries=3)
    assert proxy.url in str(err.value) and len(proxy.log) == 1


def test_cli_ingest_sparql(endpoint, pulled, tmp_path):
    store, _ = pulled
    target = tmp_path / "cli.sqlite"
    proc = run_cli("ingest", "sparql", "--endpoint", endpoint, "--relation", "P36",
                   "--relation", "P31", "--store", str(target), "--languages", "en,de", "--quiet",
                   "--json", "--page-size", "4")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [i["records"] for i in out["inputs"]] == [6, 12]
    assert content(target) == content(store)
    bad = run_cli("ingest", "sparql", "--endpoint", f"http://127.0.0.1:{free_port()}/q",
                  "--relation", "P36", "--store", str(tmp_path / "x.sqlite"), "--retries", "0",
                  "--quiet")
    assert bad.returncode == 2
    [line] = bad.stderr.strip().splitlines()
    assert line.startswith("error: ") and "127.0.0.1" in line


def _served_and_filed(tmp_path, triples: str, relations: tuple[str, ...]):
    """The same N-Triples pulled by `ingest sparql` from an Oxigraph store loaded with them, and
    read by `ingest rdf` from the file: the two stores' contents for `relations`."""
    binary = _oxigraph()
    if binary is None:
        pytest.skip("the oxigraph CLI (pip install oxigraph, in the dev extra) is not installed")
    nt = tmp_path / "triples.nt"
    nt.write_text(triples, encoding="utf-8")
    subprocess.run([binary, "load", "--location", str(tmp_path / "db"), "--file", str(nt)],
                   check=True, capture_output=True, timeout=60)
    port = free_port()
    url = f"http://127.0.0.1:{port}/query"
    with running_server([binary, "serve", "--location", str(tmp_path / "db"), "--bind", f"127.0.0.1:{port}"],
                        tmp_path / "server.log", lambda: _ask(url), name="oxigraph serve"):
        pull(tmp_path / "pulled.sqlite", url, relations=relations)
    with Store(tmp_path / "file.sqlite", languages=LANGS) as st:
        ingest(st, RdfSource(languages=LANGS), nt, workers=0)
    return content(tmp_path / "pulled.sqlite", relations), content(tmp_path / "file.sqlite", relations)


# Iceland (Q189) shares a border with no country: in Wikidata's truthy N-Triples (the
# latest-truthy dump, Special:EntityData's truthy flavour) "no value" is a class of the entity
# (`wd:Q189 a wdno:P47`); Norway's (Q20) border with Sweden (Q34) is a `wdt:` triple beside it.
NOVALUE_NT = """\
<http://www.wikidata.org/entity/Q189> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://www.wikidata.org/prop/novalue/P47> .
<http://www.wikidata.org/entity/Q189> <http://www.w3.org/2000/01/rdf-schema#label> "Iceland"@en .
<http://www.wikidata.org/entity/Q20> <http://www.wikidata.org/prop/direct/P47> <http://www.wikidata.org/entity/Q34> .
<http://www.wikidata.org/entity/Q20> <http://www.w3.org/2000/01/rdf-schema#label> "Norway"@en .
<http://www.wikidata.org/entity/Q34> <http://www.w3.org/2000/01/rdf-schema#label> "Sweden"@en .
"""


def test_a_no_value_statement_comes_through_sparql_as_through_the_file(tmp_path):
    """Issue 46 item 6: `ingest sparql` yields the rows `ingest rdf` yields on the same triples,
    Iceland's "no value" for P47 included (the truthy `wd:Q189 a wdno:P47` was never fetched)."""
    pulled, filed = _served_and_filed(tmp_path, NOVALUE_NT, ("P47",))
    assert pulled["facts"] == filed["facts"] and len(filed["facts"]) == 2
    with KnowledgeGraph(tmp_path / "pulled.sqlite") as kg:
        assert kg.objects("Q20", "P47") == ["Q34"] and kg.objects("Q189", "P47") == []
        assert kg.stats().facts == 2  # the no-value is stored, true of nothing


# Homer (Q6691) has "some value" for place of birth (P19) and date of birth (P569): Wikidata's
# truthy RDF since 2022 names the unknown value with a skolem IRI under /.well-known/genid/
# (the hash below is shaped like one, not copied); older dumps and other tools give a blank
# node, as the P570 line does. Both mean "some value", stored with no object.
SOMEVALUE_NT = """\
<http://www.wikidata.org/entity/Q6691> <http://www.wikidata.org/prop/direct/P19> <http://www.wikidata.org/.well-known/genid/6d2a1f0c9b8e7d6c5b4a39281706f5e4> .
<http://www.wikidata.org/entity/Q6691> <http://www.wikidata.org/prop/direct/P570> _:b0 .
<http://www.wikidata.org/entity/Q6691> <http://www.w3.org/2000/01/rdf-schema#label> "Homer"@en .
<http://www.wikidata.org/entity/Q42> <http://www.wikidata.org/prop/direct/P19> <http://www.wikidata.org/entity/Q350> .
<http://www.wikidata.org/entity/Q42> <http://www.w3.org/2000/01/rdf-schema#label> "Douglas Adams"@en .
<http://www.wikidata.org/entity/Q350> <http://www.w3.org/2000/01/rdf-schema#label> "Cambridge"@en .
"""


def test_a_some_value_statement_comes_through_sparql_as_through_the_file(tmp_path):
    """Issue 46 item 6: Homer's unknown place and date of birth (a genid IRI, a blank node) reach
    the store from an endpoint as they do from the file: stored, with no object, true of nothing."""
    pulled, filed = _served_and_filed(tmp_path, SOMEVALUE_NT, ("P19", "P570"))
    assert pulled["facts"] == filed["facts"] and len(filed["facts"]) == 3
    assert sum("somevalue" in repr(row) for row in filed["facts"]) == 2, filed["facts"]
    with KnowledgeGraph(tmp_path / "pulled.sqlite") as kg:
        assert kg.objects("Q42", "P19") == ["Q350"]
        assert kg.objects("Q6691", "P19") == [] and kg.objects("Q6691", "P570") == []
        assert kg.stats().facts == 3
