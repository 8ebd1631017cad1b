"""BELIEF-ICL's questions: what one greedy answer (and, on a sampled prompt, its samples) is asked
for. A belief-icl item is one question, its demonstrations built in (`probeset build --kind
belief-icl`); a cloze item (a MyriadLAMA import, `--kind cloze`) is one question per prompt, its
demonstrations drawn here from the set's own items as the paper's settings say (000:92):
x-random other subjects' pairs of any relation, each under a random template of its relation;
x-relation the question's relation under random templates of it; x-template the question's
relation under the question's template; never the question's subject (000:94). The QA style
(000, appendix D) asks only question templates ("Who developed [X]? [Y].") as questions.
"""

from __future__ import annotations

import random
import re
from typing import Callable, Iterable, Sequence

from ..kinds.sampling import AllBut
from ..templates import fill

MP, QA = "mp", "qa"  # mask-prediction style (the paper's main) and question-answer style (appendix D)
STYLES = (MP, QA)
QA_INSTRUCTION = "Answer each question in one word."  # 000_d5e47173cc9830b1.txt:500
# A question template: a question ending in "?" with [X] in it, then [Y] and at most punctuation.
_QUESTION = re.compile(r"(?s)(?P<question>[^\[\]]*\[X\][^\[\]]*\?)\s*\[Y\][\s.!]*")


def qa_question(template: str) -> str | None:
    """The question of a QA-style template, [X] unfilled ("Who developed [X]? [Y]." -> "Who
    developed [X]?"); None for a template that is no question."""
    found = _QUESTION.fullmatch(template.strip())
    return found["question"].strip() if found else None


def pair_key(item: dict) -> str:
    """The subject-relation pair an item asks about: its subject's id, else its label."""
    return f"{item.get('subject') or item.get('subject_label')}|{item.get('relation')}"


def is_cloze(item: dict) -> bool:
    """A cloze item (prompts, no demonstrations); ValueError naming an item of neither shape."""
    if "demonstrations" in item and "prompt" in item:
        return False
    if isinstance(item.get("prompts"), list):
        return True
    raise ValueError(f"{item.get('id')}: neither a belief-icl item (prompt, demonstrations) nor a cloze item "
                     "(prompts): belief-icl reads the sets `probeset build --kind belief-icl` or `--kind cloze` and "
                     "`probeset import --format myriadlama` write")


def asked(item: dict, style: str) -> list[int]:
    """Positions of a cloze item's prompts asked in `style`: every one, or the QA-style ones."""
    prompts = item["prompts"]
    return [k for k, p in enumerate(prompts) if style == MP or qa_question(p.get("template", ""))]


class ClozePool:
    """The demonstrations of a cloze set: its items by relation, each relation's templates (those
    of the style), and each subject's positions to leave out (`AllBut`, not copied per draw)."""

    def __init__(self, items: Iterable[dict], style: str) -> None:
        items, self.style = list(items), style
        self.templates: dict[str, list[str]] = {}
        for item in items:
            for k in asked(item, style):
                texts = self.templates.setdefault(item.get("relation"), [])
                if item["prompts"][k]["template"] not in texts:
                    texts.append(item["prompts"][k]["template"])
        # only pairs of a relation with templates of the style can be shown
        self.items = [i for i in items if i.get("relation") in self.templates]
        self.subject_at = _positions(range(len(self.items)), self.items)
        self.relation_at: dict[str, list[int]] = {}
        for k, item in enumerate(self.items):
            self.relation_at.setdefault(item.get("relation"), []).append(k)
        self.subject_in = {r: _positions(ks, self.items) for r, ks in self.relation_at.items()}

    def draw(self, item: dict, template: str, rng: random.Random, shots: int) -> dict[str, list[dict]]:
        """Every setting's demonstrations for one (item, template), in the kind's order of draws."""
        subject, relation = item.get("subject") or item.get("subject_label"), item.get("relation")
        any_relation = AllBut(range(len(self.items)), self.subject_at.get(subject, []))
        same = AllBut(self.relation_at.get(relation, []), self.subject_in.get(relation, {}).get(subject, []))

        def demos(pool: Sequence[int], template_of: Callable[[dict], str]) -> list[dict]:
            return [_demo(self.items[k], template_of(self.items[k])) for k in rng.sample(pool, min(shots, len(pool)))]

        return {"zero-shot": [],
                "x-random": demos(any_relation, lambda d: rng.choice(self.templates[d.get("relation")])),
                "x-relation": demos(same, lambda d: rng.choice(self.templates[relation])),
                "x-template": demos(same, lambda d: template)}


def cloze_questions(item: dict, pool: ClozePool, rng_of: Callable[..., random.Random], shots: int) -> list[dict]:
    """A cloze item's asked prompts as questions, each with its demonstrations, drawn once per
    (item, template) so a template's subject expressions share them."""
    drawn: dict[str, dict] = {}
    out = []
    for k in asked(item, pool.style):
        prompt = item["prompts"][k]
        template = prompt["template"]
        if template not in drawn:
            rng = rng_of("belief-icl", "demonstrations", item["id"], str(prompt.get("template_id", template)))
            drawn[template] = pool.draw(item, template, rng, shots)
        out.append({"id": item["id"], "index": k, "relation": item.get("relation"), "template": template,
                    "template_id": prompt.get("template_id"), "subject_name": prompt.get("subject_name"),
                    "prompt": prompt["text"], "demonstrations": drawn[template]})
    return out


def check_qa(item: dict) -> None:
    """A belief-icl item asked in the QA style: its template and its demonstrations' are questions."""
    templates = [item.get("template", ""), *(d.get("template", "") for ds in item["demonstrations"].values()
                                             for d in ds)]
    for template in templates:
        if not qa_question(template):
            raise ValueError(f"prompt_style=qa: item {item['id']}'s template {template!r} is not a question "
                             "(\"Who developed [X]? [Y].\"); the QA style asks MyriadLAMA's question templates")


def _positions(positions: Iterable[int], items: Sequence[dict]) -> dict[str, list[int]]:
    """Subject -> its positions among `positions` (ascending, as AllBut skips them)."""
    where: dict[str, list[int]] = {}
    for j, k in enumerate(positions):
        item = items[k]
        where.setdefault(item.get("subject") or item.get("subject_label"), []).append(j)
    return where


def _demo(item: dict, template: str) -> dict:
    # the labels let the method rebuild the cloze with a mask, or the question (the Q lines)
    return {"fact": item.get("fact"), "relation": item.get("relation"), "template": template,
            "subject_label": item["subject_label"], "object_label": item["object_label"],
            "text": fill(template, item["subject_label"], item["object_label"])}
