"""More cloze templates from an OpenAI-compatible model: it rephrases a relation's manual templates,
and what comes back is cleaned (one template per line, both slots kept exactly once, no duplicate of
an existing or another new template) and stored as `generated` in a user folder, for review."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ...kg.outputs import replace_file
from . import RelationTemplates, Template, TemplateError, dump, load_file, normalize, slot_problem

# Numbering and bullets that models put in front of list lines, and quotes around them.
LIST_MARKER = re.compile(r"^\s*(?:[-*\u2022]+|\(?\d{1,3}[.):]|[a-z][.)])\s+")
QUOTES = "\"'`\u201c\u201d\u2018\u2019"


class ParaphraseError(RuntimeError):
    """Config missing, server unreachable or refusing: a one-line message for the user."""


@dataclass(frozen=True)
class ParaphraseResult:
    relation: str
    added: tuple[Template, ...]  # new templates, source "generated"
    duplicates: tuple[str, ...]  # lines equal (normalized) to an existing or an earlier new template
    lost_slot: tuple[str, ...]  # lines without exactly one [X] and one [Y] (chatter included)
    requests: int

    @property
    def parsed(self) -> int:
        """Candidate lines examined; every one is added, a duplicate, or lost a slot."""
        return len(self.added) + len(self.duplicates) + len(self.lost_slot)


def make_client(base_url: str | None = None, api_key: str | None = None, *, timeout: float = 120.0,
                max_retries: int = 2):
    """An `openai.OpenAI` client; base URL and key from the arguments or OPENAI_BASE_URL / OPENAI_API_KEY."""
    try:
        from openai import OpenAI
    except ImportError:
        raise ParaphraseError("paraphrasing needs the openai package: pip install 'factprobe[openai]'") from None
    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    api_key = api_key or os.environ.get("OPENAI_API_KEY")
    if not base_url and not api_key:
        raise ParaphraseError("no model server configured: set OPENAI_BASE_URL (an OpenAI-compatible server, "
                              "or pass --base-url) or OPENAI_API_KEY (the hosted OpenAI API)")
    # Local servers often need no key, but the client insists on one.
    return OpenAI(base_url=base_url, api_key=api_key or "none", timeout=timeout, max_retries=max_retries)


def build_prompt(entry: RelationTemplates, n: int, *, chat: bool = True) -> str:
    """An instruction for chat models; for the completions endpoint a list to continue, which base
    and small models follow far better than an instruction."""
    label = entry.label or entry.relation
    if not chat:
        return (f"Sentences that express the relation \"{label}\" between a subject [X] and an object [Y], "
                "each with [X] and [Y] exactly once:\n" + "".join(f"- {t.text}\n" for t in entry.manual_cloze) + "-")
    examples = "\n".join(t.text for t in entry.manual_cloze)
    return (f"Here are sentence templates for the relation \"{label}\". [X] stands for the subject and [Y] "
            f"for the object.\n\n{examples}\n\n"
            f"Write {n} new templates that say the same thing in different words. Copy [X] and [Y] literally, "
            "exactly once each, with the square brackets. Write one template per line and nothing else.")


def parse_lines(text: str) -> list[str]:
    """Candidate templates in a model's answer: its non-empty lines without list markers or quotes."""
    out = []
    for line in text.splitlines():
        line = LIST_MARKER.sub("", line).strip().strip(QUOTES).strip()
        line = " ".join(line.split())
        if line:
            out.append(line)
    return out


def paraphrase(entry: RelationTemplates, n: int, client, model: str, seed: int = 0, *, chat: bool = True,
               temperature: float = 0.8, max_requests: int = 3, max_tokens: int | None = None) -> ParaphraseResult:
    """Up to `n` new cloze templates for `entry` (pass it merged with every folder the result will
    join, so that duplicates of those are caught). Asks again, with the next seed, until `n` are new
    or `max_requests` were made; lines after the n-th new one are not examined."""
    if not entry.manual_cloze:
        raise ParaphraseError(f"{entry.relation}: no manual cloze templates to rephrase")
    added: list[Template] = []
    duplicates: list[str] = []
    lost: list[str] = []
    prompt = build_prompt(entry, n, chat=chat)
    requests = 0
    while len(added) < n and requests < max_requests:
        answer = _ask(client, model, prompt, chat=chat, seed=seed + requests, temperature=temperature,
                      max_tokens=max_tokens or 24 * n + 48)
        requests += 1
        known = [*(t.text for t in entry.cloze), *(t.text for t in added)]
        screened = screen_lines(parse_lines(answer), known, n - len(added))
        added += screened.added
        duplicates += screened.duplicates
        lost += screened.lost_slot
    return ParaphraseResult(entry.relation, tuple(added), tuple(duplicates), tuple(lost), requests)


@dataclass(frozen=True)
class Screened:
    added: tuple[Template, ...]  # source "generated", kind "cloze"
    duplicates: tuple[str, ...]
    lost_slot: tuple[str, ...]


def screen_lines(lines: Sequence[str], known: Sequence[str], limit: int) -> Screened:
    """Sort candidate lines (from `parse_lines`) without asking any model, so the rules are testable
    alone: a line without exactly one [X] and one [Y] lost a slot; a line equal (normalized) to a
    `known` text or to an earlier line is a duplicate; the rest are new generated templates, up to
    `limit` of them (lines after the last one taken are not examined)."""
    seen = {normalize(text) for text in known}
    added: list[Template] = []
    duplicates: list[str] = []
    lost: list[str] = []
    for line in lines:
        if len(added) >= limit:
            break
        if slot_problem(line, "cloze"):
            lost.append(line)
        elif normalize(line) in seen:
            duplicates.append(line)
        else:
            seen.add(normalize(line))
            added.append(Template(line, "generated", "cloze"))
    return Screened(tuple(added), tuple(duplicates), tuple(lost))


def _ask(client, model: str, prompt: str, *, chat: bool, seed: int, temperature: float, max_tokens: int) -> str:
    import openai

    where = str(client.base_url).rstrip("/")
    common = dict(model=model, temperature=temperature, seed=seed, max_tokens=max_tokens)
    try:
        if chat:
            response = client.chat.completions.create(messages=[{"role": "user", "content": prompt}], **common)
            return (response.choices[0].message.content or "") if response.choices else ""
        response = client.completions.create(prompt=prompt, **common)
        return response.choices[0].text if response.choices else ""
    except openai.APIConnectionError as error:  # timeouts included
        raise ParaphraseError(f"cannot reach the OpenAI-compatible server at {where}: "
                              f"{_one_line(error.__cause__ or error)}") from None
    except openai.APIStatusError as error:
        raise ParaphraseError(f"{where} refused the request (HTTP {error.status_code}): {_one_line(error.message)}") from None
    except openai.OpenAIError as error:
        raise ParaphraseError(f"{where}: {_one_line(error)}") from None


def _one_line(error: object) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def write_generated(directory: Path | str, relation: str, templates: Sequence[Template], *, label: str = "",
                    description: str | None = None, fresh: bool = False) -> Path:
    """Append `templates` (stored as generated cloze/QA templates) to DIRECTORY/RELATION.yaml, creating
    it if missing (`fresh`: replacing what is there). The file is rewritten in the shipped layout
    (comments in it are not kept), never through a link; texts it already has are skipped."""
    path = Path(directory) / f"{relation}.yaml"
    try:
        old = (load_file(path) if path.exists() and not fresh
               else RelationTemplates(relation, label, description=description))
    except TemplateError as error:
        raise ParaphraseError(f"cannot add to {path}: {error}") from None
    new = [replace(t, source="generated") for t in templates]
    for t in new:
        problem = slot_problem(t.text, t.kind)
        if problem:
            raise ValueError(f"{t.text!r} {problem}")
    entry = old.merged(RelationTemplates(relation, label, tuple(t for t in new if t.kind == "cloze"),
                                         tuple(t for t in new if t.kind == "qa"), description))
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, dump(entry))  # written beside and renamed: a killed run leaves the old file
    return path
