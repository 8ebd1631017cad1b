"""Which clozes the causal-LM measures ask about an item (the distractor measure and its
baselines): the item's own `clozes` when it has them, else its relation's templates. An item's
clozes are written as the templates are (`[Y]` the object slot, `[X]` the subject, filled with
the item's subject_label; a cloze may also spell its subject out), so a probe set can carry the
exact sentences a study asks, such as DistFact's flawed verbalizations and their corrections
(004:225-239; `probeset import --format distfact-taxonomy`). Either way only object-final
clozes are asked: a causal LM continues the text before [Y] with the object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ..templates import SLOT_LIKE, RelationTemplates, object_final, prompt_before_object

ITEM_FIELD = "clozes"
SOURCES = ("item", "templates")  # where a record's clozes came from (its `cloze_source`)


@dataclass(frozen=True)
class Clozes:
    texts: tuple[str, ...]  # object-final, slots unfilled
    source: str  # one of SOURCES
    question: str  # the yes/no judge's question, [X] unfilled

    def prompts(self, subject_label: str) -> list[str]:
        """The text before [Y] of each cloze, [X] filled: what the model continues."""
        return [prompt_before_object(text, subject_label) for text in self.texts]


def item_clozes(item: dict, templates: Mapping[str, RelationTemplates], limit: int) -> Clozes:
    """The first `limit` object-final clozes of the item's own `clozes` (a missing or empty
    field: of its relation's templates). ValueError naming the item when its clozes are not a
    list of cloze texts or when none is object-final."""
    own = item.get(ITEM_FIELD)
    if own is None or own == []:
        return _template_clozes(item, templates, limit)
    if not isinstance(own, list) or not all(isinstance(text, str) and text.strip() for text in own):
        raise ValueError(f"{item['id']}: {ITEM_FIELD}: not a list of cloze texts")
    for text in own:
        problem = _slot_problem(text)
        if problem:
            raise ValueError(f"{item['id']}: {ITEM_FIELD}: {text!r} {problem}")
    texts = tuple(text for text in own if object_final(text))
    if not texts:
        raise ValueError(f"{item['id']}: {ITEM_FIELD}: none of its {len(own)} clozes ends with [Y] (the measures "
                         "ask the model to continue the text before the object)")
    return Clozes(texts[:limit], "item", texts[0].replace("[Y]", "___"))


def _template_clozes(item: dict, templates: Mapping[str, RelationTemplates], limit: int) -> Clozes:
    entry = templates.get(item["relation"])
    texts = tuple(t.text for t in entry.object_final_clozes()) if entry else ()
    if not texts:
        raise ValueError(f"{item['id']}: no object-final cloze template for {item['relation']}")
    return Clozes(texts[:limit], "templates", entry.question())


def _slot_problem(text: str) -> str | None:
    """Why an item's cloze cannot be asked: one [Y] it needs, at most one [X], no other slot."""
    if text.count("[Y]") != 1:
        return f"has {text.count('[Y]')} [Y] slots (needs exactly one: the object)"
    if text.count("[X]") > 1:
        return f"has {text.count('[X]')} [X] slots (at most one: the subject)"
    stray = sorted(set(SLOT_LIKE.findall(text)) - {"[X]", "[Y]"})
    return f"has an unknown slot {stray[0]} (only [X] and [Y])" if stray else None


def cloze_definition(records: Sequence[dict]) -> str | dict[str, int]:
    """Where a run's clozes came from, for its aggregate's definitions: "item" or "templates"
    when every record says the same, else the count of each. Records written before they said
    (no `cloze_source`) were asked the templates, the only source then."""
    counts = {source: 0 for source in SOURCES}
    for record in records:
        source = record.get("cloze_source") or "templates"
        counts[source] = counts.get(source, 0) + 1
    used = [source for source, count in counts.items() if count]
    return used[0] if len(used) == 1 else {k: v for k, v in counts.items() if v}
