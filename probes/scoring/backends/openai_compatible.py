"""Backends `openai:MODEL` (an OpenAI-compatible server's completions endpoint) and
`openai-chat:MODEL` (its chat endpoint, generation only); the server is where OPENAI_BASE_URL
or OPENAI_API_KEY says (openai_api.py)."""

from __future__ import annotations

import importlib.util
import os

from ..scorer import Scorer
from .base import Backend, LoadOptions, ModelSpec, SpecError


class OpenAI(Backend):
    name = "openai"
    target = "MODEL"
    summary = "OpenAI-compatible completions ($OPENAI_BASE_URL, $OPENAI_API_KEY)"
    chat = False

    @classmethod
    def check(cls, spec: ModelSpec) -> None:
        """The model is not asked (a server), but the client must be installed and the
        environment must say where the server is."""
        if importlib.util.find_spec("openai") is None:
            raise SpecError(f"model spec {spec.raw!r} needs the openai client: pip install 'factprobe[openai]'")
        if not os.environ.get("OPENAI_BASE_URL") and not os.environ.get("OPENAI_API_KEY"):
            raise SpecError(f"model spec {spec.raw!r} needs OPENAI_BASE_URL (a compatible server) or OPENAI_API_KEY "
                            "(the hosted API) in the environment")

    @classmethod
    def load(cls, spec: ModelSpec, options: LoadOptions) -> Scorer:
        from ..openai_api import OpenAIScorer  # no torch: the model runs on the server

        return OpenAIScorer(spec.target, chat=cls.chat)


class OpenAIChat(OpenAI):
    name = "openai-chat"
    summary = "the chat endpoint (generation only)"
    chat = True
