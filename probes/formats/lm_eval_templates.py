"""lm-evaluation-harness's Jinja templates (doc_to_*, description), rendered as harness renders
them (StrictUndefined, trailing newlines kept, its regex_replace filter beside Jinja's own) but
inside jinja2's ImmutableSandboxedEnvironment: harness's plain Environment runs
`{{ cycler.__init__.__globals__.os.popen('id').read() }}`; here no attribute starting with "_",
no unsafe or mutating method and no {% include %} / {% import %} / {% extends %} (no loader holds
a template) is reached. `lipsum`, random filler text, is left out: an imported prompt must be
the same text on every import.

Text is bounded where a few bytes could ask for gigabytes at once, and bounded before it is made
(probes/formats/lm_eval_bounds.py): every `~`, `+`, `*`, `**`, `%`, call and filter result, and a
template's output, weighs at most MAX_TEXT characters (or items), reckoned from the operands or
built piece by piece and stopped at the cap (str.format, format_map, printf `%`, join, translate,
replace, widths), no call or filter takes a size above it, and a number stays under MAX_BITS
bits. CPU time is not bounded (nested loops, a regex that backtracks).

What the sandbox forbids, and a template that does not compile, refuse the task
(TemplateRefused); what fails on one document (an undefined field, a bound reached, a type error)
rejects that document (TemplateFailed). Both carry one line naming nothing but the problem; the
caller adds file and field.
"""

from __future__ import annotations

import functools
import re

from .lm_eval_bounds import (MAX_TEXT, TooLarge, asks, bounded, bounded_join, check_binop, counted, filter_growth,
                             formatters, method_growth, translated)

__all__ = ["MAX_TEXT", "TemplateFailed", "TemplateRefused", "Templates", "regex_replace"]



class TemplateRefused(Exception):
    """The template does not compile, or reaches for what the sandbox forbids: refuse the task."""


class TemplateFailed(Exception):
    """The template fails on this document: reject the document."""


_GROUP_REFERENCE = re.compile(r"\\(?:g<[^>]*>|[1-9][0-9]?)")


def regex_replace(string, pattern, repl, count: int = 0):
    """Harness's one filter of its own (lm_eval/utils.py): re.sub, each replacement reckoned
    before it is made (its text, and each group it names at most the longest group's length)
    and the replacements counted together: `\\g<0>` written 1,000 times stops at the bound."""
    made, references = 0, len(_GROUP_REFERENCE.findall(repl)) if isinstance(repl, str) else 0

    def replacement(match) -> str:
        nonlocal made
        if isinstance(repl, str):
            longest = max((len(group) for group in (match[0], *match.groups()) if group), default=0)
            if made + len(repl) + references * longest > MAX_TEXT:
                raise asks("regex_replace")
            text = match.expand(repl)
        else:  # a macro: its output is bounded, their sum here
            text = str(repl(match))
        made += len(text)
        if made > MAX_TEXT:
            raise asks("regex_replace")
        return text

    return re.sub(pattern, replacement, string, count=count)


class Templates:
    """Compiled templates of one task, each compiled once."""

    def __init__(self) -> None:
        try:
            from jinja2 import DictLoader, StrictUndefined
        except ImportError as error:  # harness and torch bring it; factprobe's core does not need it
            raise TemplateRefused("templated fields need jinja2 (pip install jinja2)") from error
        self.env = _sandbox()(loader=DictLoader({}), undefined=StrictUndefined, keep_trailing_newline=True)
        self.env.globals.pop("lipsum", None)
        filters = {**self.env.filters, "regex_replace": regex_replace}
        self.env.filters = {name: _guarded(name, function) for name, function in filters.items()}
        self.compiled: dict[str, object] = {}

    def compile(self, text: str):
        if text not in self.compiled:
            from jinja2 import TemplateSyntaxError

            try:
                self.compiled[text] = self.env.from_string(text)
            except TemplateSyntaxError as error:
                why = _one_line(error.message)
                raise TemplateRefused(f"not a Jinja template (line {error.lineno}: {why})") from None
            except (RecursionError, MemoryError) as error:
                raise TemplateRefused(f"not a Jinja template ({type(error).__name__})") from None
        return self.compiled[text]

    def render(self, text: str, doc: dict) -> str:
        from jinja2 import TemplateError, TemplateNotFound
        from jinja2.sandbox import SecurityError

        template = self.compile(text)
        try:
            return template.render(doc)  # a dict, not **doc: a field may be called "self"
        except TooLarge as error:
            raise TemplateFailed(str(error)) from None
        except TemplateNotFound as error:
            raise TemplateRefused(f"it includes, imports or extends {error.name!r}: a template here reads no "
                                  "other template and no file") from None
        except SecurityError as error:
            raise TemplateRefused(f"the sandbox refuses it ({_one_line(error)})") from None
        except TemplateError as error:
            raise TemplateFailed(_one_line(error)) from None
        except Exception as error:  # noqa: BLE001 (any failure of a stranger's template is that template's)
            raise TemplateFailed(f"{type(error).__name__}: {_one_line(error)}") from None


def _check(name: str, value, args: tuple, kwargs: dict, growth) -> None:
    """No call or filter takes a value past the bounds, nor is asked to make one (`growth`)."""
    for given in (*args, *kwargs.values()):
        bounded(given)
    if growth(name, value, args, kwargs) > MAX_TEXT:
        raise asks(name)


def _guarded(name: str, function):
    """A filter whose result is bounded, and whose input is checked first where it could multiply."""
    value_at = 1 if hasattr(function, "jinja_pass_arg") else 0  # Jinja hands env/context first

    @functools.wraps(function)  # keeps jinja_pass_arg
    def guarded(*args, **kwargs):
        value, rest = args[value_at], args[value_at + 1:]
        _check(name, value, rest, kwargs, filter_growth)
        if name == "join":
            return bounded(_joined(args[:value_at], value, rest, kwargs))
        return bounded(counted(function(*args, **kwargs)))

    return guarded


def _joined(passed: tuple, value, rest: tuple, kwargs: dict) -> str:
    """The join filter, its items taken (and an attribute of each, `attribute=`) while the text
    stays within MAX_TEXT, then joined as Jinja's filter joins them (str() of each)."""
    from jinja2.filters import make_attrgetter

    separator = str(rest[0] if rest else kwargs.get("d", ""))
    attribute = rest[1] if len(rest) > 1 else kwargs.get("attribute")
    if attribute is not None:
        value = map(make_attrgetter(passed[0].environment, attribute), value)
    return separator.join(bounded_join(value, separator, convert=True))


@functools.cache
def _sandbox():
    """The sandbox class, made on first use (jinja2 is imported only when a template is)."""
    from jinja2.compiler import CodeGenerator
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    from jinja2.utils import Namespace
    from markupsafe import Markup

    class Generator(CodeGenerator):
        """`a ~ b` is joined by the generated code itself; here by the sandbox, within the bound."""

        def visit_Concat(self, node, frame) -> None:  # noqa: N802 (Jinja's visitor names)
            self.write("environment.joined((")
            for part in node.nodes:
                self.visit(part, frame)
                self.write(", ")
            self.write("))")

    class BoundedNamespace(Namespace):
        """namespace(): its text is its name, not its attributes (each may weigh up to the bound,
        and a template may set many)."""

        def __repr__(self) -> str:
            return "<Namespace>"

    class Sandbox(ImmutableSandboxedEnvironment):
        code_generator_class = Generator
        intercepted_binops = frozenset({"+", "*", "**", "%"})

        def __init__(self, **kwargs) -> None:
            super().__init__(**kwargs)
            self.globals["namespace"] = BoundedNamespace

        @staticmethod
        def joined(parts) -> str:
            return "".join(bounded_join(parts, convert=True))

        def concat(self, chunks) -> str:  # the output of a template, a block or a macro
            return "".join(bounded_join(chunks))

        def call_binop(self, context, operator, left, right):
            check_binop(operator, left, right)
            return bounded(super().call_binop(context, operator, left, right))

        def wrap_str_format(self, value):
            """str.format and format_map through a formatter that stops at the bound."""
            if super().wrap_str_format(value) is None:
                return None
            owner, mapped = value.__self__, value.__name__ == "format_map"
            plain, escaping = formatters()

            def wrapper(*args, **kwargs):
                if mapped:
                    if kwargs or len(args) != 1:
                        raise TypeError(f"format_map() takes exactly one argument ({len(args) + len(kwargs)} given)")
                    args, kwargs = (), args[0]
                formatter = escaping(self, escape=owner.escape) if isinstance(owner, Markup) else plain(self)
                return type(owner)(formatter.vformat(owner, args, kwargs))

            return functools.update_wrapper(wrapper, value)

        def call(self, context, obj, /, *args, **kwargs):
            method = getattr(obj, "__wrapped__", obj)  # str.format comes wrapped (wrap_str_format)
            owner = getattr(method, "__self__", None)
            name = getattr(method, "__name__", "")
            if isinstance(owner, (str, bytes)):
                _check(name, owner, args, kwargs, method_growth)
                if name == "join" and args and not kwargs:
                    return bounded(owner.join(bounded_join(args[0], owner)))
                if name == "translate" and isinstance(owner, str) and len(args) == 1 and not kwargs:
                    return translated(owner, args[0])
            else:
                _check(name, None, args, kwargs, lambda *_: 0)
            return bounded(counted(super().call(context, obj, *args, **kwargs)))

    return Sandbox


def _one_line(error) -> str:
    return " ".join(str(error).splitlines())
