"""`factprobe corpus index` and `factprobe frequency ...`: how often entities and facts occur.

Thin commands over the corpus steps (steps_graph.py) and `count_documents`: options
in, progress bars and one-line errors out."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager

import click

from ..index.backend import BACKENDS, Backend
from ..index.chinese import ZH_CONVERSIONS, ZH_VARIANT_RULES
from ..index.corpus import DEFAULT_BUCKETS
from ..index.corpus_files import FORMATS
from ..index.corpus_jobs import IndexOptions
from ..index.settings import MENTIONS, NAMES
from .errors import EXIT_PARTIAL, EXIT_USAGE, fail
from .frequency_api import api_backend, api_count, api_errors, api_options
from .options import RenamedOption, json_option, store_option, with_options
from .outputs import overwrite_option
from .terminal import echo

EXIT_ENVIRONMENT = 3  # the common.md rule: an environment problem (infini-gram's indexer missing or failing)

index_option = click.option("--index", "index_path", type=click.Path(), default=Backend.path,
                            show_default=True, envvar="FACTPROBE_INDEX",
                            help="Embedded backend: the index file; infini-gram: the index folder (env FACTPROBE_INDEX).")
backend_options = [
    click.option("--backend", type=click.Choice(BACKENDS), default=Backend.kind, show_default=True,
                 envvar="FACTPROBE_BACKEND",
                 help="embedded: one SQLite file, no server. elasticsearch: a cluster (`docker compose up "
                      "elasticsearch`). infini-gram: a folder of the corpus in a model's own tokens (--model); "
                      "these give identical document counts. infini-gram-api: an infini-gram API server "
                      "(--api-index, --api-url, --model): occurrences and window co-occurrence, not documents."),
    index_option,
    click.option("--es-url", default=Backend.es_url, show_default=True, envvar="FACTPROBE_ES_URL",
                 help="Elasticsearch backend: the cluster's URL (env FACTPROBE_ES_URL)."),
    click.option("--es-index", default=Backend.es_index, show_default=True, envvar="FACTPROBE_ES_INDEX",
                 help="Elasticsearch backend: the index holding this corpus (one per corpus)."),
    click.option("--model", "model", metavar="SPEC", default=None,
                 help="infini-gram backend: the model whose tokenizer the index is in (a spec as `factprobe "
                      "model` takes: smollm2-135m-instruct, gemma3-270m, gguf:FILE, hf:FOLDER). Needed to build; "
                      "when counting, an index built with another tokenizer is refused."),
]



def _backend(backend: str, index_path: str, es_url: str, es_index: str, model: str | None = None,
             api_index: str | None = None, api_url: str | None = None):
    """The Backend the options name; for infini-gram, --model resolved to its tokenizer.json
    (probes/scoring/tokenizer_file.py: saved once into the factprobe cache)."""
    from pathlib import Path

    if backend == "infini-gram-api":
        return api_backend(api_index, api_url, model)

    if backend != "infini-gram":
        if backend == "embedded" and Path(index_path).is_dir():
            raise click.BadParameter(f"{index_path!r} is a directory; the embedded index is one file",
                                     param_hint="'--index'")
        return Backend(backend, index_path, es_url, es_index)
    if not model:
        return Backend(backend, index_path, es_url, es_index)
    from ..probes.scoring.specs import SpecError
    from ..probes.scoring.tokenizer_file import tokenizer_file

    try:
        found = tokenizer_file(model)
    except (SpecError, OSError, ValueError) as error:
        fail(f"--model {model}: {error}", EXIT_USAGE)
    return Backend(backend, index_path, es_url, es_index, tokenizer=str(found.path), tokenizer_name=found.name)


@contextmanager
def _job_errors():
    """Whatever goes wrong with an index, its server or the job's inputs is one line naming it,
    and exit code 2."""
    from ..index.backend import NoIndex
    from ..index.chinese import ConverterMissing
    from ..index.corpus_jobs import CorpusJobError, MissingInput
    from ..index.elastic import BackendUnavailable
    from ..index.embedded import IndexSettingsError
    from ..index.infini_gram.api import ApiError
    from ..index.infini_gram.layout import LayoutError
    from ..index.infini_gram.suffix_array import IndexerError

    try:
        yield
    except ApiError as error:  # the infini-gram API: unreachable is exit 3, a refusal 2
        api_errors(error)
    except (NoIndex, BackendUnavailable, IndexSettingsError, MissingInput, CorpusJobError, ConverterMissing,
            LayoutError) as error:
        fail(str(error), EXIT_USAGE)
    except IndexerError as error:
        fail(str(error), EXIT_ENVIRONMENT)


@click.group("corpus")
def corpus_group() -> None:
    """Index a corpus for co-occurrence frequency (embedded: one SQLite file; or Elasticsearch)."""


@corpus_group.command("index")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=IndexOptions.format, show_default=True,
              help="FILES are JSONL documents (id, title, text: see --text-field), WikiExtractor's <doc> files "
                   "(found by their first line under jsonl too), T-REx JSON documents, or the Wikidata5M corpus "
                   "(wikidata5m_text.txt); compressed files too.")
@click.option("--id-field", default=IndexOptions.id_field, show_default=True,
              help="JSONL: the member holding a document's id (KILT: wikipedia_id).")
@click.option("--title-field", default=IndexOptions.title_field, show_default=True,
              help="JSONL: the member holding a document's title, if any (KILT: wikipedia_title).")
@click.option("--text-field", default=IndexOptions.text_field, show_default=True,
              help="JSONL: the member holding a document's text, a string or a list of paragraphs (Pyserini: "
                   "contents).")
@click.option("--from-store", "from_store", is_flag=True,
              help="Also index the documents the store holds (T-REx / Wikidata5M ingests).")
@click.option("--links", is_flag=True,
              help="Link-based counting: a document mentions the entities its own annotations link "
                   "(T-REx), instead of names found in its text. Needs --format trex or --from-store; "
                   "its own index.")
@click.option("--languages", default=",".join(IndexOptions.languages), show_default=True,
              help="Name languages that count as mentions.")
@click.option("--min-alias-length", type=click.IntRange(min=1), default=IndexOptions.min_alias_length,
              show_default=True,
              help="Ignore names shorter than this (after normalization).")
@click.option("--min-han-length", type=click.IntRange(min=1), default=IndexOptions.min_han_length,
              show_default=True,
              help="With a Chinese or Japanese language in --languages: names written in Han characters count "
                   "from this many characters (one is a word: 铁, 秦; KDF counts every Chinese name); 2 holds "
                   "them to --min-alias-length's 2, as before. Recorded in the index.")
@click.option("--exclude-alias", multiple=True, help="A name never to count as a mention; repeatable.")
@click.option("--names", "names", type=click.Choice(NAMES), default=IndexOptions.names, show_default=True,
              help="Which names of an entity count as mentions: all (labels and aliases) or label (its label in "
                   "each of --languages only: KDF counts one Chinese name per entity, `--languages zh --names label`).")
@click.option("--mentions", "mentions", type=click.Choice(MENTIONS), default=IndexOptions.mentions, show_default=True,
              help="maximal: a name inside a longer occurrence of another indexed name is no mention (\"Czech\" in "
                   "\"Czech Republic\", \"Delhi\" in \"New Delhi\"); any: every occurrence counts, inside "
                   "longer names too (counted so before this option; KDF's paper does not say). Recorded in the index.")
@click.option("--zh-convert", "zh_convert", type=click.Choice(ZH_CONVERSIONS), default=IndexOptions.zh_convert,
              show_default=True,
              help="With a Chinese language in --languages: names and documents are converted to simplified "
                   "characters by this OpenCC configuration before they are matched, so a traditional name counts "
                   "in simplified text and the reverse; none: as written. Needs the frequency extra (opencc).")
@click.option("--zh-variants", "zh_variants", type=click.Choice(ZH_VARIANT_RULES), default=IndexOptions.zh_variants,
              show_default=True,
              help="With zh in --languages: all: zh stands for every code Wikidata keeps Chinese labels under (zh, "
                   "zh-hans, zh-hant, zh-cn, zh-tw, zh-hk, zh-sg, zh-mo, zh-my; ingest them with --languages); "
                   "as-given: the zh code alone (counted so before this option). Recorded in the index.")
@click.option("--ko-particles/--no-ko-particles", "ko_particles", default=IndexOptions.ko_particles, show_default=True,
              help="With ko in --languages: a name written in Hangul also counts when Korean particles are written "
                   "onto it (우주가, 우주의, 미국에서는), never when another suffix makes a longer word (포르투갈어, "
                   "미국인); the particle list: docs/building-graphs.md. --no-ko-particles: whole words only (counted "
                   "so before this option). Recorded in the index.")
@click.option("--count-facts", "count_facts", multiple=True, metavar="RELATION",
              help="Embedded backend: count the facts of this relation (PID or label, or 'all') while linking, so that "
                   "`frequency annotate` reads their counts instead of intersecting; repeatable.")
@store_option
@with_options(backend_options)
@click.option("--quiet", is_flag=True, help="No progress bar.")
@overwrite_option
@json_option
def corpus_index(files, fmt, id_field, title_field, text_field, from_store, links, languages, min_alias_length,
                 min_han_length, exclude_alias, names, mentions, zh_convert, zh_variants, ko_particles, count_facts, store,
                 backend, index_path, es_url, es_index, model, quiet, overwrite, as_json):
    """Add the documents of FILES (and/or the store's) to a frequency index. Documents already
    indexed are skipped, so a rerun after an interruption, or more documents later, keeps every
    count exact. The settings (languages, alias filters, names or links) are recorded in the index
    at its first build and every later run must match them.

    \b
    factprobe corpus index wiki.jsonl.gz --store graph.sqlite --index freq.sqlite
    factprobe corpus index re-nlg_*.json --format trex --links --index trex-links.sqlite
    factprobe corpus index wiki.jsonl.gz --backend elasticsearch --es-url http://127.0.0.1:9200 --es-index wiki
    factprobe corpus index wiki.jsonl.gz --store graph.sqlite --backend infini-gram --model smollm2-135m-instruct --index wiki.tokens
    """
    from .steps_graph import index_step

    if backend == "infini-gram-api":  # first: no other option matters for an index nothing can be added to
        fail("--backend infini-gram-api: an API index is read-only; build a local one with --backend infini-gram "
             "--model SPEC (and answer the same API from it with `factprobe serve --ngram-index DIR`)", EXIT_USAGE)
    if not files and not from_store:
        raise click.UsageError("give corpus files, --from-store, or both")
    if links and files and fmt != "trex":
        raise click.UsageError("--links counts a corpus's own entity links: only T-REx files (--format trex) "
                               "or --from-store have them")
    from .relations import relation_ids_or_fail

    count_facts = relation_ids_or_fail(store, count_facts, "--count-facts", keep=("all",))
    options = IndexOptions(tuple(files), fmt, from_store, links, _languages(languages), min_alias_length,
                           tuple(exclude_alias), tuple(count_facts), names, zh_convert, min_han_length, mentions,
                           zh_variants, ko_particles, id_field, title_field, text_field)
    if backend == "infini-gram" and not model:
        raise click.UsageError("--backend infini-gram builds in a model's own tokens: give --model SPEC")
    with _job_errors():
        result = index_step(_backend(backend, index_path, es_url, es_index, model), store, options,
                            _console(quiet, as_json), overwrite=overwrite)
    if as_json:
        echo(json.dumps(result.to_dict()))
    if result.rejects:
        sys.exit(EXIT_PARTIAL)


def _languages(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def _console(quiet: bool, as_json: bool):
    """The steps' output for these commands: the summary on stdout unless --json, notes on stderr."""
    from .steps import Console

    return Console(quiet=quiet, say=(lambda _: None) if as_json else echo,
                   note=lambda text: echo(text, err=True))


@click.group("frequency")
def frequency_group() -> None:
    """Document counts: how many documents mention an entity, or both entities of a pair."""


scan_options = [
    click.option("--documents", "corpus_files", cls=RenamedOption, old_names=("--corpus",), multiple=True,
                 type=click.Path(dir_okay=False),
                 help="Count raw strings by reading these JSONL files of documents (repeatable)."),
    click.option("--from-store", "corpus_from_store", cls=RenamedOption, old_names=("--corpus-from-store",),
                 is_flag=True, help="Count raw strings in the store's documents."),
    click.option("--languages", default=",".join(IndexOptions.languages), show_default=True,
                 help="Name languages of QIDs in a scan."),
    store_option,
]


def _named(labels: dict) -> str:
    """The labels of the ids counted, after the count ("  Germany + Berlin"); empty when the store names none."""
    if not any(labels.values()):
        return ""
    return "  " + " + ".join(label or term for term, label in labels.items())


def _count(terms, where, corpus_files, corpus_from_store, languages, store) -> tuple[int, str]:
    """QIDs only: from the index. Any raw string: a scan of the corpus (see count_documents)."""
    from ..index.corpus_jobs import count_documents, is_qid

    if not all(is_qid(t) for t in terms) and not corpus_files and not corpus_from_store:
        raise click.UsageError("raw strings are counted by reading a corpus: give --documents FILE or --from-store")
    with _job_errors():
        return count_documents(terms, where, store, corpus_files=corpus_files, corpus_from_store=corpus_from_store,
                               languages=_languages(languages))


@frequency_group.command("entity")
@click.argument("entity")
@with_options(backend_options)
@with_options(api_options)
@with_options(scan_options)
@json_option
def frequency_entity(entity, backend, index_path, es_url, es_index, model, api_index, api_url, corpus_files,
                     corpus_from_store, languages, store, as_json):
    """Documents that mention ENTITY: a QID (any of its names, from the index) or a raw string
    (read from --documents / --from-store)."""
    from ..index.corpus import bucket_of
    from ..index.corpus_jobs import store_labels

    where = _backend(backend, index_path, es_url, es_index, model, api_index, api_url)
    if backend == "infini-gram-api":  # occurrences, said as such: no documents, no KDF bucket
        return api_count([entity], where, store, _languages(languages), as_json)
    count, how = _count([entity], where, corpus_files, corpus_from_store, languages, store)
    labels = store_labels(store, [entity])
    if as_json:
        echo(json.dumps({"entity": entity, "label": labels[entity], "documents": count, "bucket": bucket_of(count),
                         "counted_by": how}, ensure_ascii=False))
    else:
        echo(f"{entity}: {count:,} documents  (bucket {bucket_of(count)}, by {how}){_named(labels)}")


@frequency_group.command("pair")
@click.argument("head")
@click.argument("tail")
@with_options(backend_options)
@with_options(api_options)
@with_options(scan_options)
@json_option
def frequency_pair(head, tail, backend, index_path, es_url, es_index, model, api_index, api_url, corpus_files,
                   corpus_from_store, languages, store, as_json):
    """Documents that mention both HEAD and TAIL (QIDs from the index; raw strings by reading a corpus)."""
    from ..index.corpus import bucket_of
    from ..index.corpus_jobs import store_labels

    where = _backend(backend, index_path, es_url, es_index, model, api_index, api_url)
    if backend == "infini-gram-api":  # window co-occurrence, said as such: no documents, no KDF bucket
        return api_count([head, tail], where, store, _languages(languages), as_json)
    count, how = _count([head, tail], where, corpus_files, corpus_from_store, languages, store)
    labels = store_labels(store, [head, tail])
    if as_json:
        echo(json.dumps({"head": head, "head_label": labels[head], "tail": tail, "tail_label": labels[tail],
                         "documents": count, "bucket": bucket_of(count), "counted_by": how}, ensure_ascii=False))
    else:
        echo(f"{head} + {tail}: {count:,} documents  (bucket {bucket_of(count)}, by {how}){_named(labels)}")


@frequency_group.command("annotate")
@click.option("--relation", "relations", multiple=True, required=True,
              help="A relation whose facts to count, by PID or label (`kg relations`); repeatable.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), help="JSONL file of counted facts.")
@click.option("--to-store", is_flag=True,
              help="Write the counts into the store too (table fact_frequencies, under --corpus), "
                   "where the probe-set builders read them.")
@click.option("--corpus", "corpus_name", cls=RenamedOption, old_names=("--corpus-name",),
              help="Frequency corpus: the name the counts are stored under, which `probeset build --corpus` "
                   "names [default: the index file's stem, or the Elasticsearch index name].")
@click.option("--buckets", default=",".join(map(str, DEFAULT_BUCKETS)), show_default=True,
              help="Bucket edges: 1,10,100 gives 0 | [1,10) | [10,100) | [100,inf).")
@store_option
@with_options(backend_options)
@with_options(api_options)
@click.option("--quiet", is_flag=True, help="No progress bar.")
@overwrite_option
@json_option
def frequency_annotate(relations, out_path, to_store, corpus_name, buckets, store, backend, index_path, es_url,
                       es_index, model, api_index, api_url, quiet, overwrite, as_json):
    """Count every fact of the chosen relations (documents that mention both head and tail) and
    write one JSONL line per fact (fact id, subject, relation, object, each with its label from
    the store, documents, bucket) to
    --out, and/or the counts into the store with --to-store.

    \b
    factprobe frequency annotate --relation P36 --relation P19 --out counts.jsonl --to-store
    """
    from ..index.corpus_jobs import AnnotateOptions, CorpusJobError, parse_buckets
    from .steps_graph import annotate_step

    if not out_path and not to_store:
        raise click.UsageError("say where the counts go: --out FILE, --to-store, or both")
    try:
        edges = parse_buckets(buckets)
    except CorpusJobError:
        raise click.UsageError(f"--buckets {buckets!r}: give increasing positive integers, e.g. 1,10,100") from None
    from .relations import relation_ids_or_fail

    options = AnnotateOptions(relation_ids_or_fail(store, relations), out_path, to_store, corpus_name, edges)
    with _job_errors():
        result = annotate_step(_backend(backend, index_path, es_url, es_index, model, api_index, api_url), store,
                               options,
                               _console(quiet, as_json), overwrite=overwrite)
    if as_json:
        echo(json.dumps(result.to_dict()))
