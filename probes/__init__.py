"""Templates, probe-set builders, model scorers, probing methods, metrics and reports.

Laid out by what each part does: building/ (a probe set from a store), kinds/ (how facts become
items), templates/, scoring/ (models), methods/ (the probing methods), measures/ (pure metrics),
evaluation/ (an evaluation's entry, runner, shards, aggregation), formats/ (other tools' files,
read and written), report/ and document/ (what a reader sees); declare.py, registry.py and
plugins.py are the declarations all of them use.
"""

from .moved import install as _install_moved_names

_install_moved_names()
