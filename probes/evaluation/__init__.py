"""An evaluation, from its one entry to the numbers it reports: entry.py (`Evaluation`,
`run_evaluation`: the folder claimed, the input checked, the model loaded), runner.py (a method
over a probe set into a run folder that resumes), shard.py and shard_merge.py (one evaluation over
many processes, and back into one folder), run_files.py (what run.json and aggregate.json hold),
aggregate.py (records to a paper's numbers), assess.py with assess_inputs.py (DistFact's
evaluation of knowledge measures over finished runs).

`factprobe.probes.evaluation` was the module entry.py is now; its names are still read from here
for one release, with a DeprecationWarning.
"""

from __future__ import annotations

import importlib
import types
import warnings


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "entry":  # the submodule, not one of its names (hasattr during its own import lands here)
        raise AttributeError(name)
    entry = importlib.import_module(f"{__name__}.entry")
    value = getattr(entry, name, None)
    if value is None or isinstance(value, types.ModuleType):  # a submodule is imported as itself
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"factprobe.probes.evaluation.{name} is now factprobe.probes.evaluation.entry.{name}; "
                  "the old name goes in the next release", DeprecationWarning, stacklevel=2)
    return value
