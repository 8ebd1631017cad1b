"""The model scoring engine: one Scorer interface (loglikelihood, generate, fill_mask) over HF
causal and masked LMs, GGUF files and OpenAI-compatible servers, with an on-disk result cache."""

from .requests import (ContinuationScore, FillMaskRequest, Generation, GenerateRequest,
                       LoglikelihoodRequest, MaskCandidate)
from .scorer import Scorer, ScoringError, Unsupported, Work

__all__ = ["ContinuationScore", "FillMaskRequest", "Generation", "GenerateRequest",
           "LoglikelihoodRequest", "MaskCandidate", "Scorer", "ScoringError", "Unsupported", "Work"]
