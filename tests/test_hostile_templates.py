"""lm-eval templates that ask for gigabytes in a few bytes (issue 44 item C): every result is
bounded before it is built (probes/formats/lm_eval_bounds.py), so the import's peak memory stays a few
MB above a benign import's and the document is rejected in one line naming the file, line and
field; and within the bounds a template renders exactly as Jinja's own sandbox renders it.

Each import runs as `factprobe probeset import` in a new process under a 1 GiB address-space
limit (a regression fails on MemoryError instead of taking the machine), its peak RSS read from
its own rusage (os.wait4)."""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings, strategies as st

from cli_runner import peak_rss
from conftest import factprobe_cmd
from factprobe.probes.formats.lm_eval_bounds import MAX_TEXT, printf_size
from factprobe.probes.formats.lm_eval_templates import TemplateFailed, Templates

LIMIT = 1 << 30
TASK = """task: t
dataset_path: json
dataset_kwargs:
  data_files:
    test: d.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: {template}
doc_to_choice: "{{{{options}}}}"
doc_to_target: label
"""
REFUSED = "would make more than 1,048,576 characters (refused before it is made)"


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def imported(base: Path, template: str) -> tuple[int, str, str, float]:
    """(exit code, stdout, stderr, peak RSS in MB) of importing a one-document task whose
    doc_to_text is `template`."""
    task = base / "task"
    task.mkdir()
    (task / "d.jsonl").write_text(json.dumps({"q": "Capital of France?", "options": ["Lyon", "Paris"],
                                              "label": 1}) + "\n")
    (task / "t.yaml").write_text(TASK.format(template=json.dumps(template)))
    with open(base / "out.txt", "w+") as out, open(base / "err.txt", "w+") as err:
        code, rss = peak_rss([*factprobe_cmd(), "probeset", "import", "--format", "lm-eval", task / "t.yaml",
                              "--out", base / "items.jsonl"], base / "rss.txt", stdout=out, stderr=err,
                             preexec_fn=limited)
        out.seek(0)
        err.seek(0)
        return code, out.read(), err.read(), rss / (1 << 20)


@pytest.fixture(scope="module")
def benign_rss(tmp_path_factory) -> float:
    code, out, err, rss = imported(tmp_path_factory.mktemp("benign"), "{{ q }}")
    assert code == 0 and err == "", err
    return rss


@pytest.mark.parametrize("template, refused", [
    ("{{ ('{0}' * 2000).format('z' * 1000000) }}", f"the template's str.format {REFUSED}"),  # as issue 44 writes it
    ("{{ ('z' * 1000000).join('a' * 2000) }}", "the template joins more than 1,048,576 characters"),
    ("{{ ('z' * 1000000).translate({122: 'y' * 2000}) }}", f"the template's translate {REFUSED}"),
    ("{{ ('%(a)s' * 2000) % {'a': 'z' * 1000000} }}", f"the template's % {REFUSED}"),
    ("{{ ('{a}' * 2000).format_map({'a': 'z' * 1000000}) }}", f"the template's str.format {REFUSED}"),
])
def test_a_template_asking_for_gigabytes_is_refused_before_it_is_built(tmp_path, benign_rss, template, refused):
    code, out, err, rss = imported(tmp_path, template)
    assert (code, err) == (3, f"rejected {tmp_path}/task/d.jsonl:1: doc_to_text: {refused}\n"), (out, err)
    assert out == f"0 icl-mc items from 1 lm-eval rows -> {tmp_path}/items.jsonl; 1 rejected\n"
    assert rss < benign_rss + 20 and rss < 100, f"peak RSS {rss:.0f} MB (a benign import: {benign_rss:.0f} MB)"


# The other ways a template could multiply what it holds, rendered in one process under the same
# limit: (template, the line refusing it). tracemalloc's peak stays a small multiple of MAX_TEXT.
MORE = [
    ("{{ ('a' * 2000)|join('z' * 1000000) }}", "the template joins more than 1,048,576 characters"),
    ("{{ ('%(a)s' * 2000)|format(a='z' * 1000000) }}", f"the template's format {REFUSED}"),
    ("{{ ('%s' * 2000) % ((['z' * 1000000]) * 2000) }}",
     "the template asks for 2,000,012,000 characters or items (at most 1,048,576)"),
    ("{{ '%-*s' % (10**9, 'a') }}", f"the template's % {REFUSED}"),
    ("{{ '{:>{}}'.format('a', 10**9) }}", f"the template's str.format {REFUSED}"),
    ("{{ ('ab' * 500000).replace('a', 'z' * 1000) }}", f"the template's replace {REFUSED}"),
    ("{{ ('z' * 1000000).center(10**9) }}", f"the template's center {REFUSED}"),
    ("{{ ('z' * 1000000).translate(['y' * 1000] * 200) }}", f"the template's translate {REFUSED}"),
    ("{% set z = 'z' * 1000000 %}{{ z ~ z ~ z }}", "the template joins more than 1,048,576 characters"),
    ("{{ 'z' * 1000000 + 'z' * 1000000 }}", f"the template's + {REFUSED}"),
    ("{% set big = ['z'] * 100000 %}{{ [big] * 1000 }}",
     "the template asks for 500,008,000 characters or items (at most 1,048,576)"),
    ("{{ range(100000)|map('center', 1000)|list }}", "the template iterates over more than 1,048,576 characters or "
                                                      "items"),
    ("{{ '{}'.format(*(range(100000)|map('center', 1000))) }}", "the template iterates over more than 1,048,576 "
                                                                 "characters or items"),
    ("{{ ('a ' * 500000)|wordwrap(1, wrapstring='z' * 1000000) }}", f"the template's wordwrap {REFUSED}"),
    ("{{ ('a\\n' * 500000)|indent('z' * 1000) }}", f"the template's indent {REFUSED}"),
    ("{{ [1]|batch(10**9, 'x')|list }}", f"the template's batch {REFUSED}"),
    ("{{ [1]|slice(10**9)|list }}", f"the template's slice {REFUSED}"),
    ("{{ ({'a': [[1]] * 1000})|tojson(indent=100000) }}", f"the template's tojson {REFUSED}"),
    ("{{ ('\u20ac ' * 500000).split() }}", f"the template's split {REFUSED}"),
    ("{{ ('\u20ac' * 1000000)|list }}", f"the template's list {REFUSED}"),
    ("{{ ('z' * 1000000).encode() * 2000 }}",
     "the template asks for 2,000,000,000 characters or items (at most 1,048,576)"),
    ("{{ ('z' * 1000000).encode().replace('z'.encode(), ('y' * 1000).encode()) }}",
     f"the template's replace {REFUSED}"),
    ("{{ ('%(a)s' * 2000).encode() % {'a'.encode(): ('z' * 1000000).encode()} }}", f"the template's % {REFUSED}"),
    ("{{ ('z' * 1000000).encode().join(['a'.encode()] * 2000) }}", "the template joins more than 1,048,576 characters"),
    ("{{ ('a' * 2000)|regex_replace('a', 'z' * 1000000) }}", f"the template's regex_replace {REFUSED}"),
    ("{{ ('a' * 100000)|regex_replace('(a+)', '\\\\g<1>' * 100000) }}", f"the template's regex_replace {REFUSED}"),
]
PROBE = """
import json, sys, tracemalloc
from factprobe.probes.formats.lm_eval_templates import TemplateFailed, Templates
templates, seen = Templates(), []
for text in json.loads(sys.stdin.read()):
    tracemalloc.start()
    try:
        seen.append([templates.render(text, {"q": "x"}), None])
    except TemplateFailed as error:
        seen.append([None, str(error)])
    seen[-1].append(tracemalloc.get_traced_memory()[1])
    tracemalloc.stop()
print(json.dumps(seen))
"""


@pytest.mark.slow
def test_every_way_to_multiply_text_is_refused_before_it_is_built():
    done = subprocess.run([sys.executable, "-c", PROBE], input=json.dumps([t for t, _ in MORE]), capture_output=True,
                          text=True, preexec_fn=limited, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    for (template, refused), (text, error, peak) in zip(MORE, json.loads(done.stdout), strict=True):
        assert (text, error) == (None, refused), template
        assert peak < 12 * MAX_TEXT, f"{template}: {peak:,} bytes at the peak"


def test_namespace_prints_its_name_not_its_attributes():
    assert Templates().render("{% set ns = namespace(a='z' * 1000000) %}{{ [ns] * 3 }}", {}) == \
        "[<Namespace>, <Namespace>, <Namespace>]"


# -- within the bounds, what Jinja's own sandbox renders ----------------------------------------------

WITHIN = [
    "{{ '{0}-{1!r}-{0:>6}'.format(q, 3) }}", "{{ '{a}|{b:.2f}'.format_map({'a': q, 'b': 2.5}) }}",
    "{{ '%(a)s %(b)5d %%' % {'a': q, 'b': 7} }}", "{{ '%s' % {'a': 1} }}", "{{ '%-6s|%.2f|%x|%c' % (q, 1.5, 255, 65) }}",
    "{{ ', '.join(['x', q]) }}", "{{ [q, 1]|join('; ') }}", "{{ [{'a': q}, {'a': 'b'}]|join(',', attribute='a') }}",
    "{{ q.translate({97: 'xy', 98: None}) }}", "{{ q.translate('abcdefghijklmnopqrstuvwxyz'[::-1] * 5) }}",
    "{{ q ~ 1 ~ [2] }}", "{{ q * 3 + q }}", "{{ q.replace('a', '--') }}", "{{ q|wordwrap(3) }}", "{{ q|indent(2) }}",
    "{{ [1, 2, 3]|batch(2, 0)|list }}", "{{ [1, 2, 3]|slice(2)|list }}", "{{ {'a': [1]}|tojson(indent=2) }}",
    "{{ q.split('a') }} {{ q.split() }} {{ q.splitlines() }}", "{{ (range(5)|map('string')|list) }}",
    "{{ '%(x)s' % {'x': '%s'} }}", "{% for x in q|list %}{{ loop.index }}{{ x }}{% endfor %}",
    "{{ q|regex_replace('(a)(b)?', '<\\\\2\\\\1>') }}", "{{ q|regex_replace('a|$', '-', 2) }}",
    "{{ q.encode() * 2 }} {{ q.encode().replace('a'.encode(), 'xy'.encode()) }} {{ ('%s|'.encode()) % q.encode() }}",
]


@settings(max_examples=30, deadline=None)
@given(template=st.sampled_from(WITHIN), q=st.text(alphabet="ab c\n%{}", max_size=12))
def test_within_the_bounds_a_template_renders_as_jinjas_sandbox_does(template, q):
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    plain = ImmutableSandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True)
    plain.filters["regex_replace"] = lambda string, pattern, repl, count=0: re.sub(pattern, repl, string, count=count)
    try:
        expected = plain.from_string(template).render({"q": q})
    except Exception:  # noqa: BLE001 (whatever Jinja raises, the bounded sandbox fails the document)
        with pytest.raises(TemplateFailed):
            Templates().render(template, {"q": q})
        return
    assert Templates().render(template, {"q": q}) == expected, template


values = st.one_of(st.text(alphabet="ab\n\x00\u20ac'", max_size=6), st.integers(-10**6, 10**6),
                   st.floats(allow_nan=False, allow_infinity=False, width=32), st.lists(st.text(max_size=3), max_size=3))


@settings(max_examples=40, deadline=None)
@given(fmt=st.text(alphabet="%()ab-+ #0123.*sdrafxc", max_size=16),
       given_values=st.one_of(st.tuples(values, values, values), values,
                              st.dictionaries(st.sampled_from(["a", "b", ""]), values, max_size=3)))
@example(fmt="%a", given_values="\u20ac")  # ascii() escapes it: 8 characters made, 6 once reckoned
def test_the_printf_reckoning_is_never_below_what_percent_makes(fmt, given_values):
    try:
        made = fmt % given_values
    except (TypeError, ValueError, KeyError, OverflowError):
        return
    assert printf_size(fmt, given_values) >= len(made), (fmt, given_values, made)
