"""Counting documents in a token index folder, with the text index's meaning of a mention.

A name key's documents: in the documents the tokens count (store.py), the occurrences of each
of its surface forms (vocabulary.variants, vocabulary.forms) whose neighbouring tokens glue no
letter or digit on (decided on the neighbour's first or last byte where it is ASCII, on the
decoded window otherwise, and always for a name that begins or ends with a mark: ".NET", "C++");
in the others, the key's UTF-8 bytes in their normalized text, its two edges checked with
index/text.py's `at_word_boundaries`. Under mentions="maximal" an occurrence inside an
occurrence of a longer indexed name (every name of the store that contains the key) is dropped,
spans compared in the document's bytes. An entity's documents are the union over its names, a
pair's the intersection; every name's set is cached.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np
from pyroaring import BitMap

from ..settings import IndexSettings, StoreNames
from ..korean import PARTICLE_BYTES, ends_open
from ..text import at_word_boundaries, name_key, normalize
from .layout import Occurrences, TokenIndexFolder
from .store import MANIFEST, TOKENIZER, TokenIndexError, read_manifest
from ..writing_systems import unspaced
from .vocabulary import GLUE, NO_GLUE, Vocabulary, core_of, variants

# (doc, start byte, end byte, first token) of a name's valid occurrences: in the token part, bytes
# from the occurrence's first token; in the text part, bytes of the normalized text (token 0)
Spans = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
SEPARATOR = "\x00"  # between the keys scanned at once (_containing_keys)


class TokenCountIndex:
    """FrequencyIndex over a token index folder (read-only)."""

    def __init__(self, folder: str | Path, store: str | Path | None) -> None:
        self.folder = Path(folder)
        manifest = read_manifest(self.folder)
        if manifest is None:
            raise TokenIndexError(f"{self.folder}: no token index here ({MANIFEST} missing)")
        self.manifest = manifest.data
        self.tokenizer = self.manifest["tokenizer"]
        self._settings = self.manifest["settings"]
        self.index_settings = IndexSettings.from_dict(self._settings)
        self.particles = self.index_settings.particles  # Korean particles end a Hangul name (index/korean.py)
        self.maximal = self.index_settings.mentions == "maximal"
        self.vocabulary = Vocabulary(self.folder / TOKENIZER)
        self.tokens = TokenIndexFolder(self.folder / "tokens", self.manifest["token_width"])
        routed: list[int] = []
        for n, shard in enumerate(self.manifest["shards"]):
            if shard.get("text_shard") is not None:
                side = json.loads((self.folder / f"shard-{n}.json").read_text(encoding="utf-8"))
                routed.extend(side["first"] + i for i in side["text_documents"])
        self.text_documents = np.array(routed, dtype=np.int64)  # text/ ordinal -> document ordinal
        self.in_text = np.zeros(self.tokens.documents, dtype=bool)
        self.in_text[self.text_documents] = True
        self.text = TokenIndexFolder(self.folder / "text", 1) if routed else None
        self.names = StoreNames(store, self.index_settings) if store is not None and Path(store).is_file() else None
        # entities a count of which was not exact, for the CLI to name: none at present (a name's
        # later words are read from the decoded text, text-counted documents are exact)
        self.approximate: set[str] = set()
        self._keys: list[str] | None = None
        self._docs: dict[str, BitMap] = {}
        self._spans: dict[str, tuple[Spans, Spans]] = {}
        self._containing: dict[str, list[tuple[str, list[int]]]] = {}
        self._joined: tuple[str, np.ndarray] | None = None
        self._entity: dict[str, BitMap] = {}
        self._cums: dict[int, np.ndarray] = {}  # per document: byte offset of each token

    # -- the FrequencyIndex protocol ------------------------------------------------------------

    def settings(self) -> dict | None:
        return self._settings

    def bind_settings(self, settings: dict) -> None:
        raise TokenIndexError(f"{self.folder} is open for counting; build with `factprobe corpus index`")

    def add_documents(self, documents, *, batch: int = 0):
        raise TokenIndexError(f"{self.folder} is open for counting; build with `factprobe corpus index`")

    def track_pairs(self, pairs) -> int:
        return 0

    def document_count(self) -> int:
        return int(self.tokens.documents)

    def entity_frequency(self, entity: str) -> int:
        return len(self._entity_docs(entity))

    def pair_frequency(self, head: str, tail: str) -> int:
        return self._entity_docs(head).intersection_cardinality(self._entity_docs(tail))

    def pair_frequencies(self, pairs: Sequence[tuple[str, str]]) -> list[int]:
        return [self.pair_frequency(h, t) for h, t in pairs]

    def close(self) -> None:
        self.tokens.close()
        if self.text is not None:
            self.text.close()
        if self.names is not None:
            self.names.close()

    # -- names ------------------------------------------------------------------------------------

    def _entity_docs(self, entity: str) -> BitMap:
        found = self._entity.get(entity)
        if found is None:
            if self.names is None:
                raise TokenIndexError("counting names in a token index needs the knowledge-graph store")
            found = BitMap()
            for key in self.names(entity):
                found |= self.key_documents(key)
            if len(self._entity) > 200_000:
                self._entity.clear()
            self._entity[entity] = found
        return found

    def key_documents(self, key: str) -> BitMap:
        """The documents that mention the name key `key` under the index's settings."""
        found = self._docs.get(key)
        if found is None:
            token_spans, text_spans = self._valid(key)
            if self.maximal:
                token_spans, text_spans = self._outermost(key, token_spans, text_spans)
            found = BitMap(token_spans[0].tolist()) | BitMap(self.text_documents[text_spans[0]].tolist())
            self._docs[key] = found
        return found

    def _all_keys(self) -> list[str]:
        if self._keys is None:
            keep = self.index_settings.alias_filter.converted(self.names.convert).keeps
            self._keys = sorted({k for k in (name_key(self.names.convert(n)) for _, n in self.names.pairs())
                                 if keep(k)})
        return self._keys

    def _containing_keys(self, key: str) -> list[tuple[str, list[int]]]:
        """The longer indexed names that hold `key`, each with where (characters) it sits in them."""
        found = self._containing.get(key)
        if found is None:
            joined, starts = self._joined_keys()
            keys = self._all_keys()
            where: dict[int, list[int]] = {}
            # one C-speed scan of every key at once, not a Python test per key: annotating
            # 1,654 entities spent 0.77 s of 3.8 s in that test
            at = joined.find(key) if key and SEPARATOR not in key else -1
            if SEPARATOR in key:  # a hit could span two keys: each tested alone
                where = {j: [i for i in range(len(o) - len(key) + 1) if o.startswith(key, i)]
                         for j, o in enumerate(keys) if len(o) > len(key) and key in o}
            while at >= 0:
                j = int(np.searchsorted(starts, at, side="right")) - 1
                if len(keys[j]) > len(key):
                    where.setdefault(j, []).append(at - int(starts[j]))
                at = joined.find(key, at + 1)
            found = [(keys[j], where[j]) for j in sorted(where)]
            self._containing[key] = found
        return found

    def _joined_keys(self) -> tuple[str, np.ndarray]:
        """Every indexed key in one string, SEPARATOR between them, and where each starts."""
        if self._joined is None:
            keys = self._all_keys()
            lengths = np.array([len(k) + 1 for k in keys], dtype=np.int64)
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if keys else np.zeros(0, np.int64)
            self._joined = (SEPARATOR.join(keys), starts)
        return self._joined

    def _outermost(self, key: str, token_spans: Spans, text_spans: Spans) -> tuple[Spans, Spans]:
        """The spans no valid occurrence of a longer indexed name contains, compared in bytes of
        the documents both occur in."""
        if not len(token_spans[0]) and not len(text_spans[0]):
            return token_spans, text_spans
        kept = []
        for own, which in ((token_spans, 0), (text_spans, 1)):
            keep = np.ones(len(own[0]), dtype=bool)
            for other, _ in self._containing_keys(key):
                theirs = self._valid(other)[which]
                shared = np.isin(own[0], theirs[0]) & keep
                if not shared.any():
                    continue
                mine = np.flatnonzero(shared)
                doc, start, end = self._absolute(own, which, mine)
                them = np.flatnonzero(np.isin(theirs[0], doc))
                their_doc, their_start, their_end = self._absolute(theirs, which, them)
                for i, d, a, b in zip(mine.tolist(), doc.tolist(), start.tolist(), end.tolist()):
                    mask = their_doc == d
                    inside = ((their_start[mask] <= a) & (b <= their_end[mask])
                              & ((their_start[mask] != a) | (their_end[mask] != b)))
                    if inside.any():
                        keep[i] = False
            kept.append(tuple(part[keep] for part in own))
        return kept[0], kept[1]

    def _absolute(self, spans: Spans, which: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(doc, start, end) of the chosen spans in their document's bytes: a token span's start
        and end are kept relative to its first token until a comparison needs them here."""
        doc, start, end = spans[0][rows], spans[1][rows], spans[2][rows]
        if which == 0:
            base = self._token_starts(doc, spans[3][rows])
            start, end = start + base, end + base
        return doc, start, end

    def _valid(self, key: str) -> tuple[Spans, Spans]:
        """Every occurrence of `key` that the text rule counts (mentions="any"), as byte spans:
        in the token-counted documents' raw text, and in the text-counted ones' normalized text."""
        found = self._spans.get(key)
        if found is None:
            found = (self._token_spans(key), self._text_spans(key))
            if len(self._spans) > 100_000:
                self._spans.clear()
            self._spans[key] = found
        return found

    # -- in the model's tokens --------------------------------------------------------------------

    def _token_spans(self, key: str) -> Spans:
        empty = (np.zeros(0, np.int64),) * 4
        if not key or normalize(key) != key or any(map(unspaced, key)):
            return empty  # a name in a script without spaces occurs only in text-counted documents
        begin, end = core_of(key)
        core = key[begin:end]
        surfaces, covered = variants(core)
        verify_all = begin > 0 or end < len(key) or covered < len(core)
        docs, starts, ends, ats = [], [], [], []
        forms = set()
        for surface in surfaces:
            forms |= self.vocabulary.forms(surface)
        for ids, lead in sorted(forms):
            occ = self.tokens.occurrences(ids)
            if not len(occ):
                continue
            keep = ~self.in_text[occ.doc]
            occ = Occurrences(occ.doc[keep], occ.at[keep])
            if not len(occ):
                continue
            size = int(self.vocabulary.lengths[list(ids)].sum())
            before, after = self.tokens.neighbours(occ, len(ids))
            last = np.where(before >= 0, self.vocabulary.last[np.maximum(before, 0)], NO_GLUE)
            first = np.where(after >= 0, self.vocabulary.first[np.maximum(after, 0)], NO_GLUE)
            if lead:
                last = np.full(len(occ), NO_GLUE, dtype=np.int8)
            # a Hangul end glued to more Hangul may still end before particles: verified, not refused
            glued = (last == GLUE) | ((first == GLUE) & (not self._open(key)))
            sure = (last == NO_GLUE) & (first == NO_GLUE) & (not verify_all)
            unsure = np.ones(len(occ), dtype=bool) if verify_all else ~glued & ~sure
            delta = np.full(len(occ), lead, dtype=np.int64)
            length = np.full(len(occ), size - lead, dtype=np.int64)
            if unsure.any():
                picked = np.flatnonzero(unsure)
                ok, d, n = self._verify(Occurrences(occ.doc[picked], occ.at[picked]), ids, lead, key, begin)
                sure[picked] = ok
                delta[picked], length[picked] = d, n
            take = np.flatnonzero(sure)
            if not take.size:
                continue
            docs.append(occ.doc[take])
            # spans in the document's bytes, relative to the form's first token (`ats`): made
            # absolute only where a longer name may hold them (_absolute)
            starts.append(delta[take])
            ends.append(delta[take] + length[take])
            ats.append(occ.at[take])
        if not docs:
            return empty
        return np.concatenate(docs), np.concatenate(starts), np.concatenate(ends), np.concatenate(ats)

    def _token_starts(self, doc: np.ndarray, at: np.ndarray) -> np.ndarray:
        """The byte offset of token `at` in document `doc`, per occurrence."""
        out = np.zeros(len(doc), dtype=np.int64)
        cums = self._cums
        if len(cums) > 4096:
            cums.clear()
        for i, (d, a) in enumerate(zip(doc.tolist(), at.tolist())):
            cum = cums.get(d)
            if cum is None:
                lengths = self.vocabulary.lengths[self.tokens.document(d)]
                cum = cums[d] = np.concatenate([[0], np.cumsum(lengths)])
            out[i] = cum[a]
        return out

    def _open(self, key: str) -> bool:
        """Whether `key`'s end may be followed by Korean particles (a Hangul end, under ko_particles)."""
        return ends_open(key, self.particles)

    def _verify(self, occ: Occurrences, ids, lead: int, key: str, begin: int):
        """Per occurrence of the form `ids` (the key's core, `begin` characters into the key):
        whether the key occurs there on word boundaries, decided on the decoded window, and its
        span (bytes from the form's first token, and length)."""
        reach = 4 * (len(key) + 2)
        ahead = reach + PARTICLE_BYTES * self._open(key)
        windows, offsets = self.tokens.windows(occ, len(ids), reach, ahead)
        pieces = self.vocabulary.pieces
        ok = np.zeros(len(occ), dtype=bool)
        delta = np.zeros(len(occ), dtype=np.int64)
        length = np.zeros(len(occ), dtype=np.int64)
        for i, (window, offset, at) in enumerate(zip(windows, offsets.tolist(), occ.at.tolist())):
            head = b"".join(pieces[t] for t in window[:offset].tolist())
            body = b"".join(pieces[t] for t in window[offset:offset + len(ids)].tolist())
            tail = b"".join(pieces[t] for t in window[offset + len(ids):].tolist())
            before = (head + body[:lead]).decode("utf-8", "surrogateescape")
            core = body[lead:].decode("utf-8", "surrogateescape")
            after = tail.decode("utf-8", "surrogateescape")
            raw = before + core + after
            text = normalize(raw)
            if len(text) != len(raw):
                continue  # cannot happen in a token-regular document
            start = len(before) - begin
            stop = start + len(key)
            if start < 0 or stop > len(text) or text[start:stop] != key:
                continue
            clipped_left = at - offset > 0 and start == 0
            clipped_right = stop == len(text) and len(window) - offset - len(ids) == ahead
            if clipped_left or clipped_right:
                continue
            if not at_word_boundaries(text, start, stop, self.particles):
                continue
            ok[i] = True
            key_start = len(raw[:start].encode("utf-8", "surrogateescape"))
            delta[i] = key_start - len(head)
            length[i] = len(raw[start:stop].encode("utf-8", "surrogateescape"))
        return ok, delta, length

    # -- in the normalized text -------------------------------------------------------------------

    def _text_spans(self, key: str) -> Spans:
        empty = (np.zeros(0, np.int64),) * 4
        if self.text is None or not key:
            return empty
        needle = key.encode("utf-8", "surrogatepass")
        occ = self.text.occurrences(list(needle))
        if not len(occ):
            return empty
        open_end = self._open(key)  # asked once, not per occurrence
        windows, offsets = self.text.windows(occ, len(needle), 4, 4 + PARTICLE_BYTES * open_end)
        keep = np.zeros(len(occ), dtype=bool)
        for i, (window, offset) in enumerate(zip(windows, offsets.tolist())):
            data = bytes(window.astype(np.uint8))
            before = data[:offset].decode("utf-8", "surrogateescape")
            after = data[offset + len(needle):].decode("utf-8", "surrogateescape")
            left = before[-1:] if offset else ""
            right = after if open_end else after[:1]
            keep[i] = at_word_boundaries(left + key + right, len(left), len(left) + len(key), self.particles)
        take = np.flatnonzero(keep)
        return occ.doc[take], occ.at[take], occ.at[take] + len(needle), np.zeros(len(take), np.int64)
