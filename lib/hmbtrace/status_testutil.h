// SPDX-License-Identifier: GPL-2.0-only
// For tests: a Status or Result<T> as a bool, with its message (and value)
// copied out, so that an assertion reads `ASSERT_TRUE(StatusOk(F(), &error))
// << error` and a test can examine the message afterwards.
#ifndef HMBTRACE_LIB_HMBTRACE_STATUS_TESTUTIL_H_
#define HMBTRACE_LIB_HMBTRACE_STATUS_TESTUTIL_H_

#include <string>
#include <utility>

#include "hmbtrace/status.h"

namespace hmbtrace {

// Whether `s` is ok; if not, its message is in *message.
inline bool StatusOk(const Status& s, std::string* message) {
  if (!s.ok())
    *message = s.message();
  return s.ok();
}

// Whether `r` holds a value; if it does it is moved to *value, else its
// message is in *message.
template <typename T>
bool StatusOk(Result<T> r, T* value, std::string* message) {
  if (!r.ok()) {
    *message = r.message();
    return false;
  }
  *value = std::move(r.value());
  return true;
}

}  // namespace hmbtrace

#endif  // HMBTRACE_LIB_HMBTRACE_STATUS_TESTUTIL_H_
