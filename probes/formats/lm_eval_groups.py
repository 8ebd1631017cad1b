"""The per-relation and per-bucket groups of an exported lm-evaluation-harness task, in harness's
own group format (a group YAML listing its subtasks, `aggregate_metric_list` with
`weight_by_size`), so `lm_eval --tasks NAME_by_relation` prints `acc` per relation and the
group's `acc` over all of them, and `NAME_by_bucket` the same per frequency bucket.

Each subtask is a YAML of two lines over the task's own: it `include:`s NAME.yaml (same
documents, prompts and metric) and keeps its slice with `process_docs`, a filter on the
document's `relation` or `bucket` written into utils.py. The slices are grouped as factprobe's
aggregate groups them (probes/measures/breakdowns.py): a document without a value is in "none".
With `weight_by_size` the group's acc is the mean over all documents, the whole task's acc.
A subtask's acc is the mean over its documents: factprobe's accuracy of those items wherever an
item is one document (KDF, IC-LKE, EIC-LKE, mc); for BELIEF-ICL, one document per prompt and
setting, wherever the items have as many of them.

NAME_breakdowns holds both groups, for one `--tasks`: each document is then scored twice, once
in its relation and once in its bucket (harness runs every subtask on its own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..document import bucket_key, natural_key

# The value a document without a relation or bucket is grouped under, as factprobe's aggregate does.
NONE = "none"
GROUP_METRICS = [{"metric": "acc", "aggregation": "mean", "weight_by_size": True}]


@dataclass(frozen=True)
class Subtask:
    name: str  # harness's task name
    field: str  # "relation" or "bucket"
    value: str | None  # the documents' value of `field` (None: "none")
    alias: str  # what harness prints in its table
    function: str  # the filter's name in utils.py

    def config(self, task: str, function_tag) -> dict:
        return {"include": f"{task}.yaml", "task": self.name, "task_alias": self.alias,
                "process_docs": function_tag(f"utils.{self.function}")}


@dataclass(frozen=True)
class Groups:
    """The subtasks and groups of one exported task; empty where no document has a bucket (then
    no bucket group) or where there are no documents."""
    task: str
    subtasks: tuple[Subtask, ...]

    def of(self, field: str) -> tuple[Subtask, ...]:
        return tuple(s for s in self.subtasks if s.field == field)

    def group_names(self) -> tuple[str, ...]:
        names = [f"{self.task}_by_{field}" for field in ("relation", "bucket") if self.of(field)]
        return (*names, f"{self.task}_breakdowns") if len(names) == 2 else tuple(names)

    def documents(self, function_tag) -> dict[str, dict]:
        """Every YAML this adds to the folder: file name -> its settings (`function_tag` makes a
        `!function` reference)."""
        out = {f"{s.name}.yaml": s.config(self.task, function_tag) for s in self.subtasks}
        by_field = [f for f in ("relation", "bucket") if self.of(f)]
        for field in by_field:
            name = f"{self.task}_by_{field}"
            out[f"{name}.yaml"] = {"group": name, "group_alias": f"{self.task} by {field}",
                                   "task": [s.name for s in self.of(field)],
                                   "aggregate_metric_list": GROUP_METRICS, "metadata": {"version": 1.0}}
        if len(by_field) == 2:
            name = f"{self.task}_breakdowns"
            out[f"{name}.yaml"] = {"group": name, "task": [f"{self.task}_by_{f}" for f in by_field],
                                   "aggregate_metric_list": GROUP_METRICS, "metadata": {"version": 1.0}}
        return out

    def utils_source(self) -> str:
        """utils.py's filters, one per subtask."""
        if not self.subtasks:
            return ""
        lines = ["", "", "def _keep(field, value):",
                 '    """process_docs of a group\'s subtask: the documents whose `field` is `value`."""',
                 "    def process_docs(dataset):",
                 "        return dataset.filter(lambda doc: doc[field] == value)",
                 "    return process_docs", ""]
        lines += [f"{s.function} = _keep({s.field!r}, {s.value!r})" for s in self.subtasks]
        return "\n".join(lines) + "\n"


def groups_of(task: str, docs: list[dict], relation_labels: dict[str, str]) -> Groups:
    """The task's subtasks: one per relation (natural order, P17 before P36) and, where some
    document has a bucket, one per bucket (by lower edge, "none" last)."""
    subtasks: list[Subtask] = []
    for field, order in (("relation", natural_key), ("bucket", bucket_key)):
        values = {d.get(field) for d in docs}
        if field == "bucket" and values <= {None}:
            continue
        used: set[str] = set()
        for value in sorted(values, key=lambda v: order(NONE if v is None else str(v))):
            shown = NONE if value is None else str(value)
            slug = _unique(_slug(shown), used)
            label = relation_labels.get(shown) if field == "relation" else None
            subtasks.append(Subtask(f"{task}_{field}_{slug}", field, value,
                                    f"{shown} {label}" if label else shown, f"{field}_{slug}"))
    return Groups(task, tuple(subtasks))


def is_group_file(name: str, task: str) -> bool:
    """A YAML this module writes for `task` (an earlier export's, maybe of other relations)."""
    return re.fullmatch(re.escape(task) + r"_(?:(?:relation|bucket)_[A-Za-z0-9_]+|by_relation|by_bucket|breakdowns)"
                        r"\.yaml", name) is not None


def _slug(value: str) -> str:
    """A bucket "[10,100)" as 10_100, a relation P36 as P36: harness's task names and Python's."""
    return re.sub(r"[^A-Za-z0-9]+", "_", value).strip("_") or "x"


def _unique(slug: str, used: set[str]) -> str:
    candidate, k = slug, 2
    while candidate in used:
        candidate, k = f"{slug}_{k}", k + 1
    used.add(candidate)
    return candidate
