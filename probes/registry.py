"""A registry of declared classes by name (probe-set kinds, probing methods): what `register`
checks of every one of them, refusing a taken name, and reading it back with the plugins that
FACTPROBE_PLUGINS names imported first. Each registry adds the checks of its own declarations."""

from __future__ import annotations

from typing import Callable, Generic, TypeVar

from .plugins import load_plugins

T = TypeVar("T", bound=type)


class Registry(Generic[T]):
    def __init__(self, noun: str, base: type, checks: Callable[[type, str], None]) -> None:
        self.noun, self.base, self.checks = noun, base, checks
        self.entries: dict[str, T] = {}  # filled by register() only

    def register(self, cls: T, *, replace: bool = False) -> T:
        """Add a class (and return it: this works as a class decorator). Its declarations are
        checked here, so a mistake shows at registration, not mid-run. The same class twice is a
        no-op; another class under a taken name is refused unless `replace`."""
        if not (isinstance(cls, type) and issubclass(cls, self.base)):
            raise TypeError(f"register: {cls!r} is not a {self.base.__name__} subclass")
        where = f"{self.noun} class {cls.__module__}.{cls.__qualname__}"
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name or name != name.strip() or "," in name:
            raise ValueError(f"{where}: `name` must be a non-empty string without spaces at its ends or commas")
        summary = getattr(cls, "summary", None)
        if not isinstance(summary, str) or not summary.strip() or "\n" in summary:
            raise ValueError(f"{where}: `summary` must be one line of text (it is the {self.noun}'s --help entry)")
        self.checks(cls, where)
        held = self.entries.get(name)
        if held is not None and held is not cls and not replace:
            raise ValueError(f"{self.noun} {name!r} is registered already ({held.__module__}.{held.__qualname__}); "
                             "pass replace=True to override it")
        self.entries[name] = cls
        return cls

    def unregister(self, name: str) -> T | None:
        """Remove a class (tests, a plugin that replaces itself); returns it."""
        return self.entries.pop(name, None)

    def registered(self) -> dict[str, T]:
        """Name -> class, plugins included: what every caller reads."""
        load_plugins()
        return self.entries

    def get(self, name: str, order: Callable = list) -> T:
        """The class registered under `name`; ValueError naming the registered ones otherwise."""
        entries = self.registered()
        if name not in entries:
            raise ValueError(f"{self.noun} {name!r}: use one of {', '.join(order(entries))}")
        return entries[name]
