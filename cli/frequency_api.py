"""`frequency entity|pair ... --backend infini-gram-api`: counts from an infini-gram API server,
printed with what they count (occurrences; window co-occurrence, approximate), never as documents
or in KDF's document buckets. `frequency annotate` reaches the same index through
`open_for_counting` and names the semantics in its annotator record."""

from __future__ import annotations

import json

import click

from ..index.backend import Backend
from .errors import EXIT_USAGE, fail
from .terminal import echo

EXIT_ENVIRONMENT = 3  # the server could not be reached

api_options = [
    click.option("--api-index", "api_index", default=None, metavar="NAME",
                 help="infini-gram-api: the index's name on the server (v4_dolma-v1_7_llama, v4_rpj_llama_s4, "
                      "v4_piletrain_llama, v4_olmo-2-1124-13b-instruct_llama, ...); its tokenizer must be --model's."),
    click.option("--api-url", "api_url", default=None, metavar="URL",
                 help="infini-gram-api: the server [default: infini-gram's public API]; `factprobe serve "
                      "--ngram-index DIR` answers the same API at /infini-gram."),
]


def api_backend(api_index: str | None, api_url: str | None, model: str | None) -> Backend:
    """The Backend of --backend infini-gram-api: --model resolved to its tokenizer.json."""
    from ..probes.scoring.specs import SpecError
    from ..probes.scoring.tokenizer_file import tokenizer_file

    if not api_index:
        fail("--backend infini-gram-api needs --api-index NAME (e.g. v4_rpj_llama_s4)", EXIT_USAGE)
    if not model:
        fail("--backend infini-gram-api tokenizes names with the index's tokenizer: give --model SPEC", EXIT_USAGE)
    if api_url and not api_url.startswith(("http://", "https://")):  # before --model: a tokenizer may load
        fail(f"--api-url {api_url}: an infini-gram API URL starts with http:// or https://", EXIT_USAGE)
    from ..index.infini_gram.api_backend import ApiBackendError, check_api_tokenizer

    try:
        found = tokenizer_file(model)
    except (SpecError, OSError, ValueError) as error:
        fail(f"--model {model}: {error}", EXIT_USAGE)
    try:  # now, before a command opens its outputs (annotate's --out) for counts it cannot make
        check_api_tokenizer(api_index, found.name)
    except ApiBackendError as error:
        fail(str(error), EXIT_USAGE)
    extra = {"api_url": api_url} if api_url else {}
    return Backend("infini-gram-api", tokenizer=str(found.path), tokenizer_name=found.name, api_index=api_index,
                   **extra)


def api_errors(error: Exception) -> None:
    """One line: exit 3 for a server that cannot be reached, 2 for anything it or we refused."""
    from ..index.infini_gram.api import ApiUnavailable

    fail(str(error), EXIT_ENVIRONMENT if isinstance(error, ApiUnavailable) else EXIT_USAGE)


def api_count(terms: list[str], backend: Backend, store, languages: tuple[str, ...], as_json: bool) -> None:
    """One entity's occurrences or one pair's window co-occurrences, with their semantics."""
    from ..index.corpus_jobs import is_qid
    from ..index.infini_gram.api import ApiError
    from ..index.infini_gram.api_backend import open_api_index
    from ..index.settings import IndexSettings

    if not all(is_qid(t) for t in terms):
        raw = next(t for t in terms if not is_qid(t))
        fail(f"{raw!r}: --backend infini-gram-api counts entities by QID; a raw string is counted by reading "
             f"a corpus (--documents FILE or --from-store, with another --backend)", EXIT_USAGE)
    try:
        index = open_api_index(backend, store, IndexSettings(languages=languages))
        try:
            if len(terms) == 1:
                count, semantics, key = index.entity_frequency(terms[0]), index.entity_semantics, "occurrences"
            else:
                count, semantics, key = index.pair_frequency(*terms), index.pair_semantics, "window_cooccurrences"
            reasons = dict(index.reasons)
        finally:
            index.close()
    except ApiError as error:
        api_errors(error)
    from ..index.corpus_jobs import store_labels

    where = backend.describe()
    labels = store_labels(store, terms)
    names = {"entity": terms[0], "label": labels[terms[0]]} if len(terms) == 1 else \
        {"head": terms[0], "head_label": labels[terms[0]], "tail": terms[1], "tail_label": labels[terms[1]]}
    inexact = "; ".join(f"{k}: {v}" if not v.startswith(k) else v for k, v in sorted(reasons.items()))
    if as_json:
        record = {**names, key: count, "semantics": semantics, "documents": None,
                  "counted_by": "infini-gram-api", "index": where, "approximate": sorted(reasons),
                  "approximate_because": inexact or None}
        echo(json.dumps(record, ensure_ascii=False))
        return
    label = terms[0] if len(terms) == 1 else f"{terms[0]} + {terms[1]}"
    unit = "occurrences" if len(terms) == 1 else "window co-occurrences"
    named = " + ".join(labels[t] or t for t in terms) if any(labels.values()) else ""
    echo(f"{label}: {count:,} {unit}  ({semantics}; by infini-gram-api {where})" + (f"  {named}" if named else ""))
    if inexact:
        echo(f"  approximate: {inexact}")
