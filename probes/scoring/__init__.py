"""The model scoring engine: one Scorer interface (loglikelihood, label_paths, generate, fill_mask) over HF
causal and masked LMs, GGUF files and OpenAI-compatible servers, with an on-disk result cache."""

from .requests import (ContinuationScore, FillMaskRequest, Generation, GenerateRequest, LabelPathRequest,
                       LabelPathScore, LoglikelihoodRequest, MaskCandidate)
from .scorer import Scorer, ScoringError, Unsupported, Work

__all__ = ["ContinuationScore", "FillMaskRequest", "Generation", "GenerateRequest", "LabelPathRequest",
           "LabelPathScore", "LoglikelihoodRequest", "MaskCandidate", "Scorer", "ScoringError", "Unsupported", "Work"]
