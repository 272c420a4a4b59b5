"""Checkpoints: safetensors with the spec section 5 names (F32 masters and
buffers), optimizer state / schedule step / data position under their own
prefixes (optim., sched., data., train.), the resolved config in the
metadata under "config" (YAML)."""
import json

import torch

from . import config as C
from . import model as M
from . import safetensors_io as st


class CheckpointError(ValueError):
    pass


def save_params(path, params, buffers, cfg=None, extra=None, extra_meta=None, dtype=torch.float32):
    """Parameters and buffers as `dtype` (F32 masters; an fp64 run passes
    float64 so that its resume stays exact), plus `extra` tensors."""
    tensors = {}
    for s in M.param_specs(cfg):
        src = buffers if s.optimizer == "none" else params
        tensors[s.name] = src[s.name].detach().to(dtype).contiguous()
    if extra:
        for k, v in extra.items():
            tensors[k] = v.detach().contiguous() if v.dtype in (torch.int64, torch.int32, torch.uint8) \
                else v.detach().to(dtype).contiguous()
    meta = {"format": "hymo", "producer": "hymo_ref"}
    if cfg is not None:
        meta["config"] = C.dumps(cfg)
    if extra_meta:
        meta.update(extra_meta)
    st.save(tensors, path, meta)


def load_params(path, cfg=None, dtype=torch.float32, strict=True):
    """Load parameters and buffers (spec names) from `path` (cast to `dtype`,
    or kept as stored when dtype is None).  The config comes
    from `cfg` or, if None, from the checkpoint's metadata.  Returns
    (cfg, params, buffers, all_tensors)."""
    try:
        tensors, meta = st.load(path, with_metadata=True)
    except (OSError, st.SafetensorsError) as e:
        raise CheckpointError("cannot read checkpoint %s: %s" % (path, e))
    if cfg is None:
        text = meta.get("config")
        if text is None:
            raise CheckpointError("%s holds no config in its metadata: pass --config" % path)
        try:
            # hymo writes the resolved config as JSON, hymo_ref as YAML
            cfg = C.from_dict(json.loads(text), strict=False) if text.lstrip().startswith("{") \
                else C.loads(text, strict=False)
        except Exception as e:  # noqa: BLE001
            raise CheckpointError("%s: bad config in metadata: %s" % (path, e))
    params, buffers = {}, {}
    specs = M.param_specs(cfg)
    if strict:
        known = {s.name for s in specs}
        for n in tensors:
            if n.startswith(("embed.", "head.", "norm_f.", "layers.", "mtp.")) and n not in known:
                raise CheckpointError("%s: unexpected tensor %s (checkpoint of another config?)" % (path, n))
    for s in specs:
        if s.name not in tensors:
            if s.optimizer == "none" and not strict:
                buffers[s.name] = torch.zeros(s.shape, dtype=dtype or torch.float32)
                continue
            raise CheckpointError("%s: tensor %s missing (checkpoint of another config?)" % (path, s.name))
        t = tensors[s.name]
        if tuple(t.shape) != s.shape:
            raise CheckpointError("%s: tensor %s has shape %s, the config needs %s"
                                  % (path, s.name, list(t.shape), list(s.shape)))
        (buffers if s.optimizer == "none" else params)[s.name] = t if dtype is None else t.to(dtype)
    return cfg, params, buffers, tensors
