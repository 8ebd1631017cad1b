"""Naming a relation: by its P-id, or by its label. `resolve_relation` is the one reading of what a
person wrote where a relation is asked for (the commands' --relation, a pipeline file's
`relations`, the service's `relation` and `relations`), so "official language" means P37 wherever
P37 does, and a name that could mean two relations is refused with both.

A P-id passes as it is. Any other text is matched, case and spacing aside, against the labels the
store holds for its properties (in every language it keeps): an exact label first, else the labels
it begins. Where none of the store's match, the labels a caller passes (the templates shipped
in probes/) are tried the same way, for the relations the store holds no label of. One match is
the relation; none or several, a ValueError in one line.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence

from .graph import KnowledgeGraph

PROPERTY_ID = re.compile(r"P[1-9][0-9]{0,9}")
# What a relation's name may be where a P-id or a label is taken (a declared option's pattern, a
# query parameter's): text of a label's length (Wikidata's limit, 250) without control characters.
RELATION_NAME = r"[^\x00-\x1f\x7f]{1,250}"

Labels = Mapping[str, Sequence[str]]  # relation id -> its labels, the one to show first


def is_property_id(text: str) -> bool:
    return PROPERTY_ID.fullmatch(text.strip().upper()) is not None


def store_labels(kg: KnowledgeGraph) -> dict[str, tuple[str, ...]]:
    """Property id -> its labels in the store: its display label first, then its labels in every
    language the store keeps (aliases are left out: Wikidata keeps a label unique among
    properties per language, not an alias)."""
    found: dict[str, list[str]] = {}
    rows = kg.conn.execute(
        "SELECT e.id, e.label, n.text FROM entities e LEFT JOIN names n ON n.entity = e.id AND n.is_alias = 0 "
        "WHERE e.kind = 'property' ORDER BY e.id, n.lang, n.text")
    for pid, label, text in rows:
        names = found.setdefault(pid, [label] if label else [])
        if text and text not in names:
            names.append(text)
    return {pid: tuple(names) for pid, names in found.items() if names}


def resolve_relation(kg: KnowledgeGraph | None, text: str,
                     fallback: Callable[[], Labels] | None = None) -> str:
    """The relation id `text` names: a P-id (any case, spaces around it dropped) as it is, or the
    one relation whose label it is (see the module's docstring). `kg`: the store whose labels
    count (None: `fallback`'s only); `fallback`: called only when `text` is no P-id, for the labels
    of relations the store does not label (tried where none of the store's match). ValueError naming `text` and the close labels when no
    relation has it, and the candidates ("P17 (country), P495 (country of origin)") when several do."""
    name = " ".join(str(text).split())
    if is_property_id(name):
        return name.upper()
    if not name:
        raise ValueError("an empty relation name: give a P-id (P37) or a label (official language)")
    labels = store_labels(kg) if kg is not None else {}
    # the fallback's labels only where the store has no match, and only of relations it does not label
    more = {pid: tuple(names) for pid, names in (fallback() if fallback is not None else {}).items()
            if pid not in labels and names}
    found = candidates(name, labels) or candidates(name, more)
    if len(found) == 1:
        return found[0]
    labels = {**labels, **more}
    if found:
        shown = ", ".join(f"{pid} ({labels[pid][0]})" for pid in found[:10])
        rest = f" and {len(found) - 10} more" if len(found) > 10 else ""
        raise ValueError(f"relation {text!r} is ambiguous: {shown}{rest}; give its P-id or its whole label")
    spelled = {_folded(label): (pid, label) for pid, names in labels.items() for label in names}
    close = [spelled[n] for n in difflib.get_close_matches(_folded(name), list(spelled), n=3, cutoff=0.6)]
    where, listing = ((f"in {kg.path.name}", "factprobe kg relations") if kg is not None else
                      ("among the templates", "factprobe templates list"))
    hint = ("did you mean " + ", ".join(f"{label!r} ({pid})" for pid, label in close) + "?") if close else \
        f"`{listing}` lists the relations and their labels"
    raise ValueError(f"no relation labelled {text!r} {where}; {hint}")


def candidates(text: str, labels: Labels) -> list[str]:
    """The relations of `labels` with a label equal to `text` (case and spacing aside), else those
    with a label that begins with it, in id order."""
    key = _folded(text)
    folded = {pid: [_folded(n) for n in names] for pid, names in labels.items()}
    found = [pid for pid, names in folded.items() if key in names] or \
            [pid for pid, names in folded.items() if any(n.startswith(key) for n in names)]
    return sorted(found, key=_id_order)


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def _id_order(pid: str) -> tuple:
    return (len(pid), pid)  # P17 before P131 before P1376: numeric order for P-ids
