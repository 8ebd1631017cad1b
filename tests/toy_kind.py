"""A probe-set kind added in one file: "what is the RELATION of SUBJECT?" with the object's
label as the one answer, and an option of its own (`toy_prefix`).

Importing this module registers the kind; `FACTPROBE_PLUGINS=toy_kind` (with this folder on
PYTHONPATH) makes `factprobe probeset build --kind toy-qa --toy-prefix ...` see it in another
process (tests/test_kinds.py)."""

from __future__ import annotations

from dataclasses import dataclass

from factprobe.probes.declare import option
from factprobe.probes.kinds import KindOptions, ProbeSetKind, register


@dataclass(frozen=True)
class ToyOptions(KindOptions):
    toy_prefix: str = option("Q:", "text before each question.", pattern=r"[^\n]{1,10}")
    toy_limit: int | None = option(None, "at most this many items.", minimum=1, http_limit=100)


class ToyQa(ProbeSetKind):
    name = "toy-qa"
    summary = "one question per fact, answered by the object's label"
    options = ToyOptions
    item_fields = ("question", "answer")

    def build(self, context, facts, options: ToyOptions) -> list[dict]:
        items = [{"id": f"toy-qa:{f.id}", "kind": self.name, "split": "test", **f.fields(),
                  "question": f"{options.toy_prefix} what is the {f.relation_label} of {f.subject_label}?",
                  "answer": f.object_label} for f in facts]
        return items[:options.toy_limit]


register(ToyQa)
