"""`factprobe templates ...`: the relation templates probe sets are written from, and more of them
through an OpenAI-compatible model."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import click

from .errors import EXIT_PARTIAL, EXIT_USAGE, fail
from .options import FolderPath, json_option
from .outputs import overwrite_option
from .terminal import echo

templates_option = click.option(
    "--templates", "template_dirs", multiple=True, type=FolderPath("input"),
    help="User template folder, merged after the shipped templates; repeatable "
         "[default: the folders in FACTPROBE_TEMPLATES, os.pathsep-separated].")



def _load(template_dirs, extra: tuple[Path, ...] = ()):
    from ..probes.templates import TemplateError, load_templates, template_dirs_from_env

    dirs = [Path(d) for d in template_dirs] if template_dirs else template_dirs_from_env()
    try:
        return load_templates([*dirs, *extra])
    except TemplateError as error:
        fail(str(error), EXIT_USAGE)
        raise  # unreachable


def _relation(text: str, loaded) -> str:
    """A relation argument, a P-id or a label (kg/relations.py), read against these templates' labels."""
    from ..kg.relations import resolve_relation

    try:
        return resolve_relation(None, text, lambda: {r: (e.label,) for r, e in loaded.items() if e.label})
    except ValueError as error:
        fail(str(error), EXIT_USAGE)


@click.group("templates")
def templates_group() -> None:
    """Cloze and QA templates per relation: [X] is the subject, [Y] the object.

    \b
    One YAML file per relation (P36.yaml): `relation`, `label`, optional `description`, and the
    lists `cloze` (exactly one [X] and one [Y]) and `qa` (one [X], no [Y]) of
    {text: ..., source: manual|generated}; optionally `kdf` (the KDF paper's sentence, [X] and
    [Y]) and `languages` (zh: {label, cloze, qa, kdf}: the same in another language; the top
    level is English). Shipped templates cover the LAMA T-REx relations and the KDF relations;
    folders given with --templates (or FACTPROBE_TEMPLATES) add to them per relation.

    \b
      factprobe templates list
      factprobe templates show P36
      factprobe templates check my-templates/
      factprobe templates paraphrase --relation P36 --n 10 --model gpt-4o-mini --out my-templates/
      factprobe templates import --format lama data/relations.jsonl --out lama-templates/
    """


@templates_group.command("list")
@templates_option
@json_option
def list_cmd(template_dirs, as_json):
    """Every relation with templates: its label and how many manual / generated cloze and QA templates."""
    rows = [{"relation": e.relation, "label": e.label, "manual": len(e.manual_cloze),
             "generated": len(e.generated_cloze), "qa": len(e.qa)} for e in _load(template_dirs).values()]
    if as_json:
        echo(json.dumps(rows, ensure_ascii=False))
        return
    echo(f"{'relation':<9} {'label':<50} {'manual':>6} {'generated':>9} {'qa':>3}")
    for r in rows:
        echo(f"{r['relation']:<9} {r['label'][:50]:<50} {r['manual']:>6} {r['generated']:>9} {r['qa']:>3}")
    echo(f"{len(rows)} relations")


@templates_group.command("show")
@click.argument("relation")
@templates_option
@json_option
def show(relation, template_dirs, as_json):
    """One relation's templates, in order (shipped first, then user folders); RELATION is its id or label."""
    loaded = _load(template_dirs)
    entry = loaded.get(_relation(relation, loaded))
    if entry is None:
        fail(f"no templates for {relation} (see `factprobe templates list`)", EXIT_USAGE)
    if as_json:
        echo(json.dumps(asdict(entry), ensure_ascii=False))
        return
    echo(f"{entry.relation} {entry.label}" + (f": {entry.description}" if entry.description else ""))
    for kind in ("cloze", "qa"):
        echo(f"{kind}:")
        for t in getattr(entry, kind):
            echo(f"  [{t.source:<9}] {t.text}" + (f"  ({t.origin})" if t.origin else ""))
    if entry.kdf is not None or entry.label:
        echo(f"kdf: {entry.kdf_question()}")
    for other in entry.other_languages:
        echo(f"{other.language}: {other.label}")
        for t in other.qa + other.cloze:
            echo(f"  {t.kind:<5} [{t.source:<9}] {t.text}" + (f"  ({t.origin})" if t.origin else ""))
        if other.kdf is not None:
            echo(f"  kdf   {other.kdf_question()}")


@templates_group.command("check")
@click.argument("dirs", nargs=-1, required=True, type=FolderPath("input"))
@json_option
def check(dirs, as_json):
    """Validate user template folders: every *.yaml/*.yml file must be a relation's templates
    (file named by the relation id, known keys only, slots right, source manual or generated).
    Prints every problem, naming the file and the entry; exit 2 if there is any."""
    from ..probes.templates import TemplateError, load_file, template_files

    errors, summary = [], []
    for folder in dirs:
        try:
            files = template_files(folder)
        except TemplateError as error:
            errors.append(str(error))
            continue
        entries = []
        for path in files:
            try:
                entries.append(load_file(path))
            except TemplateError as error:
                errors.append(str(error))
        summary.append({"dir": folder, "files": len(files), "relations": sorted({e.relation for e in entries}),
                        "cloze": sum(len(e.cloze) for e in entries), "qa": sum(len(e.qa) for e in entries)})
    if as_json:
        echo(json.dumps({"ok": not errors, "dirs": summary, "errors": errors}))
    else:
        for s in summary:
            echo(f"{s['dir']}: {s['files']} files, {len(s['relations'])} relations, "
                       f"{s['cloze']} cloze and {s['qa']} QA templates")
    for error in errors:
        echo(f"error: {error}", err=True)
    if errors:
        sys.exit(EXIT_USAGE)


@templates_group.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--format", "fmt", type=click.Choice(["lama", "pararel", "mlama"]), required=True,
              help="lama: LAMA's relations.jsonl (relation, template, label); pararel: ParaRel's "
                   "pattern_data/graphs_json/P*.jsonl (one paraphrase per row, the relation from the file name); "
                   "mlama: mLAMA's templates.jsonl (LAMA's rows in the language its folder names).")
@click.option("--out", "out_dir", type=FolderPath(), required=True,
              help="User template folder: one PXXX.yaml per relation, added to a template file already there.")
@click.option("--language", default=None, help="mlama: the templates' language where the folder does not name it.")
@click.option("--relation", default=None, help="pararel: the relation where the file's name does not say it (P19.jsonl does).")
@overwrite_option
@json_option
def import_cmd(files, fmt, out_dir, language, relation, overwrite, as_json):
    """Read other probing work's template files into factprobe's: each template's words exactly as
    written (LAMA's "[X] was born in [Y] ." keeps its space), manual, with the file and line it came
    from (`origin`). A row that is no template is named by file and line and skipped (exit 3).
    Use the folder with --templates (or FACTPROBE_TEMPLATES).

    \b
      factprobe templates import --format lama data/relations.jsonl --out lama-templates/
      factprobe templates import --format pararel pattern_data/graphs_json/P*.jsonl --out pararel-templates/
      factprobe templates import --format mlama mlama1.1/fr/templates.jsonl --out mlama-templates/
    """
    from ..probes.templates import TemplateError
    from ..probes.templates.imported import read_templates, write_templates

    try:
        found = read_templates(fmt, files, language=language, relation=relation)
    except (ValueError, OSError, UnicodeDecodeError) as error:
        fail(str(error), EXIT_USAGE)
    out = Path(out_dir)
    relations = sorted({r for r, _ in found.found})
    replaced = _claim_relation_files(out, relations, overwrite) if relations else set()
    try:
        written = write_templates(found, out, fresh=replaced)
    except TemplateError as error:
        fail(str(error), EXIT_USAGE)
    for line in found.rejected:
        echo(f"rejected {line}", err=True)
    templates = sum(len(e.cloze) for e in found.found.values())
    if as_json:
        echo(json.dumps({"rows": found.rows, "templates": templates, "relations": relations,
                         "files": [str(p) for p in written], "rejected": found.rejected}))
    else:
        echo(f"{templates} templates of {len(relations)} relations from {found.rows} {fmt} rows -> {out}"
             + (f"; {len(found.rejected)} rejected" if found.rejected else ""))
    if found.rejected:
        sys.exit(EXIT_PARTIAL)


@templates_group.command("paraphrase")
@click.option("--relation", "relations", multiple=True, required=True,
              help="Relation id (P36) or its templates' label (capital); repeatable.")
@click.option("--n", type=click.IntRange(min=1), default=10, show_default=True,
              help="New templates wanted per relation.")
@click.option("--model", required=True, help="Model name on the server, e.g. gpt-4o-mini or a llama.cpp alias.")
@click.option("--base-url", default=None,
              help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 [default: OPENAI_BASE_URL, "
                   "else the hosted OpenAI API]. The key comes from OPENAI_API_KEY.")
@click.option("--out", "out_dir", type=FolderPath(), required=True,
              help="User template folder: new templates are appended to OUT/PXXX.yaml as generated.")
@click.option("--seed", type=int, default=0, show_default=True, help="Sampling seed of the first request.")
@click.option("--temperature", type=click.FloatRange(min=0), default=0.8, show_default=True,
              help="Sampling temperature; some randomness gives varied rephrasings.")
@click.option("--max-requests", type=click.IntRange(min=1), default=3, show_default=True,
              help="Requests per relation before giving up on reaching --n.")
@click.option("--completions", is_flag=True, help="Use the completions endpoint: the model continues a list of the templates, which base "
                   "and small models do far better than following the chat instruction.")
@templates_option
@click.option("--quiet", is_flag=True, help="No progress bar.")
@overwrite_option
@json_option
def paraphrase_cmd(relations, n, model, base_url, out_dir, seed, temperature, max_requests, completions,
                   template_dirs, quiet, overwrite, as_json):
    """Ask a model to rephrase each relation's manual cloze templates, keep the candidates with
    exactly one [X] and one [Y] that are not already there (shipped, --templates or OUT), and append
    them to OUT/PXXX.yaml as `generated`. Review them there: edit, delete, or mark manual."""
    from tqdm import tqdm

    from ..probes.templates.paraphrase import ParaphraseError, make_client, paraphrase, write_generated

    out = Path(out_dir)
    named = _load(template_dirs)
    wanted = [_relation(r, named) for r in relations]
    replaced = _claim_relation_files(out, wanted, overwrite)
    # OUT's templates count as already there, unless a file of them is to be replaced (it does not read)
    loaded = _load(template_dirs, (out,) if out.is_dir() and not replaced else ())
    for relation in wanted:
        if relation not in loaded:
            fail(f"no templates for {relation} to rephrase (see `factprobe templates list`)", EXIT_USAGE)
        if not loaded[relation].manual_cloze:
            fail(f"{relation} has no manual cloze templates to rephrase", EXIT_USAGE)
    results = []
    try:
        client = make_client(base_url)
        for relation in tqdm(wanted, unit=" relations", disable=quiet, file=sys.stderr, leave=False,
                             dynamic_ncols=True):
            entry = loaded[relation]
            result = paraphrase(entry, n, client, model, seed, chat=not completions, temperature=temperature,
                                max_requests=max_requests)
            path = (write_generated(out, relation, result.added, label=entry.label, fresh=relation in replaced)
                    if result.added else None)
            results.append((entry, result, path))
    except ParaphraseError as error:
        fail(str(error), EXIT_USAGE)
    if as_json:
        echo(json.dumps([{"relation": r.relation, "added": [t.text for t in r.added],
                                "duplicates": len(r.duplicates), "lost_slot": len(r.lost_slot),
                                "parsed": r.parsed, "requests": r.requests, "file": str(p) if p else None}
                               for _, r, p in results], ensure_ascii=False))
        return
    for entry, r, path in results:
        echo(f"{r.relation} ({entry.label}): {len(r.added)} added, {len(r.duplicates)} duplicates, "
                   f"{len(r.lost_slot)} lost a slot ({r.parsed} lines, {r.requests} requests)"
                   + (f" -> {path}" if path else ""))
    total = [sum(len(getattr(r, k)) for _, r, _ in results) for k in ("added", "duplicates", "lost_slot")]
    echo(f"total: {total[0]} added, {total[1]} duplicates, {total[2]} lost a slot")


def _claim_relation_files(out: Path, relations: list[str], overwrite: bool) -> set[str]:
    """OUT/PXXX.yaml of each relation, claimed before any request (kg/outputs.py): a template
    file is added to; another file is refused unless `overwrite`, and then replaced (the
    relations returned); a link, always."""
    from ..kg.outputs import Claim, claim_file, claim_folder, inside
    from ..probes.templates import TemplateError, load_file

    def ours(path: Path) -> bool:
        try:
            load_file(path)
        except TemplateError:
            return False
        return True

    claim_folder(out, overwrite=True)  # a template folder holds the user's own files too: only a file is refused
    replaced = set()
    for relation in relations:
        path = inside(out, f"{relation}.yaml")
        inside(out, f"{relation}.yaml.partial")
        if claim_file(path, overwrite=overwrite, ours=ours, what="a template file") is Claim.REPLACE:
            replaced.add(relation)
    return replaced

