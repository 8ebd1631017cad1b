"""`request_from_mapping`: one mapping of field names -> (FactSelection, BuildOptions), as the
`probeset build` command, the service's probe-set jobs and `factprobe run` all build them; and
`cli.errors.fail`, the one way a command stops on an error."""

from __future__ import annotations

import pytest

from factprobe.probes.build import BuildOptions, request_from_mapping
from factprobe.probes.facts import FactSelection


def test_request_from_mapping_builds_what_the_keyword_constructors_build():
    selection, options = request_from_mapping({
        "relations": ["P36", "P19"], "per_relation": 10, "buckets": ["0", "[1,10)"], "corpus": "wiki",
        "annotators": ("NoSub",), "at": "2020-01-01", "popularity_bins": 3, "seed": 7,
        "kind": "distractor", "languages": ["en", "de"], "strategies": ["random", "sem"], "n": 4,
        "semantic_dir": "idx", "allow_fewer_choices": True, "cloze_unit": "fact", "extra": {"k": [1]},
    })
    assert selection == FactSelection(relations=("P36", "P19"), per_relation=10, buckets=("0", "[1,10)"),
                                      corpus="wiki", annotators=("NoSub",), at="2020-01-01", popularity_bins=3,
                                      seed=7)
    assert options == BuildOptions(kind="distractor", languages=("en", "de"), strategies=("random", "sem"), n=4,
                                   semantic_dir="idx", allow_fewer_choices=True, cloze_unit="fact",
                                   extra={"k": [1]})
    assert isinstance(selection.relations, tuple) and isinstance(options.strategies, tuple)
    # what the mapping leaves out keeps the constructors' defaults
    assert request_from_mapping({"kind": "cloze"}) == (FactSelection(), BuildOptions(kind="cloze"))


def test_an_unknown_key_is_rejected_by_name():
    with pytest.raises(ValueError, match="'per_relatoin'"):
        request_from_mapping({"kind": "cloze", "per_relatoin": 3})
    with pytest.raises(ValueError, match="FactSelection: unknown key 'kind'"):
        FactSelection.from_mapping({"kind": "cloze"})
    with pytest.raises(ValueError, match="BuildOptions: unknown key 'seed'"):
        BuildOptions.from_mapping({"kind": "cloze", "seed": 1})


def test_every_field_of_the_service_request_is_a_build_field():
    pytest.importorskip("pydantic")
    from factprobe.cli.service_jobs import ProbesetRequest

    selection, options = request_from_mapping(ProbesetRequest(kind="icl-mc", relations=["P36"]).model_dump())
    assert selection.relations == ("P36",) and options.kind == "icl-mc" and options.strategies == ("random",)


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
