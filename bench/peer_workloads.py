"""The requests bench/peer.py sends to factprobe and to lm-evaluation-harness, built from the
shipped sample graph (kg/data/sample_wikidata.json) and the shipped relation templates.

Each workload is a list of factprobe requests (`LoglikelihoodRequest` or `GenerateRequest`);
`lm_eval_instances` turns them into the lm-eval `Instance`s that ask the same questions:
one `loglikelihood` instance per (context, continuation), one `generate_until` instance per
greedy prompt and `n` per sampled one (lm-eval repeats a request instead of asking for n).

The prompt formats are factprobe's own: KDF's `render` (probes/methods/kdf.py), IC-LKE's
"subject object" lines (probes/methods/ic_lke.py), BELIEF-ICL's instruction and Q/A lines
(probes/methods/belief_icl.py).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from factprobe.probes.methods.belief_icl import INSTRUCTION, STOP, masked
from factprobe.probes.methods.kdf import LETTERS, render
from factprobe.probes.scoring.requests import GenerateRequest, LoglikelihoodRequest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "kg" / "data" / "sample_wikidata.json"
TEMPLATES = ROOT / "probes" / "templates" / "relations"
# Relations of the sample graph with enough facts and a shipped template (P38 has none).
RELATIONS = ("P17", "P106", "P1376", "P30", "P36", "P37", "P27", "P19", "P20", "P50", "P495")
# IC-LKE with fixed examples needs more subjects than examples: these have 56-88.
ICLKE_RELATIONS = ("P17", "P106", "P36", "P37", "P27", "P1376")

WORKLOADS = ("kdf-own", "kdf-shared", "iclke-fixed", "gen-shared", "gen-sampled", "gen-plain", "ll-plain")
# Requests per workload at --scale 1, and with --quick (a smoke test: the ratios mean little).
SIZES = {"kdf-own": 120, "kdf-shared": 120, "iclke-fixed": 20, "gen-shared": 100, "gen-sampled": 100,
         "gen-plain": 100, "ll-plain": 100}
QUICK_SIZES = {"kdf-own": 4, "kdf-shared": 4, "iclke-fixed": 2, "gen-shared": 4, "gen-sampled": 2,
               "gen-plain": 4, "ll-plain": 4}


@dataclass(frozen=True)
class Fact:
    relation: str
    subject: str  # entity id
    subject_label: str
    object: str
    object_label: str


@dataclass
class Graph:
    facts: dict[str, list[Fact]]  # relation -> one fact per subject, in file order
    true: dict[tuple[str, str], set[str]]  # (subject, relation) -> labels of all its objects
    labels: list[str]  # every English entity label, distinct, sorted
    templates: dict[str, dict[str, list[str]]]  # relation -> {"qa": [...], "cloze": [...]}


@dataclass
class Workload:
    name: str
    kind: str  # "loglikelihood" or "generate"
    requests: list = field(default_factory=list)  # factprobe requests
    note: str = ""  # what was built, for the printout


def load_graph() -> Graph:
    """Facts with an entity object, English labels on both ends, not deprecated and without an end
    time (P582), one per (relation, subject): the first in the file."""
    entities = json.loads(SAMPLE.read_text())
    label = {e["id"]: e.get("labels", {}).get("en", {}).get("value") for e in entities}
    facts: dict[str, dict[str, Fact]] = {r: {} for r in RELATIONS}
    true: dict[tuple[str, str], set[str]] = {}
    for entity in entities:
        for relation, statements in entity.get("claims", {}).items():
            if relation not in facts:
                continue
            for statement in statements:
                snak = statement["mainsnak"]
                if snak.get("snaktype") != "value" or snak.get("datatype") != "wikibase-item":
                    continue
                obj = snak["datavalue"]["value"]["id"]
                if not label.get(entity["id"]) or not label.get(obj):
                    continue
                true.setdefault((entity["id"], relation), set()).add(label[obj])
                if statement.get("rank") == "deprecated" or "P582" in statement.get("qualifiers", {}):
                    continue
                facts[relation].setdefault(entity["id"], Fact(relation, entity["id"], label[entity["id"]], obj, label[obj]))
    templates = {}
    for relation in RELATIONS:
        spec = yaml.safe_load((TEMPLATES / f"{relation}.yaml").read_text())
        templates[relation] = {kind: [t["text"] for t in spec.get(kind, [])] for kind in ("qa", "cloze")}
    return Graph({r: list(d.values()) for r, d in facts.items()}, true,
                 sorted({v for v in label.values() if v}), templates)


def _wrong(graph: Graph, fact: Fact, rng: random.Random, n: int, pool: list[str] | None = None) -> list[str]:
    """n distinct labels that are not true for the fact's subject: the relation's objects first,
    then (if too few) any entity label of the graph."""
    banned = graph.true.get((fact.subject, fact.relation), set()) | {fact.object_label, fact.subject_label}
    tails = sorted({f.object_label for f in graph.facts[fact.relation]} - banned)
    chosen = rng.sample(tails, min(n, len(tails)))
    if len(chosen) < n:
        rest = [x for x in (pool or graph.labels) if x not in banned and x not in chosen]
        chosen += rng.sample(rest, min(n - len(chosen), len(rest)))
    return chosen


# -- KDF -------------------------------------------------------------------------------------

def _kdf_question(graph: Graph, fact: Fact, seed: int) -> dict:
    rng = random.Random(f"{seed}:kdf:{fact.relation}:{fact.subject}")
    template = rng.choice(graph.templates[fact.relation]["qa"])
    options = [fact.object_label, *_wrong(graph, fact, rng, 3)]
    rng.shuffle(options)
    return {"fact": fact, "question": template.replace("[X]", fact.subject_label), "options": options,
            "answer": LETTERS[options.index(fact.object_label)]}


def _kdf_pool(graph: Graph, seed: int) -> list[dict]:
    facts = [f for r in RELATIONS for f in graph.facts[r]]
    random.Random(f"{seed}:kdf-order").shuffle(facts)
    return [_kdf_question(graph, f, seed) for f in facts]


def kdf(graph: Graph, n: int, shots: int, seed: int, shared: bool) -> Workload:
    """KDF items as probes/methods/kdf.py prompts them (letters scoring): `shots` answered A-D
    questions, then the question; continuations " A".." D". Own: each item's demonstrations are
    its own draw of questions of other relations about other subjects (the KDF paper's). Shared:
    one block of demonstrations, the same for every item (none of them is an item)."""
    pool = _kdf_pool(graph, seed)
    block = pool[:shots] if shared else []
    items = pool[shots:] if shared else pool
    note = ""
    if n > len(items):
        note = f"only {len(items)} questions in the sample graph (asked {n}); "
        n = len(items)
    requests = []
    for k, item in enumerate(items[:n]):
        fact = item["fact"]
        if shared:
            demos = block
        else:
            others = [q for q in pool if q["fact"].relation != fact.relation and q["fact"].subject != fact.subject]
            demos = random.Random(f"{seed}:shots:{k}").sample(others, shots)
        context = "\n\n".join([*(render(d, True) for d in demos), render(item, False)])
        requests.append(LoglikelihoodRequest(context, tuple(f" {x}" for x in LETTERS)))
    name = "kdf-shared" if shared else "kdf-own"
    return Workload(name, "loglikelihood", requests,
                    note + f"{shots} {'shared' if shared else 'own'} demonstrations, 4 letters")


# -- IC-LKE with fixed examples --------------------------------------------------------------

def iclke_fixed(graph: Graph, n: int, examples: int, choices: int, seed: int) -> Workload:
    """IC-LKE as probes/methods/ic_lke.py prompts it with fixed_examples: per relation one draw of
    `examples` "subject object" lines shared by every test fact of that relation, then the test
    subject; continuations " " + the gold label and choices - 1 wrong labels. Test facts are the
    relation's other subjects (38 for P17, 29 for P106, 6 for the others)."""
    per_relation = {}
    for relation in ICLKE_RELATIONS:
        facts = list(graph.facts[relation])
        random.Random(f"{seed}:iclke:{relation}").shuffle(facts)
        k = min(examples, len(facts) - 1)
        per_relation[relation] = (facts[:k], facts[k:])
    # Relation after relation (a real probe set has many facts per relation): the first 20 are
    # all P17's, whose 50 example lines they share.
    tests = [(r, f) for r, (_, t) in per_relation.items() for f in t]
    note = f"only {len(tests)} test facts (asked {n}); " if n > len(tests) else ""
    requests = []
    for relation, fact in tests[:n]:
        demos = per_relation[relation][0]
        rng = random.Random(f"{seed}:iclke:{relation}:{fact.subject}")
        labels = [fact.object_label, *_wrong(graph, fact, rng, choices - 1)]
        rng.shuffle(labels)
        context = "\n".join([*(f"{d.subject_label} {d.object_label}" for d in demos), fact.subject_label])
        requests.append(LoglikelihoodRequest(context, tuple(" " + x for x in labels)))
    used = sorted({len(per_relation[r][0]) for r, _ in tests[:n]})
    relations = list(dict.fromkeys(r for r, _ in tests[:n]))
    return Workload("iclke-fixed", "loglikelihood", requests,
                    note + f"{used[0] if len(used) == 1 else used} fixed examples per relation "
                    f"({', '.join(relations)}), {choices} choices")


# -- generation ------------------------------------------------------------------------------

def _cloze(graph: Graph, fact: Fact, rng: random.Random) -> str:
    return masked(rng.choice(graph.templates[fact.relation]["cloze"]), fact.subject_label)


def _belief_prompts(graph: Graph, n: int, demos: int, seed: int) -> tuple[list[str], str]:
    """BELIEF-ICL prompts (probes/methods/belief_icl.py): the instruction, `demos` Q/A lines shared
    by every prompt (facts of different relations), then "Q: <cloze with [MASK]>" and "A:"."""
    facts = [f for r in RELATIONS for f in graph.facts[r]]
    rng = random.Random(f"{seed}:belief")
    rng.shuffle(facts)
    block, block_relations = [], set()
    for f in facts:
        if len(block) < demos and f.relation not in block_relations:
            block.append(f)
            block_relations.add(f.relation)
    lines = [INSTRUCTION]
    for d in block:
        lines += [f"Q: {_cloze(graph, d, rng)}", f"A: {d.object_label}"]
    tests = [f for f in facts if f not in block]
    note = f"only {len(tests)} facts (asked {n}); " if n > len(tests) else ""
    prompts = ["\n".join([*lines, f"Q: {_cloze(graph, f, rng)}", "A:"]) for f in tests[:n]]
    return prompts, note


def gen_shared(graph: Graph, n: int, demos: int, max_tokens: int, seed: int) -> Workload:
    prompts, note = _belief_prompts(graph, n, demos, seed)
    requests = [GenerateRequest(p, max_tokens=max_tokens, stop=STOP) for p in prompts]
    return Workload("gen-shared", "generate", requests,
                    note + f"instruction + {demos} shared Q/A demonstrations, greedy, <= {max_tokens} tokens, stop \\n")


def gen_sampled(graph: Graph, n: int, demos: int, max_tokens: int, samples: int, seed: int) -> Workload:
    prompts, note = _belief_prompts(graph, n, demos, seed)
    rng = random.Random(f"{seed}:samples")
    requests = [GenerateRequest(p, max_tokens=max_tokens, temperature=1.0, n=samples, stop=STOP,
                                seed=rng.randrange(2**31)) for p in prompts]
    return Workload("gen-sampled", "generate", requests,
                    note + f"the gen-shared prompts, n={samples} sampled at temperature 1, time only")


def _spread(graph: Graph, n: int, seed: int, salt: str) -> list[Fact]:
    """n facts, relations taken in turn (each relation's facts shuffled)."""
    lists = []
    for r in RELATIONS:
        facts = list(graph.facts[r])
        random.Random(f"{seed}:{salt}:{r}").shuffle(facts)
        lists.append(facts)
    out = []
    for depth in range(max(map(len, lists))):
        out += [facts[depth] for facts in lists if depth < len(facts)]
    return out[:n]


def gen_plain(graph: Graph, n: int, max_tokens: int, seed: int) -> Workload:
    """'Q: <question>\\nA:' with nothing shared between prompts, greedy."""
    rng = random.Random(f"{seed}:gen-plain")
    facts = _spread(graph, n, seed, "gen-plain")
    requests = [GenerateRequest(f"Q: {rng.choice(graph.templates[f.relation]['qa']).replace('[X]', f.subject_label)}\nA:",
                                max_tokens=max_tokens, stop=STOP) for f in facts]
    return Workload("gen-plain", "generate", requests, f"one question each, greedy, <= {max_tokens} tokens, stop \\n")


def ll_plain(graph: Graph, n: int, seed: int) -> Workload:
    """Short cloze contexts ending where the object goes ("The capital of Canada is"), the gold
    object and 1-2 wrong ones as continuations."""
    rng = random.Random(f"{seed}:ll-plain")
    requests = []
    for f in _spread(graph, n, seed, "ll-plain"):
        ending = [t for t in graph.templates[f.relation]["cloze"] if t.split("[Y]")[1] in ("", ".")
                  and "[X]" in t.split("[Y]")[0]]
        template = rng.choice(ending)
        context = template.split("[Y]")[0].replace("[X]", f.subject_label).rstrip()
        options = [f.object_label, *_wrong(graph, f, rng, rng.choice((1, 2)))]
        requests.append(LoglikelihoodRequest(context, tuple(" " + x for x in options)))
    return Workload("ll-plain", "loglikelihood", requests, "one cloze each, 2-3 continuations")


def build(name: str, graph: Graph, n: int, *, seed: int, shots: int = 5, examples: int = 50,
          choices: int = 100, demos: int = 4, max_tokens: int = 8, samples: int = 10) -> Workload:
    if name in ("kdf-own", "kdf-shared"):
        return kdf(graph, n, shots, seed, shared=name == "kdf-shared")
    if name == "iclke-fixed":
        return iclke_fixed(graph, n, examples, choices, seed)
    if name == "gen-shared":
        return gen_shared(graph, n, demos, max_tokens, seed)
    if name == "gen-sampled":
        return gen_sampled(graph, n, demos, max_tokens, samples, seed)
    if name == "gen-plain":
        return gen_plain(graph, n, max_tokens, seed)
    if name == "ll-plain":
        return ll_plain(graph, n, seed)
    raise ValueError(f"unknown workload {name!r}: use {', '.join(WORKLOADS)}")


# -- the same requests as lm-eval instances --------------------------------------------------

def lm_eval_instances(workload: Workload) -> list:
    """lm-eval `Instance`s asking what the factprobe requests ask, in the order their answers are
    compared: per loglikelihood request its continuations in turn; per generate request one
    instance (greedy) or n identical ones (sampled: lm-eval repeats a request n times)."""
    from lm_eval.api.instance import Instance

    out = []
    for k, request in enumerate(workload.requests):
        if isinstance(request, LoglikelihoodRequest):
            for c in request.continuations:
                out.append(Instance("loglikelihood", {"request": k}, (request.context, c), len(out)))
            continue
        kwargs = {"until": list(request.stop), "max_gen_toks": request.max_tokens}
        if request.greedy:
            kwargs["do_sample"] = False
        else:
            kwargs.update(do_sample=True, temperature=request.temperature)
            if request.top_p != 1.0:
                kwargs["top_p"] = request.top_p
        for _ in range(request.n):
            # each instance gets its own dict: lm-eval pops keys from the one it is given
            out.append(Instance("generate_until", {"request": k}, (request.prompt, dict(kwargs)), len(out)))
    return out
