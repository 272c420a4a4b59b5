// Training data: text or token shards, and the fixed batch order (data.h).
#include "hymo/rt/data.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace hymo::rt {
namespace {

int32_t le_i32(const unsigned char* p) {
  return int32_t(uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24));
}

}  // namespace

Status TokenData::load(const std::string& path, TokenData* out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return error_status("data file " + path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return error_status("data file " + path + ": is a directory, expected a file");
  // A device (/dev/zero, /dev/urandom) would be read without end; a pipe is read up to the cap.
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
    return error_status("data file " + path + ": is a device, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return error_status("data file " + path + ": cannot open for reading");
  std::string bytes;
  std::vector<char> buf(size_t(1) << 20);
  while (in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    bytes.append(buf.data(), size_t(in.gcount()));
    if (int64_t(bytes.size()) > kMaxDataBytes)
      return error_status("data file " + path + ": more than " + std::to_string(kMaxDataBytes) +
                          " bytes (a token shard holds at most 2^31 tokens); split the data");
  }
  if (in.bad()) return error_status("data file " + path + ": read error");
  return from_bytes(path, bytes, out);
}

Status TokenData::from_bytes(const std::string& name, const std::string& bytes, TokenData* out) {
  const std::string where = "data file " + name;
  TokenData d;
  d.name_ = name;
  if (bytes.empty()) return error_status(where + ": is empty");
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const int64_t header_bytes = kShardHeaderInts * 4;
  if (int64_t(bytes.size()) >= header_bytes && le_i32(p) == kShardMagic) {
    d.format_ = Format::kShard;
    int32_t version = le_i32(p + 4);
    if (version != kShardVersion)
      return error_status(where + ": token shard version " + std::to_string(version) + ", expected " +
                          std::to_string(kShardVersion));
    int32_t n = le_i32(p + 8);
    if (n < 0) return error_status(where + ": token shard header says " + std::to_string(n) + " tokens (negative)");
    int64_t body = int64_t(bytes.size()) - header_bytes;
    if (body != 2 * int64_t(n))
      return error_status(where + ": token shard header says " + std::to_string(n) + " tokens (" +
                          std::to_string(2 * int64_t(n)) + " bytes) but the file holds " + std::to_string(body) +
                          " bytes after the header (truncated or corrupt)");
    if (n == 0) return error_status(where + ": token shard holds no tokens");
    d.tokens_.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) {
      const unsigned char* q = p + header_bytes + 2 * i;
      d.tokens_[size_t(i)] = uint16_t(q[0] | (q[1] << 8));
    }
  } else if (bytes.size() >= 4 && le_i32(p) == kShardMagic) {
    return error_status(where + ": starts with the token-shard magic " + std::to_string(kShardMagic) + " but is " +
                        std::to_string(bytes.size()) + " bytes, shorter than the " + std::to_string(header_bytes) +
                        "-byte shard header (truncated)");
  } else {
    d.format_ = Format::kText;
    d.tokens_.resize(bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i) d.tokens_[i] = p[i];
  }
  for (size_t i = 0; i < d.tokens_.size(); ++i)
    if (int32_t(d.tokens_[i]) > d.max_token_) {
      d.max_token_ = d.tokens_[i];
      d.max_pos_ = int64_t(i);
    }
  *out = std::move(d);
  return ok_status();
}

Status TokenData::check(int64_t seq_len, int64_t vocab_size) const {
  const std::string where = "data file " + name_;
  if (seq_len < 1) return error_status(where + ": seq_len " + std::to_string(seq_len) + " < 1");
  if (size() < seq_len)
    return error_status(where + ": holds " + std::to_string(size()) + " tokens, fewer than one row of seq_len " +
                        std::to_string(seq_len));
  if (max_token_ >= vocab_size) {
    // The first offending position, for the message.
    int64_t first = max_pos_;
    for (size_t i = 0; i < tokens_.size(); ++i)
      if (int64_t(tokens_[i]) >= vocab_size) {
        first = int64_t(i);
        break;
      }
    return error_status(where + ": token id " + std::to_string(tokens_[size_t(first)]) + " at position " +
                        std::to_string(first) + " is >= the model's vocab_size " + std::to_string(vocab_size) +
                        (format_ == Format::kText ? " (text is read as bytes: byte-level models need vocab_size 256)"
                                                  : ""));
  }
  return ok_status();
}

Batcher::Batcher(const TokenData* data, int64_t batch, int64_t seq_len, int64_t world_size, int64_t rank)
    : data_(data), batch_(batch), seq_len_(seq_len), world_(world_size), rank_(rank),
      rows_(seq_len > 0 ? data->size() / seq_len : 0) {}

std::vector<int64_t> Batcher::row_indices(int64_t j) const {
  std::vector<int64_t> rows(static_cast<size_t>(batch_));
  if (rows_ <= 0) return rows;
  using u128 = unsigned __int128;
  for (int64_t i = 0; i < batch_; ++i) {
    u128 v = (u128(uint64_t(j)) * u128(uint64_t(world_)) + u128(uint64_t(rank_))) * u128(uint64_t(batch_)) +
             u128(uint64_t(i));
    rows[size_t(i)] = int64_t(v % u128(uint64_t(rows_)));
  }
  return rows;
}

void Batcher::fill(int64_t j, int32_t* out) const {
  std::vector<int64_t> rows = row_indices(j);
  for (int64_t i = 0; i < batch_; ++i) {
    int64_t base = rows[size_t(i)] * seq_len_;
    for (int64_t t = 0; t < seq_len_; ++t) out[i * seq_len_ + t] = data_->token(base + t);
  }
}

}  // namespace hymo::rt
