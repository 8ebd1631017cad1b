"""`factprobe probeset`: build probe sets from the store, and count what a probe set holds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..probes.probeset import KINDS, PROBESET_KINDS
from .errors import EXIT_PARTIAL, EXIT_USAGE, fail
from .options import json_option, store_option



@click.group("probeset")
def probeset_group() -> None:
    """Probe sets: JSONL items (+ Parquet) with a sidecar NAME.meta.json holding the build's
    parameters, seed and source statistics. The same command and seed rebuild the same bytes.

    \b
    factprobe probeset build --kind cloze --relation P36 --relation P19 --per-relation 100 --out cloze.jsonl
    factprobe probeset build --kind icl-mc --out mc.jsonl --choices 100 --demo-fraction 0.2
    factprobe probeset build --kind kdf --corpus wiki --per-bucket 50 --out kdf.jsonl
    factprobe probeset build --kind distractor --strategy sem --strategy temp+sem --semantic idx --out d.jsonl
    factprobe probeset stats cloze.jsonl
    """


@probeset_group.command("build")
@click.option("--kind", type=click.Choice(KINDS), required=True,
              help="; ".join(f"{kind}: {summary}" for kind, summary in PROBESET_KINDS.items()) + ".")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True, help="The JSONL to write.")
@store_option
@click.option("--relation", "relations", multiple=True, help="Repeatable [default: every relation with entity objects].")
@click.option("--per-relation", type=click.IntRange(min=1), help="At most this many facts per relation.")
@click.option("--corpus", help="Frequency corpus in the store (`frequency annotate --to-store --corpus-name`): "
                                "items get `frequency` and `bucket`.")
@click.option("--bucket", "buckets", multiple=True, help='Keep only these buckets, e.g. "0" "[1,10)". Repeatable.')
@click.option("--per-bucket", type=click.IntRange(min=1), help="At most this many facts per (relation, bucket).")
@click.option("--annotator", "annotators", multiple=True,
              help="Keep facts with provenance from these annotators (T-REx: NoSub, AllEnt, SPO). Repeatable.")
@click.option("--at", help="Truth date YYYY-MM-DD: facts (and gold answers) valid then [default: today; the "
                           "sidecar records the date used].")
@click.option("--popularity-bins", type=click.IntRange(min=0), default=0, show_default=True,
              help="Label items with the subject's popularity bin (by its number of statements).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--languages", help="Name languages, comma-separated [default: the store's].")
@click.option("--templates", "template_dirs", multiple=True, type=click.Path(file_okay=False),
              help="Folders of extra template YAML (e.g. from `templates paraphrase`). Repeatable.")
@click.option("--manual-only", is_flag=True, help="cloze/belief-icl: hand-written templates only.")
@click.option("--aliases-per-subject", type=click.IntRange(min=1), default=3, show_default=True,
              help="cloze: subject names (label first, then aliases) per template.")
@click.option("--cloze-unit", type=click.Choice(["pair", "fact"]), default="pair", show_default=True,
              help="cloze: one item per subject-relation pair (BELIEF's unit) or per (s, r, o) fact.")
@click.option("--single-token", "single_token_model",
              help="cloze: keep facts with a single-token gold name under this model's tokenizer (for MLMs).")
@click.option("--choices", type=click.IntRange(min=2), default=100, show_default=True, help="icl-mc: choices per item.")
@click.option("--demo-fraction", type=click.FloatRange(0, 1), default=0.2, show_default=True,
              help="icl-mc: share of each relation's subjects that form the demonstration pool.")
@click.option("--allow-fewer-choices", is_flag=True,
              help="icl-mc: a relation with fewer fair objects than --choices gives its items fewer choices "
                   "(recorded per item as `choices_requested` and in the sidecar, with a warning) instead of "
                   "refusing the build.")
@click.option("--shots", type=click.IntRange(min=0), default=5, show_default=True,
              help="kdf: demonstrations per question; belief-icl: demonstrations per setting.")
@click.option("--kdf-demonstrations", type=click.Choice(["other-relations", "same-relation"]),
              default="other-relations", show_default=True,
              help="kdf: other-relations (the KDF paper's) or same-relation demonstrations, other subjects either way.")
@click.option("--kdf-options", type=click.Choice(["relation-tails", "type-pool"]), default="relation-tails",
              show_default=True,
              help="kdf: wrong options drawn from the relation's tails (the KDF paper's) or from the object's "
                   "type pool (fair random distractors).")
@click.option("--strategy", "strategies", multiple=True, default=("random",), show_default=True,
              type=click.Choice(["random", "sem", "temp+sem", "appropt"]), help="distractor: repeatable.")
@click.option("--n", type=click.IntRange(min=1), default=5, show_default=True, help="distractor: per fact and strategy.")
@click.option("--semantic", "semantic_dir", type=click.Path(file_okay=False), help="distractor: semantic index folder.")
@click.option("--model", help="distractor: model spec for appropt.")
@click.option("--parquet", is_flag=True, help="Also write NAME.parquet (needs pyarrow).")
@click.option("--quiet", is_flag=True)
@json_option
def build(kind, out_path, store, relations, per_relation, corpus, buckets, per_bucket, annotators, at, popularity_bins,
          seed, languages, template_dirs, manual_only, aliases_per_subject, cloze_unit, single_token_model, choices,
          demo_fraction, allow_fewer_choices, shots, kdf_demonstrations, kdf_options, strategies, n, semantic_dir,
          model, parquet, quiet, as_json):
    """Build a probe set from the store."""
    from ..probes.build import build_probeset, request_from_mapping

    if not Path(store).is_file():
        fail(f"no knowledge-graph store at {store}", EXIT_USAGE)
    langs = tuple(x.strip() for x in languages.split(",") if x.strip()) if languages else ()
    selection, options = request_from_mapping({
        # the fact selection
        "relations": relations, "per_relation": per_relation, "per_bucket": per_bucket, "buckets": buckets,
        "corpus": corpus, "annotators": annotators, "at": at, "popularity_bins": popularity_bins, "seed": seed,
        # the kind's options
        "kind": kind, "languages": langs, "template_dirs": template_dirs, "manual_only": manual_only,
        "aliases_per_subject": aliases_per_subject, "single_token_model": single_token_model, "choices": choices,
        "demo_fraction": demo_fraction, "shots": shots, "strategies": strategies, "n": n,
        "semantic_dir": semantic_dir, "model": model, "allow_fewer_choices": allow_fewer_choices,
        "kdf_demonstrations": kdf_demonstrations, "kdf_options": kdf_options, "cloze_unit": cloze_unit,
    })
    say = (lambda _: None) if quiet or as_json else (lambda text: click.echo(f"{text} ...", err=True))
    try:
        meta = build_probeset(store, out_path, selection, options, parquet=parquet, progress=say)
    except (ValueError, FileNotFoundError, RuntimeError) as error:
        fail(str(error), EXIT_USAGE)
    for warning in _warnings(meta.source):  # on stderr, so --json output stays one object
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps({"out": out_path, **meta.to_dict()}))
    else:
        kept = meta.source["selection"]
        click.echo(f"{meta.items:,} {kind} items from {kept['kept']:,} facts -> {out_path} "
                   f"(sidecar {Path(out_path).name.removesuffix('.jsonl')}.meta.json)")
        paper = meta.source.get("paper_filter")
        if paper:
            def listed(names):
                return ", ".join(f"{r} ({paper['relations'][r]['facts']:,} facts, "
                                 f"{paper['relations'][r]['objects']:,} objects)" for r in names) or "none"

            click.echo(f"paper filter ({paper['rule']}): pass {listed(paper['pass'])}; fail {listed(paper['fail'])}")


def _warnings(source: dict) -> list[str]:
    """What a build did that the published construction would not: items with fewer choices than
    asked (icl-mc), facts left out for want of wrong options (kdf)."""
    out = []
    choices = source.get("choices") or {}
    for relation, short in sorted((choices.get("short") or {}).items()):
        out.append(f"{relation}: {short['items_short']} item(s) have fewer than {choices['requested']} choices "
                   f"(the fewest {short['fewest_choices']}); each carries `choices_requested`")
    for relation, count in sorted(((source.get("kdf") or {}).get("skipped_too_few_options") or {}).items()):
        out.append(f"{relation}: {count} fact(s) left out, fewer than 3 fair wrong options")
    return out


@probeset_group.command("stats")
@click.argument("path", type=click.Path(dir_okay=False, exists=True))
@json_option
def stats(path, as_json):
    """Items per relation, per frequency bucket and per split."""
    from ..probes.probeset import probeset_stats, read_items

    try:
        counted = probeset_stats(read_items(path))
    except ValueError as error:
        fail(str(error), EXIT_USAGE)
    if as_json:
        click.echo(json.dumps(counted.to_dict()))
        return
    click.echo(f"{counted.items:,} items; splits: " + ", ".join(f"{k} {v:,}" for k, v in counted.by_split.items()))
    buckets = list(counted.by_bucket)
    click.echo(f"{'relation':<12}{'items':>8}" + "".join(f"{b:>12}" for b in buckets))
    for relation, total in counted.by_relation.items():
        row = counted.by_relation_bucket[relation]
        click.echo(f"{relation:<12}{total:>8}" + "".join(f"{row.get(b, 0):>12}" for b in buckets))


@probeset_group.command("import")
@click.option("--format", "fmt", type=click.Choice(["lama-trex", "trex-mc", "myriadlama"]), required=True,
              help="lama-trex: LAMA T-REx JSONL (sub_uri, sub_label, predicate_id, obj_uri, obj_label); trex-mc: "
                   "rows with Relation_ID, Subject, Object, Multiple Choices (JSONL or CSV); myriadlama: rows "
                   "uuid, rel_uri, sub_ent, obj_ents, obj_aliases, template (one per prompt).")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True)
@click.option("--templates", "with_templates", is_flag=True,
              help="lama-trex: give each item our cloze templates for its relation.")
@click.option("--parquet", is_flag=True, help="Also write NAME.parquet (needs pyarrow).")
@json_option
def import_(fmt, files, out_path, with_templates, parquet, as_json):
    """Convert an existing probe set into factprobe items (with a sidecar). Rows that do not fit
    are reported by file, line and field and skipped (exit code 3)."""
    from ..probes.importers import import_items
    from ..probes.probeset import write_probeset

    templates = None
    if with_templates:
        from ..probes.templates import load_templates

        templates = {r: [t.text for t in entry.cloze] for r, entry in load_templates().items()}
    items, report = import_items(fmt, files, templates)
    for line in report.rejected:
        click.echo(f"rejected {line}", err=True)
    kind = "icl-mc" if fmt == "trex-mc" else "cloze"
    meta = write_probeset(out_path, items, kind=kind, seed=0, params={"import": fmt, "templates": with_templates},
                          source={"files": [Path(f).name for f in files], **report.to_dict()}, parquet=parquet)
    if as_json:
        click.echo(json.dumps({"out": out_path, **meta.to_dict()}))
    else:
        click.echo(f"{meta.items:,} {kind} items from {report.rows:,} {fmt} rows -> {out_path}"
                   + (f"; {len(report.rejected)} rejected" if report.rejected else ""))
    if report.rejected:
        sys.exit(EXIT_PARTIAL)
