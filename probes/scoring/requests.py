"""What a scorer is asked and what it answers: typed, immutable, JSON-friendly.

A request carries everything that determines its answer (the text, the sampling settings, the
seed), so its JSON form doubles as the key of the on-disk result cache.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """Score each continuation after one shared context.

    The continuations are asked as a group because the context is encoded once for all of them.
    """

    context: str
    continuations: tuple[str, ...]

    def __post_init__(self) -> None:
        if isinstance(self.continuations, str):
            raise TypeError("continuations must be a sequence of strings, not one string")
        object.__setattr__(self, "continuations", tuple(self.continuations))
        for c in self.continuations:
            if not c:
                raise ValueError("a continuation must not be empty: there is nothing to score")


@dataclass(frozen=True)
class ContinuationScore:
    """log P(continuation | context) in nats, summed over the continuation's tokens."""

    logprob: float
    is_greedy: bool  # every continuation token was the argmax at its position
    n_tokens: int  # tokens scored (the joint tokenization may put a context space into the first)


@dataclass(frozen=True)
class LabelPathRequest:
    """Score each name as the whole answer after a prompt: log P(" " + name [+ EOS] | prompt).

    A name's path is the tokens of " " + name, tokenized on its own (no special tokens), then the
    model's end-of-sequence token when `eos` (the default: the name is complete, "Paris" and not
    the start of "Paris Hilton"). The prompt is the text before " " + name; a trailing space is
    dropped, since every path brings its own. The paths do not depend on the prompt, which is what
    lets ApprOpt's trie search over them (probes/scoring/label_trie.py), and they are the tokens the
    prompt continues with under the byte-level BPE and SentencePiece vocabularies we run.

    Names are stripped; the same name may appear twice (two entities called "Santiago"). A request
    is the unit of batching: its answer never depends on the other requests of a call.
    """

    prompt: str
    names: tuple[str, ...]
    eos: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.names, str):
            raise TypeError("names must be a sequence of strings, not one string")
        names = tuple(n.strip() for n in self.names)
        if not all(names):
            raise ValueError("a name must not be blank: there is nothing to score")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "prompt", self.prompt.rstrip(" "))


@dataclass(frozen=True)
class LabelPathScore:
    """log P(path | prompt) in nats, summed over the path's tokens (EOS included when asked)."""

    logprob: float
    n_tokens: int
    # The first earlier name of the same request whose path is the same token sequence (two
    # strings the tokenizer spells alike are one string to the model), else None: a sum of
    # probabilities over names counts such a path once.
    same_as: int | None = None


@dataclass(frozen=True)
class GenerateRequest:
    """Generate `n` continuations of a prompt.

    temperature 0 means greedy decoding (then n > 1 repeats the same answer and is refused).
    `beams` > 1 asks for beam search instead (temperature 0): the `n` <= `beams` most probable
    continuations found with `beams` beams, best first, ranked by their summed log-probability
    (no length penalty). Generation stops at the end-of-sequence token, at the first stop string
    (which is cut off), or after `max_tokens` tokens.
    """

    prompt: str
    max_tokens: int = 16
    temperature: float = 0.0
    n: int = 1
    stop: tuple[str, ...] = ()
    seed: int = 0
    top_p: float = 1.0
    beams: int = 1  # left out of the result cache's key when 1, so keys made before it still match

    def __post_init__(self) -> None:
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        object.__setattr__(self, "stop", tuple(self.stop))
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if self.n < 1:
            raise ValueError(f"n must be at least 1, got {self.n}")
        if self.temperature < 0:
            raise ValueError(f"temperature must not be negative, got {self.temperature}")
        if self.beams < 1:
            raise ValueError(f"beams must be at least 1, got {self.beams}")
        if self.beams > 1:
            if self.temperature != 0:
                raise ValueError("beam search is deterministic: ask temperature 0")
            if self.n > self.beams:
                raise ValueError(f"beam search with {self.beams} beams gives at most {self.beams} answers, not n={self.n}")
        elif self.temperature == 0 and self.n > 1:
            raise ValueError("greedy decoding (temperature 0) gives one answer; ask n=1")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0 and self.beams == 1


@dataclass(frozen=True)
class Generation:
    texts: tuple[str, ...]  # n texts, stop strings removed
    finish_reasons: tuple[str, ...] = field(default=())  # "stop", "eos" or "length" per text


@dataclass(frozen=True)
class FillMaskRequest:
    """`text` holds the placeholder `[MASK]` exactly once; the backend puts its own mask token there."""

    text: str
    top_k: int = 10

    PLACEHOLDER = "[MASK]"

    def __post_init__(self) -> None:
        count = self.text.count(self.PLACEHOLDER)
        if count != 1:
            raise ValueError(f"fill_mask needs exactly one {self.PLACEHOLDER} in the text, found {count}: {self.text!r}")
        if self.top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {self.top_k}")


@dataclass(frozen=True)
class MaskCandidate:
    token: str  # the vocabulary entry, decoded and stripped of word-piece markers
    token_id: int
    prob: float


def as_json(obj) -> dict:
    return asdict(obj)
