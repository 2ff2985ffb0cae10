// SPDX-License-Identifier: GPL-2.0-only
// Errors as return values, for the C++ of the whole tree (tools/, mock/):
// a Status carries a message when something failed, a Result<T> carries
// either a T or that message. The message says what failed, why and,
// where there is one, the fix; a caller that adds context prefixes it
// ("FILE: " + message()). No exception crosses a module boundary.
#ifndef HMBTRACE_LIB_HMBTRACE_STATUS_H_
#define HMBTRACE_LIB_HMBTRACE_STATUS_H_

#include <optional>
#include <string>
#include <utility>

namespace hmbtrace {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    s.ok_ = false;
    return s;
  }

  bool ok() const { return ok_; }
  const std::string& message() const { return message_; }

 private:
  bool ok_ = true;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}       // NOLINT: implicit by design
  Result(Status error) : error_(std::move(error)) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  const std::string& message() const { return error_.message(); }
  const Status& status() const { return error_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status error_;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_LIB_HMBTRACE_STATUS_H_
