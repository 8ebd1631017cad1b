"""Models the scoring tests share: the two real PyPI models, and tiny random ones built here."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import torch

from factprobe.probes.scoring.loader import load_scorer

REAL_MODELS = ("smollm2-135m-instruct", "gemma3-270m")


@lru_cache(maxsize=None)
def real_scorer(spec: str, dtype: str = "float32"):
    """Loaded once per test session: the GGUF conversion is cached on disk (FACTPROBE_CACHE)."""
    return load_scorer(spec, device="cpu", dtype=dtype)


def tiny_llama(folder: Path, *, vocab_from: str = "smollm2-135m-instruct", seed: int = 0) -> Path:
    """A 2-layer random Llama with a real tokenizer, saved as a checkpoint folder."""
    return save_tiny_llama(real_scorer(vocab_from).tokenizer, folder, seed=seed)


def save_tiny_llama(tokenizer, folder: Path, *, seed: int = 0, max_positions: int = 2048) -> Path:
    """A 2-layer random Llama over `tokenizer`, saved with it as a checkpoint folder."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=max_positions,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "capital", "of", "france", "is", "paris",
         "berlin", "germany", "city", "a", "in", "country", "lyon", "rome", "italy", ".", ","]


def tiny_bert(folder: Path, seed: int = 0) -> Path:
    """A 2-layer random BERT with a word-piece vocabulary written here."""
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(WORDS) + "\n")
    # transformers 5 takes the vocabulary itself (a `vocab_file=` keyword is silently ignored,
    # which leaves only the special tokens).
    tokenizer = BertTokenizerFast(vocab={word: k for k, word in enumerate(WORDS)})
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(WORDS), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                        num_attention_heads=4, max_position_embeddings=64)
    BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
