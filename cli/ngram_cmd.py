"""`factprobe frequency ngram TEXT...`: raw n-gram counts in an infini-gram-layout index.

Each TEXT is tokenized exactly as written (" London" and "London" are different n-grams under a
byte-level BPE), with the model's own tokenizer and no special tokens, or read as token ids with
--ids. Printed per query: occurrences (every position, as infini-gram counts) and documents (how
many documents hold at least one). The folder's tokenizer is checked against the model's by name
first: counting one tokenizer's ids in another's index gives numbers that mean nothing.
"""

from __future__ import annotations

import json
import re

import click
import numpy as np

from .errors import EXIT_USAGE, fail
from .options import FolderPath, json_option
from .terminal import echo

MAX_QUERIES = 10_000
_ID_SPLIT = re.compile(r"[,\s]+")


def _ids(text: str) -> list[int]:
    parts = [p for p in _ID_SPLIT.split(text.strip()) if p]
    if not parts or not all(p.isdigit() for p in parts):
        fail(f"--ids: {text!r} is not a list of token ids (digits, comma- or space-separated)",
             EXIT_USAGE)
    return [int(p) for p in parts]


def _encoder(model_spec: str):
    """(the tokenizer's name, its file's sha256, a function from text to ids) for the model's
    own tokenizer."""
    from ..probes.scoring.specs import SpecError
    from ..probes.scoring.tokenizer_file import tokenizer_file

    try:
        found = tokenizer_file(model_spec)
    except SpecError as error:
        fail(str(error), EXIT_USAGE)
    from tokenizers import Tokenizer

    from ..kg.identity import file_sha256

    tokenizer = Tokenizer.from_file(str(found.path))
    return (found.name, file_sha256(found.path),
            lambda text: tokenizer.encode(text, add_special_tokens=False).ids)


def _api_rows(texts, queries, index_name: str, url: str, as_json: bool) -> None:
    """Each query counted by an infini-gram API server; its semantics printed with it."""
    from ..index.infini_gram.api import ApiError, InfiniGramApi

    api = InfiniGramApi(index_name, url)
    for text, ids in zip(texts, queries):
        try:
            result = api.count(ids)
        except ApiError as error:
            fail(str(error), EXIT_USAGE)
        if as_json:
            echo(json.dumps({"query": text, "ids": ids, "occurrences": result.count,
                             "approx": result.approx, "index": index_name, "url": url,
                             "semantics": result.semantics}))
        else:
            echo(f"{text!r} {ids}: {result.count:,} ({result.semantics})")


@click.command("ngram")
@click.argument("texts", nargs=-1, required=True)
@click.option("--backend", type=click.Choice(["infini-gram", "infini-gram-api"]),
              default="infini-gram", show_default=True,
              help="infini-gram: a local index folder (--index). infini-gram-api: an infini-gram "
                   "API server (--api-url, --api-index): occurrences only, no document counts.")
@click.option("--index", "index_dir", type=FolderPath("input"), default=None,
              help="An index folder in infini-gram's layout (ours, or one infini-gram published).")
@click.option("--api-url", default=None,
              help="infini-gram-api: the server (default infini-gram's public API; `factprobe "
                   "serve --ngram-index` answers it at /infini-gram).")
@click.option("--api-index", default=None,
              help="infini-gram-api: the index's name on that server, e.g. v4_pileval_gpt2.")
@click.option("--model", "model_spec", default=None,
              help="The model whose tokenizer built the index (a GGUF, an hf: folder or a "
                   "shortcut); TEXT is tokenized with it.")
@click.option("--ids", "as_ids", is_flag=True,
              help="Each TEXT is token ids (\"791,6031\"); no tokenizer needed.")
@json_option
def ngram_command(texts, backend, index_dir, api_url, api_index, model_spec, as_ids, as_json):
    """Occurrences (and, in a local index, documents) of each TEXT as an n-gram of tokens."""
    from ..index.infini_gram.layout import (
        LayoutError,
        TokenIndexFolder,
        check_tokenizer,
        token_folder,
    )

    if len(texts) > MAX_QUERIES:
        fail(f"{len(texts)} queries; at most {MAX_QUERIES} at once", EXIT_USAGE)
    if not as_ids and model_spec is None:
        fail("TEXT needs --model SPEC to be tokenized (or --ids to give token ids)", EXIT_USAGE)
    if backend == "infini-gram-api":
        _api_command(texts, api_url, api_index, model_spec, as_ids, as_json)
        return
    if index_dir is None:
        fail("--backend infini-gram needs --index DIR", EXIT_USAGE)
    try:
        index = TokenIndexFolder(token_folder(index_dir))
    except LayoutError as error:
        fail(str(error), EXIT_USAGE)
    queries = [_ids(text) for text in texts] if as_ids else None
    if model_spec is not None:
        name, sha256, encode = _encoder(model_spec)
        try:
            check_tokenizer(index_dir, name, sha256)
        except LayoutError as error:
            index.close()
            fail(str(error), EXIT_USAGE)
        if queries is None:
            queries = [encode(text) for text in texts]
    with index:
        for text, ids in zip(texts, queries):
            if not ids:
                fail(f"{text!r} tokenizes to no tokens", EXIT_USAGE)
            occurrences = index.occurrences(ids)
            documents = int(np.unique(occurrences.doc).shape[0])
            if as_json:
                echo(json.dumps({"query": text, "ids": ids, "occurrences": len(occurrences),
                                 "documents": documents}))
            else:
                echo(f"{text!r} {ids}: {len(occurrences):,} occurrences in {documents:,} documents")


def _api_command(texts, api_url, api_index, model_spec, as_ids, as_json) -> None:
    from ..index.infini_gram.api import PUBLIC_URL
    from ..index.infini_gram.naming import family_matches, published_family

    if not api_index:
        fail("--backend infini-gram-api needs --api-index NAME (e.g. v4_pileval_gpt2)", EXIT_USAGE)
    url = api_url or PUBLIC_URL
    if as_ids:
        queries = [_ids(text) for text in texts]
    else:
        name, _, encode = _encoder(model_spec)
        family = published_family(api_index)
        if family is None or not family_matches(family, name):
            fail(f"--api-index {api_index}: built with the {family or 'unknown'} tokenizer (by its "
                 f"name), not {name!r}; give --ids tokenized with its own", EXIT_USAGE)
        queries = [encode(text) for text in texts]
    for text, ids in zip(texts, queries):
        if not ids:
            fail(f"{text!r} tokenizes to no tokens", EXIT_USAGE)
    _api_rows(texts, queries, api_index, url, as_json)
