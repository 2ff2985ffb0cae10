// SPDX-License-Identifier: GPL-2.0-only
//
// The firmwares of producer/printf/ that the dict unit tests run on, as
// meson passes them: sample, bad, collide, long name, stripped.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_PRINTF_FIRMWARES_TESTUTIL_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_PRINTF_FIRMWARES_TESTUTIL_H_

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace hmbtrace {

inline std::string g_sample, g_bad, g_collide, g_long_name, g_stripped;

// main() of a dict unit test: the five paths, then every test.
inline int RunWithPrintfFirmwares(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s SAMPLE BAD COLLIDE LONG_NAME STRIPPED\n", argv[0]);
    return 2;
  }
  g_sample = argv[1];
  g_bad = argv[2];
  g_collide = argv[3];
  g_long_name = argv[4];
  g_stripped = argv[5];
  return RUN_ALL_TESTS();
}

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_PRINTF_FIRMWARES_TESTUTIL_H_
