"""What a model backend declares, and what passes between a spec and its backend: the spec as
typed (`ModelSpec`), how to load it (`LoadOptions`), the one error a spec that names nothing
loadable raises (`SpecError`), and `Backend`, the class a backend's one file subclasses and
registers (backends/__init__.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ..scorer import Scorer


class SpecError(ValueError):
    """A model spec that cannot be understood or resolved."""


@dataclass(frozen=True)
class ModelSpec:
    kind: str  # the registered backend's name: the spec's prefix ("hf" in hf:PATH)
    target: str  # path, hub name, GGUF file or API model name
    raw: str  # what the user typed, for messages and result files


@dataclass(frozen=True)
class LoadOptions:
    """How to load a model, as loader.load_scorer takes it (see there)."""
    device: str | None = None
    dtype: str | None = None
    batch_size: int = 64  # `factprobe model --batch-size`'s default too
    memory_budget: int | None = None
    cache_dir: str | Path | None = None


class Backend:
    """A kind of model a spec names as NAME:TARGET, declared in one class: the registry and
    through it parse_spec, check_spec, load_scorer and `factprobe model --help` read these
    declarations and nothing else. A backend needing torch imports it in `load`, so that a
    spec is checked without it."""

    name: ClassVar[str]  # the spec's prefix, before the first ":"
    target: ClassVar[str]  # how TARGET is written in help and messages: PATH_OR_NAME, FILE, MODEL
    summary: ClassVar[str]  # one line: its entry under SPEC in `factprobe model --help`

    @classmethod
    def usage(cls) -> str:
        return f"{cls.name}:{cls.target}"

    @classmethod
    def parse(cls, spec: ModelSpec) -> None:
        """What parse_spec asks of the target (cheap: a file named is there). SpecError if not."""

    @classmethod
    def check(cls, spec: ModelSpec) -> None:
        """What can be told before the model loads, so a mistake costs no load (check_spec):
        SpecError of one line naming the spec and the check that failed."""

    @classmethod
    def load(cls, spec: ModelSpec, options: LoadOptions) -> Scorer:
        """The loaded model. SpecError where the target turns out to be no model."""
        raise NotImplementedError(f"backend {cls.name}: load")
