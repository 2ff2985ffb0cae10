// SPDX-License-Identifier: GPL-2.0-only
//
// Writes a fuzz seed: the realistic dictionary, as the real producer
// serialises it, followed by a payload. Starting from valid bytes lets the
// fuzzer spend its time on the entry and field checks instead of on
// rediscovering the magic and the layout.

#include <cstdio>
#include <vector>

#include "decode_test_util.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT\n", argv[0]);
    return 2;
  }
  std::vector<uint8_t> bytes =
      hmbtrace::test::ProduceDictionary(hmbtrace::test::RealisticEvents());
  if (bytes.empty())
    return 1;
  for (int i = 0; i < 40; i++)
    bytes.push_back(static_cast<uint8_t>(i * 37));
  std::FILE* f = std::fopen(argv[1], "wb");
  if (!f)
    return 1;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok ? 0 : 1;
}
