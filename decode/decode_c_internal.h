// SPDX-License-Identifier: GPL-2.0-only
//
// What a struct hmb_dict (decode_c.h) is, for the decode library's own
// C++ files: a parsed Dictionary. Not installed, not for users.

#ifndef HMBTRACE_DECODE_DECODE_C_INTERNAL_H_
#define HMBTRACE_DECODE_DECODE_C_INTERNAL_H_

#include <utility>

#include "dictionary.h"

struct hmb_dict {
  explicit hmb_dict(hmbtrace::Dictionary d) : dict(std::move(d)) {}
  hmbtrace::Dictionary dict;
};

#endif  // HMBTRACE_DECODE_DECODE_C_INTERNAL_H_
