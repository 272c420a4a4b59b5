"""Training data (spec section 5): plain text as bytes, or token shards
(256 little-endian int32 header [20240520, 1, n_tokens, ...], then n_tokens
uint16), and the fixed batch order."""
import numpy as np
import torch

SHARD_MAGIC = 20240520
SHARD_VERSION = 1


class DataError(ValueError):
    pass


def load_tokens(path):
    """Return the token stream of `path` as an int64 numpy array."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise DataError("cannot read data file %s: %s" % (path, e.strerror))
    if len(raw) >= 1024:
        head = np.frombuffer(raw, dtype="<i4", count=256)
        if int(head[0]) == SHARD_MAGIC:
            if int(head[1]) != SHARD_VERSION:
                raise DataError("%s: token shard version %d, expected %d"
                                % (path, int(head[1]), SHARD_VERSION))
            n = int(head[2])
            if n < 0 or len(raw) != 1024 + 2 * n:
                raise DataError("%s: token shard says %d tokens but holds %d bytes of tokens"
                                % (path, n, len(raw) - 1024))
            return np.frombuffer(raw, dtype="<u2", count=n, offset=1024).astype(np.int64)
    return np.frombuffer(raw, dtype=np.uint8).astype(np.int64)


def write_shard(path, tokens):
    tokens = np.asarray(tokens)
    if tokens.size and (tokens.min() < 0 or tokens.max() > 65535):
        raise DataError("shard tokens must fit uint16")
    head = np.zeros(256, dtype="<i4")
    head[0], head[1], head[2] = SHARD_MAGIC, SHARD_VERSION, tokens.size
    with open(path, "wb") as f:
        f.write(head.tobytes())
        f.write(tokens.astype("<u2").tobytes())


class Batches:
    """Rows of T tokens; micro-step j on rank r of W takes rows
    ((j*W + r)*B + i) mod R, i < B."""

    def __init__(self, tokens, seq_len, batch, world_size=1, rank=0, vocab_size=None):
        self.T, self.B, self.W, self.r = seq_len, batch, world_size, rank
        self.R = len(tokens) // seq_len
        if self.R < 1:
            raise DataError("data has %d tokens, fewer than one row of seq_len %d"
                            % (len(tokens), seq_len))
        if vocab_size is not None and len(tokens) and int(tokens.max()) >= vocab_size:
            raise DataError("data holds token id %d >= vocab_size %d"
                            % (int(tokens.max()), vocab_size))
        self.rows = torch.from_numpy(np.ascontiguousarray(
            tokens[: self.R * seq_len].reshape(self.R, seq_len)))

    def rows_of(self, j):
        return [((j * self.W + self.r) * self.B + i) % self.R for i in range(self.B)]

    def get(self, j):
        return self.rows[self.rows_of(j)]
