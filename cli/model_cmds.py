"""`factprobe model ...`: ask one model the engine's four questions from the shell (loglikelihood,
label paths, generate, fill_mask)."""

from __future__ import annotations

import json
import time
from contextlib import closing
from dataclasses import asdict
from pathlib import Path

import click

from ..probes.scoring.backends import LoadOptions
from ..probes.scoring.requests import FillMaskRequest, GenerateRequest
from .errors import EXIT_USAGE, fail, os_error_line
from .options import json_option, with_options
from .outputs import claim_cache, overwrite_option
from .terminal import echo



model_options = with_options([
    click.argument("spec"),
    click.option("--device", default="auto", show_default=True, envvar="FACTPROBE_DEVICE",
                 help="cpu, cuda, cuda:1, ... (auto: CUDA when present)."),
    click.option("--dtype", default="auto", show_default=True, envvar="FACTPROBE_DTYPE",
                 help="float32, bfloat16, float16 (auto: bf16 on CUDA, fp32 on CPU)."),
    click.option("--batch-size", type=click.IntRange(min=1), default=LoadOptions.batch_size, show_default=True,
                 help="Most continuations per forward pass; halves by itself on out-of-memory."),
    click.option("--cache", "cache_path", type=click.Path(dir_okay=False), default=None,
                 help="SQLite result cache: answers found there are not recomputed."),
    overwrite_option,
])


def _load(spec, device, dtype, batch_size, cache_path, overwrite=False):
    import sqlite3

    from ..kg.outputs import refuse_link
    from ..probes.scoring.cache import CachedScorer
    from ..probes.scoring.loader import load_scorer
    from ..probes.scoring.scorer import ScoringError
    from ..probes.scoring.specs import SpecError

    if cache_path:
        refuse_link(cache_path)  # never written through (kg/outputs.py)
    if cache_path and Path(cache_path).exists() and not overwrite:  # a file that is not a cache, before the load
        try:
            with closing(sqlite3.connect(f"{Path(cache_path).resolve().as_uri()}?mode=ro", uri=True)) as db:
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as error:
            fail(f"--cache {cache_path}: not a result cache ({error})", EXIT_USAGE)
    if cache_path:  # another database (a graph store), a link: refused (cli/outputs.py)
        claim_cache(cache_path, overwrite=overwrite)
    started = time.perf_counter()
    try:
        scorer = load_scorer(spec, device=device, dtype=dtype, batch_size=batch_size)
    except (SpecError, ValueError, FileNotFoundError, ScoringError) as error:
        fail(str(error), EXIT_USAGE)
    echo(f"loaded {scorer.identity} in {time.perf_counter() - started:.1f} s", err=True)
    if not cache_path:
        return scorer
    try:
        return CachedScorer(scorer, cache_path)
    except sqlite3.DatabaseError as error:  # a file that is not a result cache
        fail(f"--cache {cache_path}: not a result cache ({error})", EXIT_USAGE)
    except OSError as error:
        fail(f"--cache: {os_error_line(error)}", EXIT_USAGE)


def _run(call):
    from ..probes.scoring.scorer import ScoringError, Unsupported

    try:
        return call()
    except (ScoringError, Unsupported) as error:
        fail(str(error), EXIT_USAGE)


class SpecsGroup(click.Group):
    """`model --help`: SPEC's forms are each registered backend's (probes/scoring/backends) and
    the shortcuts', written when help is asked for, so plugins' backends are listed too."""

    def format_help_text(self, ctx, formatter) -> None:
        import inspect

        from ..probes.scoring.specs import spec_forms

        forms = spec_forms()
        width = max(len(usage) for usage, _ in forms) + 2
        template, self.help = self.help, inspect.cleandoc(self.help).replace(
            "{specs}", "\n".join(f"  {usage:<{width}}{summary}" for usage, summary in forms))
        try:
            super().format_help_text(ctx, formatter)
        finally:
            self.help = template


@click.group("model", cls=SpecsGroup)
def model_group() -> None:
    """Load a model and score, generate or fill a mask with it.

    \b
    SPEC, the model:
    {specs}

    \b
    Examples:
    factprobe model score smollm2-135m-instruct --context "The capital of France is" \\
        --continuation " Paris" --continuation " Lyon"
    factprobe model generate gemma3-270m --prompt "Albert Einstein was born in" --n 5 --temperature 0.8
    """


@model_group.command("score")
@model_options
@click.option("--context", required=True, help="Text before the continuations (kept verbatim, spaces included).")
@click.option("--continuation", "continuations", multiple=True, required=True,
              help="A continuation to score; repeat for several. Scored jointly with the context.")
@json_option
def score(spec, device, dtype, batch_size, cache_path, overwrite, context, continuations, as_json):
    """log P(continuation | context) in nats for each continuation, best first.

    SPEC is a model spec (see `factprobe model --help`)."""
    from ..probes.scoring.requests import LoglikelihoodRequest

    try:
        request = LoglikelihoodRequest(context, continuations)
    except ValueError as error:
        fail(str(error), EXIT_USAGE)  # before the model loads
    scorer = _load(spec, device, dtype, batch_size, cache_path, overwrite)
    [scores] = _run(lambda: scorer.loglikelihood([request]))
    rows = sorted(({"continuation": c, **asdict(s)} for c, s in zip(continuations, scores)),
                  key=lambda r: -r["logprob"])
    if as_json:
        echo(json.dumps({"model": scorer.identity, "context": context, "scores": rows}, ensure_ascii=False))
        return
    width = max(len(repr(r["continuation"])) for r in rows)
    for r in rows:
        flag = "  greedy" if r["is_greedy"] else ""
        echo(f"{r['continuation']!r:<{width}}  {r['logprob']:10.4f} nats  {r['n_tokens']} tok{flag}")


@model_group.command("generate")
@model_options
@click.option("--prompt", required=True)
@click.option("--max-tokens", type=click.IntRange(min=1), default=32, show_default=True)
@click.option("--temperature", type=click.FloatRange(min=0), default=GenerateRequest.temperature, show_default=True,
              help="0 = greedy.")
@click.option("--top-p", type=click.FloatRange(min=0, max=1, min_open=True), default=GenerateRequest.top_p,
              show_default=True)
@click.option("--n", type=click.IntRange(min=1), default=GenerateRequest.n, show_default=True,
              help="Samples (temperature > 0).")
@click.option("--stop", multiple=True, help="Stop string; repeat for several. Cut from the output.")
@click.option("--seed", type=int, default=GenerateRequest.seed, show_default=True)
@json_option
def generate(spec, device, dtype, batch_size, cache_path, overwrite, prompt, max_tokens, temperature, top_p, n, stop,
             seed, as_json):
    """Greedy or sampled continuations of a prompt."""
    try:
        request = GenerateRequest(prompt, max_tokens=max_tokens, temperature=temperature, n=n,
                                  stop=tuple(stop), seed=seed, top_p=top_p)
    except ValueError as error:
        fail(str(error), EXIT_USAGE)  # before the model loads
    scorer = _load(spec, device, dtype, batch_size, cache_path, overwrite)
    [answer] = _run(lambda: scorer.generate([request]))
    if as_json:
        echo(json.dumps({"model": scorer.identity, "prompt": prompt, **asdict(answer)}, ensure_ascii=False))
        return
    for text, reason in zip(answer.texts, answer.finish_reasons):
        echo(f"{text!r}  [{reason}]")


@model_group.command("fill-mask")
@model_options
@click.argument("text")
@click.option("--top-k", type=click.IntRange(min=1), default=FillMaskRequest.top_k, show_default=True)
@json_option
def fill_mask(spec, device, dtype, batch_size, cache_path, overwrite, text, top_k, as_json):
    """Top-k tokens at the [MASK] in TEXT (masked LMs only)."""
    try:
        request = FillMaskRequest(text, top_k=top_k)
    except ValueError as error:
        fail(str(error), EXIT_USAGE)  # before the model loads
    scorer = _load(spec, device, dtype, batch_size, cache_path, overwrite)
    [candidates] = _run(lambda: scorer.fill_mask([request]))
    if as_json:
        echo(json.dumps({"model": scorer.identity, "text": text,
                               "candidates": [asdict(c) for c in candidates]}, ensure_ascii=False))
        return
    for c in candidates:
        echo(f"{c.token!r:<20} {c.prob:.4f}")
