"""The `factprobe` command: the main click group, and `factprobe sample`.

Each command group lives in its own module (ingest_cmds.py, kg_cmds.py, probeset_cmds.py, ...)
and is registered on `main` at the bottom of this file. Exit codes (cli/errors.py): 0 = done and
complete; 3 = done but partial (records rejected or input truncated; see the rejects file);
2 = bad usage or unreadable input; 1 = failure.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

import click

from .. import __version__
from ..kg.graph import KnowledgeGraph
from ..kg.outputs import OutputError
from ..kg.readers import InputError
from ..kg.store import StoreError
from .errors import EXIT_CLOSED_PIPE, EXIT_FAILURE, EXIT_USAGE, fail
from .options import FolderPath
from .outputs import overwrite_option


def _closed_pipe() -> NoReturn:
    # Python flushes stdout once more on the way out; with the descriptor on devnull that last
    # flush cannot raise again (and print "Exception ignored ... BrokenPipeError").
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # a stdout with no descriptor (an in-process test runner's)
        pass
    sys.exit(EXIT_CLOSED_PIPE)


class Main(click.Group):
    """The group of every command: an output a command may not write (kg/outputs.py's
    OutputError, from wherever it is raised) is one line and exit code 2; a closed stdout ends
    the command quietly (exit 141), in a command or while click prints help."""

    def make_context(self, *args, **kwargs) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except BrokenPipeError:  # --help and --version print while the arguments are parsed
            _closed_pipe()

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except OutputError as error:
            fail(str(error), EXIT_USAGE)
        except BrokenPipeError:
            _closed_pipe()


@click.group(cls=Main, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="factprobe")
def main() -> None:
    """factprobe: build factual-knowledge probe sets from a knowledge graph and measure what
    language models know.

    \b
    Typical flow:
      factprobe run                               # the whole job on the shipped sample (or: run my.yaml)
      factprobe sample                            # ingest the shipped sample graph, show it
      factprobe ingest wikidata latest-all.json.gz --store wd.sqlite
      factprobe kg stats --store wd.sqlite
      factprobe kg entity Q90 --store wd.sqlite
      factprobe kg facts --relation P36 --store wd.sqlite --json
      factprobe model score smollm2-135m-instruct --context "The capital of France is" \\
          --continuation " Paris" --continuation " Lyon"
      factprobe probeset build --kind icl-mc --relation P36 --store wd.sqlite --out mc.jsonl
      factprobe eval --model gemma3-270m --method ic-lke --probes mc.jsonl --out runs/gemma-iclke
      factprobe report runs/* --out report/
      factprobe results runs/* --format parquet --out results.parquet
      FACTPROBE_TOKEN=secret factprobe serve --store wd.sqlite     # HTTP service, docs at /docs
    """


# -- the sample graph on its own (`factprobe run` is the main job) ------------------------------


@main.command("sample")
@click.option("--out", type=FolderPath(), default="runs/sample", show_default=True,
              help="Directory for the sample run's files.")
@click.option("--entity", "entity_id", default="Q183", show_default=True, help="Entity to show.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@overwrite_option
def sample(out, entity_id, quiet, overwrite):
    """Ingest just the shipped sample graph (Wikidata JSON) and show it (`factprobe run` runs the whole job):
    print its statistics and one entity with its temporal facts."""
    from ..kg.sources.wikidata_json import WikidataJsonSource
    from .outputs import claim_pipeline_folder
    from .render import entity_record, render_entity, render_stats
    from .steps import Console
    from .steps_graph import ingest_step

    data = Path(__file__).resolve().parent.parent / "kg" / "data" / "sample_wikidata.json"
    out_dir = Path(out)
    claim_pipeline_folder(out_dir, overwrite=overwrite)  # the folder `factprobe run` writes by default too
    out_dir.mkdir(parents=True, exist_ok=True)
    store_path = out_dir / "graph.sqlite"
    source = WikidataJsonSource(languages=("en", "de", "fr"))
    try:
        ingest_step(store_path, [(source, data)], source.languages, overwrite=overwrite,
                    console=Console(quiet=quiet, note=lambda text: echo(text, err=True)))
    except (InputError, StoreError) as exc:
        fail(str(exc), EXIT_USAGE)
    with KnowledgeGraph(store_path) as kg:
        echo(render_stats(str(store_path), kg.stats()))
        echo()
        record = entity_record(kg, entity_id)
        if record is None:
            fail(f"{entity_id}: not in the sample graph", EXIT_FAILURE)
        echo(render_entity(kg, record))
    echo(f"\nstore: {store_path}  (try: factprobe kg facts --relation P36 --store {store_path})")


from .ingest_cmds import ingest_group  # noqa: E402  (after `main` exists)
from .kg_cmds import kg_group  # noqa: E402
from .frequency_cmds import corpus_group, frequency_group  # noqa: E402
from .ngram_cmd import ngram_command  # noqa: E402
from .model_cmds import model_group  # noqa: E402
from .distractor_cmds import distractors_group  # noqa: E402
from .template_cmds import templates_group  # noqa: E402
from .probeset_cmds import probeset_group  # noqa: E402
from .eval_cmds import eval_command  # noqa: E402
from .merge_cmd import merge_command  # noqa: E402
from .run_cmd import run_command  # noqa: E402
from .report_cmds import compare_command, report_command  # noqa: E402
from .results_cmd import results_command  # noqa: E402
from .serve_cmd import serve_command  # noqa: E402
from .export_cmd import export_group  # noqa: E402
from .assess_cmd import assess_command  # noqa: E402
from .terminal import echo

main.add_command(ingest_group)
main.add_command(kg_group)
main.add_command(model_group)
main.add_command(corpus_group)
main.add_command(frequency_group)
frequency_group.add_command(ngram_command)
main.add_command(distractors_group)
main.add_command(templates_group)
main.add_command(probeset_group)
main.add_command(eval_command)
main.add_command(merge_command)
main.add_command(run_command)
main.add_command(report_command)
main.add_command(compare_command)
main.add_command(results_command)
main.add_command(serve_command)
main.add_command(export_group)
main.add_command(assess_command)


if __name__ == "__main__":
    main()
