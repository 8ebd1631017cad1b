"""The old names of the modules that sat loose in probes/ before issue 48 sorted them into
formats/, evaluation/ and building/ (and paraphrase into templates/, answers into measures/):
`import factprobe.probes.runner` still works for one release, warns, and gives the module under its
new name, the very same module object (so a patched name or a registry is shared). probes/__init__
installs the finder; nothing else here is for use.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

PACKAGE = "factprobe.probes"
# old module name under probes/ -> where it lives now, under probes/
MOVED = {
    "aggregate": "evaluation.aggregate",
    "answers": "measures.answers",
    "assess": "evaluation.assess",
    "assess_inputs": "evaluation.assess_inputs",
    "build": "building.build",
    "export_lm_eval": "formats.export_lm_eval",
    "fact_list": "formats.fact_list",
    "facts": "building.facts",
    "import_distfact": "formats.import_distfact",
    "import_entityquestions": "formats.import_entityquestions",
    "import_kilt": "formats.import_kilt",
    "import_lama": "formats.import_lama",
    "import_lama_sentences": "formats.import_lama_sentences",
    "import_lm_eval": "formats.import_lm_eval",
    "import_mlama": "formats.import_mlama",
    "import_popqa": "formats.import_popqa",
    "import_rows": "formats.import_rows",
    "import_xfactr": "formats.import_xfactr",
    "importers": "formats.importers",
    "listed": "building.listed",
    "lm_eval_bounds": "formats.lm_eval_bounds",
    "lm_eval_templates": "formats.lm_eval_templates",
    "lm_eval_yaml": "formats.lm_eval_yaml",
    "paraphrase": "templates.paraphrase",
    "probeset": "building.probeset",
    "run_files": "evaluation.run_files",
    "runner": "evaluation.runner",
    "shard": "evaluation.shard",
    "shard_merge": "evaluation.shard_merge",
}


class MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds only the old names, and loads each as the module at its new name."""

    def __init__(self) -> None:
        self._specs: dict[str, object] = {}

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.rpartition(".")
        if package != PACKAGE or name not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(f"{PACKAGE}.{MOVED[spec.name.rpartition('.')[2]]}")
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module) -> None:
        # the import system has just given the module the old name's spec: give it back its own
        old = module.__spec__.name
        module.__spec__ = self._specs.pop(old)
        warnings.warn(f"{old} is now {module.__name__}; the old name goes in the next release",
                      DeprecationWarning, stacklevel=2)


def install() -> None:
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedFinder())
