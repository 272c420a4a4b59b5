import os

import torch

from bench.hymo_ref import config as C

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TINY = os.path.join(REPO, "models", "configs", "tiny.yaml")
SMALL = os.path.join(REPO, "models", "configs", "small.yaml")
TEXT = "/usr/share/common-licenses/GPL-3"


def tiny_cfg(*overrides):
    return C.load(TINY, list(overrides))


def micro_cfg(*overrides):
    """An even smaller config for gradchecks (still every layer kind and MTP)."""
    return C.load(TINY, ["model.dim=16", "model.ffn_hidden=24", "model.vocab_size=32",
                         "model.gdn.n_heads=2", "model.gdn.head_dim=4", "model.gdn.state_dim=3",
                         "model.gdn.chunk_size=4", "model.mla.n_heads=2", "model.mla.q_lora_rank=8",
                         "model.mla.kv_lora_rank=8", "model.mla.qk_nope_head_dim=4",
                         "model.mla.qk_rope_head_dim=4", "model.mla.v_head_dim=4",
                         "model.moe.expert_hidden=8", "training.seq_len=11",
                         "training.micro_batch_size=2"] + list(overrides))


def text_or_synthetic():
    if os.path.exists(TEXT):
        with open(TEXT, "rb") as f:
            return f.read()
    return (b"the quick brown fox jumps over the lazy dog. " * 400)
