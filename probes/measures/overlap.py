"""What two runs know in common: which units count as known under the chosen `Definitions`
(IC-LKE's per-template comparison with BELIEF's covered facts, each prompt, or whole items), subsumption, sharing (BELIEF's asymmetric
rate by default) and the correlations of per-relation accuracies, as the pure `overlap` of two
runs' records; a BELIEF run against a BELIEF-ICL run reads the latter in one ICL setting
(`in_setting`) on BELIEF's units. probes/report/comparison.py applies it to loaded runs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator, Sequence

from ..document import natural_key, number
from . import belief, iclke, uncertainty

KNOWN_RULE = ("An item counts as known when its `correct` is true, or, where `correct` is a share "
              "(BELIEF over several prompts), when that share is 1.0.")


def is_known(correct) -> bool:
    # bool is a subclass of int, so True == 1.0 and a share of 1.0 both qualify; None does not.
    return isinstance(correct, (int, float)) and correct == 1.0


# How `compare` and `report` decide what a run knows and how much two runs share (see
# `Definitions`): the first value of each is the paper's and the default (known: IC-LKE's
# comparison, Wu et al. 2024, with BELIEF's covered facts; sharing: BELIEF's rate, Zhao et al.).
KNOWN_DEFINITIONS = ("per-template", "per-prompt", "all-prompts")
SHARING_DEFINITIONS = ("asymmetric", "probed", "jaccard")
# The BELIEF-ICL setting a BELIEF-ICL run is read in when it is compared with a BELIEF run: the
# settings of probes/methods/belief_icl.py (spelled out here, which measures may not import), the
# first the default. 000:273 sets the encoder-decoder rate (47.1%) against the decoders' own rate
# "in the zero-shot setting", the one setting in which a decoder, like an encoder, sees no examples.
ICL_SETTINGS = ("zero-shot", "x-random", "x-relation", "x-template")


@dataclass(frozen=True)
class Definitions:
    """What a model "knows" when two runs are compared, and which sharing rate is reported.

    known:
      - "per-template" (IC-LKE's comparison, the default): the unit is one fact under one
        template (BELIEF: "the correctly predicted facts for each template", 000:271), in one ICL
        setting (BELIEF-ICL), or one item where a method has one verdict per item; a fact is
        covered under a template when one of its subject expressions gets it right (BELIEF reads
        a fact under a template by its best subject expression, 000:286 footnote 16); subsumption
        and sharing are computed per relation and averaged over relations with equal weight;
      - "per-prompt" (factprobe before issue 38): as per-template, but every prompt is a unit of
        its own, a template's subject names apart;
      - "all-prompts" (factprobe before issue 20): the unit is the item, known only when its
        `correct` is true or 1.0 (a BELIEF fact right on every prompt, a BELIEF-ICL fact right in
        every setting), and the rates are pooled over all items.
    sharing:
      - "asymmetric" (BELIEF's knowledge sharing rate, seed 000 line 271; the default): the units
        both runs know as a share of the units A knows, and as a share of those B knows, both
        shown, pooled over all units ("each model's total covered facts");
      - "probed" (factprobe's before issue 28, which called it IC-LKE's; IC-LKE has no sharing
        rate): the share of the units both runs scored that both know;
      - "jaccard": known by both / known by either (the Jaccard index reported before issue 20).
      The symmetric two follow `known` (per relation and averaged under per-template).
    icl_setting: the one setting a BELIEF-ICL run is read in when compared with a BELIEF run
      (`overlap(..., across_methods=True)`), zero-shot by default (see ICL_SETTINGS); runs of one
      method ignore it.
    """

    known: str = KNOWN_DEFINITIONS[0]
    sharing: str = SHARING_DEFINITIONS[0]
    icl_setting: str = ICL_SETTINGS[0]

    def __post_init__(self) -> None:
        if self.known not in KNOWN_DEFINITIONS:
            raise ValueError(f"known must be one of {', '.join(KNOWN_DEFINITIONS)}, not {self.known!r}")
        if self.sharing not in SHARING_DEFINITIONS:
            raise ValueError(f"sharing must be one of {', '.join(SHARING_DEFINITIONS)}, not {self.sharing!r}")
        if self.icl_setting not in ICL_SETTINGS:
            raise ValueError(f"icl_setting must be one of {', '.join(ICL_SETTINGS)}, not {self.icl_setting!r}")

    def describe(self) -> str:
        if self.known == "per-template":
            known = ("Known (--known per-template, IC-LKE's comparison with BELIEF's covered facts): the unit is a "
                     "fact under one template (BELIEF), in one ICL setting (BELIEF-ICL), or the item where a method "
                     "has one verdict per item (known when `correct` is true or 1.0); a fact is covered under a "
                     "template when one of its subject expressions gets it right; rates are computed per relation "
                     "over the units both runs scored and averaged over relations.")
        elif self.known == "per-prompt":
            known = ("Known (--known per-prompt): the unit is one prompt (a template with one subject expression), "
                     "in one ICL setting (BELIEF-ICL), or the item where a method has one verdict per item; rates "
                     "are computed per relation and averaged over relations.")
        else:
            known = f"Known (--known all-prompts): {KNOWN_RULE} Rates are pooled over all items."
        sharing = {"asymmetric": "Sharing (--sharing asymmetric, BELIEF's): units both know / units A knows, and "
                                 "/ units B knows, pooled over all units.",
                   "probed": "Sharing (--sharing probed): units both know / units both scored.",
                   "jaccard": "Sharing (--sharing jaccard): units both know / units either knows (Jaccard index)."}
        return f"{known} {sharing[self.sharing]}"

    def as_dict(self) -> dict:
        return {"known": self.known, "sharing": self.sharing}

    def across_rule(self) -> str:
        """What a comparison of a BELIEF run with a BELIEF-ICL run reads (`Overlap.describe` adds it)."""
        return (f"A BELIEF run against a BELIEF-ICL run (--icl-setting {self.icl_setting}): the BELIEF-ICL run is "
                f"read in its {self.icl_setting} setting alone, a verdict per prompt as BELIEF has, so both "
                "cover (fact, template) units alike (BELIEF's encoder-decoder sharing rate, 000:271-273, reads "
                "the decoders in zero-shot).")


@dataclass(frozen=True)
class Overlap:
    """What two runs know of the units both contain (items matched by id; see `Definitions`)."""
    shared: int  # units both runs scored (= items under --known all-prompts)
    both: int
    only_a: int
    only_b: int
    neither: int
    subsumption_ab: float | None  # share of A's known units that B knows too; None: A knows none of them
    subsumption_ba: float | None
    # Per `Definitions.sharing`, None where undefined: under "asymmetric" the shares of A's and
    # of B's known units that both know; a symmetric definition's one rate is both.
    sharing_a: float | None
    sharing_b: float | None
    relations: int  # relations among the shared items, the points of the correlations
    pearson: float | None  # of per-relation accuracies; None when undefined (< 2 relations, constant)
    kendall: float | None
    definitions: Definitions = Definitions()
    shared_items: int = 0  # items those units belong to
    across_methods: bool = False  # a BELIEF run against a BELIEF-ICL run, read in definitions.icl_setting

    @property
    def asymmetric(self) -> bool:
        return self.definitions.sharing == "asymmetric"

    @property
    def sharing(self) -> float | None:
        """The symmetric definitions' one rate; None under "asymmetric" (see sharing_a, sharing_b)."""
        return None if self.asymmetric else self.sharing_a

    @property
    def p_value(self) -> float:
        """McNemar's exact test of "A and B know as much" over the shared units: only the units
        one run knows and the other does not speak to a difference."""
        return uncertainty.mcnemar_p(self.only_a, self.only_b)

    def as_dict(self) -> dict:
        return {"shared_items": self.shared_items, "shared_units": self.shared, "both": self.both, "only_a": self.only_a, "only_b": self.only_b,
                "neither": self.neither, "subsumption_a_to_b": self.subsumption_ab,
                "subsumption_b_to_a": self.subsumption_ba,
                "sharing": {"a": self.sharing_a, "b": self.sharing_b} if self.asymmetric else self.sharing,
                "relations": self.relations, "pearson": self.pearson, "kendall_tau": self.kendall,
                "mcnemar_p": self.p_value,
                "definitions": {**self.definitions.as_dict(),
                                **({"icl_setting": self.definitions.icl_setting} if self.across_methods else {})}}

    def describe(self) -> str:
        """The definitions in words, and what a BELIEF-ICL run was read as against a BELIEF run."""
        return self.definitions.describe() + (" " + self.definitions.across_rule() if self.across_methods else "")


def known_units(items: Sequence[dict], known: str) -> dict[tuple, tuple[str, bool]]:
    """unit -> (relation, known) for every unit that has a verdict, under the `known` definition.

    Units are keyed so that two runs over one probe set name the same probe alike: (id,) for an
    item; under per-template (id, template) for a BELIEF item's template, covered when one of its
    prompts (subject names) is right, and (fact, template, setting) for a BELIEF-ICL setting,
    covered when one of the items of that fact and template (one per subject name) is right, or
    one of the prompts of that template in a BELIEF-ICL record of a cloze set (its `prompts`);
    under per-prompt (id, template, k) for the k-th prompt of a template, (id, setting) and
    (id, prompt index, setting) for a cloze set's BELIEF-ICL prompt. An
    item without a verdict (correct None) has no unit: counting it as "not known" would invent
    agreement. A distractor item (`by_strategy`) has one unit per strategy, (id, strategy), under
    every definition: the fact is known under a strategy when its Min@n is 1.0, the object more
    plausible than each of its n distractors on every cloze (KNOWN_RULE's share of 1.0; DistFact
    defines no sharing between runs, so this is factprobe's reading of its per-fact verdict).
    """
    return {unit: (relation, known) for unit, (relation, known, _) in _units(items, known).items()}


def _units(items: Sequence[dict], known: str) -> dict[tuple, tuple[str, bool, tuple]]:
    """unit -> (relation, known, ids of the items it is read from): `known_units` with the items
    behind each unit, which the per-relation accuracies of `overlap` are computed over."""
    out: dict[tuple, tuple[str, bool, tuple]] = {}

    def put(unit: tuple, relation: str, correct: bool, item_id) -> None:
        _, before, ids = out.get(unit, (relation, False, ()))
        out[unit] = (relation, before or correct, (*ids, item_id))  # covered by any of its prompts

    for r in items:
        relation = str(r.get("relation"))
        strategies = r.get("by_strategy")
        if isinstance(strategies, dict):  # the distractor measure: a verdict per strategy, none overall
            for strategy, entry in strategies.items():
                if isinstance(entry, dict) and isinstance(entry.get("min_at_n"), (int, float)):
                    put((r["id"], strategy), relation, is_known(entry["min_at_n"]), r["id"])
            continue
        if known != "all-prompts":
            prompts = r.get("prompt_correct")
            if isinstance(prompts, list):
                # Without template ids (records older than them) each prompt is a template of its own.
                templates = r.get("template_ids") or list(range(len(prompts)))
                seen: dict = {}
                for template, correct in zip(templates, prompts):
                    k = seen[template] = seen.get(template, -1) + 1
                    put((r["id"], template) if known == "per-template" else (r["id"], template, k),
                        relation, bool(correct), r["id"])
                continue
            if isinstance(r.get("prompts"), list):  # BELIEF-ICL on a cloze set: each prompt's settings
                for unit, correct in _prompt_units(r, known):
                    put(unit, relation, correct, r["id"])
                continue
            settings = r.get("by_setting")
            if isinstance(settings, dict):
                per_fact = known == "per-template" and r.get("template_id") is not None and r.get("fact") is not None
                for setting, entry in settings.items():
                    if isinstance(entry, dict) and entry.get("correct") is not None:
                        unit = (r["fact"], r["template_id"], setting) if per_fact else (r["id"], setting)
                        put(unit, relation, bool(entry["correct"]), r["id"])
                continue
        if r.get("correct") is not None:
            put((r["id"],), relation, is_known(r["correct"]), r["id"])
    return out


def _prompt_units(record: dict, known: str) -> Iterator[tuple[tuple, bool]]:
    """(unit, correct) per prompt and setting of a BELIEF-ICL record on a cloze set (its
    `prompts`, each with `by_setting`): under per-template (fact, template, setting), as the
    belief-icl kind's items are read, so its subject expressions cover one unit; under per-prompt
    (id, prompt index, setting). A prompt without a template id is a template of its own."""
    fact = record.get("fact") or record["id"]
    for prompt in record["prompts"]:
        template = prompt.get("template_id")
        if template is None:
            template = ("prompt", prompt.get("index"))
        settings = prompt.get("by_setting")
        for setting, entry in (settings.items() if isinstance(settings, dict) else ()):
            if isinstance(entry, dict) and entry.get("correct") is not None:
                where = (fact, template) if known == "per-template" else (record["id"], prompt.get("index"))
                yield (*where, setting), bool(entry["correct"])


def in_setting(items: Sequence[dict], setting: str) -> list[dict]:
    """BELIEF-ICL records read in one ICL setting as BELIEF reads its own records: a cloze set's
    record becomes a verdict per prompt (`template_ids`, `prompt_correct`; prompts without a verdict
    in that setting left out) and `correct` the share of them right; a belief-icl set's record its
    one verdict. Other records are as they were. The units of a BELIEF run over the same set are
    then the same (fact, template) pairs: its items are those facts, matched by id."""
    out = []
    for r in items:
        if isinstance(r.get("prompts"), list):
            asked = [(p.get("template_id") if p.get("template_id") is not None else ("prompt", p.get("index")),
                      bool(entry["correct"])) for p in r["prompts"] for entry in (_entry(p, setting),) if entry]
            fields = {k: v for k, v in r.items() if k != "prompts"}
            out.append({**fields, "template_ids": [t for t, _ in asked], "prompt_correct": [c for _, c in asked],
                        "correct": sum(c for _, c in asked) / len(asked) if asked else None})
        elif isinstance(r.get("by_setting"), dict):
            entry = _entry(r, setting)
            fields = {k: v for k, v in r.items() if k != "by_setting"}
            out.append({**fields, "correct": bool(entry["correct"]) if entry else None})
        else:
            out.append(r)
    return out


def _entry(row: dict, setting: str) -> dict | None:
    """A prompt's or record's answer in `setting`, when it has a verdict there."""
    entry = (row.get("by_setting") or {}).get(setting)
    return entry if isinstance(entry, dict) and entry.get("correct") is not None else None


def _relation_accuracies(rows_a: list[dict], rows_b: list[dict]) -> tuple[dict, dict]:
    """Per-relation accuracies for Pearson and Kendall: BELIEF-ICL's per (relation, ICL setting),
    "P36 (zero-shot)", each setting's verdicts apart (pooled settings are no paper's accuracy)."""
    settings = [s for s in _settings_of(rows_a) if s in set(_settings_of(rows_b))]
    if not settings:
        return relation_means(rows_a), relation_means(rows_b)
    out_a, out_b = {}, {}
    for setting in settings:
        for rows, out in ((rows_a, out_a), (rows_b, out_b)):
            for relation, value in relation_means(in_setting(rows, setting)).items():
                out[f"{relation} ({setting})"] = value
    return out_a, out_b


def _settings_of(rows: Sequence[dict]) -> list[str]:
    found: dict[str, None] = {}
    for r in rows:
        for holder in (r, *(p for p in r.get("prompts") or () if isinstance(p, dict))):
            if isinstance(holder.get("by_setting"), dict):
                found.update(dict.fromkeys(holder["by_setting"]))
    return list(found)


def overlap(items_a: Sequence[dict], items_b: Sequence[dict], definitions: Definitions = Definitions(),
            across_methods: bool = False) -> Overlap:
    """`across_methods`: one run is BELIEF's and the other BELIEF-ICL's; the BELIEF-ICL records
    are read in `definitions.icl_setting` (`in_setting`) and both on BELIEF's units."""
    if across_methods:
        items_a, items_b = in_setting(items_a, definitions.icl_setting), in_setting(items_b, definitions.icl_setting)
    units_a, units_b = _units(items_a, definitions.known), _units(items_b, definitions.known)
    shared = set(units_a) & set(units_b)
    known_a = {u for u in shared if units_a[u][1]}
    known_b = {u for u in shared if units_b[u][1]}
    both = len(known_a & known_b)
    relation_of = {u: units_a[u][0] for u in shared}
    if definitions.known != "all-prompts":
        subsumption_ab = number(iclke.subsumption_rate_by_relation(known_a, known_b, relation_of))
        subsumption_ba = number(iclke.subsumption_rate_by_relation(known_b, known_a, relation_of))
    else:
        # The metric functions call an empty side vacuously 1.0; a report says n/a instead, since a
        # reader would take 1.0 as "B knows everything A knows" when A knows nothing.
        subsumption_ab = iclke.subsumption_rate(known_a, known_b) if known_a else None
        subsumption_ba = iclke.subsumption_rate(known_b, known_a) if known_b else None
    if definitions.sharing == "asymmetric":
        sharing_a, sharing_b = (number(rate) for rate in belief.sharing_rates(known_a, known_b))
    else:
        sharing_a = sharing_b = _symmetric_sharing(known_a, known_b, relation_of, definitions)
    by_id_a = {r["id"]: r for r in items_a}
    by_id_b = {r["id"]: r for r in items_b}
    # The items behind the shared units, in both runs (a BELIEF-ICL unit stands for several).
    shared_ids = sorted({i for u in shared for i in units_a[u][2]} & {i for u in shared for i in units_b[u][2]},
                        key=str)
    acc_a, acc_b = _relation_accuracies([by_id_a[i] for i in shared_ids], [by_id_b[i] for i in shared_ids])
    relations = sorted(set(acc_a) & set(acc_b), key=natural_key)
    pearson = kendall = None
    if len(relations) >= 2:
        x, y = [acc_a[r] for r in relations], [acc_b[r] for r in relations]
        pearson, kendall = number(iclke.pearson(x, y)), number(iclke.kendall_tau(x, y))
    return Overlap(shared=len(shared), both=both, only_a=len(known_a) - both, only_b=len(known_b) - both,
                   neither=len(shared) - len(known_a | known_b), subsumption_ab=subsumption_ab,
                   subsumption_ba=subsumption_ba, sharing_a=sharing_a, sharing_b=sharing_b, relations=len(relations),
                   pearson=pearson,
                   kendall=kendall, definitions=definitions, shared_items=len(shared_ids),
                   across_methods=across_methods)


def _symmetric_sharing(known_a: set, known_b: set, relation_of: dict, definitions: Definitions) -> float | None:
    """The "probed" or "jaccard" rate: per relation and averaged under known=per-template or
    per-prompt, pooled under all-prompts; None where it is undefined."""
    if definitions.known != "all-prompts":
        return number(iclke.mean_over_relations(relation_of, lambda units: _sharing(
            known_a & units, known_b & units, units, definitions.sharing)))
    return number(_sharing(known_a, known_b, set(relation_of), definitions.sharing))


def _sharing(known_a: set, known_b: set, probed: set, definition: str) -> float:
    """One symmetric sharing rate over one group of units; NaN where it is undefined."""
    if definition == "jaccard":
        return iclke.sharing_rate({"a": known_a, "b": known_b}) if known_a | known_b else math.nan
    return iclke.shared_rate({"a": known_a, "b": known_b}, probed)


def relation_means(items: Sequence[dict]) -> dict[str, float]:
    """Mean `correct` per relation (a share counts as its value, as in the overall accuracy);
    a distractor item without one its mean Min@n over its strategies; unscored items (correct
    None) are left out."""
    groups: dict[str, list[float]] = {}
    for r in items:
        correct = r.get("correct")
        if correct is None and isinstance(r.get("by_strategy"), dict):  # distractors: Min@n over strategies
            verdicts = [e["min_at_n"] for e in r["by_strategy"].values()
                        if isinstance(e, dict) and isinstance(e.get("min_at_n"), (int, float))]
            correct = sum(verdicts) / len(verdicts) if verdicts else None
        if isinstance(correct, (int, float)) and correct == correct:  # NaN != NaN: unscored too
            groups.setdefault(str(r.get("relation")), []).append(float(correct))
    return {k: sum(v) / len(v) for k, v in groups.items()}


