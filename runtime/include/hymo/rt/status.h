// Status and StatusOr: the error path inside the runtime. Runtime code returns
// a Status; only the API edge (api.h) turns a failed Status into an exception
// (hymo::rt::Error).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace hymo::rt {

class Status {
 public:
  Status() = default;
  static Status ok_status() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }
  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }
  // Prefixes the message ("ctx: message"); no-op on success.
  Status with_context(const std::string& ctx) const {
    if (ok()) return *this;
    return error(ctx + ": " + message_);
  }

 private:
  bool failed_ = false;
  std::string message_;
};

inline Status ok_status() { return Status(); }
inline Status error_status(std::string message) {
  return Status::error(std::move(message));
}

template <class T>
class StatusOr {
 public:
  StatusOr(Status s) : status_(std::move(s)) {}  // NOLINT: implicit by design
  StatusOr(T v) : value_(std::move(v)), has_value_(true) {}  // NOLINT
  bool ok() const { return has_value_ && status_.ok(); }
  const Status& status() const { return status_; }
  T& value() { return value_; }
  const T& value() const { return value_; }

 private:
  Status status_;
  T value_{};
  bool has_value_ = false;
};

// Thrown at the API edge only.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

inline void throw_if_error(const Status& s) {
  if (!s.ok()) throw Error(s.message());
}

#define HYMO_RETURN_IF_ERROR(expr)          \
  do {                                      \
    ::hymo::rt::Status _hymo_s = (expr);    \
    if (!_hymo_s.ok()) return _hymo_s;      \
  } while (0)

}  // namespace hymo::rt
