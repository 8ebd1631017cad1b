"""The modules issue 48 moved out of probes/'s top into formats/, evaluation/ and building/ (and
paraphrase into templates/, answers into measures/) keep their old import names for one release."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_modules_moved_out_of_probes_top_keep_their_old_names_for_one_release():
    """Issue 48 sorted probes/'s loose modules into formats/, evaluation/ and building/: each old
    name still imports, warns once it is imported, and is the very module at the new name."""
    import importlib
    import sys
    import warnings

    from factprobe.probes.moved import MOVED

    assert len(MOVED) == 29  # 16 formats, 7 evaluation, 4 building, paraphrase, answers
    for old, new in MOVED.items():
        sys.modules.pop(f"factprobe.probes.{old}", None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(f"factprobe.probes.{old}")
        assert module is importlib.import_module(f"factprobe.probes.{new}")
        assert module.__spec__.name == module.__name__ == f"factprobe.probes.{new}"
        assert [str(w.message) for w in caught if w.category is DeprecationWarning] == [
            f"factprobe.probes.{old} is now factprobe.probes.{new}; the old name goes in the next release"]
        assert not (ROOT / "probes" / f"{old}.py").exists()


def test_the_old_evaluation_module_s_names_read_from_its_package_with_a_warning():
    import warnings

    from factprobe.probes import evaluation
    from factprobe.probes.evaluation.entry import run_evaluation

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert evaluation.run_evaluation is run_evaluation
    assert [w.category for w in caught] == [DeprecationWarning]
    with pytest.raises(AttributeError):
        evaluation.no_such_name
