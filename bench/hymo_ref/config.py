"""HyMo configs: the YAML schema of models/configs/*.yaml (spec section 1)
with the section 3 defaults and `--set section.key=value` overrides."""
import copy

import yaml

DEFAULTS = {
    "model": {
        "vocab_size": 256, "dim": 64, "n_layers": 4, "layer_pattern": "GGGM",
        "norm_eps": 1e-6, "rope_theta": 10000.0, "ffn_hidden": 128,
        "gdn": {"n_heads": 4, "head_dim": 16, "state_dim": 8, "chunk_size": 16},
        "mla": {"n_heads": 2, "q_lora_rank": 32, "kv_lora_rank": 32,
                "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16},
        "moe": {"n_routed": 4, "n_shared": 1, "top_k": 2, "expert_hidden": 64,
                "capacity_factor": 1.5, "ema_alpha": 0.02, "bias_speed": 0.001},
        "mtp": {"depth": 2, "weights": [0.3, 0.1]},
    },
    "optimizer": {
        "muon_lr": 0.02, "momentum": 0.95, "nesterov": True, "betas": [0.95, 0.95],
        "eps": 1e-8, "weight_decay": 0.1, "cautious_wd": True, "ns_iterations": 5,
        "ns_coefficients": "quintic", "muon_scale": "shape", "adamw_lr": 3e-4,
        "adamw_betas": [0.9, 0.95], "adamw_eps": 1e-8, "adamw_weight_decay": 0.1,
        "embed_weight_decay": 0.0,
    },
    "scheduler": {"total_steps": 1000, "warmup_frac": 0.02, "stable_frac": 0.83,
                  "decay_frac": 0.15, "min_lr_ratio": 0.05, "decay": "linear"},
    "training": {"micro_batch_size": 2, "seq_len": 64, "gradient_accumulation_steps": 1,
                 "grad_clip": 1.0, "loss_nan_skip": True, "consecutive_nan_limit": 5,
                 "precision": "fp32", "fused_gdn": False, "moe_mixed_precision": False,
                 "fsdp": False, "world_size": 1, "seed": 0},
}


class ConfigError(ValueError):
    pass


def _merge(base, over, path="", strict=True):
    for k, v in over.items():
        if k not in base:
            if not strict:   # e.g. a key a newer hymo writes into checkpoint metadata
                continue
            raise ConfigError("unknown config key %s%s" % (path, k))
        if isinstance(base[k], dict):
            if not isinstance(v, dict):
                raise ConfigError("config key %s%s must be a mapping" % (path, k))
            _merge(base[k], v, path + k + ".", strict)
        else:
            base[k] = v


def apply_set(cfg, item):
    """Apply one `section.key=value` (value parsed as YAML) in place."""
    if "=" not in item:
        raise ConfigError("--set expects section.key=value, got %r" % item)
    key, val = item.split("=", 1)
    parts = key.strip().split(".")
    node = cfg
    for p in parts[:-1]:
        if p not in node or not isinstance(node[p], dict):
            raise ConfigError("unknown config key %s" % key)
        node = node[p]
    if parts[-1] not in node or isinstance(node[parts[-1]], dict):
        raise ConfigError("unknown config key %s" % key)
    node[parts[-1]] = yaml.safe_load(val)


def from_dict(d, overrides=(), strict=True):
    """strict=False ignores unknown keys (configs read from checkpoints)."""
    cfg = copy.deepcopy(DEFAULTS)
    _merge(cfg, d or {}, strict=strict)
    for item in overrides:
        apply_set(cfg, item)
    validate(cfg)
    return cfg


def load(path, overrides=()):
    try:
        with open(path) as f:
            d = yaml.safe_load(f)
    except yaml.YAMLError as e:
        raise ConfigError("%s: bad YAML: %s" % (path, e))
    if d is not None and not isinstance(d, dict):
        raise ConfigError("%s: top level must be a mapping" % path)
    return from_dict(d, overrides)


def loads(text, overrides=(), strict=True):
    return from_dict(yaml.safe_load(text), overrides, strict)


def dumps(cfg):
    return yaml.safe_dump(cfg, sort_keys=False)


def validate(cfg):
    m, t = cfg["model"], cfg["training"]
    if t["precision"] == "fp16":
        raise ConfigError("precision fp16 is not supported (use fp32, fp64 or bf16)")
    if t["precision"] not in ("fp32", "fp64", "bf16"):
        raise ConfigError("precision must be fp32, fp64 or bf16, got %r" % t["precision"])
    if any(c not in "GM" for c in m["layer_pattern"]) or not m["layer_pattern"]:
        raise ConfigError("layer_pattern must be a non-empty string of G and M")
    if m["mla"]["qk_rope_head_dim"] % 2:
        raise ConfigError("mla.qk_rope_head_dim must be even")
    if len(m["mtp"]["weights"]) != m["mtp"]["depth"]:
        raise ConfigError("mtp.weights must have mtp.depth entries")
    if cfg["optimizer"]["ns_coefficients"] not in ("quintic", "cubic"):
        raise ConfigError("ns_coefficients must be quintic or cubic")
    if cfg["optimizer"]["muon_scale"] not in ("shape", "rms"):
        raise ConfigError("muon_scale must be shape or rms")
    if cfg["scheduler"]["decay"] not in ("linear", "cosine", "sqrt"):
        raise ConfigError("scheduler.decay must be linear, cosine or sqrt")
    if m["moe"]["top_k"] > m["moe"]["n_routed"]:
        raise ConfigError("moe.top_k exceeds moe.n_routed")
