// Strict text-to-number parsing shared by the runtime and hymo-run.
#pragma once

#include <charconv>
#include <string_view>
#include <system_error>

namespace hymo::rt {

/// Parses all of `text` as a base-10 integer of type T into *out: false (and
/// *out untouched) for an empty text, a sign an unsigned T cannot take,
/// spaces, trailing characters or a value beyond T.
template <class T>
bool parse_integer(std::string_view text, T* out) {
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return false;
  *out = v;
  return true;
}

}  // namespace hymo::rt
