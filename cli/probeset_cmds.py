"""`factprobe probeset`: build probe sets from the store, and count what a probe set holds."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import click

from ..kg.outputs import Claim
from ..probes.formats.importers import FORMATS, LANGUAGE_FORMATS, OWN_READER, import_items
from .errors import EXIT_PARTIAL, EXIT_USAGE, fail, os_error_line
from .options import RenamedOption, json_option, store_option
from .outputs import overwrite_option
from .terminal import echo



@click.group("probeset")
def probeset_group() -> None:
    """Probe sets: JSONL items (+ Parquet) with a sidecar NAME.meta.json holding the build's
    parameters, seed and source statistics. The same command, graph and seed rebuild the same
    bytes on any day: without --at, facts are true at the graph's own date (its latest revision).

    \b
    factprobe probeset build --kind cloze --relation P36 --relation P19 --per-relation 100 --out cloze.jsonl
    factprobe probeset build --kind icl-mc --out mc.jsonl --choices 100 --demo-fraction 0.2
    factprobe probeset build --kind kdf --corpus wiki --per-bucket 50 --out kdf.jsonl
    factprobe probeset build --kind distractor --strategy sem --strategy temp+sem --semantic idx --out d.jsonl
    factprobe probeset stats cloze.jsonl
    """


class BuildCommand(click.Command):
    """`probeset build`, whose options come from the registered kinds' declarations
    (cli/build_options.py) when the command runs, so kinds registered in-process or named by
    FACTPROBE_PLUGINS bring their options along."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        from .build_options import click_params

        # The same objects on every call for one command line: click processes the options given in
        # the order given by finding them among these, and fresh ones would all come last, after --kind.
        declared = ctx.meta.get("factprobe.build_params")
        if declared is None:
            try:
                declared = ctx.meta["factprobe.build_params"] = click_params()
            except ImportError as error:  # a module FACTPROBE_PLUGINS names
                raise click.ClickException(str(error)) from error
        help_option = self.get_help_option(ctx)
        return [*self.params[:3], *declared, *self.params[3:], *([help_option] if help_option else [])]


class KindChoice(click.Choice):
    """--kind's choices: the kind registry as it is when the command runs."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from ..probes.kinds import registered

        return tuple(registered())

    @choices.setter
    def choices(self, value) -> None:  # click.Choice.__init__ sets it; the registry is the source
        pass


class KindOption(click.Option):
    """--kind's help: each registered kind and its summary, written when help is asked for."""

    def get_help_record(self, ctx):
        from ..probes.kinds import registered

        self.help = "; ".join(f"{name}: {cls.summary}" for name, cls in registered().items()) + "."
        return super().get_help_record(ctx)


@probeset_group.command("build", cls=BuildCommand)
@click.option("--kind", cls=KindOption, type=KindChoice(), required=True)
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True, help="The JSONL to write.")
@store_option
@click.option("--quiet", is_flag=True, help="No progress notes.")
@overwrite_option
@json_option
@click.pass_context
def build(ctx, kind, out_path, store, quiet, overwrite, as_json, **_options):
    """Build a probe set from the store. The options below are the fact selection's (every
    kind) and each kind's own; an option of another kind is refused. The defaults follow the
    papers; the sidecar records every value used. A probe set already at --out is rebuilt in
    place only when the same request makes the same items (--overwrite replaces it anyway)."""
    from ..probes.building.build import build_request
    from .build_options import given_values
    from .steps import Console, build_step

    console = Console(quiet=quiet or as_json, say=(lambda _: None) if as_json else echo,
                      note=lambda text: echo(text, err=True))
    try:
        request = build_request(kind, given_values(ctx))
        meta = build_step(store, out_path, request, console, overwrite=overwrite)
    except (ValueError, FileNotFoundError, RuntimeError) as error:
        fail(str(error), EXIT_USAGE)
    except OSError as error:  # a full disk while writing: the file named, nothing of it kept, an earlier set whole
        fail(os_error_line(error), EXIT_PARTIAL)
    if as_json:
        echo(json.dumps({"out": out_path, **meta.to_dict()}))


@probeset_group.command("stats")
@click.argument("path", type=click.Path(dir_okay=False, exists=True))
@json_option
def stats(path, as_json):
    """Items per relation, per frequency bucket and per split."""
    from ..probes.building.probeset import probeset_stats, read_items

    try:
        counted = probeset_stats(read_items(path))
    except ValueError as error:
        fail(str(error), EXIT_USAGE)
    if as_json:
        echo(json.dumps(counted.to_dict()))
        return
    echo(f"{counted.items:,} items; splits: " + ", ".join(f"{k} {v:,}" for k, v in counted.by_split.items()))
    buckets = list(counted.by_bucket)
    echo(f"{'relation':<12}{'items':>8}" + "".join(f"{b:>12}" for b in buckets))
    for relation, total in counted.by_relation.items():
        row = counted.by_relation_bucket[relation]
        echo(f"{relation:<12}{total:>8}" + "".join(f"{row.get(b, 0):>12}" for b in buckets))


@probeset_group.command("import")
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), required=True,
              help="; ".join(f"{f.name}: {f.reads}" for f in FORMATS.values()) + ".")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True)
@click.option("--with-templates", "with_templates", cls=RenamedOption, old_names=("--templates",), is_flag=True,
              help=f"{', '.join(f.name for f in FORMATS.values() if f.templates)}: give each item our cloze "
                   "templates for its relation.")
@click.option("--relation", default=None, help="pararel: the relation of files whose name does not say it.")
@click.option("--language", default=None,
              help="x-factr: the language to ask in (a column of its TREx_prompts.csv: en, fr, ru, ...); mlama: the "
                   "language of files whose folder does not name it (mlama1.1/fr/P19.jsonl does).")
@click.option("--verbalization", type=click.Choice(["flawed", "corrected"]), default=None,
              help="distfact-taxonomy: the sentence each item asks, the row's verbalization (flawed) or its "
                   "correction (corrected); import once for each, with the same --onto.")
@click.option("--onto", type=click.Path(dir_okay=False, exists=True), default=None,
              help="distfact-taxonomy: a probe set holding the facts (a distractor set built from your store): its "
                   "items take the clozes, distractors and names kept. Without it the items have no distractors "
                   "(the baselines run them).")
@click.option("--subject-final", type=click.Choice(["swap", "drop"]), default=None,
              help="distfact-taxonomy: a sentence ending with the subject is asked as (o, r, s), as DistFact's "
                   "notebook does [default: swap], or left out.")
@click.option("--parquet", is_flag=True, help="Also write NAME.parquet (needs pyarrow).")
@overwrite_option
@json_option
def import_(fmt, files, out_path, with_templates, relation, language, verbalization, onto, subject_final, parquet, overwrite,
            as_json):
    """Convert an existing probe set into factprobe items (with a sidecar). Rows that do not fit
    are reported by file, line and field and skipped (exit code 3). A probe set already at --out
    is rewritten only when this import makes the same items (--overwrite replaces it anyway)."""
    from ..probes.building.probeset import claim_probeset, require_pyarrow, write_probeset

    if parquet:
        try:
            require_pyarrow()
        except RuntimeError as error:
            fail(str(error), EXIT_USAGE)
    if with_templates and fmt in LANGUAGE_FORMATS:
        fail(f"--with-templates: --format {fmt} asks each item with its own language's templates (ours are English)",
             EXIT_USAGE)
    taxonomy = {"verbalization": verbalization, "onto": onto, "subject_final": subject_final}
    claim = claim_probeset(out_path, overwrite=overwrite, inputs=[*files, *([onto] if onto else [])], parquet=parquet)
    templates = None
    if with_templates:
        from ..probes.templates import LAMA_DIR, LAMA_FORMATS, load_templates, template_dirs_from_env

        # a LAMA-style set also asks LAMA's own prompt (probes/templates/lama/) among the shipped ones
        extra = [LAMA_DIR] if fmt in LAMA_FORMATS else []
        templates = {r: [t.text for t in entry.cloze]
                     for r, entry in load_templates([*extra, *template_dirs_from_env()]).items()}
    try:
        if fmt in OWN_READER:
            items, report, kind, params = _taxonomy(files, with_templates, relation, **taxonomy)
        else:
            given = [f"--{k.replace('_', '-')}" for k, v in taxonomy.items() if v is not None]
            if given:
                fail(f"{', '.join(given)}: for --format distfact-taxonomy only", EXIT_USAGE)
            items, report = import_items(fmt, files, templates, relation=relation, language=language)
            kind = FORMATS[fmt].kind
            params = {"import": fmt, "templates": with_templates, **({"language": language} if language else {})}
    except (ValueError, OSError) as error:  # lm-eval: a task this import cannot follow, named
        fail(str(error), EXIT_USAGE)
    for line in report.rejected:
        echo(f"rejected {line}", err=True)
    for what, count in report.notes.items():
        echo(f"note: {count:,} {what}", err=True)
    if claim is Claim.OURS:
        _same_items(out_path, items)
    meta = write_probeset(out_path, items, kind=kind, seed=0, params=params,
                          source={"files": [Path(f).name for f in files], **report.to_dict(), **FORMATS[fmt].source,
                                  **_resources(report.resources)},
                          parquet=parquet)
    if as_json:
        echo(json.dumps({"out": out_path, **meta.to_dict()}))
    else:
        echo(f"{meta.items:,} {kind} items from {report.rows:,} {fmt} rows -> {out_path}"
                   + (f"; {len(report.rejected)} rejected" if report.rejected else ""))
    if report.rejected:
        sys.exit(EXIT_PARTIAL)


def _resources(paths: list[Path]) -> dict:
    """The files read beside the rows (X-FACTR's prompts and names, mLAMA's templates), each by
    its folder and name and the sha256 of the bytes read, so the set is tied to them too."""
    if not paths:
        return {}
    found = {}
    for path in dict.fromkeys(paths):
        with open(path, "rb") as handle:
            found[f"{path.parent.name}/{path.name}"] = hashlib.file_digest(handle, "sha256").hexdigest()
    return {"resources": found}


def _taxonomy(files, with_templates, relation, verbalization, onto, subject_final):
    """DistFact's verbalization errors (probes/formats/import_distfact.py): items, report, kind, params."""
    from ..probes.formats.import_distfact import taxonomy_import

    if with_templates or relation:
        fail("--with-templates and --relation are not for --format distfact-taxonomy: its rows carry their "
             "sentences and relations", EXIT_USAGE)
    if verbalization is None:
        fail("--format distfact-taxonomy needs --verbalization flawed or corrected (import once for each: the two "
             "sets `assess --flawed/--corrected` compares)", EXIT_USAGE)
    done = taxonomy_import(files, verbalization, onto=onto, subject_final=subject_final or "swap")
    return done.items, done.report, done.kind, done.params


def _same_items(out_path: str, items: list[dict]) -> None:
    """A probe set already at --out is rewritten by an import only with the same bytes."""
    import hashlib

    from ..probes.building.build import items_sha256

    with open(out_path, "rb") as stream:
        held = hashlib.file_digest(stream, "sha256").hexdigest()
    made = items_sha256(items)
    if held != made:
        fail(f"{out_path} holds other items (sha256 {held}) than this import makes (sha256 {made}): "
             "pass --overwrite to replace it, or another --out", EXIT_USAGE)

