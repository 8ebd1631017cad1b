"""Entity and pair counts from an infini-gram API server, as a frequency backend:
`Backend("infini-gram-api", api_index=NAME, api_url=URL, tokenizer=FILE, tokenizer_name=NAME)`.

An entity's names become the token forms the token backend looks for (vocabulary.variants and
Vocabulary.forms: each word in its casings, with and without a leading space, as running text
tokenizes it). An entity is counted as one OR of its forms; a pair as infini-gram's AND of the
two entities' ORs. The API gives counts, never positions, so two of the token backend's rules
cannot be applied: a form glued to more letters (" London" in " Londoners") counts, and so does a
name inside a longer name (maximal mentions). These numbers are occurrences and window
co-occurrences, not KDF's document counts, and every caller is told so (`entity_semantics`,
`pair_semantics`, the annotator's `counts`).

A form that is a token prefix of another form starts wherever the longer one does, so the longer
one is dropped: what is left never shares a start, and an OR split into clauses of at most
`max_terms` forms sums back to the one OR's count. An AND cannot be split that way: past
`max_terms` forms a side keeps its most frequent ones, and that pair is marked approximate with
the share of the side's occurrences kept.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from ..settings import IndexSettings, StoreNames
from ..text import normalize
from ..writing_systems import unspaced
from .api import DEFAULT_MAX_CLAUSE_FREQ, DEFAULT_MAX_DIFF_TOKENS, WINDOWED, ApiError, InfiniGramApi
from .naming import family_matches, published_family
from .vocabulary import Vocabulary, core_of, variants

# infini-gram's web interface caps the terms of a CNF clause; 4 is taken as the public API's cap
# (a local `factprobe serve` takes 32: pass max_terms to use more)
DEFAULT_MAX_TERMS = 4
DEFAULT_WORKERS = 8  # requests in flight at once: the public API allows concurrent requests

NO_RULES = ("no word-boundary or maximal-mention rule: the API gives no positions, so a name glued "
            "to more letters or inside a longer name counts")
ENTITY_SEMANTICS = ("occurrences: token positions where a form of any of the entity's names occurs "
                    "(infini-gram's OR count), not documents; " + NO_RULES)
PAIR_SEMANTICS = ("window co-occurrence within {window} tokens (approximate): positions where forms of "
                  "the head's and the tail's names fall within {window} tokens of each other "
                  "(infini-gram's AND count), not KDF's document counts; " + NO_RULES)


class ApiBackendError(ApiError):
    """The API backend cannot count as asked (a tokenizer that is not the index's, no store)."""


@dataclass(frozen=True)
class Forms:
    """An entity's token forms: disjoint starts (no form a prefix of another), and why any of its
    names could not be counted as the token backend counts it."""
    ids: tuple[tuple[int, ...], ...]
    inexact: tuple[str, ...] = ()


def prefix_free(forms) -> tuple[tuple[int, ...], ...]:
    """The forms none of whose proper token prefixes is itself a form, sorted."""
    kept = set(map(tuple, forms))
    return tuple(sorted(f for f in kept if not any(f[:n] in kept for n in range(1, len(f)))))


def key_forms(vocabulary: Vocabulary, key: str) -> tuple[set, str | None]:
    """The token sequences of one name key, and why they count it only approximately (None when
    they spell the whole name, as the token backend looks it up before its boundary checks)."""
    if not key or normalize(key) != key or any(map(unspaced, key)):
        return set(), f"{key!r}: a script without spaces, which a byte-level BPE merges with its neighbours"
    begin, end = core_of(key)
    surfaces, covered = variants(key[begin:end])
    found = set()
    for surface in surfaces:
        found |= {ids for ids, _ in vocabulary.forms(surface)}
    if begin > 0 or end < len(key) or covered < end - begin:
        return found, f"{key!r}: only its first {covered} letters and words are looked up"
    return found, None


def check_api_tokenizer(api_index: str, tokenizer_name: str) -> None:
    """ApiBackendError unless the API index's name ends in the tokenizer's family."""
    family = published_family(api_index)
    if family is None:  # the API cannot be asked which tokenizer built an index: its name must say
        raise ApiBackendError(f"api index {api_index}: its name does not end in a tokenizer family (infini-gram "
                              f"names them like v4_pileval_gpt2; name a `factprobe serve` folder so too), so "
                              f"{tokenizer_name!r} cannot be checked against it")
    if not family_matches(family, tokenizer_name):
        raise ApiBackendError(f"api index {api_index}: built with the {family} tokenizer (by its name, like "
                              f"v4_pileval_gpt2), not {tokenizer_name!r}; give --model a model with that "
                              f"index's tokenizer")


class ApiCountIndex:
    """FrequencyIndex (counting side) over an infini-gram API index. Counts are ints, as the
    protocol wants; what they count is `entity_semantics` and `pair_semantics`."""

    count_field = "window_cooccurrences"  # the key annotate writes a pair's count under

    def __init__(self, api: InfiniGramApi, store: str | Path, tokenizer: str | Path, tokenizer_name: str, *,
                 settings: IndexSettings | None = None, window: int = DEFAULT_MAX_DIFF_TOKENS,
                 max_clause_freq: int = DEFAULT_MAX_CLAUSE_FREQ, max_terms: int = DEFAULT_MAX_TERMS,
                 workers: int = DEFAULT_WORKERS) -> None:
        from ...kg.identity import file_sha256

        check_api_tokenizer(api.index, tokenizer_name)
        if store is None or not Path(store).is_file():
            raise ApiBackendError(f"counting names through the infini-gram API needs the knowledge-graph store "
                                  f"(no store at {store})")
        # every occurrence counts (nothing can apply "maximal" without positions): said in the settings
        base = settings or IndexSettings()
        self.index_settings = replace(base, mentions="any")
        self.api, self.window, self.max_clause_freq = api, int(window), int(max_clause_freq)
        self.max_terms, self.workers = max(1, int(max_terms)), max(1, int(workers))
        self.vocabulary = Vocabulary(Path(tokenizer))
        self.tokenizer = {"name": tokenizer_name, "sha256": file_sha256(Path(tokenizer))}
        self.names = StoreNames(store, self.index_settings)
        self.entity_semantics = ENTITY_SEMANTICS
        self.pair_semantics = PAIR_SEMANTICS.format(window=self.window)
        self.approximate: set[str] = set()  # entities (and pairs, "HEAD+TAIL") not counted as the semantics say
        self.reasons: dict[str, str] = {}
        self._forms: dict[str, Forms] = {}
        self._form_counts: dict[tuple[int, ...], int] = {}
        self._entity: dict[str, int] = {}
        self._pair: dict[tuple[str, str], int] = {}

    # -- the FrequencyIndex protocol ------------------------------------------------------------

    def settings(self) -> dict:
        return {**self.index_settings.to_dict(), "tokenizer": self.tokenizer, "counts": self.pair_semantics}

    def bind_settings(self, settings: dict) -> None:
        raise ApiBackendError("an infini-gram API index is someone else's: nothing can be added to it")

    def add_documents(self, documents, *, batch: int = 0):
        raise ApiBackendError("an infini-gram API index is someone else's: nothing can be added to it")

    def track_pairs(self, pairs) -> int:
        return 0

    def document_count(self) -> int:
        raise ApiBackendError("infini-gram's API counts tokens, not documents: no document count")

    def entity_frequency(self, entity: str) -> int:
        found = self._entity.get(entity)
        if found is None:
            found = sum(self._or_counts(entity, self.forms(entity).ids))
            self._entity[entity] = found
        return found

    def pair_frequency(self, head: str, tail: str) -> int:
        return self.pair_frequencies([(head, tail)])[0]

    def pair_frequencies(self, pairs: Sequence[tuple[str, str]]) -> list[int]:
        todo = sorted({(h, t) for h, t in pairs if (h, t) not in self._pair})
        if todo:
            with ThreadPoolExecutor(self.workers) as pool:
                for pair, count in zip(todo, pool.map(lambda p: self._count_pair(*p), todo)):
                    self._pair[pair] = count
        return [self._pair[(h, t)] for h, t in pairs]

    def close(self) -> None:
        self.names.close()

    # -- forms and requests ---------------------------------------------------------------------

    def forms(self, entity: str) -> Forms:
        """The entity's prefix-free token forms over all its names in the settings."""
        found = self._forms.get(entity)
        if found is None:
            ids, inexact = set(), []
            for key in self.names(entity):
                more, why = key_forms(self.vocabulary, key)
                ids |= more
                if why:
                    inexact.append(why)
            found = Forms(prefix_free(ids), tuple(inexact))
            if inexact:
                self._mark(entity, "; ".join(inexact))
            self._forms[entity] = found
        return found

    def _mark(self, what: str, why: str) -> None:
        self.approximate.add(what)
        self.reasons[what] = why

    def _or_counts(self, entity: str, forms: tuple[tuple[int, ...], ...]) -> list[int]:
        """One OR count per clause of at most `max_terms` forms (disjoint: they sum)."""
        chunks = [list(forms[i:i + self.max_terms]) for i in range(0, len(forms), self.max_terms)]
        if len(chunks) <= 1:
            results = [self.api.any_count(c) for c in chunks]
        else:
            with ThreadPoolExecutor(min(self.workers, len(chunks))) as pool:
                results = list(pool.map(self.api.any_count, chunks))
        approx = [r.semantics for r in results if r.approx]
        if approx:
            self._mark(entity, f"the server marked its count approximate ({approx[0]})")
        return [r.count for r in results]

    def _form_count(self, form: tuple[int, ...]) -> int:
        found = self._form_counts.get(form)
        if found is None:
            found = self._form_counts[form] = self.api.count(form).count
        return found

    def _side(self, entity: str) -> tuple[list[list[int]], str | None]:
        """The forms one side of an AND takes: all of them, or past `max_terms` the most frequent,
        with the share of the entity's occurrences they hold where that is not all of them (the
        forms left out that never occur change no window, so that count is as exact as any)."""
        forms = self.forms(entity).ids
        if len(forms) <= self.max_terms:
            return [list(f) for f in forms], None
        counts = [self._form_count(f) for f in forms]
        ranked = sorted(range(len(forms)), key=lambda i: (-counts[i], forms[i]))[:self.max_terms]
        total, kept = sum(counts), sum(counts[i] for i in ranked)
        why = None
        if kept < total:
            why = (f"{entity}: {self.max_terms} of its {len(forms)} token forms "
                   f"({100 * kept / total:.1f}% of its occurrences)")
        return [list(forms[i]) for i in sorted(ranked)], why

    def _count_pair(self, head: str, tail: str) -> int:
        (left, why_left), (right, why_right) = self._side(head), self._side(tail)
        if not left or not right:
            return 0
        result = self.api.cooccurrence(left, right, max_diff_tokens=self.window,
                                       max_clause_freq=self.max_clause_freq)
        why = [w for w in (why_left, why_right) if w]
        plain = WINDOWED.format(window=self.window)
        if result.semantics != plain:  # the server subsampled a clause: the client says so after the plain line
            why.append(result.semantics[len(plain):].lstrip("; "))
        if why:
            self._mark(f"{head}+{tail}", "; ".join(why))
        return result.count


def open_api_index(backend, store: str | Path | None, settings: IndexSettings | None = None) -> ApiCountIndex:
    """The API index a Backend("infini-gram-api", ...) names, its tokenizer checked by the index's name."""
    if not backend.api_index:
        raise ApiBackendError("the infini-gram API backend needs the index's name on the server (--api-index)")
    if not backend.tokenizer:
        raise ApiBackendError(f"counting names in {backend.api_index} needs its tokenizer (--model SPEC)")
    api = InfiniGramApi(backend.api_index, backend.api_url)
    return ApiCountIndex(api, store, backend.tokenizer, backend.tokenizer_name or Path(backend.tokenizer).stem,
                         settings=settings)
