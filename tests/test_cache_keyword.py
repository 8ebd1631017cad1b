"""The KV cache reaches the model under the keyword its transformers version takes: `cache` from
5.24 on, `past_key_values` before (the old name warns from 5.24 and goes in 5.40). pyproject
accepts both sides, so the scorer must pick by the model's own signature."""

from types import SimpleNamespace

from probes.scoring.hf_cache import cache_of, with_cache


class _Before524:
    def forward(self, input_ids=None, past_key_values=None, use_cache=None, **kwargs):
        return None


class _From524:
    def forward(self, input_ids=None, cache=None, use_cache=None, **kwargs):
        return None


class _PassThrough:
    """A wrapper like the tests' out-of-memory one: no forward of its own."""

    def __init__(self, model):
        self.model = model

    def __getattr__(self, name):
        return getattr(self.model, name)


def test_keyword_follows_the_model_signature():
    kv = object()
    assert with_cache(_Before524(), kv) == {"past_key_values": kv}
    assert with_cache(_From524(), kv) == {"cache": kv}
    assert with_cache(_PassThrough(_From524()), kv) == {"cache": kv}
    assert with_cache(_PassThrough(_Before524()), kv) == {"past_key_values": kv}


def test_returned_cache_under_either_name():
    kv = object()
    assert cache_of(SimpleNamespace(cache=kv, past_key_values=None)) is kv
    assert cache_of(SimpleNamespace(past_key_values=kv)) is kv
