// SPDX-License-Identifier: GPL-2.0-only
//
// Writes the fuzz seeds of dump_fuzz, one dump per file named on the
// command line, in this order: the small dump of every section
// (dump_writer_testutil.h); one without clock fits nor dictionary; one with
// skipped records, two loss runs and a section of an unknown type.

#include <cstdio>
#include <vector>

#include "decode_test_util.h"
#include "dump/dump_writer_testutil.h"

namespace {

bool Write(const char* path, const std::vector<uint8_t>& bytes) {
  std::FILE* f = std::fopen(path, "wb");
  if (!f)
    return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hmbtrace::test;
  const TestDump small = SmallDump(ProduceDictionary(RealisticEvents()));
  TestDump bare = small;
  bare.clocks.clear();
  bare.dict.clear();
  bare.flags = 0;
  TestDump more = small;
  more.lost.push_back({1, 1, 3, 20});
  more.extra_sections = {{42, std::vector<uint8_t>(20, 0x42)}};
  // Commands in flight (HMB_DUMP_FL_INFLIGHT), one named by a fetch record.
  more.flags |= 1u << 3;
  more.inflight = {{1, 0x1004, 0x02, 1, 8, 0x1000, 1000}, {0, 7, 0x06, 0, 0, 0, 0}};
  more.records.push_back({1, kCmdBegin, 23, 4000, {1, 0, 0x04, 0x10}});
  more.cores = CoresFor(more);
  more.cores[0].start_seq -= 4;
  more.cores[0].skipped = 4;
  const std::vector<std::vector<uint8_t>> seeds = {WriteDump(small), WriteDump(bare),
                                                   WriteDump(more)};
  if (argc - 1 != static_cast<int>(seeds.size())) {
    std::fprintf(stderr, "usage: dump_fuzz_seed SMALL BARE MORE\n");
    return 2;
  }
  for (size_t i = 0; i < seeds.size(); i++)
    if (!Write(argv[i + 1], seeds[i])) {
      std::perror(argv[i + 1]);
      return 1;
    }
  return 0;
}
