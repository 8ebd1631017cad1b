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
from .options import json_option
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

    from ..probes.scoring.gguf_cache import file_sha256

    tokenizer = Tokenizer.from_file(str(found.path))
    return (found.name, file_sha256(found.path),
            lambda text: tokenizer.encode(text, add_special_tokens=False).ids)


@click.command("ngram")
@click.argument("texts", nargs=-1, required=True)
@click.option("--backend", type=click.Choice(["infini-gram"]), default="infini-gram",
              show_default=True, help="Raw n-grams are counted in token indexes only.")
@click.option("--index", "index_dir", type=click.Path(file_okay=False), required=True,
              help="An index folder in infini-gram's layout (ours, or one infini-gram published).")
@click.option("--model", "model_spec", default=None,
              help="The model whose tokenizer built the index (a GGUF, an hf: folder or a "
                   "shortcut); TEXT is tokenized with it.")
@click.option("--ids", "as_ids", is_flag=True,
              help="Each TEXT is token ids (\"791,6031\"); no tokenizer needed.")
@json_option
def ngram_command(texts, backend, index_dir, model_spec, as_ids, as_json):
    """Occurrences and documents of each TEXT as an n-gram of tokens."""
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
