"""One meaning per option name across the whole `factprobe` command tree, and the old spellings
of renamed options (cli/options.py's RenamedOption): accepted, warned about, hidden from --help."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from factprobe.cli.main import main
from factprobe.cli.options import RenamedOption

# Every option name the CLI shows, with the kind of value it takes (flag, number, path, or text,
# choices included) and what it means. A new name is added here with its meaning; a name that
# would take another kind of value (a file where the table says a name, a flag where it says
# folders) means something else and needs a name of its own.
MEANINGS = {
    "--aliases-per-subject": ("number", "subject names (label, then aliases) per cloze template"),
    "--allow-fewer-choices": ("flag", "let a relation short of fair objects give fewer choices"),
    "--allow-model": ("text", "a model, folder or URL the service lets a client name"),
    "--api-index": ("text", "an index's name on an infini-gram API server"),
    "--api-url": ("text", "an infini-gram API server's URL"),
    "--annotator": ("text", "a T-REx annotator whose facts to keep"),
    "--appropt-object": ("text", "whether ApprOpt's search holds the true object's labels"),
    "--at": ("text", "the date truth is taken at"),
    "--id-field": ("text", "the JSONL member holding a document's id"),
    "--text-field": ("text", "the JSONL member holding a document's text"),
    "--title-field": ("text", "the JSONL member holding a document's title"),
    "--truth": ("text", "which statement ranks count as true"),
    "--pair-facts": ("text", "which facts a subject-relation unit lists"),
    "--exclude-objects": ("text", "which of the subject's objects wrong answers keep out"),
    "--class-candidates": ("text", "whether a class may answer for an instance"),
    "--type-dates": ("text", "whether types are read at the truth date"),
    "--backend": ("text", "the frequency index's backend"),
    "--base-url": ("text", "an OpenAI-compatible endpoint's URL"),
    "--batch": ("number", "records handled together, the unit output is written and resumed by"),
    "--batch-size": ("number", "a scorer's most continuations per forward pass"),
    "--bucket": ("text", "a frequency bucket to keep"),
    "--buckets": ("text", "frequency bucket edges"),
    "--cache": ("path", "a SQLite file of model answers"),
    "--check": ("number", "facts sampled for the semantic index's self-check"),
    "--choices": ("number", "choices per multiple-choice item"),
    "--chunk-size": ("number", "bytes of input per parsing task and checkpoint"),
    "--cloze-unit": ("text", "what one cloze item is"),
    "--completions": ("flag", "use the completions endpoint"),
    "--context": ("text", "the text before the continuations"),
    "--continuation": ("text", "a continuation to score"),
    "--corpus": ("text", "a frequency corpus's name in the store"),
    "--corrected": ("path", "a run over corrected clozes"),
    "--count-facts": ("text", "a relation whose facts an index counts while linking"),
    "--current": ("flag", "only facts valid today"),
    "--data": ("path", "the folder jobs write into"),
    "--demo-fraction": ("number", "share of subjects that form the demonstration pool"),
    "--device": ("text", "the device a model runs on"),
    "--distractor-types": ("text", "what sharing a type means for a distractor"),
    "--documents": ("path", "files of documents to read"),
    "--dtype": ("text", "a model's floating-point type"),
    "--endpoint": ("text", "a SPARQL endpoint's URL"),
    "--entity": ("text", "an entity id"),
    "--entity-aliases": ("path", "a Wikidata5M entity alias file"),
    "--entity-prefix": ("text", "the IRI prefix of a Wikibase's entities"),
    "--es-index": ("text", "the Elasticsearch index holding a corpus"),
    "--es-url": ("text", "an Elasticsearch cluster's URL"),
    "--exact": ("flag", "ApprOpt: search until the top n is exact"),
    "--exclude-alias": ("text", "a name never counted as a mention"),
    "--facts": ("path", "a file listing the facts a probe set is built from"),
    "--flawed": ("path", "a run over flawed clozes"),
    "--folds": ("number", "cross-validation folds"),
    "--format": ("text", "the input files' format"),
    "--from-store": ("flag", "read the documents the store holds"),
    "--host": ("text", "the address to listen on"),
    "--icl-setting": ("text", "the ICL setting a belief-icl run is read in when compared with a belief run"),
    "--include-deprecated": ("flag", "also deprecated-rank statements"),
    "--ids": ("flag", "each query is token ids, not text"),
    "--index": ("path", "the frequency index (an embedded index file, or a token index folder)"),
    "--items-rows": ("number", "rows the report's item view holds before it samples items"),
    "--json": ("flag", "machine-readable output"),
    "--judgements": ("path", "a file of human judgements of what a model knows"),
    "--kdf-demonstrations": ("text", "where KDF demonstrations come from"),
    "--kdf-options": ("text", "where KDF wrong options come from"),
    "--kdf-question": ("text", "which sentence a KDF question is"),
    "--keep-external-ids": ("flag", "also keep external-id claims"),
    "--kind": ("text", "a probe-set kind"),
    "--known": ("text", "what a unit of 'known' is"),
    "--language": ("text", "the one language of the templates read"),
    "--languages": ("text", "comma-separated languages of names"),
    "--limit": ("number", "at most this many records"),
    "--links": ("flag", "count the entities a document's own annotations link"),
    "--log-level": ("text", "the server's log level"),
    "--manual-only": ("flag", "hand-written templates only"),
    "--max-record-bytes": ("number", "bytes of the longest record (line) read"),
    "--max-requests": ("number", "requests per relation"),
    "--max-tokens": ("number", "tokens generated at most"),
    "--merge-wait": ("number", "seconds rank 0 of a launch waits for the other ranks' shards"),
    "--mentions": ("text", "which occurrences of a name count: maximal, or any inside a longer name"),
    "--method": ("text", "a probing method"),
    "--min-alias-length": ("number", "shortest name counted as a mention"),
    "--min-df": ("number", "fewest entities a feature is kept for"),
    "--min-han-length": ("number", "shortest name in Han characters counted as a mention"),
    "--model": ("text", "the model to use (a model spec; templates paraphrase: the server's name for it)"),
    "--models": ("text", "comma-separated model specs"),
    "--n": ("number", "how many results per fact, relation or prompt"),
    "--name": ("text", "the lm-evaluation-harness task's name"),
    "--names": ("text", "which names of an entity count as mentions"),
    "--ngram-index": ("path", "an infini-gram index folder the service answers n-gram counts from"),
    "--object": ("text", "an object entity id"),
    "--onto": ("path", "a probe set whose items take the imported clozes"),
    "--option": ("text", "a method option KEY=VALUE"),
    "--out": ("path", "where the command writes its output (a file or a folder)"),
    "--overwrite": ("flag", "replace an existing output that differs from what this run would write"),
    "--page-size": ("number", "rows per request"),
    "--parquet": ("flag", "also write Parquet"),
    "--per-bucket": ("number", "at most this many facts per relation and bucket"),
    "--per-relation": ("number", "at most this many facts per relation"),
    "--popularity-bins": ("number", "popularity bins of subjects"),
    "--port": ("number", "the port to listen on"),
    "--probes": ("path", "a probe-set JSONL file"),
    "--prompt": ("text", "the text to continue"),
    "--quiet": ("flag", "no progress output"),
    "--rejects": ("path", "the file rejected records go to"),
    "--relation": ("text", "a relation, by id or label"),
    "--relation-aliases": ("path", "a Wikidata5M relation alias file"),
    "--relations": ("text", "comma-separated relation ids, or 'templates'"),
    "--restart": ("flag", "start over instead of resuming"),
    "--retries": ("number", "retries per request"),
    "--runs": ("path", "a run folder, or a folder of them, for the item view"),
    "--seed": ("number", "the seed of random draws"),
    "--stratify": ("text", "which field a --limit sample keeps the shares of"),
    "--dry-run": ("flag", "say what a run would cost, run nothing long and write nothing"),
    "--semantic": ("path", "the semantic index folder"),
    "--shard": ("text", "the part K/N of a run this process evaluates"),
    "--sharing": ("text", "how sharing between runs is measured"),
    "--shots": ("number", "demonstrations per question or setting"),
    "--single-token": ("text", "a model spec whose tokenizer decides single-token answers"),
    "--stop": ("text", "a stop string"),
    "--store": ("path", "the graph's SQLite file"),
    "--strategy": ("text", "a distractor strategy"),
    "--subject": ("text", "a subject entity id"),
    "--subject-final": ("text", "how an import asks a sentence that ends with the subject"),
    "--temperature": ("number", "the sampling temperature"),
    "--template": ("text", "a cloze text with [X], [R] and [Y]"),
    "--templates": ("path", "folders of user templates"),
    "--thresholds": ("flag", "search a threshold per measure"),
    "--timeout": ("number", "seconds per request"),
    "--title": ("text", "a report's heading"),
    "--to-store": ("flag", "write counts into the store"),
    "--token-env": ("text", "the environment variable holding the bearer token"),
    "--top-k": ("number", "candidates kept"),
    "--top-p": ("number", "nucleus sampling's probability mass"),
    "--trex-mc-filter": ("text", "whether T-REx-MC's relation filter drops the relations that fail it"),
    "--triples": ("path", "a triples TSV file"),
    "--untyped-pool": ("text", "the candidates of an object without a type"),
    "--verbalization": ("text", "which of DistFact's sentences an imported item asks"),
    "--version": ("flag", "print the version"),
    "--with-templates": ("flag", "give imported items our cloze templates"),
    "--workers": ("number", "parsing processes"),
    "--zh-convert": ("text", "how Chinese names and text are converted to one script before matching"),
    "--zh-variants": ("text", "which Chinese language codes zh stands for"),
    "--ko-particles": ("flag", "Korean particles written onto a Hangul name end it"),
    "--no-ko-particles": ("flag", "a Hangul name counts as a whole word only"),
    "--subject-var": ("text", "a results variable holding each row's subject"),
    "--object-var": ("text", "a results variable holding each row's object"),
    "--property-var": ("text", "a results variable holding each row's property"),
    "--subject-label-var": ("text", "a results variable holding the subject's label"),
    "--object-label-var": ("text", "a results variable holding the object's label"),
}

# Options that do not match their name's entry yet, each waiting for its fix (then delete its line).
PENDING = {
}


def value_kind(option: click.Option) -> str:
    if option.is_flag or option.count:
        return "flag"
    if isinstance(option.type, (click.types.IntParamType, click.types.FloatParamType)):
        return "number"
    return "path" if isinstance(option.type, click.Path) else "text"


def shown_options():
    """(command path, option name, option) for every option name --help shows, in every command."""
    def walk(command, path):
        ctx = click.Context(command, info_name=path[-1] if path else "factprobe")
        help_option = command.get_help_option(ctx)
        for param in command.get_params(ctx):
            if isinstance(param, click.Option) and param is not help_option and not param.hidden:
                for name in (*param.opts, *param.secondary_opts):
                    yield " ".join(path), name, param
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from walk(sub, [*path, name])
    return list(walk(main, []))


def test_every_option_name_has_one_meaning():
    wrong = []
    for command, name, option in shown_options():
        if (command, name) in PENDING:
            continue
        if name not in MEANINGS:
            wrong.append(f"{command} {name}: not in MEANINGS (add it with what it means)")
        elif value_kind(option) != MEANINGS[name][0]:
            kind, meaning = MEANINGS[name]
            wrong.append(f"{command} {name} takes a {value_kind(option)}, but {name} is {meaning} ({kind})")
    assert not wrong, "\n".join(wrong)


def test_no_meaning_is_spelled_two_ways():
    meanings = [meaning for _, meaning in MEANINGS.values()]
    assert sorted(m for m in meanings if meanings.count(m) > 1) == []


def test_the_table_names_only_options_in_use():
    used = {name for _, name, _ in shown_options()}
    assert sorted(set(MEANINGS) - used) == []
    assert all(pair in {(c, n) for c, n, _ in shown_options()} for pair in PENDING)


def test_old_spellings_are_hidden_and_clash_with_nothing():
    renamed = [(command, option) for command, _, option in shown_options() if isinstance(option, RenamedOption)]
    assert {(command, old) for command, option in renamed for old in option.old_names} >= {
        ("ingest wikidata", "--lang"), ("ingest sparql", "--lang"), ("ingest wikidata5m", "--corpus"),
        ("frequency entity", "--corpus"), ("frequency pair", "--corpus-from-store"),
        ("frequency annotate", "--corpus-name")}
    shown = {(command, name) for command, name, _ in shown_options()}
    for command, option in renamed:
        for old in option.old_names:
            assert (command, old) not in shown, f"{command}: {old} is both an old spelling and an option"
            help_text = CliRunner().invoke(main, [*command.split(), "--help"]).output
            assert f"{old} " not in help_text and f"{old}," not in help_text, f"{command} --help shows {old}"


@click.command()
@click.option("--languages", cls=RenamedOption, old_names=("--lang",), default="en", show_default=True,
              help="Languages.")
@click.option("--documents", cls=RenamedOption, old_names=("--corpus",), multiple=True, help="Files.")
@click.option("--from-store", cls=RenamedOption, old_names=("--corpus-from-store", "--store-documents"), is_flag=True,
              help="Store.")
def toy(languages, documents, from_store):
    click.echo(repr((languages, documents, from_store)))


@pytest.mark.parametrize("args, out, warned", [
    ([], ("en", (), False), []),
    (["--languages", "de"], ("de", (), False), []),
    (["--lang", "de"], ("de", (), False), ["--lang"]),
    (["--lang=fr"], ("fr", (), False), ["--lang"]),
    (["--lang", "de", "--languages", "de"], ("de", (), False), ["--lang"]),
    (["--corpus", "a", "--documents", "b", "--corpus", "c"], ("en", ("b", "a", "c"), False), ["--corpus"]),
    (["--corpus-from-store"], ("en", (), True), ["--corpus-from-store"]),
    (["--corpus-from-store", "--lang", "de"], ("de", (), True), ["--corpus-from-store", "--lang"]),
    (["--store-documents"], ("en", (), True), ["--store-documents"]),  # a second old spelling
])
def test_renamed_option_takes_both_spellings_and_warns_once_per_old_one(args, out, warned):
    result = CliRunner().invoke(toy, args)
    assert result.exit_code == 0, result.output
    assert result.stdout == repr(out) + "\n"
    new = {"--lang": "--languages", "--corpus": "--documents", "--corpus-from-store": "--from-store",
           "--store-documents": "--from-store"}
    assert result.stderr.splitlines() == [f"warning: {old} is deprecated, use {new[old]}" for old in warned]


def test_renamed_option_refuses_two_spellings_with_two_values_and_hides_the_old_one():
    result = CliRunner().invoke(toy, ["--lang", "de", "--languages", "fr"])
    assert result.exit_code == 2 and "--lang and --languages are one option: give --languages only" in result.stderr
    help_text = CliRunner().invoke(toy, ["--help"]).stdout
    assert "--languages TEXT  Languages.  [default: en]" in help_text
    assert "--lang " not in help_text and "--corpus" not in help_text
