"""The command lines `factprobe run` prints are written from the commands' declarations
(cli/command_line.py) and parse back to the values given; a method's options as `--option`
pairs read back to the same values; and the defaults the commands show are the ones the
index layer declares."""

from __future__ import annotations

import click
import pytest

from factprobe.cli.command_line import command_line
from factprobe.cli.eval_cmds import eval_command
from factprobe.cli.frequency_cmds import corpus_group, corpus_index, frequency_annotate, frequency_group
from factprobe.cli.ingest_cmds import ingest_group
from factprobe.cli.options import method_options, option_pairs


def parsed(command: click.Command, words: list[str]) -> dict:
    """The parameters `command` reads from `words` (its name and its group's left off)."""
    return command.make_context(command.name, list(words)).params


def test_a_command_line_parses_back_to_its_values():
    values = {"files": ["a.jsonl", "b.jsonl"], "fmt": "trex", "links": True, "store": "g.sqlite",
              "index_path": "i.sqlite", "count_facts": ["P36", "P17"], "exclude_alias": ["Rome"]}
    words = command_line(corpus_index, values, group=corpus_group)
    assert words == ["corpus", "index", "a.jsonl", "b.jsonl", "--format", "trex", "--links", "--store", "g.sqlite",
                     "--index", "i.sqlite", "--count-facts", "P36", "--count-facts", "P17", "--exclude-alias", "Rome"]
    params = parsed(corpus_index, words[2:])
    assert {name: params[name] for name in values} == {**values, "files": ("a.jsonl", "b.jsonl"),
                                                       "count_facts": ("P36", "P17"), "exclude_alias": ("Rome",)}


def test_absent_values_and_declared_defaults_are_left_out():
    naming = ("languages", "names", "min_alias_length")
    assert command_line(corpus_index, {"files": ["a"], "languages": "en", "names": "all", "min_alias_length": 2,
                                       "from_store": False, "exclude_alias": [], "count_facts": None},
                        group=corpus_group, unless_default=naming) == ["corpus", "index", "a"]
    assert command_line(corpus_index, {"languages": "zh", "names": "label", "min_alias_length": 3},
                        group=corpus_group, unless_default=naming) == \
        ["corpus", "index", "--languages", "zh", "--names", "label", "--min-alias-length", "3"]
    # 0 is a value, not an absent one (False is)
    assert command_line(eval_command, {"seed": 0, "limit": None}) == ["eval", "--seed", "0"]


def test_a_renamed_option_is_written_by_its_new_name():
    wikidata5m = ingest_group.commands["wikidata5m"]
    words = command_line(wikidata5m, {"documents": ["docs.txt"], "store": "g.sqlite"}, group=ingest_group)
    assert words == ["ingest", "wikidata5m", "--documents", "docs.txt", "--store", "g.sqlite"]
    assert parsed(wikidata5m, words[2:])["documents"] == ("docs.txt",)


def test_a_name_the_command_does_not_declare_is_refused():
    with pytest.raises(ValueError, match=r"frequency annotate: no parameter 'relation' \(relations, out_path"):
        command_line(frequency_annotate, {"relation": "P36"}, group=frequency_group)
    with pytest.raises(ValueError, match="command 'annotate' is not in the group 'corpus'"):
        command_line(frequency_annotate, {}, group=corpus_group)
    with pytest.raises(ValueError, match=r"--out takes one value; got \['a', 'b'\]"):
        command_line(frequency_annotate, {"out_path": ["a", "b"]}, group=frequency_group)


def test_method_options_are_written_as_pairs_that_read_back_the_same():
    values = {"separator": ": ", "examples": 4, "label": "10", "yes": "true", "relations": ["P36", "北京"],
              "fixed": True, "none": None, "ratio": 0.5}
    pairs = option_pairs(values)
    assert pairs == ["separator=: ", "examples=4", 'label="10"', 'yes="true"', 'relations=["P36", "\\u5317\\u4eac"]',
                     "fixed=true", "none=null", "ratio=0.5"]
    assert method_options(pairs) == values


def test_the_commands_show_the_defaults_the_index_declares():
    from factprobe.index.corpus import DEFAULT_BUCKETS
    from factprobe.index.corpus_jobs import IndexOptions
    from factprobe.index.settings import IndexSettings
    from factprobe.index.text import MIN_ALIAS_LENGTH, AliasFilter

    defaults = {p.name: p.default for p in corpus_index.params}
    assert (defaults["min_alias_length"], IndexOptions().min_alias_length, IndexSettings().min_alias_length,
            AliasFilter().min_length) == (MIN_ALIAS_LENGTH,) * 4
    assert (defaults["languages"], defaults["names"], defaults["fmt"]) == ("en", "all", "jsonl")
    assert IndexOptions().settings() == IndexSettings()
    assert {p.name: p.default for p in frequency_annotate.params}["buckets"] == "1,10,100"
    assert DEFAULT_BUCKETS == (1, 10, 100)


def test_a_default_declared_in_a_heavy_module_is_read_when_needed():
    """`distractors build`'s --min-df and --check are the semantic index's MIN_DF and
    CHECK_QUERIES, read when the command runs or shows help, not when the CLI starts."""
    from click.testing import CliRunner

    from factprobe.cli.distractor_cmds import distractors_group
    from factprobe.cli.main import main
    from factprobe.index.semantic import MIN_DF
    from factprobe.index.semantic_check import CHECK_QUERIES

    build = distractors_group.commands["build"]
    params = build.make_context("build", []).params
    assert (params["min_df"], params["check_queries"]) == (MIN_DF, CHECK_QUERIES) == (1, 200)
    help_text = " ".join(CliRunner().invoke(main, ["distractors", "build", "--help"]).stdout.split())
    assert "[default: 1; x>=1]" in help_text and "[default: 200; x>=0]" in help_text
    assert command_line(build, {"min_df": 1, "check_queries": 50}, group=distractors_group,
                        unless_default=("min_df", "check_queries")) == ["distractors", "build", "--check", "50"]


def test_an_evaluations_batch_and_seed_are_declared_once():
    """probes/evaluation/runner.py's BATCH and SEED are the defaults of Evaluation, `eval` and the service's
    eval jobs; the runner's own functions take them too."""
    import inspect

    from factprobe.cli.service.jobs import EvalRequest
    from factprobe.probes.evaluation.entry import Evaluation
    from factprobe.probes.evaluation.runner import BATCH, SEED, evaluate, plan_eval

    params = eval_command.make_context("eval", ["--model", "m", "--method", "kdf", "--probes", __file__,
                                                "--out", "o"]).params
    request = EvalRequest(method="kdf", probeset_job="a" * 32, model="m")
    evaluation = Evaluation("m", "kdf", "p.jsonl", "o")
    assert (params["batch"], request.batch, evaluation.batch, inspect.signature(evaluate).parameters["batch"].default,
            inspect.signature(plan_eval).parameters["batch"].default) == (BATCH,) * 5 == (16,) * 5
    assert (params["seed"], request.seed, evaluation.seed, inspect.signature(evaluate).parameters["seed"].default,
            inspect.signature(plan_eval).parameters["seed"].default) == (SEED,) * 5 == (0,) * 5


def test_every_command_the_shipped_pipeline_prints_parses_as_that_command(tmp_path):
    """The sample pipeline's steps, printed without running them: each line is its command with
    options it declares, values of their types (the probe sets named exist by then)."""
    import shlex

    from factprobe.cli.main import main
    from factprobe.cli.pipeline import Runner
    from factprobe.cli.pipeline_config import SAMPLE_CONFIG, load_pipeline

    printed: list[list[str]] = []

    class Printing(Runner):
        def step(self, title, args, action) -> None:
            printed.append(args)

    runner = Printing(load_pipeline(SAMPLE_CONFIG, out=str(tmp_path / "out")), quiet=True)
    runner.run()
    (tmp_path / "out" / "probesets").mkdir(parents=True)
    for name in runner.p.probesets:
        (tmp_path / "out" / "probesets" / f"{name}.jsonl").touch()
    assert [args[:2] for args in printed[:5]] == [["ingest", "wikidata"], ["corpus", "index"]] + \
        [["frequency", "annotate"]] * 3
    assert len(printed) == 1 + 1 + 4 + 1 + 4 + 10 + 1  # graph, corpus, counts, semantic, sets, evals, report
    for args in printed:
        command, words = main, list(args)
        while isinstance(command, click.Group):
            command, words = command.commands[words[0]], words[1:]
        assert command.make_context(command.name, words).params, shlex.join(args)
    ingest = printed[0]
    assert ingest[-2:] == ["--languages", "en,de,fr"] and "--languages" not in printed[1]
