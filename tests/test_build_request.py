"""`build_request`: one mapping of option names -> a BuildRequest (the kind, its FactSelection and
its own options dataclass), checked against the declarations, as `probeset build`, the service's
probe-set jobs and `factprobe run` all make it; and `cli.errors.fail`, the one way a command
stops on an error."""

from __future__ import annotations

import pytest

from factprobe.probes.building.build import build_request
from factprobe.probes.building.facts import FactSelection
from factprobe.probes.kinds.distractor_kind import DistractorKindOptions
from factprobe.probes.kinds.icl_mc_kind import IclMcKindOptions


def test_build_request_splits_the_mapping_into_the_selection_and_the_kinds_options():
    request = build_request("distractor", {
        "relations": ["P36", "P19"], "per_relation": 10, "buckets": ["0", "[1,10)"], "corpus": "wiki",
        "annotators": ("NoSub",), "at": "2020-01-01", "popularity_bins": 3, "seed": 7, "languages": "en,de",
        "strategies": ["random", "sem"], "n": 4, "semantic": "idx", "manual_only": None,
    })
    assert request.selection == FactSelection(relations=("P36", "P19"), per_relation=10, buckets=("0", "[1,10)"),
                                              corpus="wiki", annotators=("NoSub",), at="2020-01-01",
                                              popularity_bins=3, seed=7, languages=("en", "de"))
    # None is "not given": the declared default (manual_only False)
    assert request.options == DistractorKindOptions(strategies=("random", "sem"), n=4, semantic="idx")
    assert request.kind == "distractor"
    # what the mapping leaves out keeps the declared defaults
    plain = build_request("icl-mc", {})
    assert (plain.selection, plain.options) == (FactSelection(), IclMcKindOptions())
    assert plain.options.choices == 100 and plain.options.demo_fraction == 0.2
    assert plain.to_dict()["options"] == {"parquet": False, "choices": 100, "demo_fraction": 0.2,
                                          "allow_fewer_choices": False, "trex_mc_filter": "apply",
                                          "exclude_objects": "ever-held"}


def test_an_unknown_option_and_another_kinds_option_are_refused_by_name():
    with pytest.raises(ValueError, match="unknown option 'per_relatoin'"):
        build_request("cloze", {"per_relatoin": 3})
    with pytest.raises(ValueError, match="option 'choices' is for icl-mc probe sets, not kdf"):
        build_request("kdf", {"choices": 10})
    with pytest.raises(ValueError, match="option 'shots' is for kdf and belief-icl probe sets, not cloze"):
        build_request("cloze", {"shots": 3})
    with pytest.raises(ValueError, match="kind 'mcq': use one of cloze, icl-mc, kdf, distractor, belief-icl"):
        build_request("mcq", {})


@pytest.mark.parametrize("kind, values, message", [
    ("icl-mc", {"choices": 1}, "option choices: 1 is below its minimum 2"),
    ("icl-mc", {"demo_fraction": 1.5}, "option demo_fraction: 1.5 is above its maximum 1"),
    ("icl-mc", {"choices": "many"}, "option choices: 'many' is not an int"),
    ("icl-mc", {"choices": 2.5}, "option choices: 2.5 is not an int"),
    ("icl-mc", {"allow_fewer_choices": "yes"}, "option allow_fewer_choices: expected true or false, got 'yes'"),
    ("kdf", {"kdf_options": "tails"}, "option kdf_options: 'tails' is not one of relation-tails, type-pool"),
    # a relation is a P-id or a label (read against the store at the build): no control characters
    ("cloze", {"relations": ["capital\n"]}, r"option relations: 'capital\\n' is not of the form"),
    ("cloze", {"at": "May 2020"}, "option at: 'May 2020' is not of the form"),
    ("cloze", {"languages": "en,EN"}, "option languages: 'EN' is not of the form"),
    ("distractor", {"strategies": ["random", "best"]}, "option strategies: 'best' is not one of random, sem"),
    ("cloze", {"seed": -1}, "option seed: -1 is below its minimum 0"),
    ("distractor", {"strategies": ["random", "appropt"]}, "appropt needs a model: --model SPEC"),  # the kind's check
])
def test_every_value_is_checked_against_its_declaration(kind, values, message):
    with pytest.raises(ValueError, match=message):
        build_request(kind, values, where="here")
    with pytest.raises(ValueError, match="^here: "):
        build_request(kind, values, where="here")


def test_text_from_a_command_line_or_a_config_becomes_the_declared_type():
    request = build_request("icl-mc", {"choices": "20", "demo_fraction": "0.4", "per_relation": 30.0,
                                       "relations": "P36"})
    assert (request.options.choices, request.options.demo_fraction) == (20, 0.4)
    assert request.selection.per_relation == 30 and request.selection.relations == ("P36",)


def test_fail_prints_error_on_stderr_and_exits_with_the_code():
    import click
    from click.testing import CliRunner

    from factprobe.cli.errors import EXIT_FAILURE, EXIT_PARTIAL, EXIT_USAGE, fail

    assert (EXIT_FAILURE, EXIT_USAGE, EXIT_PARTIAL) == (1, 2, 3)

    @click.command()
    @click.option("--code", type=int, default=None)
    def command(code):
        fail("no store at x.sqlite") if code is None else fail("no store at x.sqlite", code)

    result = CliRunner().invoke(command, [])
    assert result.exit_code == EXIT_FAILURE and "error: no store at x.sqlite" in result.stderr
    assert CliRunner().invoke(command, ["--code", str(EXIT_USAGE)]).exit_code == EXIT_USAGE
