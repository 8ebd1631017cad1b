"""Every package of the source tree is in pyproject.toml's package list, so that a wheel (a
non-editable `pip install`) carries it: probes/kinds, probes/metrics and probes/document were
missing, and only the editable install of setup.sh worked."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_of_the_tree_is_listed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    found = {"factprobe." + str(p.parent.relative_to(ROOT)).replace("/", ".")
             for top in ("kg", "index", "probes", "cli") for p in (ROOT / top).rglob("__init__.py")}
    assert found - set(config["packages"]) == set()
    assert {name: ROOT / folder for name, folder in config["package-dir"].items() if name != "factprobe"} == {
        name: ROOT / name.removeprefix("factprobe.").replace(".", "/") for name in found}
