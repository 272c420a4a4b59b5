"""A minimal safetensors reader/writer (the format of
https://github.com/huggingface/safetensors, re-implemented from its
description): 8-byte little-endian header length N, N bytes of JSON header
{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {str: str}},
then the raw little-endian tensor bytes (offsets relative to the data start).
"""
import json
import os
import struct

import numpy as np
import torch

_TORCH_OF = {
    "F64": torch.float64, "F32": torch.float32, "BF16": torch.bfloat16,
    "F16": torch.float16, "I64": torch.int64, "I32": torch.int32,
    "I16": torch.int16, "U8": torch.uint8, "I8": torch.int8, "BOOL": torch.bool,
}
_CODE_OF = {v: k for k, v in _TORCH_OF.items()}
_SIZE = {"F64": 8, "F32": 4, "BF16": 2, "F16": 2, "I64": 8, "I32": 4, "I16": 2,
         "U8": 1, "I8": 1, "BOOL": 1}
# numpy dtypes used to decode the raw bytes (BF16 goes through int16).
_NP_OF = {"F64": "<f8", "F32": "<f4", "BF16": "<i2", "F16": "<f2", "I64": "<i8",
          "I32": "<i4", "I16": "<i2", "U8": "u1", "I8": "i1", "BOOL": "?"}


class SafetensorsError(ValueError):
    pass


def _tensor_bytes(t):
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    a = t.numpy()
    if a.dtype.byteorder == ">":
        a = a.byteswap().newbyteorder()
    return a.tobytes()


def save(tensors, path, metadata=None, atomic=True):
    """Write a dict name -> torch.Tensor to `path` (atomically: temp + fsync + rename)."""
    header = {}
    if metadata:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise SafetensorsError("metadata must map str to str (key %r)" % (k,))
        header["__metadata__"] = dict(metadata)
    blobs = []
    off = 0
    for name, t in tensors.items():
        if t.dtype not in _CODE_OF:
            raise SafetensorsError("unsupported dtype %s for %s" % (t.dtype, name))
        b = _tensor_bytes(t)
        header[name] = {"dtype": _CODE_OF[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    hj = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hj += b" " * ((8 - len(hj) % 8) % 8)  # align the data start to 8 bytes
    tmp = path + ".tmp%d" % os.getpid() if atomic else path
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)
        f.flush()
        os.fsync(f.fileno())
    if atomic:
        os.replace(tmp, path)


def read_header(path):
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) < 8:
            raise SafetensorsError("%s: truncated safetensors file (no header length)" % path)
        (n,) = struct.unpack("<Q", raw)
        size = os.fstat(f.fileno()).st_size
        if n > size - 8:
            raise SafetensorsError("%s: header length %d exceeds file size" % (path, n))
        try:
            header = json.loads(f.read(n).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise SafetensorsError("%s: corrupt safetensors header: %s" % (path, e))
    return header, 8 + n, size


def load(path, with_metadata=False):
    """Read a safetensors file into {name: torch.Tensor} (and the metadata dict)."""
    header, start, size = read_header(path)
    meta = header.pop("__metadata__", {}) or {}
    out = {}
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read()
    for name, info in header.items():
        try:
            code, shape, (b, e) = info["dtype"], info["shape"], info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise SafetensorsError("%s: corrupt entry for tensor %s" % (path, name))
        if code not in _TORCH_OF:
            raise SafetensorsError("%s: tensor %s has unsupported dtype %s" % (path, name, code))
        n = 1
        for s in shape:
            n *= int(s)
        if e - b != n * _SIZE[code] or b < 0 or e > len(data):
            raise SafetensorsError("%s: tensor %s: data out of range or wrong size (truncated file?)"
                                   % (path, name))
        a = np.frombuffer(data, dtype=_NP_OF[code], count=n, offset=b).copy()
        t = torch.from_numpy(a.astype(a.dtype.newbyteorder("=")))
        if code == "BF16":
            t = t.view(torch.bfloat16)
        out[name] = t.reshape([int(s) for s in shape])
    if with_metadata:
        return out, meta
    return out
