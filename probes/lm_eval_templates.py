"""lm-evaluation-harness's Jinja templates (doc_to_*, description), rendered as harness renders
them (StrictUndefined, trailing newlines kept, its regex_replace filter beside Jinja's own) but
inside jinja2's ImmutableSandboxedEnvironment: harness's plain Environment runs
`{{ cycler.__init__.__globals__.os.popen('id').read() }}`; here no attribute starting with "_",
no unsafe or mutating method and no {% include %} / {% import %} / {% extends %} (no loader holds
a template) is reached. `lipsum`, random filler text, is left out: an imported prompt must be
the same text on every import.

Text is bounded where a few bytes could ask for gigabytes at once: every `~`, `+`, `*`, `**`, `%`,
call and filter result, and a template's output, holds at most MAX_TEXT characters (or items),
no call or filter takes a size above it, and a number stays under MAX_BITS bits. CPU time is not
bounded (nested loops, a regex that backtracks).

What the sandbox forbids, and a template that does not compile, refuse the task
(TemplateRefused); what fails on one document (an undefined field, a bound reached, a type error)
rejects that document (TemplateFailed). Both carry one line naming nothing but the problem; the
caller adds file and field.
"""

from __future__ import annotations

import functools
import math
import re

MAX_TEXT = 1 << 20
MAX_BITS = 4096
# printf widths and precisions ("%9999999d", "%*d"), str.format ones ("{:>9999999}"): sizes asked for
_PRINTF_SIZE = re.compile(r"%[-#0 +]*(\*|\d{7,}|\d*\.(\*|\d{7,}))")
_FORMAT_SIZE = re.compile(r"\{[^{}]*:[^{}]*(\d{7,}|\{)")


class TemplateRefused(Exception):
    """The template does not compile, or reaches for what the sandbox forbids: refuse the task."""


class TemplateFailed(Exception):
    """The template fails on this document: reject the document."""


def regex_replace(string, pattern, repl, count: int = 0):
    """Harness's one filter of its own (lm_eval/utils.py): re.sub."""
    return re.sub(pattern, repl, string, count=count)


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
        except _TooLarge as error:
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


def _size(value) -> int:
    """Characters or items a value holds, a collection's texts counted too (what joining it makes)."""
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, (list, tuple, set, frozenset)):
        return len(value) + sum(len(v) for v in value if isinstance(v, (str, bytes)))
    return 0


class _TooLarge(Exception):
    """A bound reached (told apart from the sandbox's SecurityError: the document is rejected)."""


def _bounded(value):
    if _size(value) > MAX_TEXT:
        raise _TooLarge(f"the template makes a value of {_size(value):,} characters or items (at most {MAX_TEXT:,})")
    if isinstance(value, int) and value.bit_length() > MAX_BITS:
        raise _TooLarge(f"the template makes a number past {MAX_BITS} bits")
    return value


def _growth(name: str, value, args: tuple, kwargs: dict) -> int:
    """What the few calls that multiply their input would make, in characters, before they run
    (0 for every other call): widths, indents, replacements, printf and format sizes."""
    def number(at: int, key: str, default: int = 0):
        given = args[at] if len(args) > at else kwargs.get(key, default)
        return given if isinstance(given, int) and not isinstance(given, bool) else len(str(given))

    if not isinstance(value, str):
        return 0
    if name in ("center", "ljust", "rjust", "zfill"):
        return number(0, "width")
    if name == "indent":
        return len(value) + number(0, "width", 4) * (value.count("\n") + 1)
    if name == "expandtabs":
        return len(value) + number(0, "tabsize", 8) * value.count("\t")
    if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        return len(value) + value.count(args[0]) * len(args[1])
    if name in ("format", "__mod__") and _PRINTF_SIZE.search(value) or name in ("format", "format_map") \
            and _FORMAT_SIZE.search(value):
        return MAX_TEXT + 1
    return 0


def _bounded_join(value):
    """An iterable handed to join, taken into a list while its text stays within MAX_TEXT."""
    items, total = [], 0
    for item in value:
        total += len(item) if isinstance(item, str) else 1
        if total > MAX_TEXT:
            raise _TooLarge(f"the template joins more than {MAX_TEXT:,} characters")
        items.append(item)
    return items


def _check(name: str, value, args: tuple, kwargs: dict) -> None:
    for given in (*args, *kwargs.values()):
        _bounded(given)
    if _growth(name, value, args, kwargs) > MAX_TEXT:
        raise _TooLarge(f"the template asks {name} for more than {MAX_TEXT:,} characters")


def _guarded(name: str, function):
    """A filter whose result is bounded, and whose input is checked first where it could multiply."""
    value_at = 1 if hasattr(function, "jinja_pass_arg") else 0  # Jinja hands env/context first

    @functools.wraps(function)  # keeps jinja_pass_arg
    def guarded(*args, **kwargs):
        value, rest = args[value_at], args[value_at + 1:]
        _check(name, value, rest, kwargs)
        if name == "join":
            args = (*args[:value_at], _bounded_join(value), *rest)
        return _bounded(function(*args, **kwargs))

    return guarded


@functools.cache
def _sandbox():
    """The sandbox class, made on first use (jinja2 is imported only when a template is)."""
    from jinja2.compiler import CodeGenerator
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Generator(CodeGenerator):
        """`a ~ b` is joined by the generated code itself; wrapped, its result is bounded."""

        def visit_Concat(self, node, frame) -> None:  # noqa: N802 (Jinja's visitor names)
            self.write("environment.bounded(")
            super().visit_Concat(node, frame)
            self.write(")")

    class Sandbox(ImmutableSandboxedEnvironment):
        code_generator_class = Generator
        intercepted_binops = frozenset({"+", "*", "**", "%"})

        @staticmethod
        def bounded(value):
            return _bounded(value)

        def concat(self, chunks) -> str:  # the output of a template, a block or a macro
            return "".join(_bounded_join(chunks))

        def call_binop(self, context, operator, left, right):
            _check_binop(operator, left, right)
            return _bounded(super().call_binop(context, operator, left, right))

        def call(self, context, obj, /, *args, **kwargs):
            method = getattr(obj, "__wrapped__", obj)  # the sandbox wraps str.format at access
            owner = getattr(method, "__self__", None)
            name = getattr(method, "__name__", "")
            _check(name, owner if isinstance(owner, str) else None, args, kwargs)
            if isinstance(owner, str) and name == "join" and args:
                args = (_bounded_join(args[0]), *args[1:])
            return _bounded(super().call(context, obj, *args, **kwargs))

    return Sandbox


def _check_binop(operator: str, left, right) -> None:
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right))
    if operator == "**" and numbers and right > 0 and abs(left) > 1 and right * math.log2(abs(left)) > MAX_BITS:
        raise _TooLarge(f"the template asks for a number past {MAX_BITS} bits")
    if operator == "*":
        if numbers and isinstance(left, int) and isinstance(right, int) \
                and left.bit_length() + right.bit_length() > MAX_BITS:
            raise _TooLarge(f"the template asks for a number past {MAX_BITS} bits")
        times, sequence = (left, right) if isinstance(left, int) else (right, left)
        if isinstance(times, int) and isinstance(sequence, (str, list, tuple)) and _size(sequence) * times > MAX_TEXT:
            raise _TooLarge(f"the template asks for {_size(sequence) * times:,} characters or items "
                            f"(at most {MAX_TEXT:,})")
    if operator == "%":
        _check("__mod__", left, (), {})


def _one_line(error) -> str:
    return " ".join(str(error).splitlines())
