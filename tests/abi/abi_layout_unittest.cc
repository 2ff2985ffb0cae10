// SPDX-License-Identifier: GPL-2.0-only
// The layout is pinned at compile time (abi_layout.h, in this C++20 unit
// and in abi_layout_c.c as C11): a build that passes has it. What only a
// run can check is arithmetic over a domain: the commit word's macros.
#include <gtest/gtest.h>

#include "abi_layout.h"

// Every (records, bytes) a page can commit packs and unpacks unchanged,
// with and without the closed bit, and never reads as BUSY.
TEST(AbiLayout, CommitWordRoundTripsForEveryPageFill) {
  const uint32_t data = HMB_TRACE_PAGE_SIZE_MAX - sizeof(hmb_trace_page_header);
  uint64_t bad = 0;
  for (uint32_t bytes = 0; bytes <= data; bytes += 8) {
    for (uint32_t records : {0u, 1u, bytes / 16, bytes / 8}) {
      for (uint32_t closed : {0u, static_cast<uint32_t>(HMB_TRACE_COMMIT_CLOSED)}) {
        const uint32_t c = HMB_TRACE_COMMIT(records, bytes) | closed;
        if (HMB_TRACE_COMMIT_RECORDS(c) != records || HMB_TRACE_COMMIT_BYTES(c) != bytes ||
            c == HMB_TRACE_COMMIT_BUSY)
          bad++;
      }
    }
  }
  EXPECT_EQ(bad, 0u);
}
