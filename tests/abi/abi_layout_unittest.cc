// SPDX-License-Identifier: GPL-2.0-only
// The layout as a C++20 compiler sees it; the static asserts are the test,
// this checks the C and C++ translation units agree at run time too.
#include <gtest/gtest.h>

#include "abi_layout.h"

extern "C" int hmb_abi_layout_c(void);

TEST(AbiLayout, CAndCxxAgreeOnMetaSize) {
  EXPECT_EQ(hmb_abi_layout_c(), static_cast<int>(sizeof(hmb_trace_meta)));
}

TEST(AbiLayout, CommitWordRoundTrips) {
  const uint32_t c = HMB_TRACE_COMMIT(4090u, 32720u) | HMB_TRACE_COMMIT_CLOSED;
  EXPECT_EQ(HMB_TRACE_COMMIT_RECORDS(c), 4090u);
  EXPECT_EQ(HMB_TRACE_COMMIT_BYTES(c), 32720u);
  EXPECT_NE(c, HMB_TRACE_COMMIT_BUSY);
}
