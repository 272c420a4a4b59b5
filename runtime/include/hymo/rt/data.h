// Training data (spec §5): plain text as bytes (token = byte value), or a
// token shard: a header of 256 little-endian int32 [20240520, 1, n_tokens,
// ...] followed by n_tokens little-endian uint16. A file is a shard exactly
// when it is at least 1024 bytes long and starts with the magic 20240520.
//
// Batch order (fixed so that runs compare across implementations): the token
// stream is cut into R = floor(n_tokens / T) rows of T tokens (the tail is
// dropped); micro-step j on rank r of W takes the B rows
// ((j*W + r)*B + i) mod R, i < B.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hymo/rt/status.h"

namespace hymo::rt {

inline constexpr int32_t kShardMagic = 20240520;
inline constexpr int32_t kShardVersion = 1;
inline constexpr int64_t kShardHeaderInts = 256;
// The most bytes TokenData::load reads: the largest shard (2^31 - 1 tokens) and its header.
inline constexpr int64_t kMaxDataBytes = kShardHeaderInts * 4 + (int64_t(1) << 32);

class TokenData {
 public:
  enum class Format { kText, kShard };

  // Loads `path`. Errors name the file: missing, unreadable, a directory or a
  // device, empty, more than kMaxDataBytes, a shard whose header is wrong
  // (version, n_tokens vs the file size).
  static Status load(const std::string& path, TokenData* out);
  // From memory (tests): the same detection and checks; `name` is used in
  // messages.
  static Status from_bytes(const std::string& name, const std::string& bytes, TokenData* out);

  const std::string& name() const { return name_; }
  Format format() const { return format_; }
  int64_t size() const { return int64_t(tokens_.size()); }
  int32_t token(int64_t i) const { return int32_t(tokens_[size_t(i)]); }
  int32_t max_token() const { return max_token_; }
  int64_t max_token_position() const { return max_pos_; }

  // Checks that the data fits a model: at least one row of `seq_len` tokens
  // and every token < vocab_size (the error names the first offending
  // token's position).
  Status check(int64_t seq_len, int64_t vocab_size) const;

 private:
  std::string name_;
  Format format_ = Format::kText;
  std::vector<uint16_t> tokens_;
  int32_t max_token_ = -1;
  int64_t max_pos_ = -1;
};

// The fixed batch order over a TokenData.
class Batcher {
 public:
  // Requires data.check(seq_len, ...) to have passed (R >= 1).
  Batcher(const TokenData* data, int64_t batch, int64_t seq_len, int64_t world_size = 1, int64_t rank = 0);

  int64_t rows() const { return rows_; }
  // The B row indices of micro-step j: ((j*W + r)*B + i) mod R.
  std::vector<int64_t> row_indices(int64_t j) const;
  // Fills out[B*T] (row-major [B, T]) with micro-step j's tokens.
  void fill(int64_t j, int32_t* out) const;

 private:
  const TokenData* data_;
  int64_t batch_, seq_len_, world_, rank_, rows_;
};

}  // namespace hymo::rt
