"""OpenAI-compatible HTTP backend (hosted APIs, llama.cpp, vLLM, ...), through the `openai` client.

Generation always works. Log-likelihoods need the legacy completions endpoint with `echo` and
`logprobs`, and servers differ in how faithfully they implement it, so the numbers are checked
before they are used: once per scorer, a greedily generated token's log-prob (computed the way the
server computes generation) must equal the log-prob the same server reports for that token when
it is echoed as part of a prompt. A server that fails (llama-cpp-python 0.3.x reports every prompt
token's log-prob from its own position's logits, one position late) is refused with the figures,
rather than quietly producing wrong accuracies. Every answer is checked too: echoed tokens must
spell the prompt, and each log-prob must be a finite number <= 0.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from .requests import (ContinuationScore, Generation, GenerateRequest, LabelPathRequest, LabelPathScore,
                       LoglikelihoodRequest)
from .scorer import Scorer, ScoringError, Unsupported

ALIGNMENT_PROBE = "The capital of France is"
ALIGNMENT_TOLERANCE = 0.05  # nats; generous for servers that batch differently, far below a shift


class OpenAIScorer(Scorer):
    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 chat: bool = False, workers: int = 4, timeout: float = 120.0) -> None:
        super().__init__()
        from openai import OpenAI

        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        api_key = api_key or os.environ.get("OPENAI_API_KEY")
        if not base_url and not api_key:
            raise ScoringError("openai:... needs OPENAI_BASE_URL (a compatible server) or OPENAI_API_KEY (the hosted API)")
        # Local servers often need no key, but the client insists on one.
        self.client = OpenAI(base_url=base_url, api_key=api_key or "none", timeout=timeout, max_retries=3)
        self.model = model
        self.base_url = str(self.client.base_url)
        self.chat = chat
        self.workers = workers
        self.identity = f"openai:{model}@{self.base_url}"
        self._aligned: bool | None = None

    # -- generation ----------------------------------------------------------------------------

    def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        if any(r.beams > 1 for r in requests):
            # The OpenAI API has no beam search (vLLM dropped its `use_beam_search` extension).
            raise Unsupported(f"{self.identity}: an OpenAI-compatible server does not do beam search; "
                              "use a local model (hf:...) or sampling")
        with ThreadPoolExecutor(self.workers) as pool:
            answers = list(pool.map(self._generate_one, requests))
        self.work.requests += len(requests)
        return answers

    def _generate_one(self, request: GenerateRequest) -> Generation:
        texts: list[str] = []
        reasons: list[str] = []
        call = 0
        # Some servers ignore `n` and answer once; ask again (with the next seed) until there are n.
        while len(texts) < request.n:
            choices = self._complete(request, n=request.n - len(texts), seed=request.seed + call)
            if not choices:
                raise ScoringError(f"{self.identity}: the server answered with no choices")
            for text, reason in choices[: request.n - len(texts)]:
                cut = min((text.find(s) for s in request.stop if s and s in text), default=None)
                if cut is not None:
                    text, reason = text[:cut], "stop"
                texts.append(text)
                reasons.append("length" if reason == "length" else "stop")
            call += 1
        return Generation(tuple(texts), tuple(reasons))

    def _complete(self, request: GenerateRequest, n: int, seed: int) -> list[tuple[str, str]]:
        common = dict(model=self.model, max_tokens=request.max_tokens, temperature=request.temperature,
                      top_p=request.top_p, n=n, seed=seed, stop=list(request.stop[:4]) or None)
        if self.chat:
            response = self.client.chat.completions.create(
                messages=[{"role": "user", "content": request.prompt}], **common)
            return [(c.message.content or "", c.finish_reason) for c in response.choices]
        response = self.client.completions.create(prompt=request.prompt, **common)
        return [(c.text, c.finish_reason) for c in response.choices]

    # -- log-likelihood ------------------------------------------------------------------------

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[list[ContinuationScore]]:
        if self.chat:
            raise Unsupported(f"{self.identity}: chat endpoints return no prompt log-probs; use openai:MODEL")
        self.check_alignment()
        pairs = [(r.context, c) for r in requests for c in r.continuations]
        with ThreadPoolExecutor(self.workers) as pool:
            flat = iter(list(pool.map(lambda pair: self._score(*pair), pairs)))
        self.work.requests += len(requests)
        self.work.continuations += len(pairs)
        return [[next(flat) for _ in r.continuations] for r in requests]

    def label_paths(self, requests: Sequence[LabelPathRequest]) -> list[list[LabelPathScore]]:
        """Without EOS, a name's path is " " + name echoed after the prompt (the server tokenizes
        them together, which the label path definition assumes changes nothing). With EOS it cannot
        be asked: the API takes text, and the model's end-of-sequence token has no text a server
        is bound to read as that token."""
        if any(r.eos for r in requests):
            raise Unsupported(f"{self.identity}: an OpenAI-compatible server cannot score a name followed by the "
                              "end-of-sequence token (label paths with EOS); use a local causal model (hf:...)")
        asked = [LoglikelihoodRequest(r.prompt, tuple(" " + n for n in r.names)) for r in requests if r.names]
        found = iter(self.loglikelihood(asked))
        answers = []
        for request in requests:
            scores = next(found) if request.names else []
            first: dict[str, int] = {}  # one text, one path; other spellings alike are not known here
            answer = []
            for k, (name, score) in enumerate(zip(request.names, scores)):
                answer.append(LabelPathScore(score.logprob, score.n_tokens, first.get(name)))
                first.setdefault(name, k)
            answers.append(answer)
        return answers

    def check_alignment(self) -> None:
        if self._aligned:
            return
        generated = self.client.completions.create(
            model=self.model, prompt=ALIGNMENT_PROBE, max_tokens=1, temperature=0, logprobs=1)
        logprobs = generated.choices[0].logprobs
        if logprobs is None or not logprobs.token_logprobs or logprobs.token_logprobs[0] is None:
            raise Unsupported(f"{self.identity}: the server returns no log-probs; it can generate, not score")
        token, expected = logprobs.tokens[0], logprobs.token_logprobs[0]
        echoed = self._echo(ALIGNMENT_PROBE + token)
        got = echoed.token_logprobs[_last_prompt_token(echoed, len(ALIGNMENT_PROBE + token))]
        if got is None or abs(got - expected) > ALIGNMENT_TOLERANCE:
            raise ScoringError(
                f"{self.identity}: prompt log-probs disagree with generation: the token {token!r} after "
                f"{ALIGNMENT_PROBE!r} has log-prob {expected:.4f} when generated but {got} when echoed in "
                "the prompt (a server that scores each prompt token with its own position's logits, one "
                "position late, does this). Its log-probs cannot be trusted; use it for generation only")
        self._aligned = True

    def _echo(self, prompt: str):
        try:
            response = self.client.completions.create(
                model=self.model, prompt=prompt, max_tokens=1, temperature=0, echo=True, logprobs=1)
        except Exception as error:  # the server's own words are the useful part
            raise Unsupported(f"{self.identity}: the server refused an echo request: {error}") from error
        logprobs = response.choices[0].logprobs
        if logprobs is None or not logprobs.tokens:
            raise Unsupported(f"{self.identity}: the server does not echo prompt log-probs; it can generate, not score")
        return logprobs

    def _score(self, context: str, continuation: str) -> ContinuationScore:
        prompt = context + continuation
        logprobs = self._echo(prompt)
        _check_spelling(logprobs, prompt, self.identity)
        total, greedy, count = 0.0, True, 0
        for i, (offset, token) in enumerate(zip(logprobs.text_offset, logprobs.tokens)):
            if offset >= len(prompt):
                break  # the generated token that follows the echo
            if offset + len(token) <= len(context):
                continue  # wholly inside the context
            value = logprobs.token_logprobs[i]
            if value is None:
                raise ScoringError(f"{self.identity}: no log-prob for the first token; give a non-empty context")
            if not math.isfinite(value) or value > 1e-6:
                raise ScoringError(f"{self.identity}: invalid log-prob {value!r} for token {token!r}")
            total += value
            count += 1
            top = (logprobs.top_logprobs or [None] * (i + 1))[i]
            if top:
                greedy = greedy and max(top.values()) <= value + 1e-6
            else:
                greedy = False
        if count == 0:
            raise ScoringError(f"{self.identity}: no token of {continuation!r} found in the echoed prompt")
        return ContinuationScore(total, greedy, count)


def _check_spelling(logprobs, prompt: str, identity: str) -> None:
    offsets = logprobs.text_offset
    if offsets is None or len(offsets) != len(logprobs.tokens) or len(logprobs.token_logprobs) != len(offsets):
        raise ScoringError(f"{identity}: echoed tokens, offsets and log-probs differ in length")
    spelled = "".join(t for t, o in zip(logprobs.tokens, offsets) if o < len(prompt))
    if spelled != prompt:
        raise ScoringError(f"{identity}: the echoed tokens spell {spelled[:60]!r}, not the prompt {prompt[:60]!r}")


def _last_prompt_token(logprobs, prompt_length: int) -> int:
    inside = [i for i, o in enumerate(logprobs.text_offset) if o < prompt_length]
    if not inside:
        raise ScoringError("the echoed answer holds no prompt token")
    return inside[-1]
